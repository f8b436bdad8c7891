#include "node_output.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "gdsb/units.hpp"

namespace gdsb::io {
namespace {

using topo::gpu_ranges;

// Rows in columns as wide as their widest cell and two spaces apart, so that no two cells
// run together ("0000:00:02.0 (vdb)-", issue 43); a row's last cell is not padded.
std::string columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i + 1 < r.size(); ++i) {
      if (width.size() <= i) width.resize(i + 1, 0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line.append(width[i] + 2 - r[i].size(), ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string mode_label(XferType x) { return "-x " + std::to_string(static_cast<int>(x)); }

std::string ceiling_text(const topo::Ceiling& c) {
  return c.gb_s ? "~" + format_fixed(*c.gb_s, 1) + " GB/s, limited by " + c.limited_by : "unknown: " + c.limited_by;
}

// Facts that several GPUs share, said once: "GPU0-3: <text>" per distinct text.
std::string grouped(const std::vector<std::pair<int, std::string>>& facts, const std::string& indent) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& [g, text] : facts) {
    if (text.empty()) continue;
    const std::string& t = text;  // a lambda may not capture a structured binding (clang < 16)
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == t; });
    if (it == groups.end()) {
      groups.push_back({text, {g}});
    } else {
      it->second.push_back(g);
    }
  }
  std::string out;
  for (const auto& [text, gpus] : groups) out += indent + gpu_ranges(gpus) + ": " + text + "\n";
  return out;
}

std::string header(const NodePlan& p) {
  std::string s = "gdsb-io node: " + std::to_string(p.gpus.size()) + " GPU(s)";
  if (p.file_size > 0)
    s += " reading at once, a " + format_size(p.file_size) + " file each, " + format_fixed(p.seconds, 0) + " s per type, " +
         std::to_string(p.threads) + " thread(s) per GPU";
  return s + "\n";
}

std::string sources_text(const NodeGpu& n) {
  if (n.topo.sources.empty()) return "-";
  std::string s;
  for (std::size_t i = 0; i < n.topo.sources.size(); ++i)
    s += (i ? ", " : "") + n.topo.sources[i] + (i < n.topo.drives.size() ? " (" + n.topo.drives[i] + ")" : "");
  return s;
}

}  // namespace

std::string node_plan_text(const NodePlan& p) {
  std::ostringstream o;
  o << header(p) << "topology: " << p.topology_source << "\n";
  std::vector<std::vector<std::string>> rows{{"GPU", "bus id", "nearest source", "ceiling GB/s"}};
  std::vector<std::pair<int, std::string>> notes, limits;
  for (const auto& n : p.gpus) {
    rows.push_back({std::to_string(n.index), n.pci_bus_id, sources_text(n),
                    n.topo.ceiling.gb_s ? format_fixed(*n.topo.ceiling.gb_s, 1) : "-"});
    notes.emplace_back(n.index, "reads " + n.directory + (n.directory_note.empty() ? "" : " (" + n.directory_note + ")"));
    if (!n.topo.ceiling.gb_s) limits.emplace_back(n.index, "ceiling unknown: " + n.topo.ceiling.limited_by);
  }
  o << columns(rows) << grouped(notes, "") << grouped(limits, "");
  o << "node ceiling: " << ceiling_text(p.ceiling) << "\n";
  return o.str();
}

