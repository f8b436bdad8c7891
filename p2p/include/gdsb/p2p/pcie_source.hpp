// The seam to the PCIe topology library (topology/, gdsb::topo): the GPU x NVMe/NIC pairs
// with the kernel's P2PDMA map type, the nvidia-smi style label, the distance and the
// ports on the path whose ACS redirects. gdsb-p2p only reads these; the topology library
// collects and classifies them (live, or from --pci-dump/--sysfs-root/--lspci-text/
// --hwloc-xml/--from-snapshot: gdsb/p2p/topo_source.hpp). A gdsbench.topo/1 document written
// by gdsb-topo can stand in (load_topo_document, --topo-json); tests also use
// StaticPcieTopologySource.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gdsb/p2p/layers.hpp"  // PcieLink, gdsb::nvml
#include "gdsb/transfer_path.hpp"  // gdsb::Availability

namespace gdsb::p2p {

enum class PeerRole { Nvme, Nic };
std::string_view peer_role_name(PeerRole r);  // "nvme", "nic"

// drivers/pci/p2pdma.c's map types, with the kernel's names.
enum class MapType { BusAddr, ThruHostBridge, NotSupported };
std::string_view map_type_name(MapType m);  // "BUS_ADDR", "THRU_HOST_BRIDGE", "NOT_SUPPORTED"
std::optional<MapType> parse_map_type(std::string_view text);

struct PciePair {
  std::string gpu;   // GPU bdf, normalized "0000:41:00.0"
  std::string peer;  // NVMe controller or NIC function bdf
  PeerRole role = PeerRole::Nvme;
  std::string label;  // PIX, PXB, PHB, NODE, SYS
  MapType p2pdma = MapType::NotSupported;
  int distance = 0;   // the kernel's P2PDMA distance
  std::vector<std::string> acs_redirect_ports;
  std::string peer_name;  // "nvme0", "mlx5_0", ... (may be empty)
};

// The GPUs of a PCIe snapshot and their pairs: the tree's label for every pair, NVLink
// where the snapshot has NVLink facts (gdsb/topo/nvlink.hpp), NVML's recorded answers where
// a saved snapshot carries them. gdsb-p2p shows recorded inputs through this.
struct TreeGpu {
  std::string bdf;
  std::string name;
  std::optional<int> numa_node;
  std::optional<PcieLink> link;      // capable link (LnkCap, or recorded NVML maximum)
  std::optional<PcieLink> link_cur;  // negotiated link
  std::optional<int> nvlinks;        // active NVLinks; nullopt: no NVLink facts
};

struct TreeGpuPair {
  std::string a, b;        // GPU BDFs
  std::string pcie_label;  // PIX, PXB, PHB, NODE, SYS from the tree
  std::optional<int> nvlinks;  // nullopt: the input has no NVLink facts for the pair
  bool through_nvswitch = false;
  std::optional<unsigned long long> nvlink_mbps;  // hwloc NVLinkBandwidth (one direction)
  // NVML's P2P status as recorded (READ, WRITE, NVLINK, ATOMICS, PCI), and its common ancestor.
  std::array<std::optional<nvml::P2PStatus>, 5> nvml{};
  std::optional<nvml::TopologyLevel> nvml_level;
};

struct GpuTree {
  std::vector<TreeGpu> gpus;           // in PCI bus order, as nvidia-smi numbers them
  std::vector<TreeGpuPair> pairs;      // ordered pairs a != b, row-major
  std::vector<std::string> nvswitches;  // BDFs of the NVSwitches the input shows
  std::string nvlink_source;           // "nvml", "hwloc", "" when the input has none
  bool nvml_recorded = false;          // pairs carry NVML's P2P status
  // The path model's "GDS not applicable on this node: no NVIDIA GPU" when the input lists
  // the node's PCI devices and no NVIDIA GPU among them; empty otherwise.
  std::string applicability;
  // The devices only a hypervisor presents ("0000:00:01.0 virtio-blk disk (1af4:1042)"):
  // this PCIe tree is a VM's virtual one. Empty on bare metal and for inputs without them.
  std::string hypervisor_devices;
};

class PcieTopologySource {
 public:
  virtual ~PcieTopologySource() = default;
  virtual Availability probe() = 0;
  virtual std::string description() = 0;  // "gdsbench.topo/1 document FILE", "live sysfs", ...
  virtual std::vector<PciePair> pairs() = 0;
  // Sources over a snapshot answer; documents and fakes have no GPU tree.
  virtual GpuTree gpu_tree() { return {}; }
};

class StaticPcieTopologySource final : public PcieTopologySource {
 public:
  StaticPcieTopologySource(std::string description, std::vector<PciePair> pairs)
      : description_(std::move(description)), pairs_(std::move(pairs)) {}
  Availability probe() override { return Availability::yes(); }
  std::string description() override { return description_; }
  std::vector<PciePair> pairs() override { return pairs_; }

 private:
  std::string description_;
  std::vector<PciePair> pairs_;
};

class UnavailablePcieTopologySource final : public PcieTopologySource {
 public:
  explicit UnavailablePcieTopologySource(std::string reason) : reason_(std::move(reason)) {}
  Availability probe() override { return Availability::no(reason_); }
  std::string description() override { return "none"; }
  std::vector<PciePair> pairs() override { return {}; }

 private:
  std::string reason_;
};

// The pairs of a gdsbench.topo/1 document (CONTRACTS.md). Throws UsageError naming the
// file when it cannot be read or is not such a document.
std::unique_ptr<PcieTopologySource> load_topo_document(const std::string& path);
std::vector<PciePair> pairs_from_topo_json(const nlohmann::json& doc);

// Whether GDS can go direct for the pair, in words ("direct, below a common switch", ...).
std::string gds_direct_verdict(const PciePair& pair);

}  // namespace gdsb::p2p
