// The run of one rank: phases between barriers (or one node at a time with --stagger), each
// under --phase-timeout, the node report, the summary to rank 0, and rank 0's reports.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>

#include "cluster_app.hpp"
#include "gdsb/cluster/mpi_exchange.hpp"
#include "gdsb/cluster/summary.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/stop_signals.hpp"
#include "gdsb/topo/model.hpp"
#include "gdsb/units.hpp"
#include "gdsb/version.hpp"

namespace fs = std::filesystem;

namespace gdsb::cluster_app {
namespace {

using cluster::NodeFacts;
using cluster::NodeOptions;
using cluster::PhaseRecord;

NodeOptions node_options(const Options& o, int rank) {
  NodeOptions n;
  if (!o.topo_input.empty()) {
    const std::string spec = with_rank(o.topo_input, rank);
    const auto eq = spec.find('=');
    const std::string kind = eq == std::string::npos ? "" : spec.substr(0, eq);
    const std::string path = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (path.empty() || !fs::exists(path))
      throw UsageError("--topo-input '" + spec + "': expected KIND=PATH of an existing file or directory");
    if (kind == "sysfs-root") n.sources.sysfs_root = path;
    else if (kind == "pci-dump") n.sources.pci_dump = path;
    else if (kind == "lspci-text") n.sources.lspci_text = path;
    else if (kind == "hwloc-xml") n.sources.hwloc_xml = path;
    else if (kind == "snapshot") n.sources.from_snapshot = path;
    else
      throw UsageError("--topo-input '" + spec +
                       "': KIND must be sysfs-root, pci-dump, lspci-text, hwloc-xml or snapshot");
  }
  if (!o.fake_gpu.empty()) n.fake_gpu = gpu::load_fake_gpu_spec(with_rank(o.fake_gpu, rank));
  n.no_hwloc = o.no_hwloc;
  n.no_nvml = o.no_nvml;
  n.no_cuda = o.no_cuda;
  n.nvml_lib = o.nvml_lib;
  n.measure.bytes = parse_size(o.p2p_size, "--p2p-size");
  n.measure.repetitions = o.p2p_repetitions;
  n.measure.loops = o.p2p_loops;
  n.measure.warmups = 1;
  n.measure.latency_loops = 2;   // latency is not compared across nodes; keep the phase short
  n.io_dir = with_rank(o.io_dir, rank);
  n.io_modes.clear();
  for (std::size_t at = 0; at <= o.io_modes.size();) {
    const auto comma = std::min(o.io_modes.find(',', at), o.io_modes.size());
    const auto t = parse_xfer_type(o.io_modes.substr(at, comma - at));
    if (!t) throw UsageError("--io-modes '" + o.io_modes + "': expected gdsio -x values such as 1,2,0");
    // A mode given twice is one mode: its points would carry the same (op, mode, nodes).
    if (std::find(n.io_modes.begin(), n.io_modes.end(), static_cast<int>(*t)) == n.io_modes.end())
      n.io_modes.push_back(static_cast<int>(*t));
    at = comma + 1;
  }
  n.io_file_size = parse_size(o.io_size, "--io-size");
  n.io_block = parse_size(o.io_block, "--io-block");
  n.io_time_s = o.io_time_s;
  n.file_tag = std::to_string(rank);
  n.allow_overwrite = o.allow_overwrite;
  return n;
}

// Runs fn on its own thread; a phase that does not end in time is left running (its results
// are never read) and reported as timed out.
PhaseRecord run_phase(const std::string& name, double timeout_s, NodeFacts& facts,
                      std::function<nlohmann::json(NodeFacts&)> fn, bool& leaked) {
  PhaseRecord rec;
  rec.name = name;
  const auto t0 = std::chrono::steady_clock::now();
  auto mine = std::make_shared<NodeFacts>(facts);
  auto task = std::make_shared<std::packaged_task<nlohmann::json()>>([mine, fn] { return fn(*mine); });
  auto result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(std::chrono::duration<double>(timeout_s)) != std::future_status::ready) {
    rec.status = "timeout";
    rec.error = "did not finish within --phase-timeout " + std::to_string(static_cast<int>(timeout_s)) + " s";
    leaked = true;
  } else {
    try {
      rec.document = result.get();
      facts = *mine;
    } catch (const std::exception& e) {
      rec.status = "error";
      rec.error = e.what();
    }
  }
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

// Every rank's node (node_identity.hpp), from every rank's host and machine. Where the exchange
// failed (a rank left: the run is ending), every rank is a node of its own, as before.
cluster::RankLayout exchange_layout(const Options& o, cluster::mpi::Session& mpi, const std::string& host) {
  const int rank = mpi.rank();
  std::string recording;
  if (!o.topo_input.empty()) recording = with_rank(o.topo_input, rank);
  if (!o.fake_gpu.empty()) recording += (recording.empty() ? "" : " with ") + with_rank(o.fake_gpu, rank);
  const std::string machine = cluster::machine_of(cluster::this_boot_id(), recording);
  const nlohmann::json mine = {host, machine};
  const auto all = mpi.all_gather(mine.dump(), o.phase_timeout_s);
  std::vector<std::pair<std::string, std::string>> of_rank;
  for (int r = 0; r < mpi.size(); ++r) {
    const auto j = all ? nlohmann::json::parse((*all)[static_cast<std::size_t>(r)], nullptr, false) : nlohmann::json();
    if (j.is_array() && j.size() == 2 && j[0].is_string() && j[1].is_string())
      of_rank.emplace_back(j[0].get<std::string>(), j[1].get<std::string>());
    else
      of_rank.emplace_back(host, r == rank ? machine : "rank " + std::to_string(r));
  }
  return cluster::rank_layout(of_rank);
}

}  // namespace

int run_rank(const Options& o, int* argc, char*** argv) {
  StopSignals signals("gdsb-cluster", "stopping after the current case");
  const RunContext context = collect_context();  // the run's start: cluster.json's started_at
  cluster::mpi::Session mpi(argc, argv);
  const int rank = mpi.rank();
  bool leaked = false;
  int rc = kExitOk;
  try {
    if (rank == o.simulate_lost_rank) return kExitOk;  // straight to MPI_Finalize
    NodeOptions nopt = node_options(o, rank);
    nopt.stop = &signals.flag();
    const std::string host = mpi.processor_name();
    const cluster::RankLayout layout = exchange_layout(o, mpi, host);
    const auto my_node = static_cast<std::size_t>(layout.node_of_rank[static_cast<std::size_t>(rank)]);
    const std::string node = layout.name_of_node[my_node];
    const StoragePlan storage = storage_plan(o, layout);
    if (rank == 0) check_cluster_outputs(o);
    // One report a rank: <node>.json, or <node>.<rank>.json where several ranks share the node.
    const bool shared = layout.ranks_of_node[my_node].size() > 1;
    const std::string node_path =
        (fs::path(o.out) / "nodes" / (shared ? node + "." + std::to_string(rank) + ".json" : node + ".json")).string();
    fs::create_directories(fs::path(node_path).parent_path());
    report::check_output_path(node_path, o.allow_overwrite);

    NodeFacts facts;
    facts.argv = o.argv;
    facts.version = std::string(version());
    std::vector<PhaseRecord> phases;
    const std::pair<const char*, std::function<nlohmann::json(NodeFacts&)>> plan[] = {
        {"topology", [&](NodeFacts& f) { return cluster::topology_phase(nopt, f); }},
        {"p2p", [&](NodeFacts& f) { return cluster::p2p_phase(nopt, f); }},
        {"io", [&](NodeFacts& f) { return cluster::io_phase(nopt, f); }},
        {cluster::kNodeFigurePhase, [&](NodeFacts& f) { return cluster::node_figure_phase(nopt, f); }}};
    // The node's figure is the node's, not a rank's: its lowest rank measures it, once.
    const int node_rank = layout.ranks_of_node[my_node].front();
    const Availability node_run = cluster::node_figure_probe(nopt);
    for (const auto& [name, fn] : plan) {
      const int turns = o.stagger ? mpi.size() : 1;
      for (int turn = 0; turn < turns; ++turn) {
        if (o.stagger && turn != rank) {
        } else if (std::string(name) == "io" && nopt.io_dir.empty()) {
          phases.push_back({"io", "waived", "no --io-dir given", 0, nullptr});
        } else if (std::string(name) == cluster::kNodeFigurePhase && (rank != node_rank || !node_run.ok)) {
          phases.push_back({name, "waived",
                            rank != node_rank ? "measured once for the node, by rank " + std::to_string(node_rank)
                                              : node_run.reason,
                            0, nullptr});
        } else {
          phases.push_back(run_phase(name, o.phase_timeout_s, facts, fn, leaked));
        }
        mpi.barrier(o.phase_timeout_s);
      }
    }
    // The shared-storage phase: collective (every rank in step), so it runs on this thread,
    // which keeps the MPI calls; its I/O runs on worker threads under each point's stonewall.
    if (storage.enabled && !mpi.broken()) {
      PhaseRecord rec{"storage", "ok", "", 0, nullptr};
      const auto t0 = std::chrono::steady_clock::now();
      try {
        rec.document = storage_phase(o, storage, nopt, facts, layout, mpi, rank, signals.flag(), rec.error);
        if (!rec.error.empty()) rec.status = "error";
      } catch (const std::exception& e) {
        rec.status = "error";
        rec.error = e.what();
      }
      rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      phases.push_back(std::move(rec));
    }
    const nlohmann::json doc = cluster::node_document(node, host, rank, facts, phases, layout.id_of_node[my_node]);
    const nlohmann::json summary = cluster::summarize(doc, node_path);
    // schema, then the summary (what --from reads, and stops after), then the documents.
    nlohmann::ordered_json ordered;
    ordered["schema"] = doc.at("schema");
    ordered["summary"] = summary;
    for (const auto& [k, v] : doc.items()) ordered[k] = v;
    report::write_output_atomic(node_path, ordered.dump(1) + "\n", o.allow_overwrite);
    const auto all = mpi.gather(summary.dump(), o.phase_timeout_s);
    if (rank == 0) {
      std::vector<cluster::NodeSummary> nodes;
      const auto table = std::make_shared<cluster::TextTable>();  // one for all ranks' fingerprints
      for (std::size_t r = 0; r < all.size(); ++r) {
        if (!all[r]) {
          nodes.push_back(cluster::missing_node(static_cast<int>(r),
                                                "no summary within --phase-timeout (the rank left, "
                                                "crashed or hangs)"));
          continue;
        }
        nodes.push_back(cluster::summary_from_text(*all[r], "rank " + std::to_string(r), table));
        nodes.back().origin = "rank " + std::to_string(r);
      }
      rc = write_cluster_outputs(o, context, cluster::aggregate(std::move(nodes), aggregate_options(o, mpi.size()), storage_judgement(o)));
    } else if (!o.quiet) {
      std::cerr << "gdsb-cluster rank " << rank << ": " << node_path << '\n';
    }
  } catch (const Error& e) {
    std::cerr << "gdsb-cluster rank " << rank << ": " << e.what() << '\n';
    rc = exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "gdsb-cluster rank " << rank << ": " << e.what() << '\n';
    rc = kExitRuntime;
  }
  // SIGINT or SIGTERM: what was measured is written above; the run says it was cut short.
  if (signals.flag().load() && rc != kExitUsage && rc != kExitRuntime) rc = kExitInterrupted;
  std::cout.flush();
  // A lost rank never reaches MPI_Finalize's synchronization, and a failed rank would leave
  // the others waiting: rank 0 ends every rank once its reports are written. The other ranks
  // give it time to do so, and end themselves only if rank 0 is the one that was lost.
  if (rank != 0 && mpi.broken())
    std::this_thread::sleep_for(std::chrono::duration<double>(o.phase_timeout_s + 10));
  if (mpi.broken() || rc == kExitUsage || rc == kExitRuntime) mpi.abort_with(rc == kExitOk ? kExitCheckFailed : rc);
  if (leaked) {
    std::cerr.flush();
    mpi.finalize();
    std::quick_exit(rc);  // a timed-out phase is still running; do not wait for it
  }
  return rc;
}

}  // namespace gdsb::cluster_app
