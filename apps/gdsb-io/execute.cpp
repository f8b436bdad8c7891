#include "execute.hpp"

#include <algorithm>
#include <map>
#include <optional>
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
                       bool waived_is_error, gpu::GpuService* naive_service) {
  JobOutcome out;
  out.result.workload = w;
  try {
    if (w.naive_load) {
      if (naive_service == nullptr) throw RuntimeError("naive_load=1: no GPU service here");
      gpu::NaiveLoad n = gpu::naive_load(*naive_service, w, run_options.stop);
      out.result = std::move(n.run);
      out.naive = n.facts;
    } else {
      out.result = runner.run(w, run_options);
    }
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

  // Groups of jobs that run at the same time, in the order they run.
  std::vector<std::vector<std::size_t>> groups;
  const bool phased = std::any_of(options.phases.begin(), options.phases.end(),
                                  [](const std::optional<int>& p) { return p.has_value(); });
  if (phased) {
    std::map<int, std::vector<std::size_t>> by_phase;  // a job without phase is in phase 0
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      by_phase[i < options.phases.size() ? options.phases[i].value_or(0) : 0].push_back(i);
    }
    for (auto& [phase, members] : by_phase) groups.push_back(std::move(members));
  } else if (options.together) {
    groups.emplace_back();
    for (std::size_t i = 0; i < jobs.size(); ++i) groups.back().push_back(i);
  } else {
    for (std::size_t i = 0; i < jobs.size(); ++i) groups.push_back({i});
  }

  std::vector<std::optional<JobOutcome>> slots(jobs.size());
  for (const auto& group : groups) {
    if (stopped()) break;
    if (options.before_group) options.before_group(group);
    if (group.size() == 1) {
      const std::size_t i = group.front();
      slots[i] = execute_one(runner, jobs[i], run_options_for(i), options.waived_is_error,
                             options.naive_service);
      if (options.progress != nullptr) {
        options.progress->finish_job(i);
        options.progress->clear();
      }
      if (options.on_done) options.on_done(*slots[i]);
      continue;
    }
    {
      // Runner::run is thread-safe: one std::thread per job, results kept in job order.
      std::vector<std::jthread> threads;
      threads.reserve(group.size());
      for (const std::size_t i : group) {
        threads.emplace_back([&, i] {
          slots[i] = execute_one(runner, jobs[i], run_options_for(i), options.waived_is_error,
                                 options.naive_service);
          if (options.progress != nullptr) options.progress->finish_job(i);
        });
      }
    }
    if (options.progress != nullptr) options.progress->clear();
    if (options.on_done) {
      for (const std::size_t i : group) options.on_done(*slots[i]);
    }
  }
  std::vector<JobOutcome> outcomes;
  for (auto& s : slots) {
    if (s) outcomes.push_back(std::move(*s));
  }
  return outcomes;
}

}  // namespace gdsb::io
