// Options, the --from route and the files rank 0 writes (shared by both routes).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <sstream>

#include "cluster_app.hpp"
#include "gdsb/cluster/outputs.hpp"
#include "gdsb/cluster/summary.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/cli/tool_flags.hpp"
#include "gdsb/report/openmetrics.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/topo/health.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/version.hpp"

namespace fs = std::filesystem;

namespace gdsb::cluster_app {
namespace {

const char* const kOutputs[] = {"cluster.json", "cluster.html", "cluster.txt", "cluster.junit.xml",
                                "cluster.prom"};

std::string path_in(const Options& o, const char* name) { return (fs::path(o.out) / name).string(); }

// One known-good fingerprint per hardware class, for gdsb-topo --health --expect on its nodes:
// the facts of the member most like the rest (the class's own known-good, not a threshold
// written per SKU). Returns the files written.
std::vector<std::string> write_reference_fingerprints(const Options& o, const cluster::ClusterResult& r) {
  std::vector<std::string> files;
  for (std::size_t c = 0; c < r.classes.size(); ++c) {
    const cluster::NodeClass& cls = r.classes[c];
    if (cls.members.empty()) continue;
    const cluster::NodeSummary& ref = r.nodes[cls.reference];
    topo::FingerprintOrigin origin;
    origin.tool = "gdsb-cluster";
    origin.version = std::string(version());
    origin.host = ref.host;
    origin.source = "gdsb-cluster node report of " + ref.node;
    origin.created = utc_now_iso8601();
    origin.note = "reference of hardware class " + std::to_string(c + 1) + ": " + cluster::class_words(cls) +
                  "; node " + ref.node + ", the member most like the " + std::to_string(cls.members.size()) +
                  " node(s) of its class";
    const std::string name = "fingerprint-class" + std::to_string(c + 1) + ".json";
    report::write_output_atomic({path_in(o, name.c_str()), "--out", topo::kFingerprintSchema},
                                topo::fingerprint_document(topo::facts_from_texts(ref.fingerprint.texts(), "node " + ref.node + ": fingerprint"), origin).dump(1) + "\n",
                                o.allow_overwrite);
    files.push_back(name);
  }
  return files;
}

// cluster.json's text: "schema" first, then the rest in key order, and a newline. The schema's line is moved in
// the document's own dump: an ordered copy of the document (the former way) held a second
// node table in memory. Only the top level is indented by one space, so the line is unique.
std::string schema_first(const nlohmann::json& doc) {
  std::string text = doc.dump(1);
  const std::string line = "\n \"schema\": " + doc.at("schema").dump() + ",";
  const std::size_t at = text.find(line);
  if (at == std::string::npos || text.rfind("{", 0) != 0) {  // the last key: the plain way
    nlohmann::ordered_json ordered;
    ordered["schema"] = doc.at("schema");
    for (const auto& [k, v] : doc.items()) ordered[k] = v;
    return ordered.dump(1) + "\n";
  }
  // The line moved to the front in one pass over what comes before it (a copy of 50 MB at
  // 25,000 nodes each time the text was cut and joined), and the final newline added here.
  std::rotate(text.begin() + 1, text.begin() + static_cast<std::ptrdiff_t>(at),
              text.begin() + static_cast<std::ptrdiff_t>(at + line.size()));
  text += '\n';
  return text;
}

struct StageMark {
  std::chrono::steady_clock::time_point wall;
  double cpu_s = 0;  // user + system, all threads
};
StageMark mark() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return {std::chrono::steady_clock::now(), seconds(u.ru_utime) + seconds(u.ru_stime)};
}
// "1.234 s wall 2.345 s CPU"
std::string stage_words(const StageMark& from, const StageMark& to) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f s wall %.3f s CPU", std::chrono::duration<double>(to.wall - from.wall).count(),
                to.cpu_s - from.cpu_s);
  return b;
}

}  // namespace

std::string with_rank(std::string text, int rank) {
  for (auto at = text.find("{rank}"); at != std::string::npos; at = text.find("{rank}"))
    text.replace(at, 6, std::to_string(rank));
  return text;
}

