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
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "deadline_child.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/topo/fingerprint_file.hpp"
#include "gdsb/topo/health.hpp"
#include "health_state.hpp"
#include "npd_plugin.hpp"
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
  // The devices (address and role only) and the fault facts (hw_faults.hpp): what
  // judge_faults reads, sent back as a snapshot without the rest.
  std::optional<topo::Snapshot> faults;
  std::string fault;   // "GPU 0000:19:00.0 NVML: GPU is lost"
  bool usage = false;  // the fault is a usage error found while collecting (an unreadable
                       // recording): --save-fingerprint exits 2 for it, --health fails closed
};

// In the child: the snapshot without NVML (no pair matrix, no NVLink walk), hwloc kept away
// from NVML, CUDA and OpenCL, then one NVML session for what the fingerprint needs.
std::string collect_in_child(const Options& opt, const StepFn& step, std::optional<uint64_t> after_seq) {
  std::string components = "-nvml,-cuda,-opencl,-rsmi";
  if (const char* c = std::getenv("HWLOC_COMPONENTS"); c && *c) components += std::string(",") + c;
  ::setenv("HWLOC_COMPONENTS", components.c_str(), 1);
  topo::CollectOptions co = collect_options(opt);
  co.use_nvml = false;
  co.kmsg_after_seq = after_seq;  // --kernel-log is in collect_options
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
  topo::Snapshot light;  // what judge_faults needs: addresses, roles, the fault facts
  light.kind = snap.kind;
  for (const topo::Device& d : snap.devices) {
    topo::Device x;
    x.bdf = d.bdf;
    x.role = d.role;
    x.vendor = d.vendor;
    x.device = d.device;
    x.class_code = d.class_code;
    light.devices.push_back(std::move(x));
  }
  light.faults = snap.faults;
  // Who each GPU is to NVML (its index and UUID: the metrics' dcgm-exporter labels), from this
  // session live, else as the recording says (a snapshot or hwloc XML that holds them).
  for (const auto& [bdf, f] : snap.gpu_facts)
    if (f.nvml_index || !f.uuid.empty()) {
      light.gpu_facts[bdf].source = f.source;
      light.gpu_facts[bdf].nvml_index = f.nvml_index;
      light.gpu_facts[bdf].uuid = f.uuid;
    }
  if (opt.sources.live()) {
    light.faults.gpu_errors = software.errors;
    light.faults.gpu_errors_unread = software.unavailable ? software.unavailable->why : "";
    for (const auto& [bdf, g] : software.gpus) {
      light.gpu_facts[bdf].source = "nvml";
      light.gpu_facts[bdf].nvml_index = g.index;
      light.gpu_facts[bdf].uuid = g.uuid;
    }
  }
  const nlohmann::json out = {{"facts", topo::fingerprint_json(topo::make_fingerprint(snap, software))},
                              {"snapshot", topo::snapshot_json(light, false)}};
  return out.dump();
}

Collected current_facts(const Options& opt, double seconds, std::optional<uint64_t> after_seq = std::nullopt) {
  const ChildOutcome c = run_with_deadline(
      [&](const StepFn& step) { return collect_in_child(opt, step, after_seq); },
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
        const auto j = nlohmann::json::parse(c.result);
        return {topo::fingerprint_from_json(j.at("facts"), "the collection"),
                topo::snapshot_from_json(j.at("snapshot"), "the collection"), "", false};
      } catch (const std::exception& e) {
        return {std::nullopt, std::nullopt, std::string("collection: ") + e.what(), false};
      }
    case ChildOutcome::Status::TimedOut:
      return {std::nullopt, std::nullopt, step + ": no answer within " + secs + " s (--timeout; a hung driver?)" + left, false};
    case ChildOutcome::Status::Died:
      return {std::nullopt, std::nullopt, step + ": the collecting process died (" + c.error + ")" + left, false};
    case ChildOutcome::Status::Failed:
      return {std::nullopt, std::nullopt, c.error, c.error_kind == 'U'};
  }
  return {std::nullopt, std::nullopt, "collection: no outcome", false};
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
  nlohmann::json doc = topo::fingerprint_document(now.facts->facts, origin);
  // The counters --health measures rises against (AER, NVLink errors), with their boot and time.
  if (now.faults) {
    std::vector<std::string> gpus;
    for (const topo::Device* g : now.faults->with_role(topo::Role::Gpu)) gpus.push_back(g->bdf);
    doc["hw_baseline"] = topo::fault_baseline_json(now.faults->faults, gpus);
  }
  report::write_output_atomic(target, doc.dump(1) + "\n", true);
  std::cout << " fingerprint saved to " << opt.save_fingerprint << ": "
            << topo::counts_words(topo::count_devices(*now.facts)) << ", " << now.facts->facts.size() << " facts\n";
  return kExitOk;
}

// Writes the metrics of this check (temp file, then rename). Failing metrics when `now` or
// `expected` is null.
void write_metrics(const Options& opt, const std::string& node, const topo::Fingerprint* now,
                   const topo::FactMap* expected, const std::vector<topo::HealthDifference>& differences,
                   const topo::FaultMetrics& faults = {},
                   const std::map<std::string, topo::GpuFacts>* gpus = nullptr) {
  topo::HealthMetricsContext ctx{"gdsb-topo", std::string(version()), opt.expect, node,
                                 std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(),
                                 gpus};
  report::write_output_atomic({opt.openmetrics, "--openmetrics"},
                              topo::health_openmetrics(now, expected, differences, ctx, faults), opt.allow_overwrite);
}

