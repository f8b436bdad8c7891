// Too few threads or too small I/O for the drives: the workload, not the platform, is
// the limit. Certain when a run of the same type with more threads/larger I/O is faster.
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

uint64_t outstanding(const Workload& w) { return uint64_t{w.threads} * std::max(1u, w.iodepth); }

std::vector<Finding> run(const Facts& facts) {
  std::vector<Finding> out;
  std::vector<XferType> done;
  for (const auto& r : facts.figures.runs) {
    const auto v = run_gb_s(r);
    const auto& w = r.workload;
    if (!v || !is_read(w) || std::find(done.begin(), done.end(), w.xfer) != done.end()) continue;
    const bool small = outstanding(w) < 8 || w.io_size < (128u << 10);
    if (!small) continue;
    // A bigger run of the same type (the live ladder's retry, or the user's own).
    const RunResult* bigger = nullptr;
    for (const auto& o : facts.figures.runs) {
      const auto ov = run_gb_s(o);
      if (!ov || o.workload.xfer != w.xfer || !is_read(o.workload) || &o == &r) continue;
      if ((outstanding(o.workload) > outstanding(w) || o.workload.io_size > w.io_size) &&
          *ov >= 1.3 * *v && (!bigger || *ov > *run_gb_s(*bigger)))
        bigger = &o;
    }
    const GpuDiagnosis* g = xfer_uses_gpu(w.xfer) ? facts.gpu_of(r) : nullptr;
    std::optional<double> drives = g ? facts.drives(*g) : std::nullopt;
    if (!drives && !facts.gpus.empty()) drives = facts.drives(facts.gpus.front());
    const bool far_below = drives && *v < 0.5 * *drives;
    if (!bigger && !far_below) continue;
    Finding f;
    f.rule = "workload-limit";
    f.title = "the workload limits " + detail::describe_run(r) + ": too few threads or too "
              "small I/O for the drives";
    f.confidence = bigger ? Confidence::Certain : Confidence::Possible;
    if (g) f.devices.push_back(g->label);
    f.evidence.push_back(detail::run_line(r, *v) + ", " + std::to_string(outstanding(w)) +
                         " I/O(s) in flight");
    if (bigger) {
      f.evidence.push_back(detail::run_line(*bigger, *run_gb_s(*bigger)) + " = " +
                           detail::pct(*run_gb_s(*bigger) / *v) + " of it");
      f.expected_gb_s = run_gb_s(*bigger);
    } else {
      f.evidence.push_back("drives allow " + detail::gb(*drives) + " (" + detail::pct(*v / *drives) +
                           " used)");
      f.expected_gb_s = drives;
    }
    f.storage_fix = true;  // deeper queues change what storage alone measures
    f.fix = "more I/O in flight and larger I/O: gdsb-io -w 16 -i 1M (or --engine io_uring "
            "--iodepth 32 for -x 1/2); the same in the application (threads, request size)";
    f.expected = "~" + detail::gb(*f.expected_gb_s) +
                 (bigger ? " as measured with " + detail::describe_run(*bigger)
                         : std::string(" (drives)"));
    f.impact_gb_s = *f.expected_gb_s - *v;
    done.push_back(w.xfer);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule workload_limit_rule() {
  return {"workload-limit", "too few threads or too small I/O for the drives", run};
}

}  // namespace gdsb::doctor
