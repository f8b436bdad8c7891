// Snapshot::faults in snapshot.json ("hw_faults"): the one mapping, read back by
// --from-snapshot, gdsb-doctor --topo and the health check's collecting child.
#include <nlohmann/json.hpp>

#include "gdsb/topo/fingerprint_file.hpp"
#include "internal.hpp"
#include "json_optional.hpp"

using nlohmann::json;

namespace gdsb::topo::detail {
namespace {

json time_json(const LogTime& t) { return {{"uptime_s", opt(t.uptime_s)}, {"wall", t.wall}, {"seq", opt(t.seq)}}; }
LogTime time_from(const json& j) {
  return {get_opt<double>(j, "uptime_s"), j.value("wall", ""), get_opt<uint64_t>(j, "seq")};
}

json link_errors_json(const std::vector<NvLinkErrorCounters>& links) {
  json out = json::array();
  for (const auto& l : links)
    out.push_back({{"link", l.link},
                   {"replay", opt(l.replay)},
                   {"recovery", opt(l.recovery)},
                   {"crc_flit", opt(l.crc_flit)},
                   {"crc_data", opt(l.crc_data)}});
  return out;
}
json xids_json(const std::vector<XidEvent>& events) {
  json xids = json::array();
  for (const auto& e : events)
    xids.push_back({{"bdf", e.bdf},
                    {"code", e.code},
                    {"count", e.count},
                    {"first", time_json(e.first)},
                    {"last", time_json(e.last)},
                    {"last_text", e.last_text},
                    {"process", e.process},
                    {"recovery_action", opt(e.recovery_action)}});
  return xids;
}
std::vector<XidEvent> xids_from(const json& j) {
  std::vector<XidEvent> out;
  for (const auto& e : j)
    out.push_back({e.at("bdf").get<std::string>(), e.at("code").get<int>(), e.at("count").get<uint64_t>(),
                   time_from(e.at("first")), time_from(e.at("last")), e.value("last_text", ""),
                   e.value("process", ""), get_opt<int>(e, "recovery_action")});
  return out;
}

std::vector<NvLinkErrorCounters> link_errors_from(const json& j) {
  std::vector<NvLinkErrorCounters> out;
  for (const auto& l : j)
    out.push_back({l.at("link").get<int>(), get_opt<uint64_t>(l, "replay"), get_opt<uint64_t>(l, "recovery"),
                   get_opt<uint64_t>(l, "crc_flit"), get_opt<uint64_t>(l, "crc_data")});
  return out;
}

}  // namespace

json aer_json(const AerCounters& a) {
  return {{"counters_known", a.counters_known},
          {"correctable", a.correctable},
          {"nonfatal", a.nonfatal},
          {"fatal", a.fatal},
          {"total_correctable", opt(a.total_correctable)},
          {"total_nonfatal", opt(a.total_nonfatal)},
          {"total_fatal", opt(a.total_fatal)},
          {"status_known", a.status_known},
          {"status_correctable", a.status_correctable},
          {"status_uncorrectable", a.status_uncorrectable}};
}

AerCounters aer_from(const json& j) {
  AerCounters a;
  a.counters_known = j.at("counters_known").get<bool>();
  a.correctable = j.at("correctable").get<std::map<std::string, uint64_t>>();
  a.nonfatal = j.at("nonfatal").get<std::map<std::string, uint64_t>>();
  a.fatal = j.at("fatal").get<std::map<std::string, uint64_t>>();
  a.total_correctable = get_opt<uint64_t>(j, "total_correctable");
  a.total_nonfatal = get_opt<uint64_t>(j, "total_nonfatal");
  a.total_fatal = get_opt<uint64_t>(j, "total_fatal");
  a.status_known = j.at("status_known").get<bool>();
  a.status_correctable = j.at("status_correctable").get<std::vector<std::string>>();
  a.status_uncorrectable = j.at("status_uncorrectable").get<std::vector<std::string>>();
  return a;
}

json nvlink_errors_json(const std::vector<NvLinkErrorCounters>& links) { return link_errors_json(links); }
std::vector<NvLinkErrorCounters> nvlink_errors_from(const json& j) { return link_errors_from(j); }

json hw_faults_json(const HwFaults& f) {
  json out = {{"kernel_log_unread", f.kernel_log_unread},
              {"gpu_errors_unread", f.gpu_errors_unread},
              {"uptime_s", opt(f.uptime_s)},
              {"collected_unix_s", opt(f.collected_unix_s)},
              {"boot_id", f.boot_id}};
  if (f.kernel_log) {
    const KernelLog& k = *f.kernel_log;
    out["kernel_log"] = {{"source", k.source},
                         {"format", k.format},
                         {"bytes", k.bytes},
                         {"lines", k.lines},
                         {"nvrm_lines", k.nvrm_lines},
                         {"xids", xids_json(k.xids)},
                         {"earlier_xids", xids_json(k.earlier_xids)},
                         {"boots", k.boots},
                         {"dropped", k.dropped},
                         {"unparsed", k.unparsed},
                         {"before_cursor", k.before_cursor},
                         {"last_seq", opt(k.last_seq)},
                         {"boot_id", k.boot_id},
                         {"boot_start", k.boot_start}};
  } else {
    out["kernel_log"] = nullptr;
  }
  json gpus = json::object();
  for (const auto& [bdf, g] : f.gpu_errors)
    gpus[bdf] = {{"ecc_volatile_corrected", opt(g.ecc_volatile_corrected)},
                 {"ecc_volatile_uncorrected", opt(g.ecc_volatile_uncorrected)},
                 {"ecc_aggregate_corrected", opt(g.ecc_aggregate_corrected)},
                 {"ecc_aggregate_uncorrected", opt(g.ecc_aggregate_uncorrected)},
                 {"retired_pages_sbe", opt(g.retired_pages_sbe)},
                 {"retired_pages_dbe", opt(g.retired_pages_dbe)},
                 {"retired_pages_pending", opt(g.retired_pages_pending)},
                 {"remapped_rows_correctable", opt(g.remapped_rows_correctable)},
                 {"remapped_rows_uncorrectable", opt(g.remapped_rows_uncorrectable)},
                 {"remap_pending", opt(g.remap_pending)},
                 {"remap_failed", opt(g.remap_failed)},
                 {"clock_event_reasons", opt(g.clock_event_reasons)},
                 {"recovery_action", opt(g.recovery_action)},
                 {"nvlinks", link_errors_json(g.nvlinks)}};
  out["gpu_errors"] = gpus;
  json aer = json::object();
  for (const auto& [bdf, a] : f.aer) aer[bdf] = aer_json(a);
  out["aer"] = aer;
  return out;
}

HwFaults hw_faults_from(const json& j) {
  HwFaults f;
  f.kernel_log_unread = j.value("kernel_log_unread", "");
  f.gpu_errors_unread = j.value("gpu_errors_unread", "");
  f.uptime_s = get_opt<double>(j, "uptime_s");
  f.collected_unix_s = get_opt<int64_t>(j, "collected_unix_s");
  f.boot_id = j.value("boot_id", "");
  if (const auto it = j.find("kernel_log"); it != j.end() && it->is_object()) {
    const json& k = *it;
    KernelLog log;
    log.source = k.at("source").get<std::string>();
    log.format = k.at("format").get<std::string>();
    log.bytes = k.at("bytes").get<uint64_t>();
    log.lines = k.at("lines").get<uint64_t>();
    log.nvrm_lines = k.at("nvrm_lines").get<uint64_t>();
    log.dropped = k.value("dropped", uint64_t{0});
    log.unparsed = k.value("unparsed", uint64_t{0});
    log.before_cursor = k.value("before_cursor", uint64_t{0});
    log.last_seq = get_opt<uint64_t>(k, "last_seq");
    log.boot_id = k.value("boot_id", "");
    log.boot_start = k.value("boot_start", "");
    log.boots = k.value("boots", uint32_t{1});
    log.xids = xids_from(k.at("xids"));
    log.earlier_xids = xids_from(k.value("earlier_xids", json::array()));
    f.kernel_log = std::move(log);
  }
  // value() returns a copy: kept alive here, as items() only refers to it.
  const json gpus = j.value("gpu_errors", json::object()), aer = j.value("aer", json::object());
  for (const auto& [bdf, g] : gpus.items()) {
    GpuErrorCounters c;
    c.ecc_volatile_corrected = get_opt<uint64_t>(g, "ecc_volatile_corrected");
    c.ecc_volatile_uncorrected = get_opt<uint64_t>(g, "ecc_volatile_uncorrected");
    c.ecc_aggregate_corrected = get_opt<uint64_t>(g, "ecc_aggregate_corrected");
    c.ecc_aggregate_uncorrected = get_opt<uint64_t>(g, "ecc_aggregate_uncorrected");
    c.retired_pages_sbe = get_opt<uint64_t>(g, "retired_pages_sbe");
    c.retired_pages_dbe = get_opt<uint64_t>(g, "retired_pages_dbe");
    c.retired_pages_pending = get_opt<bool>(g, "retired_pages_pending");
    c.remapped_rows_correctable = get_opt<uint64_t>(g, "remapped_rows_correctable");
    c.remapped_rows_uncorrectable = get_opt<uint64_t>(g, "remapped_rows_uncorrectable");
    c.remap_pending = get_opt<bool>(g, "remap_pending");
    c.remap_failed = get_opt<bool>(g, "remap_failed");
    c.clock_event_reasons = get_opt<uint64_t>(g, "clock_event_reasons");
    c.recovery_action = get_opt<int>(g, "recovery_action");
    c.nvlinks = link_errors_from(g.value("nvlinks", json::array()));
    f.gpu_errors[bdf] = std::move(c);
  }
  for (const auto& [bdf, a] : aer.items()) f.aer[bdf] = aer_from(a);
  return f;
}

}  // namespace gdsb::topo::detail