std::string node_text(const NodePlan& p) {
  std::ostringstream o;
  o << header(p);
  std::vector<const NodeMode*> ran;
  for (const auto& m : p.modes)
    if (m.waived.empty()) ran.push_back(&m);
  std::vector<std::vector<std::string>> rows{{"GPU", "bus id", "ceiling"}};
  for (const NodeMode* m : ran) rows.front().push_back(mode_label(m->xfer));
  rows.front().push_back("(GB/s)");
  std::vector<std::pair<int, std::string>> notes, limits;
  for (const auto& n : p.gpus) {
    auto& row = rows.emplace_back(std::vector<std::string>{
        std::to_string(n.index), n.pci_bus_id, n.topo.ceiling.gb_s ? format_fixed(*n.topo.ceiling.gb_s, 1) : "-"});
    for (const NodeMode* m : ran) {
      const auto f = std::find_if(m->figure.per_gpu.begin(), m->figure.per_gpu.end(),
                                  [&](const GpuFigure& g) { return g.gpu == n.index; });
      row.push_back(f == m->figure.per_gpu.end() ? "-" : format_fixed(f->gb_s, 2));
    }
    notes.emplace_back(n.index, "reads " + n.directory + (n.directory_note.empty() ? "" : " (" + n.directory_note + ")"));
    if (!n.topo.ceiling.gb_s) limits.emplace_back(n.index, "ceiling unknown: " + n.topo.ceiling.limited_by);
  }
  auto& node = rows.emplace_back(std::vector<std::string>{"node", "", p.ceiling.gb_s ? format_fixed(*p.ceiling.gb_s, 1) : "-"});
  for (const NodeMode* m : ran) node.push_back(m->figure.gb_s ? format_fixed(*m->figure.gb_s, 2) : "-");
  node.push_back("aggregate: all bytes / (last end - first start)");
  if (p.ceiling.gb_s && *p.ceiling.gb_s > 0) {
    auto& share = rows.emplace_back(std::vector<std::string>{"", "", ""});
    for (const NodeMode* m : ran)
      share.push_back(m->figure.gb_s ? format_fixed(100 * *m->figure.gb_s / *p.ceiling.gb_s, 0) + "%" : "-");
    share.push_back("of the node ceiling");
  }
  o << columns(rows) << grouped(notes, "") << grouped(limits, "");
  o << "node ceiling: " << ceiling_text(p.ceiling) << "\n";
  for (const NodeMode* m : ran) {
    std::vector<std::pair<int, std::string>> paths;
    for (const auto& f : m->figure.per_gpu) paths.emplace_back(f.gpu, mode_label(m->xfer) + " read through " + f.path_used);
    o << grouped(paths, "");
    for (const auto& odd : m->figure.odd)
      o << "odd GPU: " << mode_label(m->xfer) << ": GPU" << odd.gpu << " reads " << format_fixed(odd.gb_s, 2) << " GB/s, "
        << format_fixed(100 * odd.share, 0) << "% of its peers' median " << format_fixed(odd.peers_median_gb_s, 2) << " GB/s: "
        << topo::odd_gpu_explanation(p, *m, odd) << "\n";
  }
  // Runs that did not measure, a reason once: "not measured: -x 1, -x 2 on GPU0-3: <why>".
  std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<int>>> unmeasured;
  for (const NodeMode* m : ran)
    for (const auto& miss : m->figure.missing) {
      auto it = std::find_if(unmeasured.begin(), unmeasured.end(), [&](const auto& e) { return std::get<0>(e) == miss.reason; });
      if (it == unmeasured.end()) it = unmeasured.insert(unmeasured.end(), {miss.reason, {}, {}});
      auto& [why, labels, gpus] = *it;
      if (std::find(labels.begin(), labels.end(), mode_label(m->xfer)) == labels.end()) labels.push_back(mode_label(m->xfer));
      if (std::find(gpus.begin(), gpus.end(), miss.gpu) == gpus.end()) gpus.push_back(miss.gpu);
    }
  for (const auto& [why, labels, gpus] : unmeasured) {
    std::string l;
    for (const auto& x : labels) l += (l.empty() ? "" : ", ") + x;
    o << "not measured: " << l << " on " << gpu_ranges(gpus) << ": " << why << "\n";
  }
  // A type waived for all GPUs: its reason once.
  std::map<std::string, std::vector<std::string>> waived;
  for (const auto& m : p.modes)
    if (!m.waived.empty()) waived[m.waived].push_back(mode_label(m.xfer));
  for (const auto& [why, labels] : waived) {
    std::string l;
    for (const auto& x : labels) l += (l.empty() ? "" : ", ") + x;
    o << "waived on every GPU: " << l << ": " << why << "\n";
  }
  return o.str();
}

}  // namespace gdsb::io
