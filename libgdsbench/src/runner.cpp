#include "gdsb/runner.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <chrono>
#include <thread>

#include "gdsb/error.hpp"
#include "gdsb/offsets.hpp"
#include "gdsb/page_cache.hpp"
#include "numa.hpp"
#include "run_files.hpp"
#include "worker_loop.hpp"

namespace gdsb {
namespace {

using detail::LiveCounters;
using detail::now_ns;
using detail::unix_now_s;
using detail::ThreadStats;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string iso_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  (void)std::snprintf(buf + n, sizeof buf - n, ".%03ldZ", ts.tv_nsec / 1000000L);
  return buf;
}

uint64_t to_ns(double seconds) { return static_cast<uint64_t>(seconds * 1e9); }

// What one repetition needs; everything lives on the stack of Runner::run.
struct Job {
  const Workload& w;
  PathRun& path_run;
  const detail::RunFiles& files;
  const std::vector<std::vector<Region>>& regions;  // per thread
  const detail::NumaBinding* numa;
  const RunOptions& options;
};

struct Repetition {
  Measurement m;
  bool interrupted = false;
};

double cpu_seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

// getrusage(RUSAGE_SELF) at the start and the end of the measured interval.
struct ProcessCpu {
  rusage start{};
  rusage end{};
};

Measurement summarize(const Workload& w, std::vector<ThreadStats>& stats, uint64_t t0,
                      const ProcessCpu& proc) {
  Measurement m;
  uint64_t end = t0;
  LatencyHistogram merged;
  LatencyHistogram requests;
  uint64_t fsync_ns = 0;
  double user_s = 0;
  double sys_s = 0;
  std::size_t seconds_len = 0;
  std::optional<PhaseRecorder> phases;
  std::optional<detail::FileCostHistograms> file_costs;
  for (const ThreadStats& s : stats) {
    if (s.file_costs) {
      if (!file_costs) file_costs.emplace();
      file_costs->merge(*s.file_costs);
    }
    if (s.phases) {
      if (!phases) phases.emplace(s.phases->synchronous());
      phases->merge(*s.phases);
    }
    m.bytes += s.bytes;
    m.ops += s.ops;
    m.read_ops += s.read_ops;
    m.write_ops += s.write_ops;
    end = std::max(end, s.end_ns);
    merged.merge(s.histogram);
    requests.merge(s.requests);
    fsync_ns = std::max(fsync_ns, s.fsync_ns);
    user_s += s.cpu_user_s;
    sys_s += s.cpu_sys_s;
    seconds_len = std::max(seconds_len, s.seconds.size());
  }
  m.seconds = static_cast<double>(end - t0) * 1e-9;
  if (m.seconds > 0) {
    m.throughput_gib_s = static_cast<double>(m.bytes) / m.seconds / kGiB;
    m.iops = static_cast<double>(m.ops) / m.seconds;
    const double cpus = static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
    m.cpu.user_percent = 100.0 * user_s / (m.seconds * cpus);
    m.cpu.sys_percent = 100.0 * sys_s / (m.seconds * cpus);
    m.cpu.process_user_percent =
        100.0 * (cpu_seconds(proc.end.ru_utime) - cpu_seconds(proc.start.ru_utime)) / (m.seconds * cpus);
    m.cpu.process_sys_percent =
        100.0 * (cpu_seconds(proc.end.ru_stime) - cpu_seconds(proc.start.ru_stime)) / (m.seconds * cpus);
  }
  if (m.ops > 0) {
    m.cpu.user_us_per_io = 1e6 * user_s / static_cast<double>(m.ops);
    m.cpu.sys_us_per_io = 1e6 * sys_s / static_cast<double>(m.ops);
  }
  m.latency = merged.summary();
  m.histogram = merged.buckets();
  if (w.request_blocks > 1) {
    m.requests = requests.count();
    m.request_latency = requests.summary();
  }
  m.fsync_s = static_cast<double>(fsync_ns) * 1e-9;
  if (phases) m.phases = phases->summary(w.threads, m);
  if (file_costs) m.per_file = file_costs->summary();
  for (std::size_t k = 0; k < seconds_len; ++k) {
    TimePoint p;
    p.t_end_s = std::min(static_cast<double>(k + 1), m.seconds);
    for (const ThreadStats& s : stats) {
      if (k < s.seconds.size()) {
        p.bytes += s.seconds[k].bytes;
        p.ops += s.seconds[k].ops;
      }
    }
    m.timeseries.push_back(p);
  }
  return m;
}

// Workload::fsync: the thread makes what it wrote durable, inside its measured interval.
void sync_files(const Job& job, uint32_t thread, ThreadStats& stats) {
  const uint64_t t = now_ns();
  for (const Region& region : job.regions[thread]) {
    if (::fsync(job.files.set.fds[region.file]) != 0) {
      throw RuntimeError("fsync of " + job.files.set.paths[region.file] +
                         " failed: " + std::strerror(errno));
    }
  }
  const uint64_t end = now_ns();
  stats.fsync_ns = end - t;
  stats.end_ns = end;
}

// first: the run's first repetition, which starts with the page cache as the run found it
// (what the user's own file brought is reported, not hidden); later ones start without
// what the earlier ones read.
Repetition run_repetition(const Job& job, double warmup_s, bool first) {
  const Workload& w = job.w;
  const uint32_t n = w.threads;
  std::vector<ThreadStats> stats(n);
  std::vector<LiveCounters> live(n);
  std::atomic<bool> abort{false};
  const detail::StopSignals stop{job.options.stop, &abort};
  std::mutex mutex;
  std::condition_variable cv;
  uint32_t finished = 0;
  std::exception_ptr error;

  // Phase boundaries: set by the barrier's completion step, read by every thread after it.
  struct Clock {
    uint64_t warmup_start = 0;
    uint64_t t0 = 0;
    double t0_unix_s = 0;
    int phase = 0;
  } clock;
  std::atomic<uint64_t> phase_start{0};
  ProcessCpu proc_cpu;
  std::atomic<uint32_t> measured{0};  // threads past their measured interval
  std::atomic<bool> warming{false};
  auto on_phase = [&]() noexcept {
    const uint64_t t = now_ns();
    if (clock.phase++ == 0) {
      clock.warmup_start = t;
      warming.store(warmup_s > 0, std::memory_order_relaxed);
    } else {
      clock.t0 = t;
      getrusage(RUSAGE_SELF, &proc_cpu.start);
      clock.t0_unix_s = unix_now_s();
      warming.store(false, std::memory_order_relaxed);
    }
    phase_start.store(t, std::memory_order_relaxed);
  };
  std::barrier sync(static_cast<std::ptrdiff_t>(n), on_phase);

  auto record_error = [&](std::exception_ptr e) {
    const std::lock_guard lock(mutex);
    if (!error) error = std::move(e);
    abort.store(true, std::memory_order_relaxed);
  };

  auto thread_main = [&](uint32_t i) {
    std::unique_ptr<PathWorker> worker;
    std::optional<detail::ThreadLoop> loop;
    try {
      if (job.numa != nullptr) job.numa->bind_current_thread();
      worker = job.path_run.make_worker(i);
      std::vector<OffsetPlan> plans;
      for (const Region& region : job.regions[i]) plans.push_back(offset_plan(w, region, i));
      loop.emplace(w, std::move(plans), job.files.set, *worker, live[i]);
      if (!first) loop->drop_read_regions();
    } catch (...) {
      record_error(std::current_exception());
    }
    sync.arrive_and_wait();
    if (warmup_s > 0 && !stop.requested()) {
      try {
        loop->run(clock.warmup_start, clock.warmup_start + to_ns(warmup_s), stop, stats[i]);
        loop->drop_read_regions();  // the measured interval reads storage, not the warm-up's pages
      } catch (...) {
        record_error(std::current_exception());
      }
    }
    sync.arrive_and_wait();
    stats[i].reset();  // nothing of the warm-up is reported, even when stopped now
    PhaseRecorder* phases = worker ? worker->phases() : nullptr;
    if (phases != nullptr) phases->reset();
    if (!stop.requested()) {
      try {
        const uint64_t deadline = w.runtime_s > 0 ? clock.t0 + to_ns(w.runtime_s) : 0;
        loop->run(clock.t0, deadline, stop, stats[i]);
        if (phases != nullptr) {  // before -V's read-back, which is not measured
          stats[i].phases = std::make_unique<PhaseRecorder>(phases->synchronous());
          stats[i].phases->merge(*phases);
        }
        if (w.fsync) sync_files(job, i, stats[i]);
        if (measured.fetch_add(1) + 1 == n) getrusage(RUSAGE_SELF, &proc_cpu.end);
        if (w.verify && pattern_is_write(w.pattern)) loop->verify_written(stop);
      } catch (...) {
        record_error(std::current_exception());
      }
    }
    loop.reset();
    worker.reset();  // in this thread: some workers (io_uring) belong to their thread
    {
      const std::lock_guard lock(mutex);
      ++finished;
    }
    cv.notify_all();
  };

  std::vector<std::thread> threads;
  threads.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    try {
      threads.emplace_back(thread_main, i);
    } catch (const std::system_error& e) {
      record_error(
          std::make_exception_ptr(RuntimeError("cannot start worker thread " + std::to_string(i) +
                                               " of " + std::to_string(n) + ": " + e.what())));
      // Stand in for the threads that do not exist so the others get past the barriers.
      for (uint32_t k = i; k < n; ++k) {
        sync.arrive_and_drop();
        const std::lock_guard lock(mutex);
        ++finished;
      }
      break;
    }
  }

