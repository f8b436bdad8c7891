#include "gdsb/doctor/render.hpp"

#include "gpu_groups.hpp"

namespace gdsb::doctor {
namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json to_json(const Diagnosis& d, const Figures& f, const DocumentMeta& meta) {
  json j;
  j["schema"] = kDoctorSchema;
  j["tool"] = {{"name", "gdsb-doctor"}, {"version", meta.tool_version}};
  j["argv"] = meta.argv;
  j["context"] = meta.context.is_null() ? json::object() : meta.context;
  j["interrupted"] = meta.interrupted;
  j["inputs"] = meta.inputs.is_null() ? json::object() : meta.inputs;
  j["gpus"] = json::array();
  for (const auto& g : d.gpus) {
    json hops = json::array();
    for (const auto& h : g.hops)
      hops.push_back({{"name", topo::hop_kind_name(h.kind)},
                      {"gb_s", opt(h.gb_s)},
                      {"what", h.what},
                      {"measured", h.measured},
                      {"device", h.device},
                      {"source", h.source}});
    j["gpus"].push_back({{"gpu", g.label},
                         {"bdf", g.bdf.empty() ? json(nullptr) : json(g.bdf)},
                         {"measured_gb_s", opt(g.measured_gb_s)},
                         {"measured_by", g.measured_by},
                         {"ceiling_gb_s", opt(g.ceiling_gb_s)},
                         {"binding", g.binding},
                         {"ceiling_unknown", g.ceiling_unknown.empty() ? json(nullptr) : json(g.ceiling_unknown)},
                         {"source_kind", g.source_kind},
                         {"p2p_possible", g.p2p_possible},
                         {"virtual_storage", g.virtual_storage},
                         {"storage_gb_s", opt(g.storage_gb_s)},
                         {"storage_bound", g.storage_bound},
                         {"hops", hops}});
  }
  // What GPUs alike share, once (issue 35): the HTML view draws a group once, not per GPU.
  j["gpu_groups"] = json::array();
  for (const auto& grp : detail::gpu_groups(d.gpus)) {
    json gpus = json::array(), rows = json::array(), lines = json::array();
    for (const GpuDiagnosis* g : grp.gpus) gpus.push_back(g->label);
    for (const auto& r : grp.rows)
      rows.push_back({{"name", topo::hop_kind_name(r.kind)},
                      {"figure", r.figure.empty() ? json(nullptr) : json(r.figure)},
                      {"what", r.what},
                      {"own_devices", r.own_devices}});
    for (const auto& l : grp.lines)
      lines.push_back({{"gpu", l.gpu->label},
                       {"own", l.own},
                       {"ceiling", l.ceiling.empty() ? json(nullptr) : json(l.ceiling)}});
    j["gpu_groups"].push_back({{"gpus", gpus},
                               {"label", grp.label},
                               {"ceiling", grp.ceiling.empty() ? json(nullptr) : json(grp.ceiling)},
                               {"ceiling_unknown", grp.unknown.empty() ? json(nullptr) : json(grp.unknown)},
                               {"rows", rows},
                               {"lines", lines}});
  }
  j["findings"] = json::array();
  int rank = 0;
  for (const auto& x : d.findings) {
    json per_gpu = json::array();
    for (const auto& g : x.per_gpu) per_gpu.push_back({{"gpu", g.label}, {"devices", g.devices}});
    j["findings"].push_back({{"rank", ++rank},
                             {"rule", x.rule},
                             {"title", x.title},
                             {"confidence", confidence_name(x.confidence)},
                             {"devices", x.devices},
                             {"evidence", x.evidence},
                             {"fix", x.fix},
                             {"expected_gb_s", opt(x.expected_gb_s)},
                             {"expected", x.expected},
                             {"impact_gb_s", x.impact_gb_s},
                             {"per_gpu", per_gpu}});
  }
  j["steps"] = json::array();
  for (const auto& s : d.steps)
    j["steps"].push_back({{"name", s.name}, {"ran", s.ran}, {"reason", s.reason},
                          {"gb_s", opt(s.gb_s)}, {"detail", s.detail}});
  j["notes"] = d.notes;
  j["storage"] = d.storage.empty() ? json(nullptr) : json(d.storage);
  j["headline"] = d.headline.empty() ? json(nullptr) : json(d.headline);
  j["nothing_wrong"] = d.nothing_wrong.empty() ? json(nullptr) : json(d.nothing_wrong);
  j["verdict"] = !d.not_applicable.empty() ? "not_applicable"
                 : d.has_problem()          ? "problem"
                 : d.nothing_wrong.empty()  ? "unexplained"
                                            : "ok";
  j["applicability"] = d.not_applicable.empty() ? json(nullptr) : json(d.not_applicable);
  j["runs"] = json::array();
  for (const auto& r : f.runs) j["runs"].push_back(r);
  return j;
}

}  // namespace gdsb::doctor
