// What one rank runs on its node, through the libraries (never by spawning the CLIs):
// the topology report (gdsb::topo), the P2P report with measurement (gdsb::p2p) and a short
// read ladder through libgdsbench's runner. Each phase returns its gdsbench document; the
// node document (schema gdsbench.cluster-node/1) holds the three, the phases' status, the
// hardware counts and the topology fingerprint.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gdsb/p2p/measure.hpp"
#include "gdsb/topo/collect.hpp"

namespace gdsb::cluster {

// The host-memory fake GPU service instead of CUDA (tests; see docs/gdsb-cluster.md):
// read from a JSON file {"devices": 2, "copy_delay_us": 500}.
struct FakeGpuSpec {
  int devices = 1;
  int copy_delay_us = 0;
};
FakeGpuSpec load_fake_gpu_spec(const std::string& path);  // UsageError naming the file

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
  std::optional<FakeGpuSpec> fake_gpu;
  const std::atomic<bool>* stop = nullptr;
};

// What the phases learn that the node document needs besides their own documents.
struct NodeFacts {
  std::string gpu_model, drive_model, nic_model;
  int gpus = 0, drives = 0, nics = 0;
  std::string kernel;
  std::string driver;
  std::string cuda_driver;  // "13.0", or "not available"
  nlohmann::json fingerprint = nlohmann::json::object();
  std::vector<std::string> argv;
  std::string version;
};

nlohmann::json topology_phase(const NodeOptions& o, NodeFacts& facts);
nlohmann::json p2p_phase(const NodeOptions& o, NodeFacts& facts);
nlohmann::json io_phase(const NodeOptions& o, const NodeFacts& facts);

struct PhaseRecord {
  std::string name;
  std::string status = "ok";  // ok, error, timeout, waived (error says why)
  std::string error;
  double seconds = 0;
  nlohmann::json document;    // null when the phase failed
};

nlohmann::json node_document(const std::string& node, const std::string& host, int rank,
                             const NodeFacts& facts, const std::vector<PhaseRecord>& phases);

}  // namespace gdsb::cluster