// The known-good file's fault baseline (its "hw_baseline"), read after load_fingerprint
// accepted the file.
topo::FaultBaseline load_baseline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  return doc.is_discarded() ? topo::FaultBaseline{} : topo::fault_baseline_from_document(doc);
}

std::string_view severity_prefix(topo::FaultSeverity s) {
  switch (s) {
    case topo::FaultSeverity::Critical: return "";
    case topo::FaultSeverity::Warning: return "warning: ";
    case topo::FaultSeverity::History: return "history: ";
  }
  return "";
}

std::string this_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

int health(const Options& opt) {
  const auto started = Clock::now();
  if (!opt.openmetrics.empty()) report::check_output_path({opt.openmetrics, "--openmetrics"}, opt.allow_overwrite);
  const std::string node = opt.slurm_drain      ? slurm_node_name(opt.slurm_node)
                           : !opt.k8s_node.empty() ? opt.k8s_node
                                                   : collect_context().host;
  std::ostream& out = opt.npd ? std::cerr : std::cout;  // under --npd, stdout is the verdict line
  std::optional<topo::FactMap> expected;
  bool metrics_written = false;
  try {
    expected = topo::load_fingerprint(opt.expect, "--expect");
    topo::FaultBaseline baseline = load_baseline(opt.expect);
    baseline.known_gpus = topo::known_gpus(*expected);  // any known-good file lists them, gdsb-cluster's too
    // Since the last check whose verdict was delivered: the state file's position. /dev/kmsg is
    // read from its cursor when it is of this boot; any log is judged against its Xids.
    std::optional<topo::LogPosition> state;
    if (!opt.state.empty()) state = load_health_state(opt.state);
    if (state) baseline.reported = *state;
    std::optional<uint64_t> after_seq;
    if (state && opt.sources.live() && opt.kernel_log.empty() &&
        state->boot == topo::boot_id_key(this_boot_id()))
      after_seq = state->seq;
    std::string scontrol;
    if (opt.slurm_drain) {
      scontrol = find_on_path("scontrol", opt.path_env);
      if (scontrol.empty())
        throw RuntimeError("--slurm-drain: scontrol not found on PATH (" + opt.path_env +
                           "); install Slurm's client (Debian: slurm-client) or add its directory to PATH");
    }
    // With --slurm-drain, scontrol keeps a last slice of the deadline for itself.
    const double drain_slice = opt.slurm_drain ? std::min(5.0, opt.timeout_s / 4) : 0;
    const Collected now = current_facts(opt, opt.timeout_s - drain_slice, after_seq);
    std::vector<topo::HealthDifference> differences;
    if (now.facts) differences = topo::compare_with_expected(*now.facts, *expected);
    else differences.push_back({std::nullopt, "failed", "collected", now.fault});
    std::vector<topo::FaultFinding> findings;
    if (now.faults) findings = topo::judge_faults(*now.faults, baseline);
    bool failed = false;
    for (const auto& d : differences) failed = failed || d.problem;
    const auto critical = std::find_if(findings.begin(), findings.end(), [](const topo::FaultFinding& f) {
      return f.severity == topo::FaultSeverity::Critical;
    });
    if (!failed && critical == findings.end())
      out << "gdsb: ok, " << topo::counts_words(topo::count_devices(*now.facts)) << " as expected\n";
    for (const auto& f : findings)
      out << "gdsb: " << severity_prefix(f.severity) << f.words << '\n';
    for (const auto& d : differences) out << "gdsb: " << d.words << '\n';
    if (now.faults && opt.sources.live() && !now.faults->faults.kernel_log_unread.empty() && opt.kernel_log.empty())
      out << "gdsb: note: Xid events not checked: " << now.faults->faults.kernel_log_unread << '\n';
    if (!opt.openmetrics.empty()) {
      write_metrics(opt, node, now.facts ? &*now.facts : nullptr, &*expected, differences,
                    {now.faults ? &now.faults->faults : nullptr, findings},
                    now.faults ? &now.faults->gpu_facts : nullptr);
      metrics_written = true;
    }
    // --npd refuses --state and --slurm-drain: its verdict is the exit code and one line.
    if (opt.npd) return npd_verdict(opt, differences, findings, std::cout);
    // The position this check reached, saved once its verdict is delivered (below): a drain
    // that fails leaves the fault to the next check.
    const auto save_state = [&] {
      if (opt.state.empty() || !now.faults || !now.faults->faults.kernel_log) return;
      topo::LogPosition reached = topo::log_position(now.faults->faults);
      if (!reached.seq) reached.seq = after_seq;
      save_health_state(opt.state, reached);
    };
    failed = failed || critical != findings.end();
    if (!failed || !opt.slurm_drain) {  // nothing to drain, or exit 3 is the verdict (NHC drains)
      save_state();
      return failed ? kExitCheckFailed : kExitOk;
    }
    // A hardware fault names the cause best ("GPU ... Xid 79 (fallen off the bus) at ..."),
    // before the known-good difference it causes (that GPU absent).
    const auto first = std::find_if(differences.begin(), differences.end(),
                                    [](const topo::HealthDifference& d) { return d.problem; });
    const std::string reason = critical != findings.end() ? critical->words : first->words;
    const double left = opt.timeout_s - std::chrono::duration<double>(Clock::now() - started).count();
    slurm_drain(scontrol, node, "gdsb: " + reason, std::max(left, drain_slice));
    std::cout << "gdsb: drained " << node << " through " << scontrol << '\n';
    save_state();
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
