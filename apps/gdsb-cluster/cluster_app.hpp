// gdsb-cluster: options struct, setup and run (CLI11 style); main() is a few lines.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "gdsb/cluster/aggregate.hpp"
#include "gdsb/cluster/mpi_exchange.hpp"
#include "gdsb/cluster/node_identity.hpp"
#include "gdsb/cluster/node_report.hpp"
#include "gdsb/run_context.hpp"

namespace gdsb::cluster_app {

struct Options {
  std::string out;
  std::vector<std::string> from;
  std::string topo_input;  // KIND=PATH, {rank} replaced
  std::string fake_gpu;    // FILE, {rank} replaced (tests)
  std::string io_dir;
  std::string io_modes = "1,2,0";
  std::string io_size = "256M", io_block = "1M", p2p_size = "64M";
  double io_time_s = 3;
  int p2p_repetitions = 3, p2p_loops = 4;
  bool stagger = false;
  double phase_timeout_s = 600;
  double z_threshold = 3.5;
  double min_deviation_percent = 10;
  bool no_nvml = false, no_cuda = false, no_hwloc = false;
  std::string nvml_lib;
  bool allow_overwrite = false;
  int simulate_lost_rank = -1;
  bool quiet = false;
  bool timing = false;  // --from: each stage's wall time on stderr
  // The shared-storage phase (issue 26; docs/gdsb-cluster.md "Shared storage").
  std::string scale;              // "1,2,4" or "auto"; "" with --aggregate: N only
  bool aggregate = false;
  std::string storage_ops = "write,read";
  std::string storage_layout = "file-per-process";
  double storage_time_s = -1;     // -1: --io-time
  std::string demand_per_gpu;     // "2GB/s"
  std::string model_bytes;        // "64M" or "405B:bf16+adam"
  double scale_gain_percent = 50;
  std::vector<std::string> argv;
};

void setup_cluster(CLI::App& app, Options& o);

// --from: aggregation of node reports, no MPI.
int run_from(const Options& o);
// The run of one rank (needs the MPI session; see main.cpp).
int run_rank(const Options& o, int* argc, char*** argv);

// Helpers shared by both routes (cluster_outputs.cpp).
cluster::AggregateOptions aggregate_options(const Options& o, int expected_ranks);
cluster::StorageJudgement storage_judgement(const Options& o);
void check_cluster_outputs(const Options& o);
// context: collected when the run began (its started_at); ended_at is set here.
int write_cluster_outputs(const Options& o, RunContext context, const cluster::ClusterResult& r);
// The shared-storage phase's plan, checked before anything runs (UsageError naming the
// option): the node counts of --scale for a world of `ranks`, the ops, the demand.
struct StoragePlan {
  bool enabled = false;
  std::vector<int> scale;         // node counts, ascending, each 1..nodes
  std::vector<std::string> ops;   // "write", "read" in the order run
  bool shared_file = false;
  double time_s = 0;
  std::optional<double> demand_gb_s;
  std::optional<double> demand_restore_s;
  std::string demand_text;
  uint64_t model_bytes = 0;
  std::string model_text;
};
// --scale counts nodes (node_identity.hpp): a point on k nodes runs on every rank of the first k.
StoragePlan storage_plan(const Options& o, const cluster::RankLayout& layout);
// Runs the phase on this rank (every rank calls it, in step: its points are collective).
nlohmann::json storage_phase(const Options& o, const StoragePlan& plan, const cluster::NodeOptions& rank_opts,
                             const cluster::NodeFacts& facts, const cluster::RankLayout& layout,
                             cluster::mpi::Session& mpi, int rank, const std::atomic<bool>& user_stop,
                             std::string& error);
// "{rank}" replaced by the rank number.
std::string with_rank(std::string text, int rank);

}  // namespace gdsb::cluster_app
