// The fingerprint file and the health-check metrics (health.hpp).
#include "gdsb/topo/health.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/report/openmetrics.hpp"

namespace gdsb::topo {
namespace {

namespace om = report::openmetrics;
using nlohmann::json;

// "Gen5 x16" -> (32e9 transfers/s, 16 lanes); nullopt for "down" and anything unparsed.
struct LinkFigures {
  double transfers_per_second = 0;
  int width = 0;
};
std::optional<LinkFigures> parse_link(const std::string& words) {
  static const double rates[] = {2.5e9, 5e9, 8e9, 16e9, 32e9, 64e9};
  int gen = 0, width = 0;
  double gts = 0;
  if (std::sscanf(words.c_str(), "Gen%d x%d", &gen, &width) == 2 && gen >= 1 && gen <= 6)
    return LinkFigures{rates[gen - 1], width};
  if (std::sscanf(words.c_str(), "%lfGT/s x%d", &gts, &width) == 2) return LinkFigures{gts * 1e9, width};
  return std::nullopt;
}

std::string kind_label(std::string_view subject) {
  const std::string kind(subject.substr(0, subject.find(' ')));
  return kind == "GPU" ? "gpu" : kind == "NVMe" ? "nvme" : kind == "NIC" ? "nic" : "port";
}

std::string bdf_of(std::string_view subject) { return std::string(subject.substr(subject.find(' ') + 1)); }

void link_metrics(std::ostream& o, const Fingerprint& f, const std::string& prefix, const char* what) {
  const std::string width = prefix + "pcie_link_width", speed = prefix + "pcie_link_transfers_per_second";
  std::ostringstream w, s;
  for (const auto& [k, v] : f) {
    const auto subject = fact_subject(k);
    if (subject.empty() || subject.rfind("port", 0) == 0 || k != std::string(subject) + " link") continue;
    const om::Labels l{{"bdf", bdf_of(subject)}, {"kind", kind_label(subject)}};
    const auto link = parse_link(v);
    om::sample(w, width, l, link ? link->width : 0);
    om::sample(s, speed, l, link ? link->transfers_per_second : 0);
  }
  om::gauge_family(o, width, std::string("PCIe link width in lanes of each GPU, NVMe drive and data NIC, ") + what + " (0: link down)");
  o << w.str();
  om::gauge_family(o, speed, std::string("PCIe link rate in transfers per second of each device, ") + what + " (0: link down)");
  o << s.str();
}

}  // namespace

json fingerprint_document(const Fingerprint& f, const FingerprintOrigin& origin) {
  const DeviceCounts c = count_devices(f);
  json doc;
  doc["schema"] = kFingerprintSchema;
  doc["tool"] = {{"name", origin.tool}, {"version", origin.version}};
  doc["host"] = origin.host;
  doc["source"] = origin.source;
  doc["created"] = origin.created;
  if (!origin.note.empty()) doc["note"] = origin.note;
  doc["counts"] = {{"gpus", c.gpus}, {"drives", c.drives}, {"data_nics", c.data_nics}};
  doc["facts"] = f;
  return doc;
}

Fingerprint fingerprint_from_document(const json& doc, const std::string& what) {
  const std::string hint = "; write one with gdsb-topo --save-fingerprint FILE on the node when it is known to be good";
  if (!doc.is_object() || doc.value("schema", json()).is_string() == false)
    throw UsageError(what + ": not a gdsbench fingerprint (no \"schema\")" + hint);
  const std::string schema = doc.at("schema").get<std::string>();
  if (schema != kFingerprintSchema)
    throw UsageError(what + ": schema is " + schema + ", expected " + kFingerprintSchema + hint);
  const json facts = doc.value("facts", json());
  if (!facts.is_object()) throw UsageError(what + ": no \"facts\" object" + hint);
  Fingerprint f;
  for (const auto& [k, v] : facts.items()) {
    if (!v.is_string()) throw UsageError(what + ": fact \"" + k + "\" is not a string");
    f[k] = v.get<std::string>();
  }
  return f;
}

Fingerprint load_fingerprint(const std::string& path, const std::string& option) {
  const std::string what = option + " " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(what + ": cannot open the file");
  const json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded()) throw UsageError(what + ": not JSON; pass a file written by gdsb-topo --save-fingerprint");
  return fingerprint_from_document(doc, what);
}

std::string health_openmetrics(const Fingerprint& now, const Fingerprint& expected,
                               const std::vector<HealthDifference>& differences,
                               const HealthMetricsContext& ctx) {
  std::ostringstream o;
  om::generator_info(o, ctx.tool, ctx.version);
  om::gauge_family(o, "gdsb_health_info", "The health check: node, known-good file (always 1)");
  om::sample(o, "gdsb_health_info", {{"node", ctx.node}, {"expect", ctx.expect_file}}, 1);
  om::gauge_family(o, "gdsb_health_problems", "Differences from the known-good fingerprint (0: healthy)");
  om::sample(o, "gdsb_health_problems", {}, static_cast<double>(differences.size()));
  om::gauge_family(o, "gdsb_health_last_check_timestamp_seconds", "When the check ran (Unix time)");
  om::sample(o, "gdsb_health_last_check_timestamp_seconds", {}, ctx.checked_at_unix_s);
  om::gauge_family(o, "gdsb_health_problem_info",
                   "One per difference: the fact, its value now and the known-good value (always 1)");
  for (const auto& d : differences) {
    const auto subject = fact_subject(d.key);
    om::sample(o, "gdsb_health_problem_info",
               {{"bdf", subject.empty() ? "" : bdf_of(subject)}, {"fact", d.key}, {"now", d.now}, {"expected", d.expected}}, 1);
  }
  const DeviceCounts have = count_devices(now), want = count_devices(expected);
  om::gauge_family(o, "gdsb_health_devices", "GPUs, NVMe drives and data NICs present now");
  om::sample(o, "gdsb_health_devices", {{"kind", "gpu"}}, have.gpus);
  om::sample(o, "gdsb_health_devices", {{"kind", "nvme"}}, have.drives);
  om::sample(o, "gdsb_health_devices", {{"kind", "nic"}}, have.data_nics);
  om::gauge_family(o, "gdsb_health_expected_devices", "GPUs, NVMe drives and data NICs of the known-good fingerprint");
  om::sample(o, "gdsb_health_expected_devices", {{"kind", "gpu"}}, want.gpus);
  om::sample(o, "gdsb_health_expected_devices", {{"kind", "nvme"}}, want.drives);
  om::sample(o, "gdsb_health_expected_devices", {{"kind", "nic"}}, want.data_nics);
  om::gauge_family(o, "gdsb_health_device_present",
                   "1 when the device is present now, 0 when only the known-good fingerprint holds it");
  std::set<std::string> subjects;
  for (const auto* f : {&now, &expected})
    for (const auto& [k, v] : *f)
      if (is_presence(k) && k.rfind("port", 0) != 0) subjects.insert(k);
  for (const auto& s : subjects)
    om::sample(o, "gdsb_health_device_present", {{"bdf", bdf_of(s)}, {"kind", kind_label(s)}}, now.count(s) ? 1 : 0);
  link_metrics(o, now, "gdsb_health_", "now");
  link_metrics(o, expected, "gdsb_health_expected_", "known-good");
  o << om::kEof;
  return o.str();
}

}  // namespace gdsb::topo
