// The fingerprint of a node: the facts that must stay as they were when the node was known to
// be good, and alike across the nodes of one hardware class. gdsb-topo --save-fingerprint and
// --health, and gdsb-cluster's fleet comparison, all read facts made here.
//
// A fact is typed: a key {kind, PCI address, fact} and a value of the type the fact has (a
// link's speed and widths, an ACS control word, a count, a version text). Text is made only
// for output ("GPU 0000:19:00.0 link" -> "Gen5 x16"). Devices are named by PCI address, never
// by position, so a node that loses one GPU differs in that GPU only. Kinds: GPU, NVMe, NIC
// (data NICs only: a gigabit management port is no known-good fact), port (PCIe root and
// switch ports), and the node itself (IOMMU, kernel, driver versions).
//
// Files split by job: this header (types, words), fingerprint_facts.cpp (facts from a
// snapshot and NVML), fingerprint_file.cpp (the JSON file, fingerprint_file.hpp), health.cpp (the
// comparison with the known-good facts and its metrics).
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "gdsb/error.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

// A PCI address "0000:19:00.0"; the empty address of a node fact sorts first.
struct PciAddress {
  uint32_t domain = 0;
  uint8_t bus = 0, device = 0, function = 0;
  bool set = false;
  static std::optional<PciAddress> parse(std::string_view text);  // "0000:19:00.0" (lower/upper)
  std::string text() const;                                       // "" when not set
  auto operator<=>(const PciAddress&) const = default;
};

enum class FactKind { Node, Gpu, Nvme, Nic, Port };
enum class Fact {
  Present,      // the device is there
  Device,       // vendor:device ids
  Link,         // PCIe link (LinkFact)
  Acs,          // ACS control register
  NumaNode,
  Driver,       // the kernel driver bound
  Bar1,         // GPU BAR1 size
  Vbios,        // GPU firmware (NVML)
  NvlinkLinks,  // active NVLink links (NVML)
  Iommu,
  Kernel,
  KernelCommandLine,
  NvidiaFs,
  NvidiaDriver,  // NVML
  CudaDriver,    // NVML
  // A data NIC's RDMA port (/sys/class/infiniband/<dev>/ports/<n>), keyed by the NIC's PCI
  // address and the port number:
  RdmaLinkLayer,  // "InfiniBand" or "Ethernet" (RoCE)
  RdmaState,      // "ACTIVE", "DOWN", "INIT", "ARMED"
  RdmaRate,       // Gbps
};

struct FactKey {
  FactKind kind = FactKind::Node;
  PciAddress bdf;  // not set for a node fact
  Fact fact = Fact::Present;
  int port = 0;  // an RDMA port's number (from 1) for the Rdma* facts, 0 otherwise
  // That port's RDMA device ("mlx5_0"), for words only: not part of the key, so a device the
  // kernel names differently after a reboot is still the same NIC's port.
  std::string rdma_dev{};
  std::strong_ordering operator<=>(const FactKey& o) const {
    if (const auto c = std::tie(kind, bdf, fact, port) <=> std::tie(o.kind, o.bdf, o.fact, o.port); c != 0) return c;
    return std::strong_ordering::equal;
  }
  bool operator==(const FactKey& o) const { return (*this <=> o) == 0; }
  // The device this key is about (its presence key); the key itself for a node fact.
  FactKey subject() const { return {kind, bdf, kind == FactKind::Node ? fact : Fact::Present}; }
  bool is_presence() const { return kind != FactKind::Node && fact == Fact::Present; }
};

// The typed values.
struct Presence {
  bool operator==(const Presence&) const = default;
};
struct PciIds {
  uint16_t vendor = 0, device = 0;
  bool operator==(const PciIds&) const = default;
};
// A PCIe link at what it is trained to do, not at its power state: the speed the GPU and its
// slot can both reach (NVIDIA GPUs drop to Gen1 when idle), the lanes trained now (lanes
// lost show) and the lanes the device has. Other devices keep their current speed, as the
// path model judges them. gts nullopt: a speed the PCIe table does not hold.
struct LinkFact {
  std::optional<double> gts;
  int width = 0;  // 0: the link is down
  int max_width = 0;
  bool operator==(const LinkFact&) const = default;
};
struct AcsControl {
  uint16_t ctl = 0;
  bool operator==(const AcsControl&) const = default;
};
struct Mebibytes {
  uint64_t mib = 0;
  bool operator==(const Mebibytes&) const = default;
};
// A link rate in gigabits per second (base 1000), as the kernel gives an RDMA port's.
struct Gbps {
  double gbps = 0;
  bool operator==(const Gbps&) const = default;
};
using FactValue = std::variant<std::string, int64_t, Presence, PciIds, LinkFact, AcsControl, Mebibytes, Gbps>;

using FactMap = std::map<FactKey, FactValue>;

