#include "node_output.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "gdsb/units.hpp"

namespace gdsb::io {
namespace {

using nlohmann::json;

std::string fixed(double v, int digits = 2) {
  char b[32];
  (void)std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string mode_label(XferType x) { return "-x " + std::to_string(static_cast<int>(x)); }

std::string ceiling_text(const topo::Ceiling& c) {
  return c.gb_s ? "~" + fixed(*c.gb_s, 1) + " GB/s, limited by " + c.limited_by : "unknown: " + c.limited_by;
}

// Facts that several GPUs share, said once: "GPU0-3: <text>" per distinct text.
std::string grouped(const std::vector<std::pair<int, std::string>>& facts, const std::string& indent) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& [g, text] : facts) {
    if (text.empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == text; });
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

const NodeGpu* gpu_of(const NodePlan& p, int index) {
  for (const auto& n : p.gpus)
    if (n.index == index) return &n;
  return nullptr;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Why a GPU lags its peers, from what the plan and the runs show.
std::string explain(const NodePlan& p, const NodeMode& m, const OddGpu& odd) {
  const NodeGpu* me = gpu_of(p, odd.gpu);
  if (me == nullptr) return "";
  std::vector<double> peers_ceiling;
  std::vector<int> sharing;
  for (const auto& n : p.gpus) {
    if (n.index == odd.gpu) continue;
    if (n.topo.ceiling.gb_s) peers_ceiling.push_back(*n.topo.ceiling.gb_s);
    if (n.directory == me->directory) sharing.push_back(n.index);
  }
  if (me->topo.ceiling.gb_s && !peers_ceiling.empty() && *me->topo.ceiling.gb_s < 0.9 * median(peers_ceiling))
    return "its path is narrower: ~" + fixed(*me->topo.ceiling.gb_s, 1) + " GB/s against its peers' ~" +
           fixed(median(peers_ceiling), 1) + " GB/s (" + me->topo.ceiling.limited_by + ")";
  if (!sharing.empty())
    return "it reads " + me->directory + ", which " + gpu_ranges(sharing) + " read too: shared storage, not its own path";
  std::string mine, theirs;
  for (const auto& f : m.figure.per_gpu) (f.gpu == odd.gpu ? mine : theirs) = f.path_used;
  if (!mine.empty() && !theirs.empty() && mine != theirs)
    return "its reads took the " + mine + " path, its peers' the " + theirs + " path";
  return "its path in the topology is like its peers' (the topology does not explain it): look at its drive "
         "(nvme smart-log), its links' error counters (AER) and the GPU's NUMA binding";
}

std::string header(const NodePlan& p) {
  std::string s = "gdsb-io node: " + std::to_string(p.gpus.size()) + " GPU(s)";
  if (p.file_size > 0)
    s += " reading at once, a " + format_size(p.file_size) + " file each, " + fixed(p.seconds, 0) + " s per type, " +
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

std::string gpu_ranges(std::vector<int> gpus) {
  std::sort(gpus.begin(), gpus.end());
  std::string out;
  for (std::size_t i = 0; i < gpus.size();) {
    std::size_t j = i;
    while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1) ++j;
    out += (out.empty() ? "GPU" : ", GPU") + std::to_string(gpus[i]);
    if (j > i) out += (j == i + 1 ? ", GPU" : "-") + std::to_string(gpus[j]);
    i = j + 1;
  }
  return out;
}

std::string node_plan_text(const NodePlan& p) {
  std::ostringstream o;
  o << header(p) << "topology: " << p.topology_source << "\n";
  o << pad("GPU", 6) << pad("bus id", 15) << pad("nearest source", 34) << "ceiling GB/s\n";
  std::vector<std::pair<int, std::string>> notes, limits;
  for (const auto& n : p.gpus) {
    o << pad(std::to_string(n.index), 6) << pad(n.pci_bus_id, 15) << pad(sources_text(n), 34)
      << (n.topo.ceiling.gb_s ? fixed(*n.topo.ceiling.gb_s, 1) : "-") << "\n";
    notes.emplace_back(n.index, "reads " + n.directory + (n.directory_note.empty() ? "" : " (" + n.directory_note + ")"));
    if (!n.topo.ceiling.gb_s) limits.emplace_back(n.index, "ceiling unknown: " + n.topo.ceiling.limited_by);
  }
  o << grouped(notes, "") << grouped(limits, "");
  o << "node ceiling: " << ceiling_text(p.ceiling) << "\n";
  return o.str();
}

std::string node_text(const NodePlan& p) {
  std::ostringstream o;
  o << header(p);
  std::vector<const NodeMode*> ran;
  for (const auto& m : p.modes)
    if (m.waived.empty()) ran.push_back(&m);
  o << pad("GPU", 6) << pad("bus id", 15) << pad("ceiling", 9);
  for (const NodeMode* m : ran) o << pad(mode_label(m->xfer), 9);
  o << "(GB/s)\n";
  std::vector<std::pair<int, std::string>> notes, limits;
  for (const auto& n : p.gpus) {
    o << pad(std::to_string(n.index), 6) << pad(n.pci_bus_id, 15)
      << pad(n.topo.ceiling.gb_s ? fixed(*n.topo.ceiling.gb_s, 1) : "-", 9);
    for (const NodeMode* m : ran) {
      const auto f = std::find_if(m->figure.per_gpu.begin(), m->figure.per_gpu.end(),
                                  [&](const GpuFigure& g) { return g.gpu == n.index; });
      o << pad(f == m->figure.per_gpu.end() ? "-" : fixed(f->gb_s), 9);
    }
    o << "\n";
    notes.emplace_back(n.index, "reads " + n.directory + (n.directory_note.empty() ? "" : " (" + n.directory_note + ")"));
    if (!n.topo.ceiling.gb_s) limits.emplace_back(n.index, "ceiling unknown: " + n.topo.ceiling.limited_by);
  }
  o << pad("node", 21) << pad(p.ceiling.gb_s ? fixed(*p.ceiling.gb_s, 1) : "-", 9);
  for (const NodeMode* m : ran) o << pad(m->figure.gb_s ? fixed(*m->figure.gb_s) : "-", 9);
  o << "aggregate: all bytes / (last end - first start)\n";
  if (p.ceiling.gb_s && *p.ceiling.gb_s > 0) {
    o << pad("of the node ceiling", 30);
    for (const NodeMode* m : ran)
      o << pad(m->figure.gb_s ? fixed(100 * *m->figure.gb_s / *p.ceiling.gb_s, 0) + "%" : "-", 9);
    o << "\n";
  }
  o << grouped(notes, "") << grouped(limits, "");
  o << "node ceiling: " << ceiling_text(p.ceiling) << "\n";
  for (const NodeMode* m : ran) {
    std::vector<std::pair<int, std::string>> paths;
    for (const auto& f : m->figure.per_gpu) paths.emplace_back(f.gpu, mode_label(m->xfer) + " read through " + f.path_used);
    o << grouped(paths, "");
    for (const auto& odd : m->figure.odd)
      o << "odd GPU: " << mode_label(m->xfer) << ": GPU" << odd.gpu << " reads " << fixed(odd.gb_s) << " GB/s, "
        << fixed(100 * odd.share, 0) << "% of its peers' median " << fixed(odd.peers_median_gb_s) << " GB/s: "
        << explain(p, *m, odd) << "\n";
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

json node_json(const NodePlan& p) {
  json gpus = json::array();
  for (const auto& n : p.gpus) {
    gpus.push_back({{"gpu", n.index},
                    {"pci_bus_id", n.pci_bus_id},
                    {"sources", n.topo.sources},
                    {"drives", n.topo.drives},
                    {"directory", n.directory},
                    {"directory_note", n.directory_note},
                    {"ceiling_gb_s", n.topo.ceiling.gb_s ? json(*n.topo.ceiling.gb_s) : json(nullptr)},
                    {"ceiling_limited_by", n.topo.ceiling.limited_by}});
  }
  json modes = json::array();
  for (const auto& m : p.modes) {
    json e = {{"xfer_type", static_cast<int>(m.xfer)}, {"xfer_name", std::string(xfer_name(m.xfer))}};
    if (!m.waived.empty()) {
      e["waived"] = m.waived;
      modes.push_back(e);
      continue;
    }
    json per = json::array();
    for (const auto& f : m.figure.per_gpu)
      per.push_back({{"gpu", f.gpu}, {"pci_bus_id", f.pci_bus_id}, {"bytes", f.bytes}, {"seconds", f.seconds},
                     {"gb_s", f.gb_s}, {"path_used", f.path_used}});
    json odd = json::array();
    for (const auto& x : m.figure.odd)
      odd.push_back({{"gpu", x.gpu}, {"gb_s", x.gb_s}, {"peers_median_gb_s", x.peers_median_gb_s},
                     {"share", x.share}, {"explanation", explain(p, m, x)}});
    e["per_gpu"] = per;
    e["bytes"] = m.figure.bytes;
    e["window_s"] = m.figure.window_s ? json(*m.figure.window_s) : json(nullptr);
    e["aggregate_gb_s"] = m.figure.gb_s ? json(*m.figure.gb_s) : json(nullptr);
    e["sum_gb_s"] = m.figure.sum_gb_s ? json(*m.figure.sum_gb_s) : json(nullptr);
    json missing = json::array();
    for (const auto& x : m.figure.missing) missing.push_back({{"gpu", x.gpu}, {"reason", x.reason}});
    e["missing"] = missing;
    e["odd"] = odd;
    modes.push_back(e);
  }
  return {{"gpus", gpus},
          {"file_bytes", p.file_size},
          {"seconds", p.seconds},
          {"threads_per_gpu", p.threads},
          {"topology", p.topology_source},
          {"ceiling", {{"gb_s", p.ceiling.gb_s ? json(*p.ceiling.gb_s) : json(nullptr)},
                       {"limited_by", p.ceiling.limited_by}}},
          {"odd_share", kOddShare},
          {"modes", modes}};
}

}  // namespace gdsb::io
