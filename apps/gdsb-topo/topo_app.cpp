#include "topo_app.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "gdsb/report/html.hpp"
#include "gdsb/report/output_file.hpp"

#include "gdsb/cli/tool_flags.hpp"
#include "gdsb/error.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/render.hpp"
#include "gdsb/topo/source_options.hpp"
#include "gdsb/version.hpp"
#include "npd_plugin.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo_app {
namespace {

topo::RunContext make_context(const Options& opt) {
  topo::RunContext c;
  c.tool_version = std::string(version());
  c.argv = opt.argv;
  c.run = collect_context();
  return c;
}

}  // namespace

topo::CollectOptions collect_options(const Options& opt) {
  topo::CollectOptions co;
  if (const char* e = std::getenv("CUFILE_ENV_PATH_JSON")) co.cufile_env_path = e;
  co.use_hwloc = !opt.no_hwloc;
  co.use_nvml = !opt.no_nvml;
  co.nvml_lib = opt.nvml_lib;
  co.kernel_log = opt.kernel_log;
  return co;
}

topo::Snapshot collect(const Options& opt) { return topo::collect_from(opt.sources, collect_options(opt)); }

void setup_topo(CLI::App& app, Options& opt) {
  app.description(
      "gdsb-topo: PCIe topology checks for GPUDirect Storage (ACS, IOMMU, shared switch, links, "
      "BAR1, NUMA, software stack).\nExit: 0 all pass, 3 a check failed, 1 snapshot not collected, "
      "2 usage.");
  topo::add_source_options(app, opt.sources);
  app.add_option("--save-snapshot", opt.save_snapshot,
                 "Record everything the checks read into DIR (replay with --from-snapshot)");
  app.add_option("--json", opt.json_path, "Write the gdsbench.topo/1 report to FILE");
  app.add_option("--html", opt.html_path, "Write the report as a self-contained HTML page to FILE");
  app.add_flag("--allow-overwrite", opt.allow_overwrite,
               "Replace an existing file that is not a gdsb-topo report");
  app.add_flag("--matrix", opt.matrix, "Print the GPU x NVMe/NIC matrix (PIX/PXB/PHB/NODE/SYS)");
  app.add_flag("--no-tree", opt.no_tree, "Do not print the annotated PCIe tree");
  app.add_flag("-v,--verbose", opt.verbose, "Print every evidence line, also of passing checks");
  app.add_flag("--warn-as-error", opt.warn_as_error, "Exit 3 on warnings too");
  app.add_flag("-q,--quiet", opt.quiet, "Print only the verdict line");
  app.add_flag("--no-hwloc", opt.no_hwloc, "Live mode: do not query hwloc");
  app.add_flag("--no-nvml", opt.no_nvml,
               "Live mode: do not ask NVML for GPU facts (BAR1, memory, link generation)");
  app.add_option("--nvml-lib", opt.nvml_lib, "Live mode: load NVML from PATH");
  app.add_option("--kernel-log", opt.kernel_log,
                 "Read the NVIDIA driver's Xid events from FILE (`dmesg`, `dmesg -T`, `journalctl` text or "
                 "-o export, kern.log) instead of /dev/kmsg; goes with any input. Only the log's last boot is "
                 "judged; earlier boots are history");
  app.add_option("--save-fingerprint", opt.save_fingerprint,
                 "Write the node's known-good facts (gdsbench.fingerprint/2: GPUs, NVMe drives and "
                 "data NICs by PCI address, links, ACS, IOMMU, BAR1, NUMA, driver versions) to FILE "
                 "and run no checks");
  auto* health = app.add_flag("--health", opt.health,
                              "Compare this node with the known-good facts of --expect FILE: one line "
                              "per difference, exit 3 on any, 0 with one ok line; no other checks run");
  auto* expect = app.add_option("--expect", opt.expect, "The known-good fingerprint --health compares with");
  auto* state = app.add_option("--state", opt.state,
                               "With --health: remember in FILE how far the kernel log was read once the verdict "
                               "was delivered (drained, or nothing to drain), so each Xid is reported by one check "
                               "(default: every Xid of the boot, every check)");
  auto* om = app.add_option("--openmetrics", opt.openmetrics,
                            "With --health: write node_exporter textfile metrics to FILE (atomic rename)");
  app.add_option("--timeout", opt.timeout_s,
                 "With --health or --save-fingerprint: seconds the whole run may take (collection, NVML, "
                 "scontrol); past it the check fails and says which step hung (default 15, under NHC's 30)")
      ->check(CLI::Range(0.1, 3600.0));
  auto* drain = app.add_flag("--slurm-drain", opt.slurm_drain,
                             "With --health: on a difference, drain this node through scontrol "
                             "(NodeName $SLURMD_NODENAME, else the short host name)");
  auto* npd = app.add_flag("--npd", opt.npd,
                           "With --health: answer as a node-problem-detector custom plugin: one line of at most "
                           "80 characters on stdout naming the fault (the report goes to stderr), exit 0 ok, 1 a "
                           "problem or a check that could not be made; --timeout defaults to 4 s (NPD kills at 5)");
  const std::map<std::string, NpdKind> npd_kinds{{"all", NpdKind::All},
                                                 {"hardware", NpdKind::Hardware},
                                                 {"known-good", NpdKind::KnownGood},
                                                 {"unchecked", NpdKind::Unchecked}};
  auto* npd_kind = app.add_option("--npd-kind", opt.npd_kind,
                                  "With --npd: the faults that exit 1, one NPD condition each: all (default), "
                                  "hardware (a critical Xid, ECC, row remapping, AER or NVLink fault), known-good "
                                  "(a difference from --expect), unchecked (only the check's own failure)")
                       ->transform(CLI::CheckedTransformer(npd_kinds, CLI::ignore_case));
  auto* npd_unknown = app.add_flag("--npd-unchecked-unknown", opt.npd_unchecked_unknown,
                                   "With --npd: a check that could not be made exits 2 (NPD: condition "
                                   "Unknown) instead of 1 (True)");
  npd->needs(health);
  npd_kind->needs(npd);
  npd_unknown->needs(npd);
  // Under NPD the condition holds while the fault lasts: every check reports every fault of
  // this boot (--state would report an Xid once, and the condition would clear at the next
  // check), and the taint, not scontrol, takes the node out.
  npd->excludes(state);
  npd->excludes(drain);
  health->needs(expect);
  // The fingerprint modes run no checks: a report option with them would be silently empty.
  for (const char* report : {"--save-fingerprint", "--json", "--html", "--save-snapshot", "--matrix"})
    health->excludes(app.get_option(report));
  for (const char* report : {"--json", "--html", "--save-snapshot", "--matrix"})
    app.get_option("--save-fingerprint")->excludes(app.get_option(report));
  for (const char* report : {"--json", "--html", "--save-snapshot", "--matrix"})
    app.get_option("--timeout")->excludes(app.get_option(report));
  expect->needs(health);
  om->needs(health);
  state->needs(health);
  drain->needs(health);
  cli::add_tool_flags(app, "gdsb-topo");
}