  uint64_t last_bytes = 0;
  uint64_t last_ns = now_ns();
  bool last_warming = false;
  {
    std::unique_lock lock(mutex);
    while (!cv.wait_for(lock, job.options.progress_interval, [&] { return finished == n; })) {
      if (!job.options.on_progress) continue;
      lock.unlock();
      Progress p;
      const uint64_t t = now_ns();
      const uint64_t start = phase_start.load(std::memory_order_relaxed);
      p.warming_up = warming.load(std::memory_order_relaxed);
      for (const LiveCounters& c : live) {
        p.bytes += c.bytes.load(std::memory_order_relaxed);
        p.ops += c.ops.load(std::memory_order_relaxed);
      }
      if (p.warming_up != last_warming || p.bytes < last_bytes) last_bytes = 0;
      p.elapsed_s = start == 0 ? 0.0 : static_cast<double>(t - start) * 1e-9;
      p.planned_s = p.warming_up ? warmup_s : w.runtime_s;
      const double dt = static_cast<double>(t - last_ns) * 1e-9;
      p.recent_gib_s = dt > 0 ? static_cast<double>(p.bytes - last_bytes) / dt / kGiB : 0.0;
      last_bytes = p.bytes;
      last_ns = t;
      last_warming = p.warming_up;
      try {
        if (start != 0) job.options.on_progress(p);
      } catch (...) {
        record_error(std::current_exception());
      }
      lock.lock();
    }
  }
  for (auto& t : threads) t.join();
  // A thread that failed or never ran did not count itself: end the interval here.
  if (measured.load() < n) getrusage(RUSAGE_SELF, &proc_cpu.end);
  if (error) std::rethrow_exception(error);

