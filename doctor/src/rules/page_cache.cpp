// Reads faster than the drives can deliver come from the page cache, not from storage:
// the figure says nothing about the storage path.
#include "gdsb/topo/path_model.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

// The most any file on this machine could read: every NVMe drive's link together.
std::optional<double> all_drives_gb_s(const Platform* p) {
  if (!p) return std::nullopt;
  double sum = 0;
  int n = 0;
  for (const topo::Device* d : p->snapshot->with_role(topo::Role::Nvme)) {
    const auto hop = topo::link_hop(*p->snapshot, *d);  // the path model's drive link
    if (!hop || !hop->gb_s) return std::nullopt;
    sum += *hop->gb_s;
    ++n;
  }
  return n > 0 ? std::optional<double>(sum) : std::nullopt;
}

std::vector<Finding> run(const Facts& facts) {
  std::vector<Finding> out;
  const auto ceiling = all_drives_gb_s(facts.platform);
  const RunResult* x1 = facts.storage_alone();
  const bool x1_direct = x1 != nullptr;  // storage_alone() is O_DIRECT storage I/O
  for (const auto& r : facts.figures.runs) {
    const auto v = run_gb_s(r);
    if (!v || !is_read(r.workload)) continue;
    const bool cached_path = !r.workload.odirect || r.workload.xfer == XferType::CpuCachedGpu ||
                             path_through_page_cache(path_used_of(r.path.path_used));
    Finding f;
    f.rule = "page-cache";
    if (ceiling && *v > 1.1 * *ceiling) {
      f.confidence = Confidence::Certain;
      f.evidence.push_back(detail::run_line(r, *v) + " exceeds every NVMe drive together (" +
                           detail::gb(*ceiling) + ") by " + detail::pct(*v / *ceiling - 1));
      f.expected_gb_s = ceiling;
    } else if (!ceiling && x1_direct && &r != x1 && *v > 1.2 * *run_gb_s(*x1) &&
               (cached_path || r.workload.xfer == XferType::CpuOnly)) {
      f.confidence = Confidence::Likely;
      f.evidence.push_back(detail::run_line(r, *v) + " is " + detail::pct(*v / *run_gb_s(*x1)) +
                           " of storage alone with O_DIRECT (" + detail::run_line(*x1, *run_gb_s(*x1)) +
                           ")");
      f.expected_gb_s = run_gb_s(*x1);
    } else {
      continue;
    }
    if (cached_path) f.evidence.push_back("the run did not use O_DIRECT (path " + r.path.path_used + ")");
    f.title = "page cache serves the reads of " + detail::describe_run(r) +
              ": the figure is above what storage can deliver";
    f.devices.push_back(r.workload.file.empty() ? r.workload.directory : r.workload.file);
    f.fix = "measure storage with O_DIRECT (drop -O 1 / -x 4), a file larger than RAM, and "
            "sync; echo 3 > /proc/sys/vm/drop_caches before each run";
    f.expected = "~" + detail::gb(*f.expected_gb_s) + ", what the drives deliver";
    f.impact_gb_s = *v - *f.expected_gb_s;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule page_cache_rule() {
  return {"page-cache", "figures above the storage ceiling: the page cache serves the reads", run};
}

}  // namespace gdsb::doctor
