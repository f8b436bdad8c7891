// What the node mode (node_mode.hpp) measured and planned, and its text and JSON. Plain
// data filled by run_node; the writers only read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gdsb/node_figure.hpp"
#include "gdsb/result.hpp"
#include "gdsb/topo/node_plan.hpp"

namespace gdsb::io {

struct NodeGpu {
  int index = 0;           // CUDA index
  std::string pci_bus_id;  // as CUDA (or the recorded topology) names it
  topo::GpuPlan topo;      // its nearest sources and ceiling, where the topology shows it
  std::string directory;   // where its file is
  std::string directory_note;
  std::string file;
};

struct NodeMode {
  XferType xfer = XferType::CpuOnly;
  std::string waived;  // why the type cannot run here; "" when it ran
  std::vector<RunResult> runs;
  NodeFigure figure;
};

struct NodePlan {
  std::vector<NodeGpu> gpus;
  topo::Ceiling ceiling;  // every GPU reading its directory's sources at once
  std::string topology_source, topology_note;
  uint64_t file_size = 0;
  double seconds = 0;
  uint32_t threads = 0;
  std::vector<NodeMode> modes;
};

// --dry-run: where each GPU reads from and the ceilings; nothing measured.
std::string node_plan_text(const NodePlan& p);
// The measured table: a row a GPU, a column a transfer type, the aggregate and its share of
// the node ceiling; facts common to all GPUs said once; the odd GPU with its explanation.
std::string node_text(const NodePlan& p);
// The report's "node" section (docs/io-schema.md).
nlohmann::json node_json(const NodePlan& p);

// "GPU0-3", "GPU0, GPU2", "GPU0-2, GPU5": indexes in order.
std::string gpu_ranges(std::vector<int> gpus);

}  // namespace gdsb::io