namespace gdsb::topo {

nlohmann::json log_position_json(const LogPosition& p) {
  return {{"boot", p.boot}, {"seq", detail::opt(p.seq)}, {"xids", detail::xids_json(p.xids)}};
}

LogPosition log_position_from(const nlohmann::json& j) {
  LogPosition p;
  p.boot = j.value("boot", "");
  p.seq = detail::get_opt<uint64_t>(j, "seq");
  p.xids = detail::xids_from(j.value("xids", json::array()));
  return p;
}

nlohmann::json fault_baseline_json(const HwFaults& f, const std::vector<std::string>& gpus) {
  json aer = json::object();
  for (const auto& [bdf, a] : f.aer)
    if (a.counters_known) aer[bdf] = detail::aer_json(a);
  json links = json::object();
  for (const auto& [bdf, g] : f.gpu_errors)
    if (!g.nvlinks.empty()) links[bdf] = detail::nvlink_errors_json(g.nvlinks);
  return {{"boot_id", f.boot_id},
          {"taken_unix_s", f.collected_unix_s ? json(*f.collected_unix_s) : json(nullptr)},
          {"gpus", gpus},
          {"aer", aer},
          {"nvlinks", links},
          {"kernel_log", f.kernel_log ? log_position_json(log_position(f)) : json(nullptr)}};
}

FaultBaseline fault_baseline_from_document(const nlohmann::json& doc) {
  FaultBaseline b;
  const auto it = doc.find("hw_baseline");
  if (it == doc.end() || !it->is_object()) return b;
  const json& j = *it;
  try {
    b.boot_id = j.value("boot_id", "");
    if (j.contains("taken_unix_s") && j["taken_unix_s"].is_number()) b.taken_unix_s = j["taken_unix_s"].get<int64_t>();
    b.known_gpus = j.value("gpus", std::vector<std::string>{});
    const json aer = j.value("aer", json::object()), links = j.value("nvlinks", json::object());
    for (const auto& [bdf, a] : aer.items()) b.aer[bdf] = detail::aer_from(a);
    for (const auto& [bdf, l] : links.items()) b.nvlinks[bdf] = detail::nvlink_errors_from(l);
    if (const auto k = j.find("kernel_log"); k != j.end() && k->is_object()) b.known_good_log = log_position_from(*k);
  } catch (const json::exception&) {
    return FaultBaseline{};  // a damaged baseline is none: rises are then measured since boot
  }
  return b;
}

}  // namespace gdsb::topo
