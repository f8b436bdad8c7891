#include "gdsb/result.hpp"

#include <nlohmann/json.hpp>

namespace gdsb {

std::string_view run_status_name(RunStatus s) {
  switch (s) {
    case RunStatus::Ok: return "ok";
    case RunStatus::Waived: return "waived";
    case RunStatus::Failed: return "failed";
    case RunStatus::PageCache: return "page cache";
  }
  return "?";
}

namespace {

struct PathName {
  PathUsed path;
  std::string_view name;
};
constexpr PathName kPathNames[] = {
    {PathUsed::Posix, "posix"},
    {PathUsed::PageCache, "page-cache"},
    {PathUsed::PageCacheHostOnly, "page-cache (host only)"},
    {PathUsed::PageCachePageable, "page-cache-pageable"},
    {PathUsed::PageCachePageableHostOnly, "page-cache-pageable (host only)"},
    {PathUsed::GdsNvfs, "gds-nvfs"},
    {PathUsed::GdsP2pdma, "gds-p2pdma"},
    {PathUsed::Compat, "compat"},
};

}  // namespace

std::string_view path_used_name(PathUsed p) {
  for (const auto& n : kPathNames)
    if (n.path == p) return n.name;
  return "";
}

PathUsed path_used_of(std::string_view name) {
  for (const auto& n : kPathNames)
    if (n.name == name) return n.path;
  return PathUsed::Unknown;
}

bool path_is_gds(PathUsed p) { return p == PathUsed::GdsNvfs || p == PathUsed::GdsP2pdma; }

bool path_through_page_cache(PathUsed p) {
  return p == PathUsed::PageCache || p == PathUsed::PageCacheHostOnly ||
         p == PathUsed::PageCachePageable || p == PathUsed::PageCachePageableHostOnly;
}

namespace {

RunStatus parse_status(const std::string& s) {
  if (s == "ok") return RunStatus::Ok;
  if (s == "waived") return RunStatus::Waived;
  if (s == "failed") return RunStatus::Failed;
  if (s == "page cache") return RunStatus::PageCache;
  throw nlohmann::json::other_error::create(501, "run status '" + s + "' is unknown", nullptr);
}

nlohmann::json latency_json(const LatencySummary& l) {
  return {{"mean", l.mean_us}, {"min", l.min_us},   {"p50", l.p50_us},     {"p90", l.p90_us},
          {"p99", l.p99_us},   {"p999", l.p999_us}, {"p9999", l.p9999_us}, {"max", l.max_us}};
}

LatencySummary latency_from(const nlohmann::json& j) {
  LatencySummary l;
  l.mean_us = j.at("mean").get<double>();
  l.min_us = j.value("min", 0.0);
  l.p50_us = j.at("p50").get<double>();
  l.p90_us = j.at("p90").get<double>();
  l.p99_us = j.at("p99").get<double>();
  l.p999_us = j.at("p999").get<double>();
  l.p9999_us = j.value("p9999", 0.0);
  l.max_us = j.at("max").get<double>();
  return l;
}

nlohmann::json phase_json(const PhaseTime& p) {
  return {{"count", p.count}, {"us", latency_json(p.us)}};
}

PhaseTime phase_from(const nlohmann::json& j) {
  PhaseTime p;
  p.count = j.at("count").get<uint64_t>();
  p.us = latency_from(j.at("us"));
  return p;
}

// Per-file costs in microseconds, each a latency summary (mean, p50, p99, ...).
nlohmann::json per_file_json(const PerFileCosts& c) {
  return {{"files", c.files},
          {"open_us", latency_json(c.open)},
          {"register_us", latency_json(c.registration)},
          {"read_us", latency_json(c.read)},
          {"deregister_us", latency_json(c.deregistration)},
          {"close_us", latency_json(c.close)}};
}

PerFileCosts per_file_from(const nlohmann::json& j) {
  PerFileCosts c;
  c.files = j.value("files", uint64_t{0});
  c.open = latency_from(j.at("open_us"));
  c.registration = latency_from(j.at("register_us"));
  c.read = latency_from(j.at("read_us"));
  c.deregistration = latency_from(j.at("deregister_us"));
  c.close = latency_from(j.at("close_us"));
  return c;
}

nlohmann::json phases_json(const IoPhases& p) {
  nlohmann::json out = {{"storage", phase_json(p.storage)},
                        {"copy", phase_json(p.copy)},
                        {"dma", phase_json(p.dma)},
                        {"wait", phase_json(p.wait)}};
  if (p.sync_ceiling_gib_s > 0) {
    out["storage_gib_s"] = p.storage_gib_s;
    out["sync_ceiling_gib_s"] = p.sync_ceiling_gib_s;
  }
  return out;
}

IoPhases phases_from(const nlohmann::json& j) {
  IoPhases p;
  p.storage = phase_from(j.at("storage"));
  p.copy = phase_from(j.at("copy"));
  p.dma = phase_from(j.at("dma"));
  p.wait = phase_from(j.at("wait"));
  p.storage_gib_s = j.value("storage_gib_s", 0.0);
  p.sync_ceiling_gib_s = j.value("sync_ceiling_gib_s", 0.0);
  return p;
}

nlohmann::json measurement_json(const Measurement& m) {
  nlohmann::json series = nlohmann::json::array();
  for (const auto& p : m.timeseries) {
    series.push_back({{"t_end_s", p.t_end_s}, {"bytes", p.bytes}, {"ops", p.ops}});
  }
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& b : m.histogram) {
    hist.push_back({{"lower_us", b.lower_us}, {"upper_us", b.upper_us}, {"count", b.count}});
  }
  nlohmann::json out = {{"bytes", m.bytes},
          {"ops", m.ops},
          {"read_ops", m.read_ops},
          {"write_ops", m.write_ops},
          {"seconds", m.seconds},
          {"throughput_gib_s", m.throughput_gib_s},
          {"iops", m.iops},
          {"latency_us", latency_json(m.latency)},
          {"cpu", {{"user_percent", m.cpu.user_percent},
                   {"sys_percent", m.cpu.sys_percent},
                   {"user_us_per_io", m.cpu.user_us_per_io},
                   {"sys_us_per_io", m.cpu.sys_us_per_io},
                   {"process_user_percent", m.cpu.process_user_percent},
                   {"process_sys_percent", m.cpu.process_sys_percent}}},
          {"timeseries", std::move(series)},
          {"histogram", std::move(hist)},
          {"t0_unix_s", m.t0_unix_s},
          {"end_unix_s", m.end_unix_s}};
  if (m.requests > 0) {
    out["requests"] = m.requests;
    out["request_latency_us"] = latency_json(m.request_latency);
  }
  if (m.fsync_s > 0) out["fsync_s"] = m.fsync_s;
  if (m.phases) out["phases"] = phases_json(*m.phases);
  if (m.per_file) out["per_file"] = per_file_json(*m.per_file);
  return out;
}

Measurement measurement_from(const nlohmann::json& j) {
  Measurement m;
  m.bytes = j.at("bytes").get<uint64_t>();
  m.ops = j.at("ops").get<uint64_t>();
  m.read_ops = j.value("read_ops", uint64_t{0});
  m.write_ops = j.value("write_ops", uint64_t{0});
  m.seconds = j.at("seconds").get<double>();
  m.throughput_gib_s = j.at("throughput_gib_s").get<double>();
  m.iops = j.at("iops").get<double>();
  m.latency = latency_from(j.at("latency_us"));
  if (j.contains("cpu")) {
    m.cpu.user_percent = j.at("cpu").value("user_percent", 0.0);
    m.cpu.sys_percent = j.at("cpu").value("sys_percent", 0.0);
    m.cpu.user_us_per_io = j.at("cpu").value("user_us_per_io", 0.0);
    m.cpu.sys_us_per_io = j.at("cpu").value("sys_us_per_io", 0.0);
    m.cpu.process_user_percent = j.at("cpu").value("process_user_percent", 0.0);
    m.cpu.process_sys_percent = j.at("cpu").value("process_sys_percent", 0.0);
  }
  for (const auto& p : j.value("timeseries", nlohmann::json::array())) {
    m.timeseries.push_back(
        {p.at("t_end_s").get<double>(), p.at("bytes").get<uint64_t>(), p.at("ops").get<uint64_t>()});
  }
  for (const auto& b : j.value("histogram", nlohmann::json::array())) {
    m.histogram.push_back({b.at("lower_us").get<double>(), b.at("upper_us").get<double>(),
                           b.at("count").get<uint64_t>()});
  }
  m.requests = j.value("requests", uint64_t{0});
  if (j.contains("request_latency_us")) m.request_latency = latency_from(j.at("request_latency_us"));
  m.fsync_s = j.value("fsync_s", 0.0);
  m.t0_unix_s = j.value("t0_unix_s", 0.0);
  m.end_unix_s = j.value("end_unix_s", 0.0);
  if (j.contains("phases")) m.phases = phases_from(j.at("phases"));
  if (j.contains("per_file")) m.per_file = per_file_from(j.at("per_file"));
  return m;
}

}  // namespace

