#include "gdsb/report/gdsio_line.hpp"

#include <cinttypes>
#include <cstdio>

namespace gdsb::report {
namespace {

bool is_batch(XferType t) { return t == XferType::GpuBatch || t == XferType::GpuBatchStream; }

}  // namespace

std::string gdsio_line(const RunResult& r) {
  const Workload& w = r.workload;
  const Measurement& m = r.result;
  // A file list (workload presets) covers each listed file (open_per_file: each file read,
  // its opens being inside the measured time, not in setup); -D one file per thread.
  const uint64_t files = !w.file_list.empty() && r.setup.files > 0 ? r.setup.files
                         : w.open_per_file && m.per_file           ? m.per_file->files
                         : w.file.empty()                          ? w.threads
                                                                   : 1;
  const uint64_t dataset_kib = w.file_size * files / 1024;

  std::string depth;
  if (is_batch(w.xfer)) {
    depth = " IoDepth: " + std::to_string(w.batch_size != 0 ? w.batch_size : w.iodepth);
  }
  char buf[512];
  (void)std::snprintf(
      buf, sizeof buf,
      "IoType: %s XferType: %s Threads: %" PRIu32 "%s DataSetSize: %" PRIu64 "/%" PRIu64
      "(KiB) IOSize: %" PRIu64 "(KiB) Throughput: %f GiB/sec, Avg_Latency: %f usecs ops: %" PRIu64
      " total_time %f secs",
      std::string(pattern_label(w.pattern)).c_str(), std::string(xfer_label(w.xfer)).c_str(),
      w.threads, depth.c_str(), m.bytes / 1024, dataset_kib, w.io_size / 1024, m.throughput_gib_s,
      m.latency.mean_us, m.ops, m.seconds);
  return buf;
}

std::string phases_text(const IoPhases& p) {
  char buf[512];
  std::string dma = "DMA not timed";
  if (p.dma.count > 0) {
    (void)std::snprintf(buf, sizeof buf, "DMA %.1f us", p.dma.us.mean_us);
    dma = buf;
  }
  std::string wait;
  if (p.wait.count > 0) {
    (void)std::snprintf(buf, sizeof buf, ", wait %.1f us", p.wait.us.mean_us);
    wait = buf;
  }
  (void)std::snprintf(buf, sizeof buf,
                      "phases: storage %.1f us, copy %.1f us (%s)%s per I/O (means of %" PRIu64
                      " I/Os)\n",
                      p.storage.us.mean_us, p.copy.us.mean_us, dma.c_str(), wait.c_str(),
                      p.storage.count);
  std::string out = buf;
  if (p.sync_ceiling_gib_s > 0) {
    (void)std::snprintf(buf, sizeof buf,
                        "synchronous ceiling: storage %.1f / (%.1f + %.1f) us x storage rate "
                        "%.2f GiB/s = %.2f GiB/s\n",
                        p.storage.us.mean_us, p.storage.us.mean_us, p.copy.us.mean_us,
                        p.storage_gib_s, p.sync_ceiling_gib_s);
    out += buf;
  }
  return out;
}

std::string gdsio_block(const RunResult& r) {
  std::string out;
  switch (r.status) {
    case RunStatus::Ok:
      out = gdsio_line(r) + "\n";
      if (r.result.phases) out += phases_text(*r.result.phases);
      break;
    case RunStatus::Waived:
      out = "not available: " + r.reason + "\n";
      break;
    case RunStatus::PageCache:  // measured, but the memory's figures: said under the line
      out = gdsio_line(r) + "\n" + std::string(run_status_name(r.status)) + ": " + r.reason + "\n";
      break;
    case RunStatus::Failed:
      // A run that failed part way may still have measured something worth showing.
      if (r.result.ops > 0) out = gdsio_line(r) + "\n";
      out += "failed: " + r.reason + "\n";
      break;
  }
  // --repeat: every repetition under the median's line; they do not start with "IoType:",
  // so gdsio parsers still see one line per job.
  if (r.repetitions.size() > 1) {
    for (std::size_t i = 0; i < r.repetitions.size(); ++i) {
      const Measurement& m = r.repetitions[i];
      char buf[256];
      (void)std::snprintf(buf, sizeof buf,
                          "repetition %zu/%zu: Throughput: %f GiB/sec, Avg_Latency: %f usecs p99: "
                          "%f usecs ops: %" PRIu64 " total_time %f secs\n",
                          i + 1, r.repetitions.size(), m.throughput_gib_s, m.latency.mean_us,
                          m.latency.p99_us, m.ops, m.seconds);
      out += buf;
    }
  }
  // Which GDS mode cuFile took and the fact that says so; compat says both in its warning.
  if (path_is_gds(path_used_of(r.path.path_used)) && !r.path.decided_by.empty()) {
    out += "path: " + r.path.path_used + " (" + r.path.decided_by + ")\n";
  }
  for (const auto& warning : r.path.warnings) out += "warning: " + warning + "\n";
  if (r.interrupted) out += "interrupted: results cover the time before the stop signal\n";
  return out;
}

}  // namespace gdsb::report
