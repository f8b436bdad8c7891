// --save-fingerprint and --health: the node's facts against its known-good file. Only the
// snapshot and the fingerprint are made; the check suite, the tree, NVML's pair matrix and
// NVLink remote walk are not, so a HealthCheckProgram run stays fast (docs/PERFORMANCE.md).
// Collection (sysfs, hwloc, NVML) runs in a forked child under --timeout: a hung driver
// fails the check, naming the step, instead of hanging it; and every way the check can fail
// writes metrics that say so.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "deadline_child.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/topo/health.hpp"
#include "gdsb/version.hpp"
#include "slurm_drain.hpp"
#include "topo_app.hpp"

namespace gdsb::topo_app {
namespace {

using Clock = std::chrono::steady_clock;

// The facts, or the fault that kept them from being read (a timeout, an NVML error, any
// error while collecting): the health check's first difference. A check that cannot decide
// fails closed (STYLE 19): --health reports, writes its metrics and drains on every fault.
struct Collected {
  std::optional<topo::Fingerprint> facts;
  std::string fault;   // "GPU 0000:19:00.0 NVML: GPU is lost"
  bool usage = false;  // the fault is a usage error found while collecting (an unreadable
                       // recording): --save-fingerprint exits 2 for it, --health fails closed
};

// In the child: the snapshot without NVML (no pair matrix, no NVLink walk), hwloc kept away
// from NVML, CUDA and OpenCL, then one NVML session for what the fingerprint needs.
std::string collect_in_child(const Options& opt, const StepFn& step) {
  std::string components = "-nvml,-cuda,-opencl,-rsmi";
  if (const char* c = std::getenv("HWLOC_COMPONENTS"); c && *c) components += std::string(",") + c;
  ::setenv("HWLOC_COMPONENTS", components.c_str(), 1);
  topo::CollectOptions co = collect_options(opt);
  co.use_nvml = false;
  step(opt.sources.live() ? "sysfs and hwloc: reading the PCIe tree" : "reading " + opt.sources.description());
  const topo::Snapshot snap = topo::collect_from(opt.sources, co);
  topo::GpuSoftware software;
  // Driver, CUDA and VBIOS versions come from this machine's NVML: never mixed into a recording.
  if (!opt.sources.live())
    software.unavailable = topo::Unreadable{"a recording holds no NVML facts", true};
  else if (opt.no_nvml)
    software.unavailable = topo::Unreadable{"--no-nvml", true};
  else
    software = topo::read_gpu_software(opt.nvml_lib, step);
  return topo::fingerprint_json(topo::make_fingerprint(snap, software)).dump();
}

Collected current_facts(const Options& opt, double seconds) {
  const ChildOutcome c = run_with_deadline(
      [&](const StepFn& step) { return collect_in_child(opt, step); },
      [](const std::exception& e) {
        if (dynamic_cast<const topo::NvmlFault*>(&e)) return 'F';
        return dynamic_cast<const UsageError*>(&e) ? 'U' : 'R';
      },
      seconds);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.3g", seconds);
  const std::string step = c.last_step.empty() ? std::string("collection") : c.last_step;
  // A child that did not end on SIGKILL sleeps uninterruptibly in the kernel: a hung driver
  // or file system, said beside the step it did not return from.
  const std::string left = c.left_behind ? "; the collecting process did not end on SIGKILL (uninterruptible "
                                           "sleep in the kernel) and was left behind"
                                         : "";
  switch (c.status) {
    case ChildOutcome::Status::Done:
      try {
        return {topo::fingerprint_from_json(nlohmann::json::parse(c.result), "the collection"), "", false};
      } catch (const std::exception& e) {
        return {std::nullopt, std::string("collection: ") + e.what(), false};
      }
    case ChildOutcome::Status::TimedOut:
      return {std::nullopt, step + ": no answer within " + secs + " s (--timeout; a hung driver?)" + left, false};
    case ChildOutcome::Status::Died:
      return {std::nullopt, step + ": the collecting process died (" + c.error + ")" + left, false};
    case ChildOutcome::Status::Failed:
      return {std::nullopt, c.error, c.error_kind == 'U'};
  }
  return {std::nullopt, "collection: no outcome", false};
}

int save(const Options& opt) {
  const report::OutputTarget target{opt.save_fingerprint, "--save-fingerprint", topo::kFingerprintSchema};
  std::error_code ec;
  // A known-good file is replaced only when asked, even by another one: the old one may be
  // the good state and the node no longer in it.
  if (std::filesystem::exists(opt.save_fingerprint, ec) && !opt.allow_overwrite)
    throw UsageError("--save-fingerprint " + opt.save_fingerprint +
                     " exists; pass --allow-overwrite to replace it or pick a new file");
  report::check_output_path(target, opt.allow_overwrite);
  const Collected now = current_facts(opt, opt.timeout_s);
  if (!now.facts && now.usage) throw UsageError(now.fault);
  if (!now.facts) throw RuntimeError(now.fault + "; no fingerprint was written");
  topo::FingerprintOrigin origin;
  origin.tool = "gdsb-topo";
  origin.version = std::string(version());
  origin.host = opt.sources.live() ? collect_context().host : "";
  origin.source = opt.sources.description();
  origin.created = utc_now_iso8601();
  report::write_output_atomic(target, topo::fingerprint_document(now.facts->facts, origin).dump(1) + "\n", true);
  std::cout << " fingerprint saved to " << opt.save_fingerprint << ": "
            << topo::counts_words(topo::count_devices(*now.facts)) << ", " << now.facts->facts.size() << " facts\n";
  return kExitOk;
}

// Writes the metrics of this check (temp file, then rename). Failing metrics when `now` or
// `expected` is null.
void write_metrics(const Options& opt, const std::string& node, const topo::Fingerprint* now,
                   const topo::FactMap* expected, const std::vector<topo::HealthDifference>& differences) {
  topo::HealthMetricsContext ctx{"gdsb-topo", std::string(version()), opt.expect, node,
                                 std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()};
  report::write_output_atomic({opt.openmetrics, "--openmetrics"}, topo::health_openmetrics(now, expected, differences, ctx),
                              opt.allow_overwrite);
}

int health(const Options& opt) {
  const auto started = Clock::now();
  if (!opt.openmetrics.empty()) report::check_output_path({opt.openmetrics, "--openmetrics"}, opt.allow_overwrite);
  const std::string node = opt.slurm_drain ? slurm_node_name(opt.slurm_node) : collect_context().host;
  std::optional<topo::FactMap> expected;
  bool metrics_written = false;
  try {
    expected = topo::load_fingerprint(opt.expect, "--expect");
    std::string scontrol;
    if (opt.slurm_drain) {
      scontrol = find_on_path("scontrol", opt.path_env);
      if (scontrol.empty())
        throw RuntimeError("--slurm-drain: scontrol not found on PATH (" + opt.path_env +
                           "); install Slurm's client (Debian: slurm-client) or add its directory to PATH");
    }
    // With --slurm-drain, scontrol keeps a last slice of the deadline for itself.
    const double drain_slice = opt.slurm_drain ? std::min(5.0, opt.timeout_s / 4) : 0;
    const Collected now = current_facts(opt, opt.timeout_s - drain_slice);
    std::vector<topo::HealthDifference> differences;
    if (now.facts) differences = topo::compare_with_expected(*now.facts, *expected);
    else differences.push_back({std::nullopt, "failed", "collected", now.fault});
    bool failed = false;
    for (const auto& d : differences) failed = failed || d.problem;
    if (!failed)
      std::cout << "gdsb: ok, " << topo::counts_words(topo::count_devices(*now.facts)) << " as expected\n";
    for (const auto& d : differences) std::cout << "gdsb: " << d.words << '\n';
    if (!opt.openmetrics.empty()) {
      write_metrics(opt, node, now.facts ? &*now.facts : nullptr, &*expected, differences);
      metrics_written = true;
    }
    if (!failed) return kExitOk;
    if (opt.slurm_drain) {
      const std::string& first = std::find_if(differences.begin(), differences.end(),
                                              [](const topo::HealthDifference& d) { return d.problem; })->words;
      const double left = opt.timeout_s - std::chrono::duration<double>(Clock::now() - started).count();
      slurm_drain(scontrol, node, "gdsb: " + first, std::max(left, drain_slice));
      std::cout << "gdsb: drained " << node << " through " << scontrol << '\n';
    }
    return kExitCheckFailed;
  } catch (const Error& e) {
    // The check could not be made: the metrics say it failed, never the last green.
    if (!opt.openmetrics.empty() && !metrics_written) {
      try {
        write_metrics(opt, node, nullptr, expected ? &*expected : nullptr,
                      {{std::nullopt, "failed", "collected", e.what()}});
      } catch (const Error&) {
        // the error about the check is the one to report
      }
    }
    throw;
  }
}

}  // namespace

int run_fingerprint(const Options& opt) { return opt.health ? health(opt) : save(opt); }

}  // namespace gdsb::topo_app