  Repetition rep;
  rep.m = summarize(w, stats, clock.t0, proc_cpu);
  rep.m.t0_unix_s = clock.t0_unix_s;
  rep.m.end_unix_s = clock.t0_unix_s + rep.m.seconds;
  rep.interrupted = job.options.stop != nullptr && job.options.stop->load();
  return rep;
}

// Each thread's regions: one (-f: its part of the file, -D: its own file), or with a file
// list the whole files i, i + w, i + 2w, ... in list order.
std::vector<std::vector<Region>> thread_regions(const Workload& w,
                                                const detail::RunFiles& files) {
  std::vector<std::vector<Region>> out(w.threads);
  if (w.file_list.empty()) {
    const std::vector<Region> regions = split_regions(w, files.data_size);
    for (uint32_t i = 0; i < w.threads; ++i) out[i].push_back(regions[i]);
    return out;
  }
  for (uint32_t f = 0; f < files.sizes.size(); ++f) {
    const uint64_t size = files.sizes[f];
    if (size < w.io_size || size % w.io_size != 0) {
      throw UsageError(files.set.paths[f] + " covers " + std::to_string(size) +
                       " bytes, not a whole number of I/Os of -i " + std::to_string(w.io_size) +
                       " (a file list reads or writes each file whole): choose -i to divide it");
    }
    out[f % w.threads].push_back({f, w.start_offset, w.start_offset + size});
  }
  if (files.sizes.size() < w.threads) {
    throw UsageError("the file list names " + std::to_string(files.sizes.size()) +
                     " files for " + std::to_string(w.threads) +
                     " threads: each thread needs a file; lower -w (num_threads)");
  }
  return out;
}

