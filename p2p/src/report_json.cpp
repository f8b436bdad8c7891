#include <nlohmann/json.hpp>

#include "gdsb/p2p/report.hpp"
#include "gdsb/version.hpp"

namespace gdsb::p2p {

namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json opt(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

json matrix_json(const Matrix& m) {
  json legend = json::object();
  for (const auto& [code, meaning] : m.legend) legend[code] = meaning;
  return {{"legend", legend}, {"rows", m.rows}, {"cols", m.cols}, {"cells", m.cells}};
}

json cells_json(const NumCells& cells) {
  json rows = json::array();
  for (const auto& row : cells) {
    json r = json::array();
    for (const auto& v : row) r.push_back(opt(v));
    rows.push_back(std::move(r));
  }
  return rows;
}

json num_matrix_json(const NumMatrix& m, const char* unit) {
  if (m.waived) return {{"waived", *m.waived}};
  json j = {{"rows", m.rows}, {"cols", m.cols}, {"cells", cells_json(m.cells)}, {"unit", unit}};
  if (!m.theoretical.empty()) {
    j["theoretical_gb_s"] = cells_json(m.theoretical);
    j["percent"] = cells_json(m.percent);
  }
  return j;
}

json host_json(const HostSeries& s) {
  if (s.waived) return {{"waived", *s.waived}};
  json items = json::array();
  for (const HostFigure& f : s.items) {
    items.push_back({{"gpu", f.gpu},
                     {"gb_s", f.gb_s},
                     {"theoretical_gb_s", opt(f.theoretical_gb_s)},
                     {"percent", opt(f.percent)},
                     {"samples_gb_s", f.samples_gb_s},
                     {"reference_gb_s", opt(f.reference_gb_s)},
                     {"reference_ratio", opt(f.reference_ratio)}});
  }
  return items;
}

json concurrent_json(const ConcurrentSeries& s) {
  if (s.waived) return {{"waived", *s.waived}};
  json groups = json::array();
  for (const ConcurrentGroup& g : s.groups) {
    groups.push_back({{"gpus", g.gpus},
                      {"shared", g.shared},
                      {"gb_s", g.gb_s},
                      {"samples_gb_s", g.samples_gb_s},
                      {"per_gpu_gb_s", g.per_gpu_gb_s},
                      {"single_sum_gb_s", opt(g.single_sum_gb_s)},
                      {"ratio", opt(g.ratio)}});
  }
  return {{"grouping", s.grouping}, {"groups", groups}};
}

json link_json(const std::optional<PcieLink>& l) {
  if (!l) return nullptr;
  return {{"gen", l->gen}, {"width", l->width}};
}

json measurements_json(const Measurements& m) {
  const MeasureOptions& o = m.options;
  return {{"h2d", host_json(m.h2d)},
          {"d2h", host_json(m.d2h)},
          {"h2d_concurrent", concurrent_json(m.h2d_concurrent)},
          {"d2h_concurrent", concurrent_json(m.d2h_concurrent)},
          {"d2d_uni", num_matrix_json(m.d2d_uni, "GB/s")},
          {"d2d_bi", num_matrix_json(m.d2d_bi, "GB/s")},
          {"d2d_uni_no_p2p", num_matrix_json(m.d2d_uni_no_p2p, "GB/s")},
          {"d2d_bi_no_p2p", num_matrix_json(m.d2d_bi_no_p2p, "GB/s")},
          {"latency_us", num_matrix_json(m.latency_us, "us")},
          {"h2d_sm", host_json(m.h2d_sm)},
          {"d2h_sm", host_json(m.d2h_sm)},
          {"d2d_uni_sm", num_matrix_json(m.d2d_uni_sm, "GB/s")},
          {"notes", m.notes},
          {"method",
           {{"sizes_bytes", {o.bytes, o.latency_bytes}},
            {"repetitions", o.repetitions},
            {"statistic", "median"},
            {"warmups", o.warmups},
            {"copies_per_sample", o.loops},
            {"latency_copies_per_sample", o.latency_loops},
            {"timer", "CUDA events around back-to-back copies on one stream"},
            {"unit_base", "GB/s = 1e9 bytes/s"},
            {"reference", "synchronous pinned cudaMemcpy, wall clock, same size"}}}};
}

}  // namespace

json to_json(const P2PDocument& doc) {
  json gpus = json::array();
  for (const GpuInfo& g : doc.caps.gpus) {
    gpus.push_back({{"index", g.index},
                    {"bdf", g.bdf},
                    {"name", g.name},
                    {"pcie", link_json(g.pcie)},
                    {"pcie_current", link_json(g.pcie_cur)},
                    {"nvlinks", opt(g.nvlinks)},
                    {"numa_node", opt(g.numa_node)},
                    {"nvml_index", opt(g.nvml_index)},
                    {"compute_capability",
                     g.cc_major ? json(std::to_string(*g.cc_major) + "." + std::to_string(g.cc_minor.value_or(0)))
                                : json(nullptr)}});
  }
  json matrices = json::object();
  for (const auto& [name, m] : doc.caps.matrices) matrices[name] = matrix_json(m);
  json pairs = json::array();
  for (const PairCaps& p : doc.caps.pairs) {
    pairs.push_back({{"a", p.a},
                     {"b", p.b},
                     {"topology", p.topology.empty() ? json(nullptr) : json(p.topology)},
                     {"direct", p.direct ? json(*p.direct) : json(nullptr)},
                     {"verdict", p.verdict}});
  }
  json peers = json::array();
  for (const PciePair& p : doc.caps.peers) {
    peers.push_back({{"gpu", p.gpu},
                     {"peer", p.peer},
                     {"peer_role", peer_role_name(p.role)},
                     {"label", p.label},
                     {"p2pdma", map_type_name(p.p2pdma)},
                     {"distance", p.distance},
                     {"acs_redirect_ports", p.acs_redirect_ports},
                     {"verdict", gds_direct_verdict(p)}});
  }
  json expectations = json::array();
  for (const auto& e : doc.expectations) {
    expectations.push_back({{"expr", e.expr}, {"ok", e.ok}, {"detail", e.detail}});
  }
  json waived = json::array();
  for (const auto& w : doc.caps.waived) waived.push_back({{"what", w.what}, {"reason", w.reason}});

  json j = {{"schema", kSchema},
            {"tool", {{"name", "gdsb-p2p"}, {"version", std::string(version())}}},
            {"argv", doc.argv},
            {"context", doc.context},
            {"interrupted", doc.interrupted},
            {"gpus", gpus},
            {"matrices", matrices},
            {"pairs", pairs},
            {"peers", peers},
            {"pcie_source", doc.caps.pcie_source},
            {"gpu_source", doc.caps.gpu_source},
            {"nvswitches", doc.caps.nvswitches},
            {"expectations", expectations},
            {"waived", waived}};
  if (!doc.caps.applicability.empty()) j["applicability"] = doc.caps.applicability;
  if (doc.measurements) j["measurements"] = measurements_json(*doc.measurements);
  return j;
}

}  // namespace gdsb::p2p
