// Every GPU of a node reading at once (issue 35): each GPU's file written once, untimed, then
// for a transfer type every GPU reads its own file at the same time, one runner job a GPU on
// a thread of its own, and the node's figure (node_figure.hpp) over those runs. The one
// implementation that gdsb-io's node mode, the doctor's live ladder and gdsb-cluster's node
// phase run; where each GPU's file goes is the topology library's plan (gdsb/topo/node_plan.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gdsb/node_figure.hpp"
#include "gdsb/runner.hpp"

namespace gdsb {

// One GPU's part of a node run: its CUDA index and the file it reads.
struct NodeReader {
  int gpu = 0;
  std::string file;
};

// One transfer type of a node run: the runs, one a reader in the readers' order, and the figure.
struct NodeMode {
  XferType xfer = XferType::CpuOnly;
  std::string waived;  // why the type cannot run here; "" when it ran
  std::vector<RunResult> runs;
  NodeFigure figure;
};

struct NodeReadOptions {
  IoPattern pattern = IoPattern::Read;  // Read or RandRead
  uint64_t file_size = 0;               // each reader's file
  uint64_t io_size = 1ULL << 20;
  uint32_t threads = 1;                 // per GPU
  double seconds = 3;
  std::string name = "node";            // job names: <name>-gpu<N>
  const std::atomic<bool>* stop = nullptr;
  // Changes each job before it runs (gdsb-io's extra options); may be empty.
  std::function<void(Workload&)> adjust;
  // Each job's run options (progress); the library sets `stop`. May be empty.
  std::function<RunOptions(std::size_t reader)> run_options;
  std::function<void(std::size_t reader)> on_done;  // after each reader's run; may be empty
};

// The workload of reader i for type x.
Workload node_job(const NodeReader& r, XferType x, const NodeReadOptions& o);

// Jobs at the same time, a thread each (Runner::run is thread-safe); results in job order.
// An exception becomes a failed result with its message, so what the others measured stays.
std::vector<RunResult> run_at_once(const Runner& runner, const std::vector<Workload>& jobs,
                                   const std::function<RunOptions(std::size_t)>& options_for,
                                   const std::function<void(std::size_t)>& on_done = {});

// Every reader reads its file at once with type x. A type the runner cannot run here is
// waived for every reader with the probe's reason (NodeMode::waived), and nothing runs.
NodeMode read_at_once(const Runner& runner, const std::vector<NodeReader>& readers, XferType x,
                      const NodeReadOptions& o);

// Writes `path` (size bytes of random data: reads of unwritten extents would not reach
// storage; buffered, so that any file system takes it; one pass), ending with the data on
// storage and out of the page cache, so the reads that follow start from storage; false
// when stopped. Throws RuntimeError naming the file
// when the write fails. Every scratch file gdsbench reads (survey, node run, doctor).
bool write_scratch_file(const Runner& runner, const std::string& path, uint64_t size,
                        const std::atomic<bool>* stop);

// Files removed when this object goes, whatever happened (errors, Ctrl-C).
class ScratchFiles {
 public:
  ScratchFiles() = default;
  ~ScratchFiles();
  ScratchFiles(const ScratchFiles&) = delete;
  ScratchFiles& operator=(const ScratchFiles&) = delete;
  const std::string& add(std::string path);

 private:
  std::vector<std::string> paths_;
};

}  // namespace gdsb
