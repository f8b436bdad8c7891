// The doctor's result: per GPU the measured figure against the ceiling of each hop, and
// findings ranked by confidence and by how much they cost. Plain data; renderers only
// read it (render.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/topo/path_model.hpp"

namespace gdsb::doctor {

enum class Confidence { Certain, Likely, Possible };  // ordered strongest first
std::string_view confidence_name(Confidence c);       // "certain", "likely", "possible"

struct Finding {
  std::string rule;   // rule id, e.g. "compat-mode", "acs-redirect"
  std::string title;  // one line: cause and where
  Confidence confidence = Confidence::Possible;
  std::vector<std::string> devices;   // BDFs and block devices involved (every GPU's, grouped)
  // One cause on several GPUs said once (issue 43): each GPU's label and its own devices, in
  // GPU order; empty for a finding about one GPU or none.
  struct Gpu {
    std::string label;
    std::vector<std::string> devices;
  };
  std::vector<Gpu> per_gpu;
  std::vector<std::string> evidence;  // register values, sysfs paths, log lines, ratios
  std::string fix;                    // command, boot parameter, cufile.json key, BIOS setting
  std::optional<double> expected_gb_s;  // figure to expect after the fix
  std::string expected;                 // the same in words (what bounds it then)
  // GB/s the cause costs now (expected - measured), for ranking; 0 when it does not bind
  // the measured figure (e.g. ACS redirect while cuFile runs in compat mode).
  double impact_gb_s = 0;
  // The fix changes the storage side itself (more drives, deeper queues): today's storage
  // alone figure does not bound it, the path's ceiling does (GpuDiagnosis::path_ceiling_gb_s).
  bool storage_fix = false;
  // The expected figure is already the path model's ceiling of the path the fix puts the
  // reads on (a network mount's NICs, the GPU links included): the GPU's ceiling, which is
  // its local drives' path, does not bound it (cap_expected leaves it).
  bool path_bounded = false;
};

// One hop on the GPU's storage path and what it allows (GB/s, base 1000, per direction).
// The hardware hops are the inputs of gdsb-topo's ceiling for the GPU's best source (the
// path model's hops, topo/path_model.hpp); the measured ones are added by the doctor.
struct Hop {
  // The path model's kinds (drive, NIC, network, switch, bridge and GPU links, hypervisor)
  // and the measured StorageAlone and HostLink; topo::hop_kind_name gives its text.
  topo::HopKind kind = topo::HopKind::BridgeLink;
  std::optional<double> gb_s;
  std::string what;       // the devices and links
  bool measured = false;  // storage alone (-x 1) or host link (pinned H2D)
  std::string device;     // BDF of the link's device ("" for a measurement)
  std::string source;     // where gb_s came from: "pcie-link", "recorded-link", "measured", ...
  std::vector<std::string> device_names;  // the device's block and net names ("nvme0n1")
};

struct GpuDiagnosis {
  std::string label;  // "GPU0"
  std::string bdf;
  std::optional<double> measured_gb_s;  // best storage -> this GPU read
  std::string measured_by;              // "cuFile -x 0 (compat), 4 threads, 1 MiB"
  // Run whose figure is measured_gb_s used GDS peer-to-peer (its path_used, not its text).
  bool measured_gds = false;
  // That run's bytes may have come through the page cache (cuFile compat, the page-cache
  // paths, -O 1): storage alone, read with O_DIRECT, bounds the direct paths only (issue 35).
  bool measured_buffered = false;
  std::vector<Hop> hops;
  // Minimum over the topology ceiling of the best source and the measured hops; unknown
  // when neither is known (no fallback of the doctor's own).
  std::optional<double> ceiling_gb_s;
  std::string binding;                  // the binding hop's name and what
  std::string binding_hop;              // the measured hop that binds ("storage alone"), else ""
  // The same without the storage alone measurement: what a storage-side fix can reach.
  std::optional<double> path_ceiling_gb_s;
  std::string path_binding;
  std::optional<double> topo_ceiling_gb_s;  // gdsb-topo's ceiling for the best source
  std::string topo_binding;
  // What a hop of unknown rate leaves open (issue 43): "the storage's rate" when a hop on the
  // storage's side (drive, NIC, network, hypervisor) has no figure and storage alone was not
  // measured, a hop's name ("the bridge link's rate") for another: the ceiling is then "at
  // most" its figure, never what the platform allows. "" when every hop has a figure.
  std::string ceiling_unknown;
  std::string path_ceiling_unknown;  // the same for path_ceiling_gb_s (storage alone left out)
  std::string source_kind;              // best source: "nvme", "nic", "virtual", "" unknown
  bool p2p_possible = false;            // GDS peer-to-peer possible from that source
  std::string virtual_storage;          // "0000:00:01.0 vda (virtio-blk disk)" when virtual
  // Storage alone (-x 1, O_DIRECT) measured: in a node read (every GPU at once) the GPU's own
  // share while all read, else the best such run.
  std::optional<double> storage_gb_s;
  bool storage_bound = false;           // measured read >= 90% of storage alone
};

struct Step {
  std::string name;    // "storage alone (-x 1, O_DIRECT)"
  bool ran = false;
  std::string reason;  // why not run
  std::optional<double> gb_s;
  std::string detail;  // path used, figures
};

struct Diagnosis {
  std::vector<GpuDiagnosis> gpus;
  std::vector<Finding> findings;  // ranked
  std::vector<Step> steps;        // live ladder (empty for recorded inputs)
  std::vector<std::string> notes;
  std::string storage;  // "storage alone reads at ..." when a -x 1 read ran
  // The first line when the storage decides it: virtual storage (named, with the measured
  // figure) or a read already at storage speed ("storage-bound"); empty otherwise.
  std::string headline;
  // Set when no certain or likely finding exists and a measured figure lies within 10%
  // of its ceiling: "GPU0 reads at X GB/s, within 10% of ~Y GB/s set by ...".
  std::string nothing_wrong;
  // Set when the topology shows no NVIDIA GPU: gdsb-topo's verdict, in its words (issue 29).
  // Findings about the storage alone are still listed; the verdict is this sentence.
  std::string not_applicable;
  bool has_problem() const;  // a certain or likely finding
};

}  // namespace gdsb::doctor
