// The node section of an io report made by gdsb-io --gpus (issue 43): what the run was for
// comes first: per GPU x transfer type the rate, the aggregate, the node ceiling, the odd GPU,
// and a chart of each type's per-GPU rates against each GPU's ceiling. A view of the report's
// "node" object (docs/io-schema.md), which topo::node_json writes.
#include <sstream>

#include "gdsb/units.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

std::string gb(const json& v, int digits) {
  return v.is_number() ? format_fixed(v.get<double>(), digits) : std::string("-");
}

std::string mode_label(const json& m) { return "-x " + text_of(m.value("xfer_type", json())); }

// The GPU's figure in the mode, pointing into `mode` (value() would return a copy).
const json* per_gpu_of(const json& mode, const json& gpu) {
  if (!mode.contains("per_gpu") || !mode.at("per_gpu").is_array()) return nullptr;
  for (const auto& f : mode.at("per_gpu"))
    if (f.value("gpu", -1) == gpu.value("gpu", -2)) return &f;
  return nullptr;
}

bool is_odd(const json& mode, int gpu) {
  for (const auto& o : mode.value("odd", json::array()))
    if (o.value("gpu", -1) == gpu) return true;
  return false;
}

}  // namespace

std::string node_section(const json& node) {
  const json gpus = node.value("gpus", json::array());
  std::vector<const json*> ran;
  std::ostringstream notes;
  const json modes = node.value("modes", json::array());  // ran points into it
  for (const auto& m : modes) {
    if (m.contains("waived"))
      notes << "<p>" << esc(mode_label(m)) << " waived on every GPU: " << esc(str(m, "waived")) << "</p>";
    else
      ran.push_back(&m);
  }
  std::ostringstream o;
  o << "<p>" << gpus.size() << " GPU(s) reading at once, a " << format_size(node.value("file_bytes", 0ULL))
    << " file each, " << esc(gb(node.value("seconds", json()), 0)) << " s per type, "
    << esc(text_of(node.value("threads_per_gpu", json()))) << " thread(s) per GPU; topology: "
    << esc(str(node, "topology")) << ".</p>";
  // Per GPU x type (GB/s, base 1000), then the node's aggregate and its share of the ceiling.
  std::vector<std::string> head{"GPU", "bus id", "reads", "ceiling GB/s"};
  for (const json* m : ran) head.push_back(mode_label(*m) + " GB/s");
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : gpus) {
    const int index = g.value("gpu", -1);
    std::vector<std::string> row{"<td class=\"n\">GPU" + std::to_string(index) + "</td>",
                                 "<td><code>" + esc(str(g, "pci_bus_id")) + "</code></td>",
                                 "<td>" + esc(str(g, "directory")) + "</td>",
                                 "<td class=\"n\">" + gb(g.value("ceiling_gb_s", json()), 1) + "</td>"};
    for (const json* m : ran) {
      const json* f = per_gpu_of(*m, g);
      row.push_back(std::string(is_odd(*m, index) ? "<td class=\"n bad\">" : "<td class=\"n\">") +
                    (f ? gb(f->value("gb_s", json()), 2) : "-") + "</td>");
    }
    rows.push_back(std::move(row));
  }
  const json ceiling = node.value("ceiling", json::object());
  std::vector<std::string> total{"<td><b>node</b></td>", "<td></td>", "<td>aggregate: all bytes / (last end - first start)</td>",
                                 "<td class=\"n\"><b>" + gb(ceiling.value("gb_s", json()), 1) + "</b></td>"};
  for (const json* m : ran) total.push_back("<td class=\"n\"><b>" + gb(m->value("aggregate_gb_s", json()), 2) + "</b></td>");
  rows.push_back(std::move(total));
  if (ceiling.value("gb_s", json()).is_number() && ceiling.at("gb_s").get<double>() > 0) {
    std::vector<std::string> share{"<td></td>", "<td></td>", "<td>of the node ceiling</td>", "<td></td>"};
    for (const json* m : ran) {
      const json a = m->value("aggregate_gb_s", json());
      share.push_back("<td class=\"n\">" +
                      (a.is_number() ? format_fixed(100 * a.get<double>() / ceiling.at("gb_s").get<double>(), 0) + "%"
                                     : std::string("-")) +
                      "</td>");
    }
    rows.push_back(std::move(share));
  }
  o << table(head, rows, "node");
  o << "<p>Node ceiling: "
    << (ceiling.value("gb_s", json()).is_number() ? "~" + gb(ceiling.at("gb_s"), 1) + " GB/s, limited by "
                                                  : std::string("unknown: "))
    << esc(str(ceiling, "limited_by")) << "</p>";
  // The odd GPU: below odd_share of its peers' median, with why.
  std::string odd;
  for (const json* m : ran)
    for (const auto& x : m->value("odd", json::array()))
      odd += "<li>" + esc(mode_label(*m)) + ": GPU" + text_of(x.value("gpu", json())) + " reads " +
             gb(x.value("gb_s", json()), 2) + " GB/s, " + gb(json(100 * x.value("share", 0.0)), 0) +
             "% of its peers' median " + gb(x.value("peers_median_gb_s", json()), 2) + " GB/s: " +
             esc(str(x, "explanation")) + "</li>";
  o << (odd.empty() ? "<p>Odd GPU: none (every GPU within " + gb(json(100 * node.value("odd_share", 0.0)), 0) +
                          "% of its peers' median).</p>"
                    : "<p>Odd GPU:</p><ul class=\"odd\">" + odd + "</ul>");
  for (const json* m : ran)
    for (const auto& x : m->value("missing", json::array()))
      notes << "<p>not measured: " << esc(mode_label(*m)) << " on GPU" << esc(text_of(x.value("gpu", json())))
            << ": " << esc(str(x, "reason")) << "</p>";
  o << notes.str();
  // One chart per type: each GPU's rate, its ceiling as the tick, odd GPUs in red.
  std::string charts;
  for (const json* m : ran) {
    std::vector<svg::Bar> bars;
    for (const auto& g : gpus) {
      const json* f = per_gpu_of(*m, g);
      const json c = g.value("ceiling_gb_s", json());
      const double v = f ? f->value("gb_s", 0.0) : 0.0;
      bars.push_back({"GPU" + text_of(g.value("gpu", json())), {v},
                      c.is_number() ? std::optional<double>(c.get<double>()) : std::nullopt,
                      is_odd(*m, g.value("gpu", -1)), f ? format_fixed(v, 2) : "not measured"});
    }
    const std::string title = "Per-GPU read rate, " + mode_label(*m) + " (" + str(*m, "xfer_name") + ")";
    charts += figure(svg::bar_chart({title, svg::axis("GB/s (base 1000)"), svg::axis(""), 760, 0}, {"rate"}, bars,
                                    "the GPU's ceiling"),
                     title + ": odd GPUs in red, the tick is the GPU's ceiling");
  }
  o << "<div class=\"charts\">" << charts << "</div>";
  return section("node", "Node: every GPU at once", o.str());
}

}  // namespace gdsb::report::html
