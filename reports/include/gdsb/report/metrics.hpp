// The metrics compare and gate look at, each defined once, and the workload identity
// that matches runs across documents (CONTRACTS.md: xfer_type, io_pattern, io_size,
// threads, mixed_read_percent, engine, iodepth, mem_type, odirect).
#pragma once

#include "gdsb/report/io_table.hpp"  // format_bytes

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gdsb/result.hpp"

namespace gdsb::report {

enum class Metric { Throughput, Iops, P50, P99, Cpu };
inline constexpr std::size_t kMetricCount = 5;

struct MetricInfo {
  Metric metric;
  std::string_view key;    // JSON and threshold name: "throughput", "iops", "p50", "p99", "cpu"
  std::string_view label;  // for people
  std::string_view unit;
  bool higher_is_better;
};

const std::array<MetricInfo, kMetricCount>& all_metrics();
const MetricInfo& metric_info(Metric m);
// throughput_gib_s, iops, latency p50/p99 (us), cpu user+sys percent of the machine.
double metric_value(const Measurement& m, Metric metric);

// A string equal for runs that measure the same thing; ignore_xfer drops xfer_type, for
// comparing transfer types against each other inside one document.
std::string identity_key(const Workload& w, bool ignore_xfer);
nlohmann::json identity_json(const Workload& w);
// "GPUD RANDREAD 4 KiB x8 threads" and the like.
std::string run_label(const Workload& w);

std::string format_number(double v, int significant = 4);  // compact, no exponent for usual sizes
// Three significant digits, whole numbers from 100 on: 0.683, 25.3, 412, 1234 (heat map
// cells and legends, scaling curves: close values stay apart; below 1e-4 an exponent).
std::string format_three_digits(double v);
std::string format_percent(double v);                      // "+5.2%", "-0.4%", "n/a" for NaN
std::string format_pvalue(double p);                       // two significant digits: "0.036", "1.2e-11"
std::string format_limit_percent(double v);                // a gate's limit, unsigned: "5.0%"

}  // namespace gdsb::report