void setup_cluster(CLI::App& app, Options& o) {
  app.description(
      "gdsb-cluster: bring-up of a cluster over MPI (mpirun/srun, one rank a node): topology, P2P "
      "and a short read ladder on every node, one report naming the odd nodes.\n"
      "Exit: 0 every node alike, 3 a node failed a check, is an outlier or is missing, 1 runtime "
      "error, 2 usage.");
  app.add_option("--out", o.out, "Directory of the reports (nodes/<host>.json, cluster.*)")->required();
  app.add_option("--from", o.from, "Aggregate these node reports (OUT/nodes/*.json) without MPI");
  app.add_option("--topo-input", o.topo_input,
                 "Read a recorded topology instead of this machine: KIND=PATH with KIND one of "
                 "sysfs-root, pci-dump, lspci-text, hwloc-xml, snapshot; {rank} is replaced");
  app.add_option("--fake-gpu", o.fake_gpu,
                 "Tests: the host-memory fake GPU service described by FILE ({\"devices\":2,"
                 "\"copy_delay_us\":500}); {rank} is replaced");
  app.add_option("--io-dir", o.io_dir, "Directory for the read ladder (a local drive); none: waived");
  app.add_option("--io-modes", o.io_modes, "gdsio -x values of the read ladder")->capture_default_str();
  app.add_option("--io-size", o.io_size, "File size of the read ladder")->capture_default_str();
  app.add_option("--io-block", o.io_block, "I/O size of the read ladder")->capture_default_str();
  app.add_option("--io-time", o.io_time_s, "Seconds per read mode")->capture_default_str()->check(CLI::Range(0.1, 3600.0));
  app.add_option("--p2p-size", o.p2p_size, "Bytes per H2D/D2H/D2D copy")->capture_default_str();
  app.add_option("--p2p-repetitions", o.p2p_repetitions, "Timed samples per copy case")
      ->capture_default_str()->check(CLI::Range(1, 100));
  app.add_option("--p2p-loops", o.p2p_loops, "Copies per sample")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_flag("--stagger", o.stagger, "Run each phase one node at a time (shared storage)");
  app.add_option("--phase-timeout", o.phase_timeout_s,
                 "Seconds a phase, barrier or the summary exchange may take before the node is "
                 "reported as timed out")->capture_default_str()->check(CLI::Range(1.0, 86400.0));
  app.add_option("--z-threshold", o.z_threshold, "Robust z-score above which a figure is an outlier")
      ->capture_default_str()->check(CLI::Range(0.5, 100.0));
  app.add_option("--min-deviation", o.min_deviation_percent,
                 "An outlier is also at least this many percent from the median")
      ->capture_default_str()->check(CLI::Range(0.0, 1000.0));
  app.add_flag("--no-nvml", o.no_nvml, "Do not use NVML");
  app.add_flag("--no-cuda", o.no_cuda, "Do not use the CUDA runtime (P2P figures waived)");
  app.add_flag("--no-hwloc", o.no_hwloc, "Live topology: do not query hwloc");
  app.add_option("--nvml-lib", o.nvml_lib, "Path of libnvidia-ml.so.1");
  app.add_flag("--allow-overwrite", o.allow_overwrite, "Replace files that gdsbench did not write");
  app.add_option("--simulate-lost-rank", o.simulate_lost_rank,
                 "Tests: rank N leaves before its first phase, as a rank whose node died would")
      ->check(CLI::Range(0, 1 << 20));
  app.add_flag("-q,--quiet", o.quiet, "Print only the verdict line");
  app.add_flag("--timing", o.timing,
               "--from: print the wall time of each stage (parse, fold, write) on stderr");
  auto* g = "Shared storage (all nodes on --io-dir at once; docs/gdsb-cluster.md)";
  app.add_option("--scale", o.scale,
                 "Run the shared-storage phase on the first k nodes (every rank of them) for each k of this "
                 "list (1,2,4) or auto (powers of two up to N nodes, then N)")->group(g);
  app.add_flag("--aggregate", o.aggregate, "Run the shared-storage phase on all nodes at once (= --scale N)")->group(g);
  app.add_option("--storage-ops", o.storage_ops, "Ops of the shared-storage phase, run in this order")
      ->capture_default_str()->group(g);
  app.add_option("--storage-layout", o.storage_layout, "file-per-process or shared-file (one file split by rank)")
      ->capture_default_str()->group(g);
  app.add_option("--storage-time", o.storage_time_s,
                 "Seconds a point runs before every rank stops (stonewalling); 0: until the first rank "
                 "has moved its --io-size; default --io-time")->group(g)->check(CLI::Range(0.0, 86400.0));
  app.add_option("--demand-per-gpu", o.demand_per_gpu,
                 "What one GPU reads: a rate (2GB/s, 500MB/s; bits as 100Gb/s = 12.5 GB/s), dataset:SAMPLES_PER_S[xSIZE] or "
                 "checkpoint-load:SECONDS (with --model-bytes): how many GPUs the storage feeds")->group(g);
  app.add_option("--model-bytes", o.model_bytes,
                 "A cluster-wide checkpoint save and restore of this model, a shard per rank: a size "
                 "(64G) or PARAMETERS:DTYPE[+adam] (405B:bf16+adam)")->group(g);
  app.add_option("--scale-gain", o.scale_gain_percent,
                 "Scaling stops where the added nodes add less than this percent of linear")
      ->capture_default_str()->group(g)->check(CLI::Range(1.0, 100.0));
  cli::add_tool_flags(app, "gdsb-cluster");
}

