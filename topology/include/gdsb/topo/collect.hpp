// Collectors: each builds the same Snapshot from a different source. They throw
// gdsb::RuntimeError when the input cannot be read at all (the app exits 1); missing
// pieces are recorded in Snapshot::notes and in per-device fields, so checks can waive.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

struct CollectOptions {
  // Environment lookups are passed in, not read inside the library (live mode only).
  std::string cufile_env_path;  // value of CUFILE_ENV_PATH_JSON, empty when unset
  bool use_hwloc = true;        // live: locality and OS devices from hwloc
  bool lookup_names = true;     // device names from the pci.ids database (libpci)
  std::string pci_ids_path;     // the database to read, "" for libpci's default
  bool use_nvml = true;         // live: GPU facts (BAR1, memory, links) from NVML
  std::string nvml_lib;         // path of libnvidia-ml.so.1, "" for the default
  // The kernel log (hw_faults.hpp): --kernel-log FILE (dmesg / journalctl -k text), read
  // beside any other input; else live reads kmsg_path (without blocking), recordings none.
  std::string kernel_log;
  bool read_kmsg = true;
  std::string kmsg_path = "/dev/kmsg";
  std::optional<uint64_t> kmsg_after_seq;  // --health's cursor (the state file)
};

// The recorded inputs a tool may read instead of this machine; at most one is set (the
// apps make the options exclusive). None set: the live machine.
struct InputSources {
  std::string sysfs_root, pci_dump, lspci_text, hwloc_xml, from_snapshot;
  bool live() const;
  std::string description() const;  // "live", "--pci-dump FILE", ...
};

// One entry point for every tool that needs a snapshot (gdsb-topo, gdsb-p2p): the
// collector the sources name; live collection also asks NVML for GPU facts (use_nvml),
// recorded inputs never do (a snapshot replays the facts it recorded).

Snapshot collect_from(const InputSources& sources, const CollectOptions& opt);

// This machine: sysfs + /proc + libpci names + hwloc locality.
Snapshot collect_live(const CollectOptions& opt);
// A recorded tree laid out like / (DIR/sys/bus/pci/devices, DIR/sys/devices/pci*,
// DIR/sys/kernel/iommu_groups, and optionally DIR/proc, DIR/run/udev, DIR/etc/cufile.json;
// ext4 data modes from DIR/proc/fs/ext4/<dev>/options and DIR/proc/fs/jbd2).
Snapshot collect_sysfs_root(const std::filesystem::path& root, const CollectOptions& opt);
// `lspci -xxxx` (or -xxx / -xx) output, read through libpci's dump method.
Snapshot collect_pci_dump(const std::filesystem::path& file, const CollectOptions& opt);
// Plain `lspci -vvv` (optionally -nn) text as pasted into support tickets.
Snapshot collect_lspci_text(const std::filesystem::path& file);
Snapshot collect_lspci_text(const std::filesystem::path& file, const CollectOptions& opt);
// hwloc XML export (lstopo --of xml), loaded with every I/O object kept; names hwloc did
// not record come from pci.ids (opt.lookup_names, opt.pci_ids_path).
Snapshot collect_hwloc_xml(const std::filesystem::path& file, const CollectOptions& opt = {});

// Live-mode enrichment from hwloc: NUMA node of each PCI device (where sysfs says -1),
// OS device names, NUMA node count. Returns a note when hwloc could not be used.
std::string enrich_with_hwloc(Snapshot& s);

// Host facts under a root ("/" live): kernel, cmdline, CPU, IOMMU, nvidia-fs, udev,
// cufile.json, mounts, NUMA nodes, network facts.
Machine collect_machine(const std::filesystem::path& root, bool live, const CollectOptions& opt);
// The network facts under a root ("/" live): /sys/class/net, /proc/net (addresses, main-table
// routes), /sys/class/infiniband, /sys/class/nvme, /proc/modules, lnet's networks and the
// NVIDIA driver's version line. Live IPv4 addresses come from getifaddrs(); a recorded
// root's from /proc/net/fib_trie and /proc/net/route (network_facts.cpp says how).
NetworkFacts read_network_facts(const std::filesystem::path& root, bool live);
CufileSettings read_cufile_json(const std::filesystem::path& file);
// Strips // and /* */ comments outside strings (NVIDIA's cufile.json has them).
std::string strip_json_comments(const std::string& text);

// The support workflow: a portable directory holding everything the checks read.
// DIR/snapshot.json is written through report::write_output_atomic: an earlier snapshot
// is replaced; any other file of that name only with allow_overwrite (UsageError otherwise).
void save_snapshot(const Snapshot& s, const std::filesystem::path& dir,
                   bool allow_overwrite = false);
Snapshot load_snapshot(const std::filesystem::path& dir);

// The snapshot as one JSON object (schema gdsbench.topo-snapshot/1): the one mapping of the
// model, written by save_snapshot and embedded in gdsb-topo's JSON report ("snapshot",
// without the raw config bytes, which only collectors decode) so gdsb-doctor --topo reads
// the very facts a replay reads. snapshot_from_json throws RuntimeError naming `what` when
// the object is not a snapshot or is damaged; the result's kind is Snapshot, path empty.
nlohmann::json snapshot_json(const Snapshot& s, bool with_config);
Snapshot snapshot_from_json(const nlohmann::json& j, const std::string& what);

}  // namespace gdsb::topo
