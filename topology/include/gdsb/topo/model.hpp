// The snapshot model: everything the topology checks read, filled by one of several
// collectors (live machine, recorded sysfs tree, lspci dumps, hwloc XML, saved snapshot).
// Checks never touch the machine; they only read a Snapshot.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/gpu/cufile_api.hpp"  // LibraryProbe: the engine's dlopen probe, recorded here
#include "gdsb/topo/hw_faults.hpp"

namespace gdsb::topo {

enum class Role {
  Gpu,
  Nvme,
  Nic,
  RootPort,
  SwitchUpstream,
  SwitchDownstream,
  Bridge,
  HostBridge,
  Other,
  Storage,  // a storage controller other than a bare-metal NVMe drive (virtio-blk/scsi, SAS)
  NvSwitch  // NVIDIA vendor, class 0x0680 (bridge/other); hwloc: subtype "NVSwitch"
};
std::string_view role_name(Role r);  // "gpu", "nvme", ... as in gdsbench.topo/1
std::optional<Role> role_from_name(std::string_view s);

enum class SourceKind { Live, Snapshot, SysfsRoot, PciDump, LspciText, HwlocXml };
std::string_view source_kind_name(SourceKind k);  // "live", "snapshot", "sysfs-root", ...
std::optional<SourceKind> source_kind_from_name(std::string_view s);

// Negotiated and capable link of one device's upstream link (its own LnkSta/LnkCap).
struct Link {
  double cur_speed_gts = 0;
  int cur_width = 0;
  double max_speed_gts = 0;
  int max_width = 0;
};

// ACS extended capability: capability register (+4) and control register (+6).
struct Acs {
  uint16_t cap = 0;
  uint16_t ctl = 0;
  uint16_t offset = 0;  // config-space offset of the capability header (0 when unknown)
};

struct Bar {
  int index = 0;
  uint64_t size = 0;
  bool prefetchable = false;
  bool is_64bit = false;
};

struct Device {
  std::string bdf;  // "0000:00:06.0"
  // Where the input holds it ("line 12", "PCIDev gp_index 40", "devices[3]"), for messages
  // about the input; "" where the reader has no such place (sysfs). Not saved.
  std::string origin;
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint32_t class_code = 0;  // base << 16 | sub << 8 | prog-if
  std::string name;
  Role role = Role::Other;
  std::string parent;        // upstream bridge BDF; empty when on a root bus
  std::string root_complex;  // "0000:00": domain and root bus number of its host bridge
  std::optional<int> numa_node;
  // The CPU package (socket) whose host bridge the device hangs off, as hwloc numbers
  // packages (P#, the OS index); nullopt where the input does not say. A package may hold no
  // NUMA node of its own, so two packages are not always two NUMA nodes.
  std::optional<int> package;
  std::optional<int> iommu_group;
  std::string driver;
  std::vector<uint8_t> config;  // as many config-space bytes as the source could read
  int port_type = -1;           // PCIe capability device/port type, -1 without the capability
  std::optional<Link> link;
  // A link bandwidth the input states directly instead of speed and width (hwloc XML's
  // pci_link_speed, GB/s per direction); used where `link` is unknown.
  std::optional<double> recorded_link_gb_s;
  // Whether the extended config space (offset >= 0x100) was readable. When false the ACS
  // state is unknown; acs_note says why (no root, dump without -xxxx, text without caps).
  bool ext_config_readable = false;
  std::string acs_note;
  std::optional<Acs> acs;
  std::optional<int> secondary_bus;
  std::optional<int> subordinate_bus;
  bool bars_known = false;
  std::vector<Bar> bars;
  std::vector<std::string> block_devices;
  std::vector<std::string> net_devices;
  // The fastest network link of its net devices (/sys/class/net/<if>/speed, Mb/s); nullopt
  // where the input does not record it or every link is down.
  std::optional<int> net_speed_mbps;

