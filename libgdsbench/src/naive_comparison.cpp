#include "gdsb/naive_comparison.hpp"

#include <cmath>
#include <cstdio>

namespace gdsb {
namespace {

std::string percent(double share) {
  char b[16];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * share);
  return b;
}

}  // namespace

std::optional<SlowerThanNaive> slower_than_naive(std::span<const RunResult> load_runs,
                                                 std::optional<double> naive_cached_share,
                                                 double naive_over_load) {
  if (!(naive_over_load < 1.0) || !std::isfinite(naive_over_load)) return std::nullopt;
  SlowerThanNaive out;
  out.naive_over_load = naive_over_load;
  if (naive_cached_share && *naive_cached_share >= kNaiveCachedShare) {
    out.cause = "page_cache";
    out.why = "the naive load found " + percent(*naive_cached_share) +
              " of the shards in the page cache and read memory, not storage";
    return out;
  }
  double storage_us = 0, other_us = 0;
  std::string path;
  bool overlapped = false;  // -x 3 ran: its copies already overlap the reads
  for (const RunResult& r : load_runs) {
    if (r.status != RunStatus::Ok) continue;
    if (!r.path.path_used.empty()) path = r.path.path_used;
    overlapped = overlapped || r.workload.xfer == XferType::CpuAsyncGpu;
    if (!r.result.phases) continue;
    const IoPhases& p = *r.result.phases;
    storage_us += p.storage.us.mean_us * static_cast<double>(p.storage.count);
    other_us += p.copy.us.mean_us * static_cast<double>(p.copy.count) +
                p.wait.us.mean_us * static_cast<double>(p.wait.count);
  }
  if (storage_us + other_us <= 0) {
    out.cause = "unknown";
    out.why = "this path (" + (path.empty() ? std::string("none recorded") : path) +
              ") has no phase timing; compare storage alone (-x 1, O_DIRECT) with the naive "
              "load's buffered reads of the same shards to see whether the storage serves "
              "buffered reads faster";
    return out;
  }
  const double share = storage_us / (storage_us + other_us);
  out.storage_share = share;
  if (share < kStorageBoundShare) {
    out.cause = "copies";
    // The advice never names the mode that ran (issue 43: -x 3 was told to try -x 3).
    out.why = "the copies to the GPU took " + percent(1 - share) + " of each I/O's time: " +
              (overlapped ? std::string("more threads (-w) or more staging slots (--iodepth) give "
                                        "the copies more reads to hide behind")
                          : std::string("more threads (-w) or -x 3 (copies overlapped with reads) "
                                        "hide them"));
    return out;
  }
  const bool direct = path_used_of(path) == PathUsed::Posix;
  out.cause = direct ? "storage_direct_reads" : "storage_reads";
  out.why = "this load spent " + percent(share) + " of each I/O's time reading the storage (" +
            (direct ? std::string("O_DIRECT") : path) + ") and " + percent(1 - share) +
            " copying to the GPU: the storage served the naive load's buffered reads (with the "
            "kernel's read-ahead) faster than " +
            (direct ? "direct reads" : "these reads") + ", not the GPU path" +
            (direct ? "; a storage that serves O_DIRECT at its rate (local NVMe) gives the direct "
                      "paths their lead"
                    : "");
  return out;
}

}  // namespace gdsb
