// The one path model: for each GPU, every data source it can read from (local NVMe drives,
// remote storage through each data NIC, virtual or cloud disks) as a chain of hops, each
// with a capacity and where that capacity came from, and whether GDS peer-to-peer is
// possible on the chain (with the reason when not). Built once per snapshot from a
// TopologyView; gdsb-topo's checks and ceilings, gdsb-doctor's hops and expected figures,
// gdsb-p2p's pair verdicts and the HTML pages all read it, so no tool keeps its own copy
// of a path rule.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

// Where a hop's capacity came from.
enum class CapacitySource {
  PcieLink,      // speed x width from LnkSta/LnkCap (pci_config.hpp link_gb_s)
  RecordedLink,  // a link bandwidth the input states directly (hwloc pci_link_speed)
  NetworkRate,   // a NIC's network link (/sys/class/net/<if>/speed)
  Measured,      // a measurement (storage alone -x 1, pinned H2D): added by gdsb-doctor
  Unknown        // no input states it (a hypervisor's disk, a link without capability)
};
std::string_view capacity_source_name(CapacitySource s);  // "pcie-link", "recorded-link", ...

// What a hop is. The path model makes the link and network kinds; gdsb-doctor adds the two
// measured ones. Text is made only for output (hop_kind_name).
enum class HopKind {
  DriveLink,     // an NVMe drive's own PCIe link
  NicLink,       // a NIC's PCIe link, shared by the functions (ports) of its slot
  Network,       // one NIC port's network link
  SwitchUplink,  // a PCIe switch's upstream link
  BridgeLink,    // another bridge's upstream link
  GpuLink,       // the GPU's own PCIe link
  Hypervisor,    // a virtual disk: the hypervisor moves its data
  StorageAlone,  // measured: storage read by the CPU alone (gdsb-io -x 1, O_DIRECT)
  HostLink       // measured: pinned host-to-device copies
};
// "drive link", "NIC link", "network", "switch uplink", "bridge link", "GPU link",
// "hypervisor", "storage alone", "host link"
std::string_view hop_kind_name(HopKind k);

struct PathHop {
  HopKind kind = HopKind::BridgeLink;
  std::string device;  // BDF of the device whose link this is ("" for a measurement)
  // One physical link and direction: hops with one key share capacity. A card's PCIe link
  // is keyed by its slot (its functions share it), a network link by its port (function).
  std::string key;
  // GB/s (1e9 bytes/s) per direction; nullopt when unknown (never 0: a link speed the PCIe
  // table does not know is unknown capacity).
  std::optional<double> gb_s;
  CapacitySource source = CapacitySource::Unknown;
  std::string what;  // "0000:41:00.0 (nvme) Gen4 x4 nvme0n1", for people
};

enum class DataSource { LocalNvme, DataNic, Virtual };
std::string_view data_source_name(DataSource k);  // "nvme", "nic", "virtual"

struct DataPath {
  std::string gpu;
  std::string source;  // BDF of the drive, data NIC or virtual disk
  DataSource kind = DataSource::LocalNvme;
  const Pair* pair = nullptr;  // the kernel's view of the pair; null for virtual storage
  std::vector<PathHop> hops;   // source side first, then the GPU side
  // GDS peer-to-peer possible on this chain (a PCIe NVMe or data NIC); false on virtual
  // storage. `why` gives the reason when not, and the caveats when it is (ACS redirect,
  // host bridge or socket crossed, the kernel's P2PDMA answer).
  bool p2p = false;
  std::string why;
  bool crosses_socket = false, crosses_host_bridge = false, acs_redirect = false;
  // The source's own link capacity is unknown: the chain has no ceiling from this input.
  bool unknown_capacity = false;
};

// A throughput ceiling (GB/s per direction): every transfer is bounded by each hop it
// crosses; a hop shared by several transfers bounds their sum. The socket interconnect and
// a host bridge's P2P rate are in no input: paths crossing them say so in limited_by.
struct Ceiling {
  std::string gpu;  // empty for a node-wide ceiling
  std::optional<double> gb_s;
  std::string limited_by;
  std::vector<std::string> peers;  // the drives or NICs counted
  std::vector<PathHop> hops;       // the distinct hops the computation read (its inputs)
  // For NIC ceilings: "network rate", "PCIe line rate" or "network rate where recorded,
  // else PCIe line rate"; empty otherwise.
  std::string basis;
};

// The platform verdict of a node without an NVIDIA GPU, in the words every tool uses.
inline constexpr std::string_view kNoNvidiaGpu = "GDS not applicable on this node: no NVIDIA GPU";

