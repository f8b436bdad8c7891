// The platform ceiling next to a preset's time to result: from a gdsb-topo --json report
// when one is given, else from the topology collected here with the topology library's
// collector and gdsb-topo's own ceilings computation (or from a recording named with
// gdsb-topo's source options). Where there is no figure (collection failed, no GPU, no
// PCIe NVMe drive) the reason is given instead.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/checks.hpp"
#include "presets.hpp"

namespace gdsb::io {
namespace {

using nlohmann::json;

// The `ceilings` of a gdsbench.topo/1 report (docs/topo-schema.md).
json ceilings_from_report(const std::string& topo_json) {
  std::ifstream in(topo_json);
  std::ostringstream text;
  text << in.rdbuf();
  const auto doc = json::parse(text.str(), nullptr, false);
  if (!in || doc.is_discarded() || !doc.contains("ceilings")) {
    return {{"note", "no ceilings in " + topo_json + " (not a gdsb-topo --json report?)"}};
  }
  return {{"source", topo_json}, {"per_gpu", doc.at("ceilings")}};
}

}  // namespace

json platform_ceiling(const std::string& topo_json, const topo::InputSources& sources) {
  if (!topo_json.empty()) return ceilings_from_report(topo_json);
  const std::string source =
      sources.live() ? "collected live (gdsb-topo's collector)" : sources.description();
  try {
    topo::CollectOptions co;  // as gdsb-topo's defaults: hwloc and NVML where present
    const topo::Snapshot snap = topo::collect_from(sources, co);
    const topo::TopologyView view(snap);
    json per_gpu = json::array();
    for (const topo::Ceiling& c : topo::compute_ceilings(snap, view)) {
      per_gpu.push_back({{"gpu", c.gpu},
                         {"gb_s", c.gb_s ? json(*c.gb_s) : json(nullptr)},
                         {"limited_by", c.limited_by},
                         {"peers", c.peers}});
    }
    if (per_gpu.empty()) {
      return {{"source", source}, {"note", "no GPU in the topology"}};
    }
    return {{"source", source}, {"per_gpu", per_gpu}};
  } catch (const std::exception& e) {
    return {{"source", source}, {"note", std::string("topology not collected: ") + e.what()}};
  }
}

}  // namespace gdsb::io