cluster::AggregateOptions aggregate_options(const Options& o, int expected_ranks) {
  cluster::AggregateOptions a;
  a.z_threshold = o.z_threshold;
  a.min_relative = o.min_deviation_percent / 100.0;
  a.expected_ranks = expected_ranks;
  return a;
}

cluster::StorageJudgement storage_judgement(const Options& o) {
  cluster::StorageJudgement a;
  if (!o.demand_per_gpu.empty()) {  // checked here for --from; storage_plan() checks it for a run
    const cluster::Demand d = cluster::parse_demand(o.demand_per_gpu, "--demand-per-gpu");
    a.demand_per_gpu_gb_s = d.gb_s;
    a.demand_restore_s = d.restore_s;
    a.demand_text = d.text;
  }
  a.scale_gain_percent = o.scale_gain_percent;
  return a;
}

void check_cluster_outputs(const Options& o) {
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) throw UsageError("--out " + o.out + ": cannot create the directory: " + ec.message());
  for (const char* name : kOutputs) report::check_output_path(path_in(o, name), o.allow_overwrite);
}

int write_cluster_outputs(const Options& o, RunContext context, const cluster::ClusterResult& r) {
  context.ended_at = utc_now_iso8601();
  const nlohmann::json doc = cluster::cluster_document(r, o.argv, context, std::string(version()));
  // The page is the largest writer (a third of writing 10,000 nodes): made on a second CPU
  // while this one writes the rest; both only read doc and r.
  std::future<void> html = std::async(std::launch::async, [&] {
    report::write_html(doc, path_in(o, "cluster.html"), o.allow_overwrite);
  });
  report::write_output_atomic(path_in(o, "cluster.json"), schema_first(doc), o.allow_overwrite);
  const std::string mark = "# " + std::string(report::kGeneratorMark) + " (gdsb-cluster)\n";
  const std::string text = cluster::cluster_text(r);
  report::write_output_atomic(path_in(o, "cluster.txt"), mark + text, o.allow_overwrite);
  report::write_output_atomic(path_in(o, "cluster.junit.xml"), cluster::cluster_junit(r), o.allow_overwrite);
  // OpenMetrics allows no free comment line: the generator is named by a gdsb_generator_info gauge.
  std::ostringstream prom;
  report::openmetrics::generator_info(prom, "gdsb-cluster", version());
  std::string metrics = cluster::cluster_openmetrics(r);
  metrics.insert(0, prom.str());  // in the room reserved for it, not a second copy of 68 MB
  report::write_output_atomic(path_in(o, "cluster.prom"), metrics, o.allow_overwrite);
  const std::vector<std::string> references = write_reference_fingerprints(o, r);
  html.get();  // its error, if any, is raised here
  if (o.quiet) {
    std::cout << text.substr(text.rfind('\n', text.size() - 2) + 1);
  } else {
    std::cout << text << "reports: " << o.out << "/cluster.{json,html,txt,junit.xml,prom}\n";
    for (const auto& f : references)
      std::cout << "known-good fingerprint for gdsb-topo --health --expect: " << o.out << "/" << f << '\n';
  }
  return r.failed() ? kExitCheckFailed : kExitOk;
}

int run_from(const Options& o) {
  const RunContext context = collect_context();
  try {
    check_cluster_outputs(o);
    // Wall and CPU (all threads) of each stage: on a shared machine the CPU figure is the
    // steadier of the two.
    std::vector<StageMark> marks{mark()};
    std::vector<cluster::NodeSummary> nodes = cluster::read_node_reports(o.from);
    marks.push_back(mark());
    const cluster::ClusterResult r = cluster::aggregate(std::move(nodes), aggregate_options(o, 0), storage_judgement(o));
    marks.push_back(mark());
    const int rc = write_cluster_outputs(o, context, r);
    marks.push_back(mark());
    if (o.timing) {
      std::cerr << "gdsb-cluster timing (" << o.from.size() << " reports):";
      const char* const names[] = {"parse", "fold", "write"};
      for (std::size_t i = 0; i < 3; ++i)
        std::cerr << (i ? "," : "") << " " << names[i] << " " << stage_words(marks[i], marks[i + 1]);
      std::cerr << "; all " << stage_words(marks.front(), marks.back()) << '\n';
    }
    return rc;
  } catch (const Error& e) {
    std::cerr << "gdsb-cluster: " << e.what() << '\n';
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "gdsb-cluster: " << e.what() << '\n';
    return kExitRuntime;
  }
}

}  // namespace gdsb::cluster_app
