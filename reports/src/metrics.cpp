#include "gdsb/report/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gdsb/units.hpp"

namespace gdsb::report {

const std::array<MetricInfo, kMetricCount>& all_metrics() {
  static constexpr std::array<MetricInfo, kMetricCount> kMetrics{{
      {Metric::Throughput, "throughput", "Throughput", "GiB/s", true},
      {Metric::Iops, "iops", "IOPS", "ops/s", true},
      {Metric::P50, "p50", "p50 latency", "us", false},
      {Metric::P99, "p99", "p99 latency", "us", false},
      {Metric::Cpu, "cpu", "CPU (user+sys)", "% of machine", false},
  }};
  return kMetrics;
}

const MetricInfo& metric_info(Metric m) { return all_metrics().at(static_cast<std::size_t>(m)); }

double metric_value(const Measurement& m, Metric metric) {
  switch (metric) {
    case Metric::Throughput:
      return m.throughput_gib_s;
    case Metric::Iops:
      return m.iops;
    case Metric::P50:
      return m.latency.p50_us;
    case Metric::P99:
      return m.latency.p99_us;
    case Metric::Cpu:
      return m.cpu.user_percent + m.cpu.sys_percent;
  }
  return 0;
}

nlohmann::json identity_json(const Workload& w) {
  nlohmann::json j = {{"xfer_type", static_cast<int>(w.xfer)},
          {"xfer_name", xfer_name(w.xfer)},
          {"io_pattern", static_cast<int>(w.pattern)},
          {"io_pattern_name", pattern_label(w.pattern)},
          {"io_size", w.io_size},
          {"threads", w.threads},
          {"mixed_read_percent",
           w.mixed_read_percent ? nlohmann::json(*w.mixed_read_percent) : nlohmann::json(nullptr)},
          {"engine", engine_name(w.engine)},
          {"iodepth", w.iodepth},
          {"mem_type", static_cast<int>(w.mem_type)},
          {"odirect", w.odirect}};
  // Preset jobs (gdsb-io --workload) of one run differ by GPU and role only: their job name
  // ("load-gpu0", "naive-gpu0", "restore", ...) and the preset tell them apart.
  if (!w.preset.empty()) {
    j["preset"] = w.preset;
    j["name"] = w.name;
  }
  if (w.request_blocks > 1) j["request_blocks"] = w.request_blocks;
  if (w.fsync) j["fsync"] = true;
  return j;
}

std::string identity_key(const Workload& w, bool ignore_xfer) {
  auto j = identity_json(w);
  if (ignore_xfer) {
    j.erase("xfer_type");
    j.erase("xfer_name");
  }
  return j.dump();
}

// Built by appending: GCC 12 at -O3 reports a false -Wrestrict on "literal" + std::string
// chains here.
std::string run_label(const Workload& w) {
  std::string s;
  if (!w.preset.empty()) s.append(w.preset).append(" ").append(w.name).append(": ");
  s.append(xfer_label(w.xfer));
  s.append(" ").append(pattern_label(w.pattern));
  if (w.mixed_read_percent)
    s.append(" ").append(std::to_string(*w.mixed_read_percent)).append("%read");
  s.append(" ").append(format_bytes(w.io_size)).append(" x").append(std::to_string(w.threads));
  if (w.engine == SubmitEngine::IoUring) s.append(" io_uring");
  if (w.iodepth > 1) s.append(" qd").append(std::to_string(w.iodepth));
  if (!w.odirect) s.append(" buffered");
  if (!w.name.empty()) s.append(" [").append(w.name).append("]");
  return s;
}

std::string format_number(double v, int significant) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a >= 1e15 || (a > 0 && a < 1e-4)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", significant, v);
    return buf;
  }
  // Enough decimals for `significant` digits, never fewer than 0.
  const int int_digits = a >= 1 ? static_cast<int>(std::floor(std::log10(a))) + 1 : 1;
  return format_fixed(v, std::max(0, significant - int_digits));
}

std::string format_three_digits(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

std::string format_percent(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

std::string format_pvalue(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

std::string format_limit_percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v);
  return buf;
}

}  // namespace gdsb::report