// Every thread must have at least one whole I/O to do.
void check_regions(const Workload& w, const std::vector<Region>& regions) {
  for (uint32_t i = 0; i < regions.size(); ++i) {
    if (OffsetGenerator(offset_plan(w, regions[i], i)).blocks_per_pass() == 0) {
      throw UsageError(
          "thread " + std::to_string(i) + " has no whole I/O to do: its part of the data (" +
          std::to_string(regions[i].end - regions[i].begin) + " bytes) is too small for -i " +
          std::to_string(w.io_size) +
          (w.unaligned_random ? " with -U (which needs up to -a - 1 more bytes)" : "") +
          "; raise -s or lower -w");
    }
  }
}

// Share of the bytes the job covers that sit in the page cache now; nullopt where mincore
// cannot tell. With open_per_file, each thread's first file stands for the rest (opening
// every file of a data set twice more would cost as much as a pass over it).
std::optional<double> resident_share(const detail::RunFiles& files,
                                     const std::vector<std::vector<Region>>& regions) {
  uint64_t total = 0;
  uint64_t resident = 0;
  for (const auto& per_thread : regions) {
    for (const Region& r : per_thread) {
      const detail::CacheFd fd(files, r.file);
      const auto bytes = page_cache_bytes(fd.get(), r.begin, r.end - r.begin);
      if (!bytes) return std::nullopt;
      total += r.end - r.begin;
      resident += *bytes;
      if (files.set.open_per_file) break;
    }
  }
  if (total == 0) return std::nullopt;
  return static_cast<double>(resident) / static_cast<double>(total);
}

// After the last repetition: what the job wrote goes to storage and out of the page cache
// (a later run of gdsbench that reads it, the survey's or the doctor's, starts from
// storage), and what it read is dropped. A read range still resident after the drop is on
// a file system that keeps data in memory whatever the advice: the figures are the
// memory's, and the run says so in its status.
void leave_page_cache(const Workload& w, const detail::RunFiles& files,
                      const std::vector<std::vector<Region>>& regions, RunResult& r) {
  const auto drop = [&](bool warn) {
    for (const auto& per_thread : regions) {
      for (const Region& region : per_thread) {
        const detail::CacheFd cache_fd(files, region.file);
        const int fd = cache_fd.get();
        if (!drop_from_page_cache(fd, region.begin, region.end - region.begin,
                                  detail::job_writes(w)) &&
            warn)
          r.path.warnings.push_back("could not drop " + files.set.paths.at(region.file) +
                                    " from the page cache: " + std::strerror(errno));
      }
    }
  };
  drop(true);
  if (!detail::job_reads(w)) return;
  std::optional<double> kept = resident_share(files, regions);
  // The kernel's asynchronous readahead of a buffered read may still land after the drop
  // (a megabyte or so, seen under load): drop what arrived late, a few times, so that the
  // next run on this file starts from storage (issue 27).
  for (int i = 0; i < 3 && kept && *kept > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    drop(false);
    kept = resident_share(files, regions);
  }
  if (!kept || *kept < kResidentAfterDropLimit) return;
  r.status = RunStatus::PageCache;
  r.reason = std::to_string(static_cast<int>(*kept * 100.0 + 0.5)) + "% of the data read stayed in " +
             "the page cache after posix_fadvise(DONTNEED): this file system (tmpfs, ramfs ...) " +
             "keeps it in memory, so these figures are the memory's, not the storage's; use a " +
             "file on the storage to measure";
}

}  // namespace

