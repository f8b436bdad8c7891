// Builds recorded inputs for gdsb-topo tests from a small machine description: sysfs
// trees with binary config files carrying real capability chains (PM -> PCIe, AER ->
// ACS), `lspci -xxxx` dumps of the same config bytes, and the host files (/proc, /run).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gdsb::topo::fixture {

struct Dev {
  std::string bdf;
  uint16_t vendor = 0, device = 0;
  uint32_t class_code = 0;
  int port_type = -1;  // -1: conventional PCI function (no PCIe capability)
  int max_speed = 0, max_width = 0, cur_speed = 0, cur_width = 0;  // speed codes 1..6
  std::optional<uint16_t> acs_cap, acs_ctl;
  std::string parent;
  int secondary = -1, subordinate = -1;
  int numa = -1;
  std::optional<int> iommu_group;
  std::map<int, uint64_t> bars;  // index -> size (64-bit prefetchable memory)
  std::vector<std::string> block, net;
  std::string driver;
};

// One entry of /sys/class/block, laid out as the kernel lays it out: a partition is a
// directory inside its disk's with a `partition` file; a device-mapper or md volume lives in
// /sys/devices/virtual/block with its members as links in slaves/ and dm/name or md/level.
struct SysBlock {
  std::string name;                 // "nvme0n1", "nvme0n1p1", "dm-0", "md127"
  std::string disk;                 // a partition's disk, "" otherwise
  std::vector<std::string> slaves;  // a volume's members
  std::string dm_name, md_level;    // "vg0-data"; "raid0"
};

// The network side, as the kernel lays it out: a net device below its PCI function
// (DEV/net/<name>, linked from /sys/class/net; a virtual one in /sys/devices/virtual/net), an
// RDMA device below its PCI function (DEV/infiniband/<name>, linked from /sys/class/infiniband).
// A file whose text is empty is not written: the recording did not hold it.
struct NetDev {
  std::string name;
  std::string bdf;  // "" for a virtual device
  std::string operstate, address, speed;  // speed as the file reads: "200000", "-1"
  int mtu = 0, type = 0;                   // 0: not written
  std::optional<int> dev_port;             // the port of its PCI function, from 0
  std::vector<std::string> lower;          // lower_<if> links
  std::string parent;                      // an IPoIB partition child's `parent` file
};
struct IbPort {
  int port = 1;
  std::string link_layer, state, phys_state, rate;  // "4: ACTIVE", "200 Gb/sec (4X HDR)"
  std::string gid0;                                 // gids/0
  std::string ndev;                                 // gid_attrs/ndevs/0 (RoCE)
};
struct IbDev {
  std::string name, bdf, fw_ver, node_guid;
  std::vector<IbPort> ports;
};
// An NVMe controller of /sys/class/nvme; a fabrics one (bdf "") lives in
// /sys/devices/virtual/nvme-fabrics/ctl. `entries` are its namespace directories as the
// kernel names them ("nvme2n1"; "nvme7c31n1" for a path of a multipath namespace).
struct NvmeCtrl {
  std::string name, transport, address, subsysnqn, bdf;
  std::vector<std::string> entries;
};
struct Network {
  std::vector<NetDev> netdevs;
  std::vector<IbDev> ibdevs;
  std::vector<NvmeCtrl> nvme;
  // /proc/net/route, fib_trie, if_inet6, ipv6_route and /proc/modules; written only when one
  // of them or a net device is given.
  std::string route, fib_trie, if_inet6, ipv6_route, modules;
};

struct Host {
  bool write_proc = true;
  std::string kernel = "6.8.0-45-generic";
  std::string cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/nvme0n1p2 ro iommu=pt";
  std::string cpu_vendor = "GenuineIntel";
  int cpu_family = 6;
  std::string cpu_part;                     // aarch64 only ("0xd4f": Grace)
  std::map<int, std::string> iommu_groups;  // group -> type
  bool nvidia_fs = true;
  bool udev = true;
  std::string cufile_json;  // empty: no /etc/cufile.json
  std::vector<std::string> mounts;
  // <dev> -> the text of /proc/fs/ext4/<dev>/options (one option per line, as the kernel
  // prints it); /proc/fs/jbd2 entries ("nvme0n1p1-8"), written only when not empty.
  std::map<std::string, std::string> ext4_options;
  std::vector<std::string> jbd2;
  std::vector<SysBlock> blocks;  // /sys/class/block, written only when not empty
  int numa_nodes = 1;
  Network network;
  // Further files under the root, by path ("proc/kallsyms" -> its text): recorded host files
  // a test lays on the machine (the P2PDMA facts). An empty text makes a directory.
  std::map<std::string, std::string> files;
};

struct Machine {
  std::vector<Dev> devs;
  Host host;
  size_t config_size = 4096;  // 64 models a non-root reader, 256 `lspci -xxx`
};

std::vector<uint8_t> config_bytes(const Dev& d, size_t size);
void write_sysfs(const Machine& m, const std::filesystem::path& root);
// The directory write_sysfs gives a PCI function (sys/devices/pci.../BDF); throws for an
// address the machine lacks.
std::filesystem::path device_path(const Machine& m, const std::string& bdf, const std::filesystem::path& root);
// A file of a recorded tree, its directories made.
void write_file(const std::filesystem::path& p, const std::string& text);
// The host's Network (fixture_network.cpp); write_sysfs calls it.
void write_network(const Machine& m, const std::filesystem::path& root);
std::string lspci_dump(const Machine& m, size_t bytes_per_device);

// A box of `sockets` root complexes, each with `switches` PCIe switches; below each
// switch `gpus` GPUs, `nvmes` NVMe drives and `nics` NICs. Healthy: ACS off on switch
// ports, IOMMU passthrough, nvidia-fs, udev, cufile.json, ext4 data mount.
Machine make_box(int sockets, int switches, int gpus, int nvmes, int nics);
Dev* find(Machine& m, const std::string& bdf);
Dev* first(Machine& m, uint32_t class_prefix);  // first device whose class starts so
Machine make_flat_vm();  // like the GPU test machine: flat bus 00, virtio, one GPU

// A temporary directory removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace gdsb::topo::fixture