int run_topo(const Options& opt) {
  try {
    if (opt.health || !opt.save_fingerprint.empty()) return run_fingerprint(opt);
    // A report may replace an earlier gdsb-topo report, never an unrelated file unless asked.
    const gdsb::report::OutputTarget json_target{opt.json_path, "--json", "gdsbench.topo/1"};
    if (!opt.json_path.empty()) gdsb::report::check_output_path(json_target, opt.allow_overwrite);
    if (!opt.html_path.empty()) gdsb::report::check_output_path(opt.html_path, opt.allow_overwrite);
    topo::RunContext ctx = make_context(opt);
    topo::Snapshot snap = collect(opt);
    if (!opt.save_snapshot.empty()) {
      fs::path dir = opt.save_snapshot;
      std::error_code ec;
      if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !fs::exists(dir / "snapshot.json", ec) &&
          !opt.allow_overwrite)
        throw UsageError(
            dir.string() +
            " is not empty and holds no snapshot; pass --allow-overwrite or pick a new directory");
      topo::save_snapshot(snap, dir, opt.allow_overwrite);
    }
    topo::TopologyView view(snap);
    topo::Report report = topo::evaluate(snap, view);
    ctx.run.ended_at = utc_now_iso8601();
    if (opt.quiet) {
      std::cout << ' ' << topo::platform_verification_line(report) << '\n';
    } else {
      topo::TextOptions to;
      to.verbose = opt.verbose;
      to.tree = !opt.no_tree;
      to.matrix = opt.matrix;
      topo::render_text(std::cout, snap, view, report, to);
    }
    if (!opt.json_path.empty() || !opt.html_path.empty()) {
      const nlohmann::json doc = topo::to_json(snap, view, report, ctx);
      if (!opt.json_path.empty()) {
        gdsb::report::write_output_atomic(json_target, doc.dump(2) + "\n", opt.allow_overwrite);
      }
      if (!opt.html_path.empty()) gdsb::report::write_html(doc, opt.html_path, opt.allow_overwrite);
    }
    if (!opt.save_snapshot.empty()) std::cout << " snapshot saved to " << opt.save_snapshot << '\n';
    bool failed = report.verdict == topo::Verdict::Fail ||
                  (opt.warn_as_error && report.verdict == topo::Verdict::Warn);
    return failed ? kExitCheckFailed : kExitOk;
  } catch (const Error& e) {
    std::cerr << "gdsb-topo: " << e.what() << '\n';
    if (opt.npd) return npd_unchecked(opt, e.what(), std::cout);
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "gdsb-topo: " << e.what() << '\n';
    if (opt.npd) return npd_unchecked(opt, e.what(), std::cout);
    return kExitRuntime;
  }
}

int topo_main(int argc, char** argv) {
  CLI::App app{"gdsb-topo"};
  Options opt;
  setup_topo(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc == 0) return kExitOk;
    // A plugin command line NPD cannot run is a check that could not be made: a problem,
    // whatever else the line (half parsed) asked for.
    if (std::find(argv + 1, argv + argc, std::string_view("--npd")) != argv + argc)
      return npd_unchecked(Options{}, std::string("usage: ") + e.what(), std::cout);
    return kExitUsage;
  }
  if (opt.npd && app.get_option("--timeout")->count() == 0) opt.timeout_s = kNpdDefaultTimeoutS;
  opt.argv.assign(argv, argv + argc);
  if (const char* p = std::getenv("PATH")) opt.path_env = p;
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) opt.slurm_node = n;
  if (const char* n = std::getenv("NODE_NAME"); n && *n) opt.k8s_node = n;
  return run_topo(opt);
}

}  // namespace gdsb::topo_app
