// The seam to the PCIe topology library (topology/, gdsb::topo): the GPU x NVMe/NIC pairs
// with the kernel's P2PDMA map type, the nvidia-smi style label, the distance and the
// ports on the path whose ACS redirects. gdsb-p2p only reads these; the topology library
// collects and classifies them (live, or from --pci-dump/--sysfs-root/--lspci-text/
// --hwloc-xml/--from-snapshot: gdsb/p2p/topo_source.hpp). A gdsbench.topo/1 document written
// by gdsb-topo can stand in (load_topo_document, --topo-json); tests also use
// StaticPcieTopologySource.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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

class PcieTopologySource {
 public:
  virtual ~PcieTopologySource() = default;
  virtual Availability probe() = 0;
  virtual std::string description() = 0;  // "gdsbench.topo/1 document FILE", "live sysfs", ...
  virtual std::vector<PciePair> pairs() = 0;
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