class PathModel {
 public:
  explicit PathModel(const TopologyView& v);
  const TopologyView& view() const { return v_; }
  const std::vector<DataPath>& paths() const { return paths_; }
  std::vector<const DataPath*> paths_of(const std::string& gpu) const;
  // A GPU's nearest sources of one kind (lowest PIX..SYS label, no ACS redirect first, then
  // distance), as TopologyView::best_for_gpu ranks pairs; every virtual disk for Virtual.
  std::vector<const DataPath*> nearest(const std::string& gpu, DataSource kind) const;
  // The kind a GPU reads from best: local NVMe, else a data NIC, else virtual storage;
  // nullopt when it has no source at all.
  std::optional<DataSource> best_kind(const std::string& gpu) const;

  const std::vector<const Device*>& data_nics() const { return data_nics_; }
  const std::vector<const Device*>& management_nics() const { return management_nics_; }
  bool is_data_nic(const std::string& bdf) const;

  // GDS applies when some GPU has a P2P-capable storage path or data NIC. It is "not
  // applicable" only where the input shows the node's devices (live, a snapshot or sysfs
  // tree, or a recording with virtual disks or management NICs); a GPU-only offline
  // recording leaves it open (true, with an "unknown" sentence).
  bool gds_applicable() const { return applicable_; }
  // No NVIDIA GPU on the input's PCI bus: "not applicable" for the plainest reason, which
  // every tool states in the same words (kNoNvidiaGpu).
  bool no_nvidia_gpu() const { return no_nvidia_gpu_; }
  // Why GDS does (not) apply, one sentence naming the devices.
  const std::string& applicability() const { return applicability_; }

  // Per GPU: its nearest sources of a kind; node-wide: every source of the kind, each read
  // by its nearest GPU. Computed by a flow solve over the hops (shared links cap the sum).
  Ceiling gpu_ceiling(const std::string& gpu, DataSource kind) const;
  Ceiling node_ceiling(DataSource kind) const;
  // Remote reads through a chosen set of data NICs (the carriers of one network mount,
  // network_storage.hpp): into `gpu`, or, with `gpu` empty, each NIC into its nearest GPU.
  // The least of the NICs' summed network rates, their PCIe links, the shared switch
  // uplinks and the GPU links, by the same flow solve. A NIC that is no data NIC here or
  // whose ports are all down is named in limited_by and not counted.
  Ceiling carriers_ceiling(const std::vector<std::string>& nics, const std::string& gpu) const;
  // GPUs reading at once, each from its own sources (drive, data NIC or virtual disk BDFs:
  // the devices under the directory it reads), by the same flow solve: a drive two GPUs
  // read caps their sum. gdsb-io's node mode (issue 35). A GPU without a path from its
  // sources in this input is named in limited_by and not counted.
  struct GpuReads {
    std::string gpu;
    std::vector<std::string> sources;
  };
  Ceiling reads_ceiling(const std::vector<GpuReads>& reads) const;
  // Data NICs whose RDMA ports are all down: they carry nothing, so no ceiling counts them.
  const std::vector<std::string>& down_nics() const { return down_nics_; }
  bool is_down(const std::string& bdf) const;

 private:
  const TopologyView& v_;
  std::vector<DataPath> paths_;
  std::vector<const Device*> data_nics_, management_nics_;
  std::vector<std::string> down_nics_;
  bool applicable_ = false;
  bool no_nvidia_gpu_ = false;
  std::string applicability_;
};

// A NIC function's network link as the model counts it: the summed rate of its RDMA ports
// that are ACTIVE where the input shows its RDMA device (/sys/class/infiniband), else its
// net device's speed (/sys/class/net/<if>/speed). `down`: an RDMA device whose ports are
// all down. `what`: "mlx5_0 port 1 200 Gb/sec (4X HDR)" or "ib0 network link".
struct NicNetwork {
  std::optional<double> gb_s;
  bool down = false;
  std::string what;
};
NicNetwork nic_network(const Snapshot& s, const Device& nic);

// What a virtual device is, without the why: "virtio-blk disk (1af4:1042)" (the head of
// virtual_device_reason); "" for a device that is not virtual.
std::string virtual_device_kind(const Device& d);

// The capacity of one device's upstream link as the model counts it: PCIe arithmetic where
// speed and width are known (a GPU at its capable speed, capped by its parent's where known:
// idle GPUs downclock), else the input's recorded link bandwidth; a hop of unknown capacity
// (gb_s nullopt) for a link whose speed the PCIe table does not know; nullopt without a link.
std::optional<PathHop> link_hop(const Snapshot& s, const Device& d);

}  // namespace gdsb::topo
