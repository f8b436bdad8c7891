#include "execute.hpp"

#include <thread>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"

namespace gdsb::io {

std::string job_label(std::size_t index, std::size_t count, const Workload& w) {
  return "[" + std::to_string(index + 1) + "/" + std::to_string(count) + "] " +
         std::string(xfer_name(w.xfer)) + " " + std::string(pattern_label(w.pattern)) + " " +
         format_size(w.io_size);
}

JobOutcome execute_one(const Runner& runner, const Workload& w, const RunOptions& run_options,
                       bool waived_is_error) {
  JobOutcome out;
  out.result.workload = w;
  try {
    out.result = runner.run(w, run_options);
    if (out.result.status == RunStatus::Waived && waived_is_error) out.exit_code = kExitRuntime;
    if (out.result.status == RunStatus::Failed) out.exit_code = kExitRuntime;
    if (out.result.verify_errors > 0) out.exit_code = kExitCheckFailed;
  } catch (const Error& e) {
    out.result.status = RunStatus::Failed;
    out.result.reason = e.what();
    out.exit_code = exit_code_for(e.kind());
  } catch (const std::exception& e) {
    out.result.status = RunStatus::Failed;
    out.result.reason = e.what();
    out.exit_code = kExitRuntime;
  }
  return out;
}

std::vector<JobOutcome> execute_jobs(const Runner& runner, const std::vector<Workload>& jobs,
                                     const ExecuteOptions& options) {
  const auto run_options_for = [&](std::size_t i) {
    RunOptions ro;
    ro.stop = options.stop;
    if (options.progress != nullptr)
      ro.on_progress = options.progress->for_job(i, job_label(i, jobs.size(), jobs[i]));
    return ro;
  };
  const auto stopped = [&] { return options.stop != nullptr && options.stop->load(); };
  std::vector<JobOutcome> outcomes;

  if (!options.together) {
    for (std::size_t i = 0; i < jobs.size() && !stopped(); ++i) {
      outcomes.push_back(execute_one(runner, jobs[i], run_options_for(i), options.waived_is_error));
      if (options.progress != nullptr) {
        options.progress->finish_job(i);
        options.progress->clear();
      }
      if (options.on_done) options.on_done(outcomes.back());
    }
    return outcomes;
  }

  // Runner::run is thread-safe: one std::thread per job, results kept in job order.
  outcomes.resize(jobs.size());
  {
    std::vector<std::jthread> threads;
    threads.reserve(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      threads.emplace_back([&, i] {
        outcomes[i] = execute_one(runner, jobs[i], run_options_for(i), options.waived_is_error);
        if (options.progress != nullptr) options.progress->finish_job(i);
      });
    }
  }
  if (options.progress != nullptr) options.progress->clear();
  if (options.on_done) {
    for (const auto& o : outcomes) options.on_done(o);
  }
  return outcomes;
}

}  // namespace gdsb::io
