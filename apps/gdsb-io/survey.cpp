#include "survey.hpp"

#include "gdsb/report/output_file.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "execute.hpp"
#include "gdsb/error.hpp"
#include "gdsb/node_run.hpp"
#include "gdsb/report/io_table.hpp"
#include "gdsb/runner.hpp"
#include "gdsb/units.hpp"
#include "run_io.hpp"
#include "values.hpp"

namespace gdsb::io {
namespace {

constexpr uint64_t kDefaultSize = 1ULL << 30;
constexpr uint64_t kMinSize = 16ULL << 20;

std::string sys_error() { return std::strerror(errno); }

std::string scratch_dir() {
  const char* env = std::getenv("GDSB_SCRATCH");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(".");
}

uint64_t survey_size(const std::string& dir) {
  uint64_t want = kDefaultSize;
  if (const char* env = std::getenv("GDSB_SURVEY_SIZE"); env != nullptr && *env != '\0') {
    want = parse_size(env, "GDSB_SURVEY_SIZE");
  }
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0)
    throw RuntimeError("cannot use scratch directory " + dir + ": " + sys_error());
  const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  // Leave at least half of the free space to others.
  uint64_t size = std::min(want, free_bytes / 2);
  size -= size % (1ULL << 20);
  if (size < std::min(want, kMinSize)) {
    throw RuntimeError("not enough free space in " + dir + " for the survey's scratch file (" +
                       format_size(free_bytes) + " free); set GDSB_SCRATCH to another directory");
  }
  return size;
}


std::vector<Workload> survey_jobs(const std::string& file, uint64_t size, double seconds) {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  const auto threads = static_cast<uint32_t>(std::clamp<long>(cpus, 1, 4));
  std::vector<Workload> jobs;
  for (int x = 0; x < kXferTypeCount; ++x) {
    for (const auto& [pattern, io_size] : {std::pair{IoPattern::Read, uint64_t{1} << 20},
                                           std::pair{IoPattern::RandRead, uint64_t{4096}}}) {
      Workload w;
      w.name = "survey";
      w.file = file;
      w.file_size = size;
      w.io_size = std::min(io_size, size);
      w.xfer = static_cast<XferType>(x);
      w.pattern = pattern;
      w.threads = threads;
      w.runtime_s = seconds;
      w.allow_overwrite = true;  // our own scratch file
      jobs.push_back(w);
    }
  }
  return jobs;
}

}  // namespace

double survey_seconds() {
  if (const char* env = std::getenv("GDSB_SURVEY_SECONDS"); env != nullptr && *env != '\0') {
    return parse_seconds(env, "GDSB_SURVEY_SECONDS");
  }
  return 3.0;
}

int run_survey(const Options& opt, const std::atomic<bool>& stop, ProgressLine& progress) {
  const std::string report_path = opt.json_file.empty() ? kSurveyReport : opt.json_file;
  report::OutputTarget report_target = io_json_target(report_path);
  if (opt.json_file.empty()) {
    report_target.option = "survey report";
    report_target.create_parent = true;  // our own default, gdsb-report/
  }
  report::check_output_path(report_target, opt.allow_overwrite);
  if (!opt.html_file.empty()) report::check_output_path(opt.html_file, opt.allow_overwrite);
  const std::string dir = scratch_dir();
  if (::access(dir.c_str(), W_OK) != 0) {
    throw RuntimeError("cannot write in scratch directory " + dir + ": " + sys_error() +
                       "; set GDSB_SCRATCH to a writable directory");
  }
  const uint64_t size = survey_size(dir);
  const double seconds = survey_seconds();
  RunContext context = collect_context();
  const PathRegistry registry = make_default_registry();
  const Runner runner(registry);

  // The runner creates it (exclusively: the name carries our pid); removed whatever happens.
  ScratchFiles scratch;
  const std::string& file = scratch.add(dir + "/gdsb-survey." + std::to_string(::getpid()) + ".tmp");
  std::vector<RunResult> results;
  const auto all = survey_jobs(file, size, seconds);

  if (progress.enabled()) {
    (void)std::fprintf(stderr, "gdsb-io: writing %s scratch file %s\n", format_size(size).c_str(),
                       file.c_str());
  }
  bool filled = false;
  try {
    filled = write_scratch_file(runner, file, size, &stop);
  } catch (...) {
    progress.clear();
    throw;
  }
  int code = kExitOk;
  for (std::size_t i = 0; filled && i < all.size() && !stop.load(); ++i) {
    const Availability a = runner.probe(all[i]);
    if (!a.ok) {
      RunResult waived;
      waived.workload = all[i];
      waived.status = RunStatus::Waived;
      waived.reason = a.reason;
      results.push_back(std::move(waived));
      continue;
    }
    RunOptions ro;
    ro.stop = &stop;
    ro.on_progress = progress.for_job(i, job_label(i, all.size(), all[i]));
    JobOutcome o = execute_one(runner, all[i], ro, /*waived_is_error=*/false);
    progress.finish_job(i);
    progress.clear();
    if (o.result.status == RunStatus::Failed) print_error(o.result.reason);
    code = std::max(code, o.exit_code);
    results.push_back(std::move(o.result));
  }

  (void)std::printf("gdsb-io survey: %s scratch file in %s, %.0f s per run, %u threads\n",
                    format_size(size).c_str(), dir.c_str(), seconds, all.front().threads);
  (void)std::fputs(report::io_table(results).c_str(), stdout);
  (void)std::fflush(stdout);
  const bool interrupted = stop.load();
  write_io_report(report_target, opt.html_file, opt.argv, context, results, interrupted,
                  opt.allow_overwrite);
  (void)std::printf("report: %s\n", report_path.c_str());
  if (interrupted) {
    print_error("interrupted; the scratch file was removed");
    return kExitInterrupted;
  }
  return code;
}

}  // namespace gdsb::io
