// Runs a list of jobs on the runner, in sequence or all at once, turning exceptions into
// failed results so that what was measured is still printed and written.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "gdsb/gpu/naive_load.hpp"
#include "gdsb/runner.hpp"
#include "progress.hpp"

namespace gdsb::io {

struct JobOutcome {
  RunResult result;
  int exit_code = 0;  // 0 ok; 1 runtime error or waived; 2 usage; 3 verification
  std::optional<gpu::NaiveLoadFacts> naive;  // a naive_load=1 job's facts
};

struct ExecuteOptions {
  bool together = false;        // run_together: all jobs concurrently
  std::vector<std::optional<int>> phases;  // job-file phase=N per job (see JobFile)
  bool waived_is_error = true;  // an explicitly requested job that cannot run: exit 1
  const std::atomic<bool>* stop = nullptr;
  ProgressLine* progress = nullptr;
  // Called after each job in sequential mode (after all in together mode), in job order.
  std::function<void(const JobOutcome&)> on_done;
  // Called before each group of jobs that run together (a phase), with their indexes.
  std::function<void(const std::vector<std::size_t>&)> before_group;
  // The GPU service naive_load=1 jobs use (gdsb/gpu/naive_load.hpp); null: they fail.
  gpu::GpuService* naive_service = nullptr;
};

std::vector<JobOutcome> execute_jobs(const Runner& runner, const std::vector<Workload>& jobs,
                                     const ExecuteOptions& options);

// One job, exceptions mapped to a failed result and an exit code.
// A naive_load=1 job runs the naive loader on naive_service instead of the runner.
JobOutcome execute_one(const Runner& runner, const Workload& w, const RunOptions& run_options,
                       bool waived_is_error, gpu::GpuService* naive_service = nullptr);

// The label shown in progress: "[1/3] cpu_only READ 1M".
std::string job_label(std::size_t index, std::size_t count, const Workload& w);

}  // namespace gdsb::io