void to_json(nlohmann::json& j, const RunResult& r) {
  j = nlohmann::json{{"status", run_status_name(r.status)},
                     {"reason", r.reason},
                     {"workload", r.workload},
                     {"path_used", r.path.path_used},
                     {"path_evidence", r.path.evidence},
                     {"warnings", r.path.warnings},
                     {"verify_errors", r.verify_errors},
                     {"interrupted", r.interrupted},
                     {"started_at", r.started_at},
                     {"ended_at", r.ended_at}};
  if (r.page_cache_resident_at_start)
    j["page_cache_resident_at_start"] = *r.page_cache_resident_at_start;
  if (!r.path.decided_by.empty()) j["path_decided_by"] = r.path.decided_by;
  if (!r.path.gpu_pci_bus_id.empty()) j["gpu_pci_bus_id"] = r.path.gpu_pci_bus_id;
  if (r.storage) {
    // Only what is known: a raw block device has no file system and no mount point.
    nlohmann::json st = nlohmann::json::object();
    for (const auto& [key, value] : {std::pair{"fs_type", &r.storage->fs_type}, std::pair{"source", &r.storage->source},
                                     std::pair{"mount_point", &r.storage->mount_point}, std::pair{"dev", &r.storage->dev}})
      if (!value->empty()) st[key] = *value;
    j["storage"] = std::move(st);
  }
  if (r.setup.files > 0) {
    j["setup"] = {{"files", r.setup.files},
                  {"open_latency_us", latency_json(r.setup.open_latency)},
                  {"open_s", r.setup.open_s},
                  {"path_start_s", r.setup.path_start_s}};
  }
  if (r.status == RunStatus::Ok || r.result.ops > 0) j["result"] = measurement_json(r.result);
  if (!r.repetitions.empty()) {
    auto reps = nlohmann::json::array();
    for (const auto& m : r.repetitions) reps.push_back(measurement_json(m));
    j["repetitions"] = std::move(reps);
  }
}

