// gdsb-topo: options struct, CLI setup and the run function (main stays a few lines).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "gdsb/topo/collect.hpp"

namespace gdsb::topo_app {

// --npd-kind: which faults set the node-problem-detector condition (npd_plugin.hpp).
enum class NpdKind { All, Hardware, KnownGood, Unchecked };

struct Options {
  topo::InputSources sources;  // none set: this machine
  std::string save_snapshot;
  std::string json_path;
  std::string html_path;  // --html: self-contained HTML view of the report
  bool allow_overwrite = false;
  bool matrix = false;
  bool no_tree = false;
  bool verbose = false;
  bool warn_as_error = false;
  bool quiet = false;
  bool no_hwloc = false;
  bool no_nvml = false;
  std::string nvml_lib;
  std::string kernel_log;  // --kernel-log FILE: dmesg / journalctl -k text (hw_faults.hpp)
  std::string state;       // --state FILE (with --health): the last check's kernel log cursor
  // Known-good facts and the health check (health_app.cpp, docs/gdsb-topo.md "Health checks").
  std::string save_fingerprint;  // --save-fingerprint FILE
  bool health = false;
  std::string expect;       // --expect FILE (with --health)
  std::string openmetrics;  // --openmetrics FILE (with --health)
  bool slurm_drain = false;
  double timeout_s = 15;  // --timeout: the deadline of --health and --save-fingerprint
  // --npd: answer as a node-problem-detector custom plugin (npd_plugin.hpp).
  bool npd = false;
  NpdKind npd_kind = NpdKind::All;
  bool npd_unchecked_unknown = false;
  // The node as Kubernetes knows it ($NODE_NAME, set from spec.nodeName as dcgm-exporter
  // reads it): the metrics' node when set.
  std::string k8s_node;
  // The node as Slurm knows it ($SLURMD_NODENAME, else the short host name), and PATH:
  // read by topo_main, not by the library.
  std::string slurm_node;
  std::string path_env;
  std::vector<std::string> argv;
};

void setup_topo(CLI::App& app, Options& opt);
// The snapshot the options name (live or a recording), as every mode of the tool reads it.
topo::CollectOptions collect_options(const Options& opt);
topo::Snapshot collect(const Options& opt);
// --save-fingerprint and --health: facts only, none of the checks (health_app.cpp). Throws
// gdsb::Error; run_topo maps it to the exit code.
int run_fingerprint(const Options& opt);
// Returns the process exit code: 0 pass, 3 a check failed, 1 snapshot not collected, 2 usage.
int run_topo(const Options& opt);
// Parses argv and runs; maps CLI11 errors to exit code 2 (help/version to 0).
int topo_main(int argc, char** argv);

}  // namespace gdsb::topo_app
