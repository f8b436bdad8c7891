// A node's own figure (issue 35): every chosen GPU reading at once, each from a file on its
// nearest drive's file system (node_plan.hpp), else the shared directory, with the node
// ceiling from the path model. The plan, its run through libgdsbench's runner
// (gdsb/node_run.hpp) and its JSON: the one implementation behind gdsb-io's node mode
// (`--gpus`), the doctor's live ladder and gdsb-cluster's node report.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gdsb/node_run.hpp"
#include "gdsb/topo/model.hpp"
#include "gdsb/topo/node_plan.hpp"

namespace gdsb::topo {

struct NodeGpu {
  int index = 0;           // CUDA index
  std::string pci_bus_id;  // as CUDA (or the recorded topology) names it
  GpuPlan topo;            // its nearest sources and ceiling, where the topology shows it
  std::string directory;   // where its file is
  std::string directory_note;
  std::string file;
};

struct NodePlan {
  std::vector<NodeGpu> gpus;
  Ceiling ceiling;  // every GPU reading its directory's sources at once
  std::string topology_source, topology_note;
  uint64_t file_size = 0;
  double seconds = 0;
  uint32_t threads = 0;
  std::vector<NodeMode> modes;
};

struct NodeLayoutOptions {
  std::string shared_dir;    // the fallback directory
  bool shared_only = false;  // every GPU reads shared_dir (gdsb-io -D, gdsb-doctor --io-dir)
  std::string shared_option = "-D";  // the option that named shared_dir, for the plan's notes
  bool recorded = false;     // a recorded topology: a plan only, no directory checked here
};

// Each GPU's directory (its own file system where the topology shows one and it is writable
// here, else the shared directory, with the reason) and the node ceiling: the path model's
// flow solve over every GPU reading its directory's devices at once. `snapshot` null: the
// shared directory for all, the ceiling unknown for plan.topology_note's reason.
void lay_out_node(NodePlan& plan, const Snapshot* snapshot, const NodeLayoutOptions& o);

// Each GPU's file size: `want`, where several GPUs share a directory together at most half
// its free space (whole MiB). RuntimeError when under min(want, 16 MiB) or a directory is not
// writable, naming the directory and the options that help (`dir_option`, `size_option`).
uint64_t node_file_size(const NodePlan& plan, uint64_t want, const std::string& dir_option,
                        const std::string& size_option);

// Threads a GPU: the CPUs shared out over the GPUs, 1 to 4.
uint32_t node_threads(std::size_t gpus);

// A plan's run: each GPU's file (DIR/<prefix>.<pid>.gpu<N>.tmp) written once, then read at
// once by every GPU for each type asked; the files are removed when this object goes.
class NodeRun {
 public:
  NodeRun(const Runner& runner, NodePlan& plan, const std::string& prefix);
  // Writes every GPU's file of plan.file_size; false when stopped. `before_each` (may be
  // empty) is called before each file, for progress.
  bool write_files(const std::atomic<bool>* stop, const std::function<void(const NodeGpu&)>& before_each = {});
  // Every GPU reads at once with type x; appended to plan.modes (o.file_size is the plan's).
  const NodeMode& read(XferType x, NodeReadOptions o);

 private:
  const Runner& runner_;
  NodePlan& plan_;
  ScratchFiles files_;
  std::vector<NodeReader> readers_;
};

// Why an odd GPU lags its peers, from what the plan and the runs show: a narrower path, a
// directory it shares, another path taken, or that the topology does not explain it.
std::string odd_gpu_explanation(const NodePlan& p, const NodeMode& m, const OddGpu& odd);

// The node section of an io report (docs/io-schema.md, "node"); gdsb-cluster's node report
// carries the same object.
nlohmann::json node_json(const NodePlan& p);

// "GPU0-3", "GPU0, GPU2", "GPU0-2, GPU5": indexes in order.
std::string gpu_ranges(std::vector<int> gpus);

}  // namespace gdsb::topo
