// What the doctor diagnoses from: the platform (a topology snapshot, its checks and
// ceilings), the measured runs (gdsbench.io/1 runs, from a file or the live ladder) and
// the host-link figures (pinned H2D/D2H, from gdsbench.p2p/1 or the live ladder).
// Readers of each document kind live in their own files (topo_json_reader.cpp reads
// gdsb-topo's JSON; figures.cpp the io and p2p documents).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/result.hpp"
#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/model.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::doctor {

// The topology side. The snapshot lives on the heap so the view's and the model's
// references stay valid when a Platform is moved. Ceilings and hops come from the path
// model of the snapshot (also for a gdsb-topo JSON input: its devices are the snapshot),
// so the doctor and gdsb-topo compute them one way.
struct Platform {
  std::unique_ptr<topo::Snapshot> snapshot;
  std::unique_ptr<topo::TopologyView> view;
  std::unique_ptr<topo::PathModel> model;
  std::vector<topo::CheckResult> checks;  // gdsb-topo's check results
  std::string source;                     // "gdsb-topo JSON topo.json", "live", ...
  // The recorded pairs' P2PDMA map type when the input carried it (gdsb-topo JSON), keyed
  // "gpu peer"; otherwise the view's classification applies.
  std::map<std::string, std::string> recorded_p2pdma;

  std::vector<const topo::CheckResult*> checks_with(const std::string& id) const;
};

// A collected or replayed snapshot: gdsb-topo's own evaluate() gives checks and ceilings.
Platform platform_from_snapshot(topo::Snapshot s, std::string source);

// Host-link figures per CUDA ordinal, GB/s (base 1000).
struct HostLink {
  int gpu = 0;
  std::string bdf;  // "" when the document did not name it
  std::optional<double> h2d_gb_s, d2h_gb_s;
};

// How CUDA numbered the GPUs when a run ran: the environment its report recorded
// (context.env). Needed only for runs that do not record their GPU's PCI bus id.
struct CudaOrdering {
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES
  std::optional<std::string> device_order;     // CUDA_DEVICE_ORDER
};

struct Figures {
  std::vector<RunResult> runs;        // every run, in input order
  std::vector<std::string> run_sources;  // where each run came from (same length)
  // The ordering each run ran under (same length; the live ladder: this process's).
  std::vector<CudaOrdering> run_ordering;
  // For each run of a node read (every GPU reading at once: gdsb-io --gpus, the live ladder),
  // the PCI bus id of the GPU it read for, its CPU-only (-x 1) run included: that GPU's share
  // of the storage while all read. "" for other runs (same length as runs, or empty).
  std::vector<std::string> run_gpus;
  std::vector<HostLink> host_links;
  std::string host_link_waived;       // why no H2D figure exists, when none does
};

// GiB/s (gdsb-io's unit, base 1024) to GB/s (base 1000, as the PCIe ceilings).
double gib_to_gb(double gib_s);
// A run's measured throughput in GB/s; nullopt unless status ok.
std::optional<double> run_gb_s(const RunResult& r);
bool is_read(const Workload& w);  // READ or RANDREAD, or mixed with reads
// Whether a run measures the storage alone: an ok -x 1 read with O_DIRECT whose path was
// plain storage I/O ("posix"), never a buffered or page-cache figure. The one rule for
// the "storage alone" hop, the headline and every rule that compares with it.
bool measures_storage_alone(const RunResult& r);

// CUDA's ordering variables from an environment map (a report's context.env).
CudaOrdering cuda_ordering_of(const std::map<std::string, std::string>& env);

// gdsbench.io/1 runs (validated by reports/ document loading) appended to figures, each
// with the CUDA ordering of the document's context.env.
void add_io_document(Figures& f, const nlohmann::json& doc, const std::string& name);
// gdsbench.p2p/1: measurements.h2d/d2h per GPU (a waived measurement keeps the reason).
void add_p2p_document(Figures& f, const nlohmann::json& doc, const std::string& name);

}  // namespace gdsb::doctor