  uint8_t base_class() const { return static_cast<uint8_t>(class_code >> 16); }
  uint16_t class_id() const { return static_cast<uint16_t>(class_code >> 8); }  // 0x0302
  int bus() const;                                                              // parsed from bdf
};

struct Mount {
  std::string source, target, fstype, options;  // a line of /proc/mounts
  // ext4 only: the kernel's own statement of the mount, /proc/fs/ext4/<dev>/options (one
  // option per line there, joined with ',' here). /proc/mounts prints data= only when it
  // differs from the default; this file names it for every journaled mount. nullopt: not
  // read (not ext4, older snapshot, device not found). gdsb/topo/ext4_mode.hpp decides.
  std::string ext4_dev;  // <dev> of /proc/fs/ext4/<dev>: "nvme0n1p1", "dm-0", "vda"
  std::optional<std::string> ext4_options;
  // A jbd2 journal of <dev> is listed in /proc/fs/jbd2 (<dev>-<inode>); nullopt: unread.
  std::optional<bool> ext4_journal;
};

// A block device of /sys/class/block and what it is built on, so a mount's source resolves
// exactly to its drives (gdsb/topo/mounts.hpp): a partition to its disk, a device-mapper
// (LVM, dm-crypt, multipath) or md RAID volume to the devices under it.
struct BlockDevice {
  std::string name;                 // kernel name: "nvme0n1p1", "dm-0", "md127"
  std::string parent;               // a partition's disk ("nvme0n1"), "" otherwise
  std::vector<std::string> slaves;  // /sys/class/block/<name>/slaves: what a volume is on
  std::string dm_name;              // dm/name ("vg0-data", as /dev/mapper/ names it), "" unless dm
  std::string md_level;             // md/level ("raid0", "raid1"), "" unless md
};

// The network side of a node, read where the input holds it (live, a sysfs tree with
// /sys/class/net, /sys/class/infiniband and /proc/net; a snapshot that recorded them): which
// net device and RDMA port carries traffic to a storage server, at what rate, and whether
// it is up. Filled by the collectors (network facts), read by the network-storage verdicts
// (gdsb/topo/network_storage.hpp), the path model's network ceilings, the fingerprint and
// gdsb-doctor.

// One port of an RDMA device: /sys/class/infiniband/<dev>/ports/<n>/.
struct RdmaPort {
  int port = 0;            // <n>, from 1
  std::string link_layer;  // link_layer: "InfiniBand" or "Ethernet" (RoCE); "" unread
  std::string state;       // state without its number: "ACTIVE", "DOWN", "INIT", "ARMED"
  std::string phys_state;  // phys_state without its number: "LinkUp", "Disabled", "Polling"
  std::string rate;        // rate as the kernel writes it: "200 Gb/sec (4X HDR)"; "" unread
  std::optional<double> rate_gbps;  // the number of `rate` in Gb/s; nullopt unread
  std::string netdev;      // the net device bound to this port (ib0, ens1f0np0), "" unknown
  bool operator==(const RdmaPort&) const = default;
};

// An RDMA device: /sys/class/infiniband/<name>.
struct RdmaDevice {
  std::string name;       // "mlx5_0"
  std::string bdf;        // its PCI function (device link), "" when not a PCI device
  std::string fw_ver;     // fw_ver: "28.39.1002"
  std::string node_guid;  // node_guid: "b859:9f03:00a1:b2c4"
  std::vector<RdmaPort> ports;
  bool operator==(const RdmaDevice&) const = default;
};

// A network interface: /sys/class/net/<name> and its addresses.
struct NetInterface {
  std::string name;       // "ib0", "ens1f0np0", "bond0", "lo"
  std::string bdf;        // its PCI function (device link), "" for a virtual one (bond, vlan)
  std::string operstate;  // operstate: "up", "down", "unknown", "lowerlayerup"
  std::optional<int> speed_mbps;  // speed; nullopt where unreadable or -1 (link down)
  std::string mac;        // address (20 bytes on IPoIB)
  int mtu = 0;
  int type = 0;                        // ARPHRD number: 1 Ethernet, 32 InfiniBand, 772 loopback
  std::vector<std::string> addresses;  // "10.10.1.21/24", "fd00::21/64"
  std::vector<std::string> lower;      // what a bond or VLAN stands on (lower_<if> links)
  // An IPoIB partition child's interface (ib0 of ib0.8001): its `parent` file, which the
  // ib_ipoib driver gives each child (Documentation/infiniband/ipoib: "the main interface for
  // a subinterface is in 'parent'"); a child has no lower_ link. "" for any other device.
  std::string parent;
  bool operator==(const NetInterface&) const = default;
};

// One route of the main table: /proc/net/route (IPv4) and /proc/net/ipv6_route.
struct Route {
  std::string destination;  // "10.10.1.0/24", "0.0.0.0/0", "fd00::/64"
  std::string gateway;      // "" when directly connected
  std::string dev;
  int metric = 0;
  bool operator==(const Route&) const = default;
};

// An NVMe controller: /sys/class/nvme/<name>. Local drives are "pcie"; NVMe-oF namespaces
// hang off "rdma", "tcp", "fc" or "loop" controllers.
struct NvmeController {
  std::string name;       // "nvme2"
  std::string transport;  // transport: "pcie", "rdma", "tcp", "fc", "loop"
  std::string address;    // address: "traddr=10.0.0.5,trsvcid=4420,src_addr=10.0.0.21"
  std::string subsysnqn;
  std::string bdf;        // pcie only: the drive's PCI function
  std::vector<std::string> namespaces;  // block devices: "nvme2n1"
  bool operator==(const NvmeController&) const = default;
};

struct NetworkFacts {
  bool net_known = false;    // /sys/class/net and /proc/net were read
  bool rdma_known = false;   // /sys/class/infiniband was read (absent directory: none)
  bool nvme_known = false;   // /sys/class/nvme was read
  bool modules_known = false;  // /proc/modules was read
  std::vector<NetInterface> interfaces;  // sorted by name
  std::vector<Route> routes;
  std::vector<RdmaDevice> rdma_devices;  // sorted by name
  std::vector<NvmeController> nvme_controllers;
  // Every /proc/modules name, sorted; those that matter to GPUDirect RDMA and network file
  // systems among them: nvidia_peermem, rpcrdma, lnet, ko2iblnd, ksocklnd, beegfs, mmfs26,
  // wekafsgw, nvme_rdma, nvme_tcp, nvme_fabrics, ib_core, mlx5_ib, ...
  std::vector<std::string> modules;
  std::string lnet_networks;  // /sys/module/lnet/parameters/networks: "o2ib0(ib0,ib1)", ""
  // /proc/driver/nvidia/version's first line ("... Open Kernel Module for x86_64 ..."),
  // which says whether DMA-BUF is available to GPUDirect RDMA; "" unread.
  std::string nvidia_driver_version;
  bool operator==(const NetworkFacts&) const = default;
};

// The RDMA devices and net devices standing on one PCI function (by BDF), in name order.
std::vector<const RdmaDevice*> rdma_devices_of(const NetworkFacts& n, std::string_view bdf);
std::vector<const NetInterface*> interfaces_of(const NetworkFacts& n, std::string_view bdf);

// Effective cufile.json settings; unset optionals mean "key absent: library default".
struct CufileSettings {
  std::string path;
  bool found = false;
  std::string error;  // parse error, empty when fine
  std::optional<bool> allow_compat_mode, force_compat_mode, use_pci_p2pdma, use_poll_mode;
  std::optional<int64_t> max_direct_io_size_kb;
  // GPUDirect RDMA for file systems: properties.rdma_dev_addr_list (the local addresses of
  // the RDMA NICs cuFile spreads reads over) and fs.<name>.rdma_dev_addr_list per file
  // system (lustre, nfs, gpfs, beegfs, weka); nullopt: key absent.
  std::optional<std::vector<std::string>> rdma_dev_addr_list;
  std::map<std::string, std::vector<std::string>> fs_rdma_dev_addr_list;
  // fs.<name>.mount_table.<mount point>.rdma_dev_addr_list (the shipped file's commented
  // example for several mounts of one file system), by mount point.
  std::map<std::string, std::vector<std::string>> mount_rdma_dev_addr_list;
};

// The host facts cuFile's P2PDMA mode (GDS without nvidia-fs) rests on, as read; judged in
// gdsb/topo/p2pdma.hpp. nullopt: the input did not have the file.
struct P2pdmaHostFacts {
  // /proc/kallsyms lists the symbol p2pdma_pgmap_ops (defined only with CONFIG_PCI_P2PDMA).
  std::optional<bool> kallsyms_pgmap_ops;
  // CONFIG_PCI_P2PDMA in the kernel's configuration: "y", "not set" ("# ... is not set" or no
  // line), "" unread; kernel_config_file: where it was read ("/proc/config.gz").
  std::string kernel_config, kernel_config_file;
  // /proc/driver/nvidia/params "RegistryDwords" without its quotes ("" when empty).
  std::optional<std::string> registry_dwords;
  // /sys/module/nvme_core/parameters/multipath ("N", "Y"); "" when /sys/module has no
  // nvme_core (no NVMe driver in the kernel).
  std::optional<std::string> nvme_multipath;
  bool operator==(const P2pdmaHostFacts&) const = default;
};

// Host facts that are not PCI config space. Offline PCI-only inputs leave them unknown.
struct Machine {
  bool proc_known = false;   // cmdline, kernel, cpu, mounts, nvidia-fs, udev, cufile.json
  bool iommu_known = false;  // /sys/class/iommu and /sys/kernel/iommu_groups were read
  std::string kernel_release;
  std::string arch;        // "x86_64", "aarch64", or "" when unknown
  std::string cpu_vendor;  // "GenuineIntel", "AuthenticAMD", "0x41" (aarch64 implementer)
  int cpu_family = -1;
  std::string cpu_part;  // aarch64 "CPU part" (Grace/Neoverse V2 is 0xd4f)
  std::string cpu_model;
  std::string cmdline;
  std::vector<std::string> iommu_units;          // /sys/class/iommu entries
  std::map<int, std::string> iommu_group_types;  // group -> identity|DMA|DMA-FQ|...
  bool nvidia_fs_loaded = false;
  std::string nvidia_fs_version;
  bool udev_present = false;
  CufileSettings cufile;
  std::vector<Mount> mounts;
  // /sys/class/block, read with the mounts; empty where the input has none (older
  // snapshots, PCI-only inputs): mount sources then resolve by their names alone.
  std::vector<BlockDevice> block_devices;
  int numa_nodes = 0;  // 0 when unknown
  NetworkFacts network;
  // Whether cuFile's user-space RDMA library (libcufile_rdma.so.1) loads here: the live
  // collector's dlopen probe, saved in the snapshot so a replay shows the recorded machine's
  // answer. nullopt: not probed (recorded inputs other than a snapshot, older snapshots).
  std::optional<gpu::cufile::LibraryProbe> cufile_rdma;
  P2pdmaHostFacts p2pdma;
};

// One NVLink of a GPU. From NVML (live, replayed from a snapshot): one entry per link index,
// active or not. From hwloc's NVLinkBandwidth distances: one entry per remote, with the
// recorded bandwidth and the link count derived from it (gdsb/topo/nvlink.hpp says how).
struct NvLink {
  int link = -1;            // NVML link index; -1 when aggregated per remote (hwloc)
  bool active = true;       // nvmlDeviceGetNvLinkState
  std::string remote;       // remote PCI BDF, normalized ("0000:07:00.0"); "" unknown
  std::string remote_type;  // "gpu", "nvswitch", "ibmnpu", "unknown" (as NVML names them)
  int count = 1;            // links this entry stands for
  std::optional<uint64_t> bandwidth_mbps;  // hwloc NVLinkBandwidth (unidirectional MB/s)
};

// What NVML answered for an ordered GPU pair (nvidia-smi topo -m and topo -p2p).
struct GpuPairFacts {
  std::string a, b;                       // GPU BDFs
  std::map<std::string, std::string> p2p;  // "read"/"write"/"nvlink"/"atomics"/"pci" -> "OK", "NS"...
  std::string common_ancestor;             // "PIX".."SYS", "" unknown
};

// GPU facts that need the GPU driver (NVML) rather than PCI: kept apart so an NVML
// backed provider can fill them later without the collectors knowing about NVML.
struct GpuFacts {
  std::optional<uint64_t> memory_bytes;
  std::string source;  // "nvml", ...
  std::string name;    // the driver's product name ("NVIDIA H200"), "" when unknown
  std::optional<uint64_t> bar1_total_bytes, bar1_used_bytes;  // as mapped by the driver
  // PCIe generation (1..6) and width now and at most (the GPU and the slot together).
  std::optional<int> pcie_cur_gen, pcie_cur_width, pcie_max_gen, pcie_max_width;
  std::optional<int> numa_node;  // closest host NUMA node (NVML memory affinity)
  std::optional<std::vector<NvLink>> nvlinks;  // nullopt: the source has no NVLink data
  // Who NVML says the GPU is: its index (nvmlDeviceGetHandleByIndex; hwloc's nvml<N>) and
  // UUID ("GPU-3e09735f-..."), dcgm-exporter's `gpu` and `UUID` labels. Unknown where the
  // source has no NVML (lspci, sysfs and hwloc files without NVML devices).
  std::optional<int> nvml_index;
  std::string uuid;
};

class GpuFactsProvider {
 public:
  virtual ~GpuFactsProvider() = default;
  virtual std::string name() const = 0;
  virtual std::optional<GpuFacts> facts_for(const Device& gpu) const = 0;
  // The GPU's error and retirement counters (hw_faults.hpp); none by default.
  virtual std::optional<GpuErrorCounters> errors_for(const Device& /*gpu*/) const { return std::nullopt; }
  // Facts of ordered GPU pairs (NVML P2P status); none by default.
  virtual std::vector<GpuPairFacts> pair_facts(const std::vector<const Device*>& /*gpus*/) const {
    return {};
  }
};

struct Snapshot {
  SourceKind kind = SourceKind::Live;
  std::string path;             // input path, empty for live
  std::vector<Device> devices;  // sorted by BDF
  Machine machine;
  std::map<std::string, GpuFacts> gpu_facts;  // by GPU BDF
  std::vector<GpuPairFacts> gpu_pairs;        // recorded NVML pair facts (live or snapshot)
  // Errors the hardware reported: Xid events, NVML error counters, AER counters
  // (gdsb/topo/hw_faults.hpp). Empty where the input holds none (its *_unread say why).
  HwFaults faults;
  std::vector<std::string> notes;             // what the collector could not read and why

