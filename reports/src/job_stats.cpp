#include "gdsb/report/job_stats.hpp"

#include <cinttypes>
#include <cstdio>

namespace gdsb::report {

std::string job_stats(const RunResult& r) {
  const Measurement& m = r.result;
  if (m.ops == 0) return {};
  const LatencySummary& l = m.latency;
  char buf[512];
  std::string out;
  (void)std::snprintf(buf, sizeof buf,
                      "  job %s: iops %.1f bytes %" PRIu64 " ops %" PRIu64 " (read %" PRIu64
                      " write %" PRIu64 ") seconds %.6f\n",
                      r.workload.name.empty() ? "-" : r.workload.name.c_str(), m.iops, m.bytes,
                      m.ops, m.read_ops, m.write_ops, m.seconds);
  out += buf;
  (void)std::snprintf(buf, sizeof buf,
                      "  latency_us: min %.2f mean %.2f p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f "
                      "p99.99 %.2f max %.2f\n",
                      l.min_us, l.mean_us, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.p9999_us,
                      l.max_us);
  out += buf;
  (void)std::snprintf(buf, sizeof buf, "  cpu: user %.1f%% sys %.1f%% (of all online cores)\n",
                      m.cpu.user_percent, m.cpu.sys_percent);
  out += buf;
  out += "  path: " + (r.path.path_used.empty() ? std::string("-") : r.path.path_used) + "\n";
  for (const auto& e : r.path.evidence) out += "    evidence: " + e + "\n";
  if (r.workload.verify) out += "  verify errors: " + std::to_string(r.verify_errors) + "\n";
  for (std::size_t i = 0; i < r.repetitions.size(); ++i) {
    const Measurement& rep = r.repetitions[i];
    (void)std::snprintf(buf, sizeof buf, "  repetition %zu: %.6f GiB/s iops %.1f p99 %.2f us\n",
                        i + 1, rep.throughput_gib_s, rep.iops, rep.latency.p99_us);
    out += buf;
  }
  return out;
}

}  // namespace gdsb::report
