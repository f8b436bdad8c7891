// The one place that reads gdsb-topo's JSON layout (see the header for the fields used).
#include "gdsb/doctor/topo_json_reader.hpp"

#include <algorithm>

#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"

namespace gdsb::doctor {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& name, const std::string& where, const std::string& what) {
  throw RuntimeError(name + ": invalid gdsb-topo document: " + where + " " + what);
}

uint16_t hex_field(const json& j, const char* key, const std::string& name,
                   const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return 0;
  if (!j.at(key).is_string()) bad(name, where + "." + key, "is not a hex string");
  try {
    return static_cast<uint16_t>(std::stoul(j.at(key).get<std::string>(), nullptr, 16));
  } catch (const std::exception&) {
    bad(name, where + "." + key, "is not a hex number");
  }
}

std::optional<int> opt_int(const json& j, const char* key) {
  if (j.contains(key) && j.at(key).is_number_integer()) return j.at(key).get<int>();
  return std::nullopt;
}

std::string str(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.contains(key) && j.at(key).is_array())
    for (const auto& v : j.at(key))
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

topo::Device device_of(const json& d, const std::string& name, const std::string& where) {
  topo::Device dev;
  if (!d.is_object() || !d.contains("bdf") || !d.at("bdf").is_string())
    bad(name, where, "has no \"bdf\" string");
  dev.bdf = d.at("bdf").get<std::string>();
  const auto role = topo::role_from_name(str(d, "role"));
  if (!role) bad(name, where + ".role", "is \"" + str(d, "role") + "\", not a gdsb-topo role");
  dev.role = *role;
  dev.vendor = hex_field(d, "vendor", name, where);
  dev.device = hex_field(d, "device", name, where);
  dev.class_code = static_cast<uint32_t>(hex_field(d, "class", name, where)) << 8;
  dev.name = str(d, "name");
  dev.parent = str(d, "parent");
  dev.root_complex = str(d, "root_complex");
  dev.driver = str(d, "driver");
  dev.numa_node = opt_int(d, "numa_node");
  dev.iommu_group = opt_int(d, "iommu_group");
  dev.block_devices = strings(d, "block_devices");
  dev.net_devices = strings(d, "net_devices");
  if (d.contains("link") && d.at("link").is_object()) {
    const auto& l = d.at("link");
    topo::Link link;
    link.cur_speed_gts = l.value("cur_speed_gts", 0.0);
    link.cur_width = l.value("cur_width", 0);
    link.max_speed_gts = l.value("max_speed_gts", 0.0);
    link.max_width = l.value("max_width", 0);
    dev.link = link;
  }
  if (d.contains("acs") && d.at("acs").is_object()) {
    topo::Acs acs;
    acs.cap = hex_field(d.at("acs"), "cap", name, where + ".acs");
    acs.ctl = hex_field(d.at("acs"), "ctl", name, where + ".acs");
    dev.acs = acs;
  }
  dev.ext_config_readable = !d.contains("acs_unknown_reason");
  dev.acs_note = str(d, "acs_unknown_reason");
  return dev;
}

topo::Verdict verdict_of(const std::string& v, const std::string& name, const std::string& where) {
  if (v == "pass") return topo::Verdict::Pass;
  if (v == "warn") return topo::Verdict::Warn;
  if (v == "fail") return topo::Verdict::Fail;
  if (v == "waived") return topo::Verdict::Waived;
  bad(name, where + ".verdict", "is \"" + v + "\", expected pass, warn, fail or waived");
}

}  // namespace

Platform platform_from_topo_json(const json& doc, const std::string& name) {
  if (!doc.is_object() || !doc.contains("devices") || !doc.at("devices").is_array())
    bad(name, "document", "has no \"devices\" list");
  auto snap = std::make_unique<topo::Snapshot>();
  if (doc.contains("snapshot")) {
    // The whole model, written by the snapshot's own code: the same facts a replay reads.
    *snap = topo::snapshot_from_json(doc.at("snapshot"), name + ": \"snapshot\"");
  } else {
    // Documents written before the "snapshot" field: the public device list only (no
    // BARs, bridge buses or host facts; rules that need those read the check results).
    const auto& devs = doc.at("devices");
    for (std::size_t i = 0; i < devs.size(); ++i)
      snap->devices.push_back(device_of(devs.at(i), name, "devices[" + std::to_string(i) + "]"));
    std::sort(snap->devices.begin(), snap->devices.end(),
              [](const topo::Device& a, const topo::Device& b) { return a.bdf < b.bdf; });
    snap->notes = strings(doc, "notes");
  }
  const auto kind = topo::source_kind_from_name(
      doc.contains("source") && doc.at("source").is_object() ? str(doc.at("source"), "kind") : "");
  snap->kind = kind.value_or(topo::SourceKind::Snapshot);
  snap->path = name;

  Platform p;
  p.source = "gdsb-topo JSON " + name;
  if (doc.contains("checks") && doc.at("checks").is_array()) {
    const auto& checks = doc.at("checks");
    for (std::size_t i = 0; i < checks.size(); ++i) {
      const auto& c = checks.at(i);
      const std::string where = "checks[" + std::to_string(i) + "]";
      if (!c.is_object()) bad(name, where, "is not an object");
      topo::CheckResult r;
      r.id = str(c, "id");
      r.title = str(c, "title");
      r.verdict = verdict_of(str(c, "verdict"), name, where);
      r.devices = strings(c, "devices");
      r.evidence = strings(c, "evidence");
      r.consequence = str(c, "consequence");
      r.remedy = str(c, "remedy");
      r.reason = str(c, "reason");
      p.checks.push_back(std::move(r));
    }
  }
  if (doc.contains("pairs") && doc.at("pairs").is_array())
    for (const auto& pr : doc.at("pairs"))
      if (pr.is_object())
        p.recorded_p2pdma[str(pr, "gpu") + " " + str(pr, "peer")] = str(pr, "p2pdma");
  p.snapshot = std::move(snap);
  p.view = std::make_unique<topo::TopologyView>(*p.snapshot);
  p.model = std::make_unique<topo::PathModel>(*p.view);
  return p;
}

}  // namespace gdsb::doctor