  const Device* find(std::string_view bdf) const;
  std::vector<const Device*> with_role(Role r) const;
};

// The name every tool shows for a device: a GPU's product name from its facts (NVML, or
// hwloc's GPUModel), else the device name (pci.ids through libpci, or as recorded), else
// "[vendor:device]".
std::string display_name(const Snapshot& s, const Device& d);
// The device's IDs as text, "14e4:165f"; "unknown" for what was not established (0: text
// recorded without -nn whose name the PCI ID database gives otherwise): "unknown", or
// "15b3:unknown" where only the vendor is known.
std::string pci_ids_text(const Device& d);

// Fills GPU facts for every GPU from a provider (e.g. NVML); absent facts stay unknown.
void apply_gpu_facts(Snapshot& s, const GpuFactsProvider& provider);

// Derives port type, link, ACS, bridge bus numbers, class and role from config bytes
// where present, keeping what the collector already set otherwise; then sorts devices.
void finalize(Snapshot& s);
// Rebuilds parent links and root complexes from bridge secondary/subordinate buses (for
// inputs that carry no sysfs hierarchy: lspci dumps and text).
void rebuild_tree_from_bus_numbers(Snapshot& s);
Role classify_role(const Device& d);
// Non-empty when the device is paravirtual or emulated by a hypervisor (virtio, QEMU,
// VMware, a cloud's network block volume): what it is and why GDS P2P cannot reach it.
std::string virtual_device_reason(const Device& d);
// Port types of bridges whose PCIe capability is unreadable, from their tree position.
void infer_port_types(Snapshot& s);
// Every reader's last step: what no machine can have, named with both places of the input
// (Device::origin). One address twice throws RuntimeError naming `input_name` (s.path when
// empty): the input is refused, exit 1. A parent the input lacks, a bus outside its
// bridge's secondary..subordinate range and a device that is its own ancestor (that link
// dropped) each add a note "inconsistent input: ...". A bridge missing from a tree rebuilt
// from bus numbers (tree_from_bus_numbers) is seen from the buses left without it.
void check_consistency(Snapshot& s, bool tree_from_bus_numbers, const std::string& input_name = {});

}  // namespace gdsb::topo