Availability Runner::probe(const Workload& w) const {
  const TransferPath* path = paths_.find(w.xfer);
  if (path == nullptr) {
    return Availability::no(
        std::string(xfer_label(w.xfer)) + " (-x " + std::to_string(static_cast<int>(w.xfer)) +
        ") is not part of this build" +
        (xfer_uses_gpu(w.xfer) ? ": GPU transfer paths need a build with CUDA support" : ""));
  }
  return path->probe(w);
}

RunResult Runner::run(const Workload& w, const RunOptions& options) const {
  RunResult r;
  r.workload = w;
  r.started_at = iso_now();
  const Availability available = probe(w);
  if (!available.ok) {
    r.status = RunStatus::Waived;
    r.reason = available.reason;
    r.ended_at = iso_now();
    return r;
  }
  TransferPath& path = *paths_.find(w.xfer);
  const bool odirect = path.needs_odirect(w);
  detail::validate_workload(w, odirect);
  if (w.file_size != 0 && w.file_list.empty())
    check_regions(w, split_regions(w, w.file_size));  // before any file is touched
  std::optional<detail::NumaBinding> numa;
  if (w.numa_node) numa.emplace(*w.numa_node);

  const uint64_t open_start = detail::now_ns();
  const detail::RunFiles files = detail::open_run_files(w, odirect, options.job_files);
  r.setup.open_s = static_cast<double>(detail::now_ns() - open_start) * 1e-9;
  // With open_per_file the opens are inside the measured interval (Measurement::per_file).
  r.setup.files = files.set.open_per_file ? 0 : files.set.paths.size();
  {
    LatencyHistogram opens;
    for (const uint64_t ns : files.open_ns) opens.record(ns);
    r.setup.open_latency = opens.summary();
  }
  // Without -s a read covers what it found: report that size (gdsio's DataSetSize), so a
  // block device does not show up as N/0.
  if (r.workload.file_size == 0) r.workload.file_size = files.data_size;
  const std::vector<std::vector<Region>> regions = thread_regions(w, files);
  if (w.file_list.empty()) check_regions(w, split_regions(w, files.data_size));
  if (detail::job_reads(w)) r.page_cache_resident_at_start = resident_share(files, regions);
  const uint64_t start_ns = detail::now_ns();
  std::unique_ptr<PathRun> path_run = path.start(w, files.set);
  r.setup.path_start_s = static_cast<double>(detail::now_ns() - start_ns) * 1e-9;
  const Job job{w, *path_run, files, regions, numa ? &*numa : nullptr, options};

  std::vector<Measurement> reps;
  for (uint32_t i = 0; i < w.repeat; ++i) {
    Repetition rep = run_repetition(job, i == 0 ? w.warmup_s : 0.0, i == 0);
    reps.push_back(std::move(rep.m));
    if (rep.interrupted) {
      r.interrupted = true;
      break;
    }
  }
  r.path = path_run->finish();
  path_run.reset();
  for (const auto& warning : files.warnings) r.path.warnings.push_back(warning);

  // The reported figures are the median repetition by throughput (lower middle when even).
  std::vector<std::size_t> order(reps.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return reps[a].throughput_gib_s < reps[b].throughput_gib_s;
  });
  r.result = reps[order[(order.size() - 1) / 2]];
  if (w.repeat > 1) r.repetitions = std::move(reps);
  r.status = RunStatus::Ok;
  leave_page_cache(w, files, regions, r);
  r.ended_at = iso_now();
  return r;
}

}  // namespace gdsb
