#include "run_io.hpp"

#include <nlohmann/json.hpp>

#include "gdsb/report/html.hpp"
#include "gdsb/report/output_file.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "execute.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/gdsio_line.hpp"
#include "gdsb/report/io_document.hpp"
#include "gdsb/stack_context.hpp"
#include "gdsb/report/io_table.hpp"
#include "gdsb/report/job_stats.hpp"
#include "gdsb/runner.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/gpu/gpu_service.hpp"
#include "job_file.hpp"
#include "presets.hpp"
#include "gdsb/topo/run_storage.hpp"
#include "gdsb/stop_signals.hpp"
#include "gdsb/version.hpp"
#include "node_mode.hpp"
#include "survey.hpp"

namespace gdsb::io {
namespace {

struct Plan {
  std::vector<Workload> jobs;
  bool together = false;
  std::vector<std::optional<int>> phases;
};

Plan plan_from(const Options& opt) {
  Plan plan;
  if (opt.job_file.empty()) {
    plan.jobs = workloads_from(opt);
    return plan;
  }
  if (!opt.given.empty()) {
    std::string list;
    for (const auto& g : opt.given) list += (list.empty() ? "" : ", ") + g;
    throw UsageError("a job file describes the workload; " + list +
                     " cannot be combined with it (put them in the job file)");
  }
  Workload defaults;
  defaults.io_size = 1ULL << 20;  // as on the command line
  apply_extras(opt, defaults);
  JobFile jf = load_job_file(opt.job_file, defaults);
  plan.jobs = std::move(jf.jobs);
  plan.together = jf.run_together;
  plan.phases = std::move(jf.phases);
  return plan;
}

void print_outcome(const Options& opt, const JobOutcome& o) {
  if (opt.format == "table") {
    if (o.result.status == RunStatus::Failed) print_error(o.result.reason);
    return;  // the table is printed once, at the end
  }
  std::string text;
  if (o.result.status == RunStatus::Failed) {
    // What was measured before the failure still gets its line; the error goes to stderr.
    if (o.result.result.ops > 0) text = report::gdsio_line(o.result) + "\n";
    (void)std::fputs(text.c_str(), stdout);
    print_error(o.result.reason);
    return;
  }
  text = report::gdsio_block(o.result);
  if (opt.per_job_stats) text += report::job_stats(o.result);
  (void)std::fputs(text.c_str(), stdout);
  (void)std::fflush(stdout);
}

// GPUs usable here, for the presets' default --gpus (0 without a driver, GPU or CUDA build).
int usable_gpu_count() {
  const auto service = gpu::default_gpu_path_deps().service;
  if (service == nullptr || !service->probe().ok) return 0;
  return service->device_count();
}

int run_jobs(const Options& opt, const StopSignals& signals, ProgressLine& progress) {
  std::optional<PresetParams> preset;
  Plan plan;
  if (!opt.workload.empty()) {
    preset = preset_params(opt, usable_gpu_count());
    const std::string text = preset_job_file(*preset);
    Workload defaults;
    defaults.io_size = 1ULL << 20;
    apply_extras(opt, defaults);
    JobFile jf = parse_job_file(text, "--workload " + opt.workload, defaults);
    if (opt.dry_run) {
      (void)std::fputs(text.c_str(), stdout);
      return kExitOk;
    }
    plan.jobs = std::move(jf.jobs);
    plan.together = jf.run_together;
    plan.phases = std::move(jf.phases);
  } else {
    if (opt.dry_run) throw UsageError("--dry-run prints a preset's job file: give --workload NAME");
    if (!opt.preset_options.empty()) {
      throw UsageError(opt.preset_options.front() + " belongs to the workload presets: give --workload NAME");
    }
    plan = plan_from(opt);
  }
  if (!opt.json_file.empty()) {
    report::check_output_path(io_json_target(opt.json_file), opt.allow_overwrite);
  }
  if (!opt.html_file.empty()) report::check_output_path(opt.html_file, opt.allow_overwrite);

  RunContext context = collect_context();
  const PathRegistry registry = make_default_registry();
  const Runner runner(registry);
  if (preset) prepare_preset_data(*preset, runner, opt.allow_overwrite);
  const auto gpu_service = gpu::default_gpu_path_deps().service;

  ExecuteOptions eo;
  eo.together = plan.together;
  eo.phases = plan.phases;
  eo.stop = &signals.flag();
  eo.progress = &progress;
  eo.on_done = [&opt](const JobOutcome& o) { print_outcome(opt, o); };
  eo.naive_service = gpu_service.get();
  // Every phase of a checkpoint-load starts from storage: the load, then the naive load.
  if (preset) eo.before_group = [&](const std::vector<std::size_t>&) { drop_cached_pages(*preset); };
  const auto outcomes = execute_jobs(runner, plan.jobs, eo);

  std::vector<RunResult> results;
  NaiveFacts naive;
  int code = kExitOk;
  for (const auto& o : outcomes) {
    results.push_back(o.result);
    if (o.naive) naive.emplace_back(o.result.workload.name, *o.naive);
    code = std::max(code, o.exit_code);
  }
  if (opt.format == "table") {
    (void)std::fputs(report::io_table(results).c_str(), stdout);
    if (opt.per_job_stats) {
      for (std::size_t i = 0; i < results.size(); ++i) {
        const std::string stats = report::job_stats(results[i]);
        if (!stats.empty()) std::printf("\njob %zu:\n%s", i + 1, stats.c_str());
      }
    }
  }
  nlohmann::json summary;
  if (preset) {
    summary = preset_summary(*preset, results, naive,
                             platform_ceiling(opt.topo_json, opt.topo_sources));
    (void)std::fputs(preset_summary_text(summary).c_str(), stdout);
  }
  (void)std::fflush(stdout);

  const bool interrupted = signals.stopped();
  // A usage error found by the runner before any job ran creates nothing, not even the report.
  const bool nothing_ran = std::all_of(outcomes.begin(), outcomes.end(), [](const JobOutcome& o) {
    return o.exit_code == kExitUsage;
  });
  if ((!opt.json_file.empty() || !opt.html_file.empty()) && !(nothing_ran && !outcomes.empty())) {
    write_io_report(io_json_target(opt.json_file), opt.html_file, opt.argv, context, results,
                    interrupted, opt.allow_overwrite,
                    preset ? std::vector<std::pair<std::string, nlohmann::json>>{{"workload_summary", summary}}
                           : std::vector<std::pair<std::string, nlohmann::json>>{});
  }
  if (interrupted) {
    print_error("interrupted; results above cover the time before the signal");
    return kExitInterrupted;
  }
  return code;
}

}  // namespace

void print_error(const std::string& message) {
  (void)std::fflush(stdout);
  (void)std::fprintf(stderr, "gdsb-io: %s\n", message.c_str());
}

report::OutputTarget io_json_target(const std::string& path) {
  return {path, "--json", report::kIoSchema};
}

void write_io_report(const report::OutputTarget& json, const std::string& html_path,
                     const std::vector<std::string>& argv, RunContext context,
                     std::span<const RunResult> runs, bool interrupted, bool allow_overwrite,
                     const std::vector<std::pair<std::string, nlohmann::json>>& sections) {
  context.ended_at = utc_now_iso8601();
  // The one place gdsb-io's documents (jobs, survey, node mode) get what the runs depended on.
  add_stack_context(context);
  // And where each run's data lay, read now, while the files are still there.
  std::vector<RunResult> with_storage(runs.begin(), runs.end());
  topo::add_run_storage(with_storage);
  auto doc = report::io_document({"gdsb-io", std::string(version())}, argv, context, with_storage,
                                 interrupted);
  for (const auto& [key, value] : sections) doc[key] = value;
  if (!json.path.empty()) report::write_output_atomic(json, doc.dump(2) + "\n", allow_overwrite);
  if (!html_path.empty()) {
    report::write_html(nlohmann::json::parse(doc.dump()), html_path, allow_overwrite);
  }
}

int run_io(const Options& opt) {
  try {
    // Before any thread exists, so that every thread inherits the blocked signals.
    const StopSignals signals("gdsb-io");
    ProgressLine progress(stderr_is_terminal() && !opt.quiet);
    try {
      if (node_mode_requested(opt)) return run_node(opt, signals.flag(), progress);
      if (!opt.fake_gpu.empty()) throw UsageError("--fake-gpu goes with the node mode: give --gpus");
      if (opt.job_file.empty() && opt.given.empty() && opt.workload.empty() && !opt.dry_run)
        return run_survey(opt, signals.flag(), progress);
      return run_jobs(opt, signals, progress);
    } catch (...) {
      progress.clear();
      throw;
    }
  } catch (const UsageError& e) {
    print_error(std::string(e.what()) + "\nRun 'gdsb-io --help' for the options.");
    return kExitUsage;
  } catch (const Error& e) {
    print_error(e.what());
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    print_error(std::string("error: ") + e.what());
    return kExitRuntime;
  } catch (...) {
    print_error("error: unknown exception");
    return kExitRuntime;
  }
}

}  // namespace gdsb::io