// A node's facts, and why facts that could be there are not (NVML disabled, absent or
// failing, a recording): what "cannot read X now (why)" says.
struct Unreadable {
  std::string why;      // "--no-nvml", "NVML: Driver Not Loaded", "a recording has no NVML facts"
  bool chosen = false;  // the operator's choice (--no-nvml, a recording): a note, not a problem
};
struct Fingerprint {
  FactMap facts;
  std::map<FactKey, Unreadable> unreadable;
  bool operator==(const Fingerprint&) const = default;
};

// Words for output, never read back.
std::string kind_text(FactKind k);  // "GPU", "NVMe", "NIC", "port", "" for the node
std::string fact_text(Fact f);      // "link", "NUMA node", "IOMMU", ...
// "GPU 0000:19:00.0 link", "IOMMU", "NIC 0000:1b:00.0 (mlx5_0) port 1 rate"
std::string key_text(const FactKey& k);
std::string value_text(const FactValue& v);  // "Gen5 x16", "SV+RR", "131072 MiB", "200 Gb/s"
// "Gen4 x16" from a link speed in GT/s and a width (the PCIe table in pci_config.hpp).
std::string link_words(double speed_gts, int width);
std::string link_words(const LinkFact& l);  // "Gen5 x16", "Gen5 x8 of x16", "down"
// "RR+CR+UF" from an ACS control register, "off" when no bit is set.
std::string acs_words(uint16_t ctl);

// What GPU facts NVML gives the fingerprint (not in the snapshot): one NVML session.
struct NvmlGpu {
  std::string vbios;               // "" when NVML does not say
  std::optional<uint64_t> bar1_bytes;
  std::optional<int> nvlinks;      // active links; nullopt when this NVML has no NVLink queries
  int index = 0;                   // NVML's index (dcgm-exporter's `gpu`); not a fingerprint fact
  std::string uuid;                // "GPU-3e09735f-..." (dcgm-exporter's `UUID`); "" when NVML does not say
};
struct GpuSoftware {
  std::string driver;                    // "580.95.05"; "" when NVML does not say
  std::string cuda_driver;               // "13.0"; "" when NVML does not say
  std::map<std::string, NvmlGpu> gpus;   // by GPU bdf ("0000:19:00.0")
  // The same session's error and retirement counters (hw_faults.hpp), for --health's faults.
  std::map<std::string, GpuErrorCounters> errors;
  // Why NVML gave nothing (or was not asked); empty when it answered.
  std::optional<Unreadable> unavailable;
};

// An NVML error that is itself a fault of the node (GPU_IS_LOST, UNKNOWN, ...): the health
// check's first difference ("GPU 0000:19:00.0 NVML: GPU is lost").
class NvmlFault : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};
// Called before each NVML step that could block ("GPU 0000:19:00.0 NVML"): a caller running
// the reads under a deadline names the step that did not return.
using StepNote = std::function<void(const std::string&)>;

// Reads it through the NVML shim (lib "" = libnvidia-ml.so.1): one session, per GPU only the
// VBIOS, BAR1 and NVLink link states (no pair matrix, no NVLink remote walk). An absent
// library or driver gives `unavailable`; a device call answering an error that means a
// failing GPU (not NOT_SUPPORTED) throws NvmlFault naming the GPU.
GpuSoftware read_gpu_software(const std::string& nvml_lib, const StepNote& step = {});

// The facts of a snapshot and of what NVML said.
Fingerprint make_fingerprint(const Snapshot& s, const GpuSoftware& software);

struct DeviceCounts {
  int gpus = 0, drives = 0, data_nics = 0;
};
DeviceCounts count_devices(const FactMap& f);
inline DeviceCounts count_devices(const Fingerprint& f) { return count_devices(f.facts); }
// "8 GPUs, 8 drives, 8 data NICs"
std::string counts_words(const DeviceCounts& c);

// One way the node differs from its known-good facts.
struct HealthDifference {
  std::optional<FactKey> key;  // nullopt for a collection fault (a timeout, an NVML error)
  std::string now;       // "absent" / "cannot read" when the current input lacks it
  std::string expected;  // "absent" for a device the known-good facts do not hold
  std::string words;     // "GPU 0000:19:00.0 link Gen5 x8 of x16, expected Gen5 x16"
  bool problem = true;   // false: a note (a fact not read by the operator's choice)
};

// Every fact of `expected` and every device present now, compared. A device absent (or new)
// gives one line; its other facts are not repeated. A fact the known-good file holds that
// cannot be read now is one line "cannot read X now (why)"; facts the known-good file does
// not hold about a device it does hold are not judged (an older file, a source with fewer
// facts). An RDMA port whose state differs gives that line only: its rate and link layer
// (a DOWN port reads 10 Gb/s) are not repeated. Order: absent and new devices first, then
// the rest by key.
std::vector<HealthDifference> compare_with_expected(const Fingerprint& now, const FactMap& expected);

}  // namespace gdsb::topo