void from_json(const nlohmann::json& j, RunResult& r) {
  r.status = parse_status(j.at("status").get<std::string>());
  r.reason = j.value("reason", std::string());
  r.workload = j.at("workload").get<Workload>();
  r.path.path_used = j.value("path_used", std::string());
  r.path.decided_by = j.value("path_decided_by", std::string());
  r.path.evidence = j.value("path_evidence", std::vector<std::string>{});
  r.path.warnings = j.value("warnings", std::vector<std::string>{});
  r.verify_errors = j.value("verify_errors", uint64_t{0});
  r.interrupted = j.value("interrupted", false);
  r.started_at = j.value("started_at", std::string());
  r.ended_at = j.value("ended_at", std::string());
  r.page_cache_resident_at_start.reset();
  if (j.contains("page_cache_resident_at_start"))
    r.page_cache_resident_at_start = j.at("page_cache_resident_at_start").get<double>();
  r.path.gpu_pci_bus_id = j.value("gpu_pci_bus_id", std::string());
  r.storage.reset();
  if (j.contains("storage") && j.at("storage").is_object()) {
    const auto& st = j.at("storage");
    r.storage = RunStorage{st.value("fs_type", std::string()), st.value("source", std::string()),
                           st.value("mount_point", std::string()), st.value("dev", std::string())};
  }
  if (j.contains("setup")) {
    const auto& s = j.at("setup");
    r.setup.files = s.value("files", uint64_t{0});
    if (s.contains("open_latency_us")) r.setup.open_latency = latency_from(s.at("open_latency_us"));
    r.setup.open_s = s.value("open_s", 0.0);
    r.setup.path_start_s = s.value("path_start_s", 0.0);
  }
  if (j.contains("result")) r.result = measurement_from(j.at("result"));
  r.repetitions.clear();
  for (const auto& m : j.value("repetitions", nlohmann::json::array())) {
    r.repetitions.push_back(measurement_from(m));
  }
}

}  // namespace gdsb
