// --save-fingerprint and --health: the node's facts against its known-good file. Only the
// snapshot and the fingerprint are made; the check suite, the tree and the names from
// pci.ids are not, so a HealthCheckProgram run stays fast (docs/PERFORMANCE.md).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "gdsb/error.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/topo/health.hpp"
#include "gdsb/version.hpp"
#include "slurm_drain.hpp"
#include "topo_app.hpp"

namespace gdsb::topo_app {
namespace {

topo::Fingerprint current_facts(const Options& opt) {
  // Names are looked up as in a full run: a recording without -nn names its devices only in
  // words, and the ids (and so which NICs carry data) come from pci.ids by those words.
  const topo::Snapshot snap = collect(opt);
  // Driver, CUDA and VBIOS versions come from this machine's NVML: never mixed into a recording.
  const bool nvml = opt.sources.live() && !opt.no_nvml;
  return topo::make_fingerprint(snap, nvml ? topo::read_gpu_software(opt.nvml_lib) : topo::GpuSoftware{});
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
  const topo::Fingerprint facts = current_facts(opt);
  topo::FingerprintOrigin origin;
  origin.tool = "gdsb-topo";
  origin.version = std::string(version());
  origin.host = opt.sources.live() ? collect_context().host : "";
  origin.source = opt.sources.description();
  origin.created = utc_now_iso8601();
  report::write_output_atomic(target, topo::fingerprint_document(facts, origin).dump(1) + "\n", true);
  std::cout << " fingerprint saved to " << opt.save_fingerprint << ": "
            << topo::counts_words(topo::count_devices(facts)) << ", " << facts.size() << " facts\n";
  return kExitOk;
}

int health(const Options& opt) {
  const topo::Fingerprint expected = topo::load_fingerprint(opt.expect, "--expect");
  const report::OutputTarget metrics_target{opt.openmetrics, "--openmetrics"};
  if (!opt.openmetrics.empty()) report::check_output_path(metrics_target, opt.allow_overwrite);
  std::string scontrol, node;
  if (opt.slurm_drain) {
    scontrol = find_on_path("scontrol", opt.path_env);
    if (scontrol.empty())
      throw RuntimeError("--slurm-drain: scontrol not found on PATH (" + opt.path_env +
                         "); install Slurm's client (Debian: slurm-client) or add its directory to PATH");
    node = slurm_node_name(opt.slurm_node);
  }
  const topo::Fingerprint now = current_facts(opt);
  const auto differences = topo::compare_with_expected(now, expected);
  if (differences.empty())
    std::cout << "gdsb: ok, " << topo::counts_words(topo::count_devices(now)) << " as expected\n";
  for (const auto& d : differences) std::cout << "gdsb: " << d.words << '\n';
  if (!opt.openmetrics.empty()) {
    topo::HealthMetricsContext ctx{"gdsb-topo", std::string(version()), opt.expect,
                                   opt.slurm_drain ? node : collect_context().host,
                                   std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count()};
    report::write_output_atomic(metrics_target, topo::health_openmetrics(now, expected, differences, ctx),
                                opt.allow_overwrite);
  }
  if (differences.empty()) return kExitOk;
  if (opt.slurm_drain) {
    slurm_drain(scontrol, node, "gdsb: " + differences.front().words);
    std::cout << "gdsb: drained " << node << " through " << scontrol << '\n';
  }
  return kExitCheckFailed;
}

}  // namespace

int run_fingerprint(const Options& opt) { return opt.health ? health(opt) : save(opt); }

}  // namespace gdsb::topo_app
