// What one rank runs on its node, through the libraries (never by spawning the CLIs):
// the topology report (gdsb::topo), the P2P report with measurement (gdsb::p2p) and a short
// read ladder through libgdsbench's runner. Each phase returns its gdsbench document; the
// node document (schema gdsbench.cluster-node/1) holds the three, the phases' status, the
// hardware counts and the topology fingerprint.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gdsb/cluster/shared_storage.hpp"
#include "gdsb/gpu/fake_gpu_spec.hpp"
#include "gdsb/p2p/measure.hpp"
#include "gdsb/transfer_path.hpp"
#include "gdsb/topo/collect.hpp"

namespace gdsb {
class Runner;
}  // namespace gdsb

namespace gdsb::cluster {

// The host-memory fake GPU service instead of CUDA (tests; see docs/gdsb-cluster.md):
// read from a JSON file {"devices": 2, "copy_delay_us": 500} (gdsb/gpu/fake_gpu_spec.hpp,
// which gdsb-io's node mode reads too).
using gpu::FakeGpuSpec;

struct NodeOptions {
  topo::InputSources sources;  // none set: this machine
  bool no_hwloc = false, no_nvml = false, no_cuda = false;
  std::string nvml_lib;
  p2p::MeasureOptions measure;   // bytes, loops, repetitions of the H2D/D2H/D2D copies
  std::string io_dir;            // "": the io phase is waived
  std::vector<int> io_modes{1, 2, 0};  // gdsio -x values, sequential reads
  uint64_t io_file_size = 256ull << 20;
  uint64_t io_block = 1ull << 20;
  double io_time_s = 3;
  uint32_t io_threads = 1;
  std::string file_tag = "0";    // makes the io file name unique per rank
  bool allow_overwrite = false;  // --allow-overwrite: the I/O phases may write a file that is
                                 // neither this job's nor marked by gdsbench (run_files.hpp)
  std::optional<FakeGpuSpec> fake_gpu;
  const std::atomic<bool>* stop = nullptr;
};

// What the phases learn that the node document needs besides their own documents.
struct NodeFacts {
  std::string gpu_model, drive_model, nic_model;  // NICs: data NICs (gdsb/topo/nic_role.hpp)
  int gpus = 0, drives = 0, nics = 0;
  std::string management_nic_model;  // the other NICs, listed apart from the class
  int management_nics = 0;
  std::string kernel;
  std::string driver;
  std::string cuda_driver;  // "13.0", or "not available"
  nlohmann::json fingerprint = nlohmann::json::object();
  std::vector<std::string> argv;
  std::string version;
  // The node's own ceiling for reading io_dir (the shared-storage phase's bound): the
  // network mount's carriers from the path model (issue 25), else every data NIC at once;
  // nullopt with the reason where unknown. Set by topology_phase.
  std::optional<double> storage_ceiling_gb_s;
  std::string storage_ceiling_text = "not known: the topology phase did not run";
};

nlohmann::json topology_phase(const NodeOptions& o, NodeFacts& facts);
nlohmann::json p2p_phase(const NodeOptions& o, NodeFacts& facts);
nlohmann::json io_phase(const NodeOptions& o, const NodeFacts& facts);
// The node's own figure (issue 35): every GPU of the node reading at once, each from its
// nearest drive's file system, else io_dir (gdsb/topo/node_run.hpp, as gdsb-io --gpus all),
// per-GPU and aggregate figures beside the node ceiling: an io document with its "node"
// section (the node document's kNodeFigurePhase, summary.hpp). Run once per node, by its
// lowest rank. The probe says why it cannot run here.
Availability node_figure_probe(const NodeOptions& o);
nlohmann::json node_figure_phase(const NodeOptions& o, const NodeFacts& facts);

// The I/O of one point of the shared-storage phase on this rank (gdsb-cluster runs the points
// between ranks; shared_storage.hpp judges them). Files are opened by libgdsbench's runner.
struct StorageIo {
  std::string op;  // write, read, checkpoint-save, checkpoint-load
  int mode = 1;
  int nodes = 1;
  std::string file;
  uint64_t offset = 0, bytes = 0, block = 0;  // this rank's region and transfer size
  double time_s = 0;                          // 0: one pass over the region
  bool fsync = false;                         // durable before the interval ends (checkpoints)
  bool job_file = false;  // file was created by this job's fill (on any rank): its own, on every
                          // file system (gdsb::RunOptions::job_files)
  int ranks = 1;                              // the point's ranks: every rank of its nodes
};

class StorageRunner {
 public:
  explicit StorageRunner(const NodeOptions& o);
  ~StorageRunner();
  // Whether -x mode can run here; the reason when it cannot.
  Availability probe(int mode, const std::string& file) const;
  // Runs io until its own end (returns reached_limit = true) or until *stop (false): stopped
  // by the stonewall, or "interrupted" when the NodeOptions' stop (SIGINT) was set. A path
  // that cannot run gives a waived sample; a failure an error sample with the message.
  StorageSample run(const StorageIo& io, const std::atomic<bool>& stop, bool& reached_limit) const;

 private:
  std::unique_ptr<PathRegistry> paths_;
  std::unique_ptr<Runner> runner_;
  bool allow_overwrite_ = false;
  const std::atomic<bool>* user_stop_ = nullptr;
};

struct PhaseRecord {
  std::string name;
  std::string status = "ok";  // ok, error, timeout, waived (error says why)
  std::string error;
  double seconds = 0;
  nlohmann::json document;    // null when the phase failed
};

// node_id: the node's identity (node_identity.hpp), shared by the ranks of one node.
nlohmann::json node_document(const std::string& node, const std::string& host, int rank,
                             const NodeFacts& facts, const std::vector<PhaseRecord>& phases,
                             const std::string& node_id = "");

}  // namespace gdsb::cluster
