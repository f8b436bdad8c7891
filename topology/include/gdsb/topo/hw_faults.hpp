// What the hardware reports while it runs: the NVIDIA driver's Xid events in the kernel log,
// NVML's error and retirement counters of each GPU, and the PCIe AER counters of each device.
// Collected with the snapshot (Snapshot::faults; hw_faults_collect.cpp, kernel_log.cpp),
// saved in snapshot.json under "hw_faults" and read back (snapshot_io.cpp), judged by
// judge_faults() (gdsb-topo --health), and read by gdsb-doctor (a slow hop with rising
// correctable AER errors, a GPU throttling, retired pages) and gdsb-cluster's fleet view.
//
// Knowledge is data, once: the Xid table (NVIDIA's Xid catalog, hw_fault_tables.cpp), the AER
// error kinds (the kernel's aer sysfs names and the PCIe specification's, aer_table.cpp)
// and NVML's clock event reasons are rows looked up by number or name; no verdict is taken
// from log prose. /work/notes/36-model.md (docs/gdsb-topo.md "Hardware faults") says more.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gdsb::topo {

// ---- Knowledge tables ------------------------------------------------------------------

// The catalog's "Resolution Bucket (Immediate Action)".
enum class XidBucket {
  Ignore,            // IGNORE
  RestartApp,        // RESTART_APP
  ResetGpu,          // RESET_GPU
  RebootNode,        // RESTART_BM: restart the bare-metal node
  RestartVm,         // RESTART_VM
  UpdateSoftware,    // UPDATE_SWFW
  CheckMechanicals,  // CHECK_MECHANICALS (power cables, seating)
  ContactSupport,    // CONTACT_SUPPORT
  Workflow,          // WORKFLOW_XID_48, WORKFLOW_NVLINK_ERR, ...: a reset, then service on recurrence
  RecoveryAction,    // XID_154: the action is in the event itself (XidEvent::recovery_action)
};
// "ignore", "restart the application", "reset the GPU", "reboot", ... (the drain reason's words)
std::string_view xid_bucket_words(XidBucket b);

// GPU generations the catalog marks a row as applying to (its "Applies to" columns).
inline constexpr uint8_t kGenA100 = 1, kGenH100 = 2, kGenB100 = 4, kGenGb200 = 8;

struct XidRow {
  int code = 0;
  std::string_view mnemonic;  // the catalog's ("ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS")
  std::string_view meaning;   // ours, short: "fallen off the bus"
  XidBucket bucket = XidBucket::ContactSupport;
  uint8_t generations = 0;    // kGen* bits
  // Whether the node is drained for it (our decision from the bucket, hw_fault_tables.cpp says why
  // per row). A row caused by the user's program (user_program) never drains.
  bool drains = false;
  bool user_program = false;  // the catalog names an application fault as the usual cause (13, 31, 43, 45)
  bool unused = false;        // the catalog describes the code as "Unused" (deprecated, or V100 and older)
  bool bucket_ours = false;   // the catalog names no bucket for the row (162-172): the bucket is ours
};
// Where the rows come from, as cited in output and docs.
inline constexpr std::string_view kXidTableSource =
    "NVIDIA, \"Analyzing Xid Errors with the Xid Catalog\", "
    "docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Ampere and newer; codes 1-172)";
std::span<const XidRow> xid_table();
const XidRow* find_xid(int code);  // nullptr: a code past the catalog (said as "not in NVIDIA's catalog")

// Xid 154's recovery actions (nvmlGpuRecoveryAction_t, and the code the driver prints).
enum class RecoveryAction { None = 0, GpuReset = 1, NodeReboot = 2, DrainP2p = 3, DrainAndReset = 4 };
std::string_view recovery_action_words(RecoveryAction a);  // "reset the GPU", "reboot", ...
std::optional<RecoveryAction> recovery_action_from_code(int code);

enum class AerClass { Correctable, Uncorrectable };
// Which sysfs file counts a kind: aer_dev_correctable, aer_dev_nonfatal or aer_dev_fatal (an
// uncorrectable kind is counted in one of the last two by its severity at the time).
enum class AerFile { Correctable, NonFatal, Fatal };
std::string_view aer_file_name(AerFile f);  // "aer_dev_correctable", ...

struct AerKindRow {
  AerClass cls = AerClass::Correctable;
  int bit = 0;                    // in the AER Correctable/Uncorrectable Error Status register
  std::string_view sysfs_name;    // the kernel's name in the aer_dev_* files ("BadTLP")
  std::string_view lspci_name;    // lspci -vvv's CESta/UESta name ("BadTLP", "AdvNonFatalErr")
  std::string_view spec_name;     // the PCIe Base Specification's ("Bad TLP Status")
  std::string_view meaning;       // ours, for output ("the link had to replay a damaged packet")
};
inline constexpr std::string_view kAerTableSource =
    "Linux drivers/pci/pcie/aer.c (aer_correctable_error_string, aer_uncorrectable_error_string; "
    "Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats), pciutils ls-ecaps.c (CESta/UESta), "
    "PCI Express Base Specification 6.0 section 7.8.4 (Advanced Error Reporting Extended Capability)";
std::span<const AerKindRow> aer_table();
const AerKindRow* find_aer_kind(AerClass cls, std::string_view sysfs_name);
const AerKindRow* find_aer_kind_lspci(AerClass cls, std::string_view lspci_name);

// NVML clock event (throttle) reasons, nvmlClocksEventReason* bits.
struct ClockEventRow {
  uint64_t bit = 0;
  std::string_view nvml_name;  // "HwThermalSlowdown"
  std::string_view meaning;    // "the GPU slowed its clocks: too hot (hardware)"
  bool slows = false;          // a reason that costs throughput (not idle, not a set clock)
};
std::span<const ClockEventRow> clock_event_table();

// ---- Collected facts -------------------------------------------------------------------

// When a log record was written, as far as the log says.
struct LogTime {
  std::optional<double> uptime_s;  // seconds since boot ([12345.678], /dev/kmsg's usec)
  std::string wall;                // the log's own clock text, "2025-02-23 16:24:18" / "May 18 19:02:39"
  std::optional<uint64_t> seq;     // /dev/kmsg's sequence number
  bool operator==(const LogTime&) const = default;
};

// The Xid events of one GPU and code: a repeated Xid is one record with a count.
struct XidEvent {
  std::string bdf;  // "0000:cb:00.0": the log names PCI:0000:cb:00 (function 0)
  int code = 0;
  uint64_t count = 0;
  LogTime first, last;
  std::string last_text;   // the last record's words after the code (for people; at most 300 bytes)
  std::string process;     // "nvidia-smi" where the record says name=..., else ""
  std::optional<int> recovery_action;  // Xid 154: the action it changed to (RecoveryAction code)
  bool operator==(const XidEvent&) const = default;
};

struct KernelLog {
  std::string source;  // "/dev/kmsg" or the --kernel-log file
  std::string format;  // "kmsg", "dmesg", "dmesg -T", "journalctl", "journalctl export"
  uint64_t bytes = 0, lines = 0, nvrm_lines = 0;
  // The log's last boot (the one running when it was saved): its Xids. A log can span boots;
  // a boot starts at a kernel's "Linux version" record, at a record whose time since boot went
  // back, at journalctl's "-- Boot <id> --" / "-- Reboot --" lines, or where -o export's
  // _BOOT_ID changes. /dev/kmsg holds this boot only.
  std::vector<XidEvent> xids;  // by first appearance
  std::vector<XidEvent> earlier_xids;  // of the boots before the last one: history, never judged
  uint32_t boots = 1;                  // boots the log holds
  // Where the last boot is named: its id (journalctl's "-- Boot <id> --", export's _BOOT_ID,
  // /proc/sys/kernel/random/boot_id for /dev/kmsg) and its first record's clock text ("" when
  // that record has none: plain dmesg).
  std::string boot_id;
  std::string boot_start;
  // Records that were not kept because distinct (GPU, code) pairs passed the bound
  // (kMaxXidKeys): memory stays bounded on any log; the count says what was dropped.
  uint64_t dropped = 0;
  uint64_t unparsed = 0;        // "NVRM: Xid (" records whose address or code did not parse
  uint64_t before_cursor = 0;   // Xid records at or before the health state's cursor (not kept)
  std::optional<uint64_t> last_seq;  // /dev/kmsg: the newest record's sequence number (any record)
  bool operator==(const KernelLog&) const = default;
};
inline constexpr size_t kMaxXidKeys = 4096;

// An NVLink's error counters (nvmlDeviceGetNvLinkErrorCounter).
struct NvLinkErrorCounters {
  int link = 0;
  std::optional<uint64_t> replay, recovery, crc_flit, crc_data;
  bool operator==(const NvLinkErrorCounters&) const = default;
};

// What NVML says of one GPU's errors; nullopt: NVML did not answer (NOT_SUPPORTED, no ECC).
struct GpuErrorCounters {
  std::optional<uint64_t> ecc_volatile_corrected, ecc_volatile_uncorrected;
  std::optional<uint64_t> ecc_aggregate_corrected, ecc_aggregate_uncorrected;
  std::optional<uint64_t> retired_pages_sbe, retired_pages_dbe;  // nvmlDeviceGetRetiredPages by cause
  std::optional<bool> retired_pages_pending;
  std::optional<uint64_t> remapped_rows_correctable, remapped_rows_uncorrectable;
  std::optional<bool> remap_pending, remap_failed;
  std::optional<uint64_t> clock_event_reasons;  // nvmlClocksEventReason* bits, at collection
  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: what the driver says the GPU needs now (RecoveryAction's
  // numbers; a number past them is kept as read).
  std::optional<int> recovery_action;
  std::vector<NvLinkErrorCounters> nvlinks;     // links that answered
  bool operator==(const GpuErrorCounters&) const = default;
};

// One device's AER counters (sysfs aer_dev_*), by the kernel's kind name, and what lspci -vvv
// shows of its status registers (set bits: errors seen and not yet cleared).
struct AerCounters {
  std::map<std::string, uint64_t> correctable, nonfatal, fatal;  // without the TOTAL_ERR_* lines
  std::optional<uint64_t> total_correctable, total_nonfatal, total_fatal;  // TOTAL_ERR_* lines
  bool counters_known = false;                     // the sysfs files were read
  // CESta/UESta bits set, by the kernel's name (the AER table maps lspci's: AdvNonFatalErr
  // is NonFatalErr); a name the table lacks is kept as lspci wrote it.
  std::vector<std::string> status_correctable;     // "BadTLP"
  std::vector<std::string> status_uncorrectable;   // "UnsupReq"
  bool status_known = false;                       // lspci -vvv showed the AER capability
  bool operator==(const AerCounters&) const = default;
};

struct HwFaults {
  std::optional<KernelLog> kernel_log;
  std::string kernel_log_unread;  // why there is none: "a recording holds no kernel log", "/dev/kmsg: EPERM"
  std::map<std::string, GpuErrorCounters> gpu_errors;  // by GPU BDF
  std::string gpu_errors_unread;  // why NVML gave none ("--no-nvml", "NVML: Driver Not Loaded")
  std::map<std::string, AerCounters> aer;              // by device BDF (GPUs, NVMe, NICs, switch ports)
  std::optional<double> uptime_s;           // /proc/uptime at collection
  std::optional<int64_t> collected_unix_s;  // wall clock at collection (live)
  std::string boot_id;
  bool operator==(const HwFaults&) const = default;
};

// ---- Judgement (gdsb-topo --health) ----------------------------------------------------

// critical: exit 3 and drain; history: an Xid of an earlier boot or from before the known-good
// file, listed and never judged.
enum class FaultSeverity { Warning, Critical, History };
enum class FaultKind {
  Xid,                 // an Xid event (xid, count, when)
  XidNotOurGpu,        // an Xid for a PCI address that is not a GPU of this node
  EccUncorrectable,    // volatile uncorrectable ECC errors
  RemapFailed,         // row remapping failed
  RemapPending,        // rows wait to be remapped at the next GPU reset
  RetiredPagesPending, // pages wait to be retired at the next driver reload
  GpuRecoveryAction,   // NVML's recovery action is not None (reset, reboot, drain)
  NvLinkErrors,        // NVLink replays or recoveries since the known-good file of this boot
  NvLinkCrcRate,       // NVLink CRC errors (flit and data) past the rate on one link
  AerCorrectableRate,  // correctable AER errors rose past the rate since the known-good file
  AerUncorrectable,    // non-fatal or fatal AER errors rose since the known-good file
};
// Names for labels and documents (metrics, the fleet view): "xid", "aer_correctable_rate", ...;
// "warning", "critical".
std::string_view fault_kind_name(FaultKind k);
std::string_view fault_severity_name(FaultSeverity s);

struct FaultFinding {
  FaultKind kind = FaultKind::Xid;
  FaultSeverity severity = FaultSeverity::Warning;
  std::string bdf;          // the device ("" for none)
  std::string device;       // "GPU", "NVMe", "NIC", "port", "device" (what the snapshot says it is)
  int xid = 0;              // Xid findings
  uint64_t count = 0;       // events, errors or rows
  std::string when;         // "11:43:14", "+5107.6 s after boot" (Xid: the last event)
  std::string aer_kind;     // AER findings: the kernel's name of the kind that rose most
  double rate_per_hour = 0; // AerCorrectableRate, NvLinkCrcRate
  std::string action;       // "reboot", "reset the GPU", "reseat the card or replace the riser"
  std::string words;        // the line: "GPU 0000:cb:00.0 Xid 79 (fallen off the bus) at 11:43:14: drain, reboot"
  bool operator==(const FaultFinding&) const = default;
};

// How far the kernel log had been read, and in which boot: what the known-good file was saved
// with, or what the last check whose verdict was delivered had seen (the health state file).
struct LogPosition {
  std::string boot;              // log_boot_key() then ("" unknown: never this boot)
  std::optional<uint64_t> seq;   // /dev/kmsg: the newest record read
  std::vector<XidEvent> xids;    // the boot's Xids then (their counts and last times)
  bool operator==(const LogPosition&) const = default;
};
// The boot a snapshot's fault facts are of: /proc/sys/kernel/random/boot_id where read (live, a
// sysfs recording), else the boot the kernel log names (its id, else "started <clock text of its
// first record>"), else "". Without dashes, lower case.
std::string log_boot_key(const HwFaults& f);
// A boot id as log_boot_key writes it ("5f2c1e7a-3b8c-..." -> "5f2c1e7a3b8c...").
std::string boot_id_key(std::string_view boot_id);
// The position of the log of `f` now (its last boot's Xids, when that boot is this one).
LogPosition log_position(const HwFaults& f);

// What --health compares the counters with: the known-good file's counters and time, and
// what the previous check saw last (the health state file).
struct FaultBaseline {
  std::map<std::string, AerCounters> aer;  // the known-good file's AER counters by BDF
  std::map<std::string, std::vector<NvLinkErrorCounters>> nvlinks;  // by GPU BDF
  std::vector<std::string> known_gpus;     // the known-good file's GPUs: still this node's when gone
  std::optional<int64_t> taken_unix_s;     // when the known-good file was saved
  std::string boot_id;                     // the boot it was saved in (counters reset on reboot)
  // The kernel log the known-good file was saved with: an Xid of this boot it had seen (same
  // GPU, code and last record) is from before the file, history, not a fault.
  LogPosition known_good_log;
  // From the health state file: the Xids of this boot an earlier check reported (and whose
  // drain, if any, succeeded) are not reported again.
  LogPosition reported;
};

struct FaultThresholds {
  double aer_correctable_per_hour = 10;  // correctable AER errors per hour on one device
  // NVLink CRC errors (flit + data) per second on one link. NVIDIA's DCGM fails a GPU at
  // 100/s ("CRC errors only matter at rates of 100+ per second", its GpuHardwareLimits.h,
  // from the driver team); a healthy idle 4 x H100 counted 0.1-0.7/s of data CRC on every
  // link (1.7/s at most under NVLink load) while nvidia-smi nvlink -e showed none
  // (docs/PERFORMANCE.md, 2026-11-27): nvidia-smi -e prints no data-CRC counter at all
  // (docs/gdsb-topo.md, "Our data-CRC counter is not one nvidia-smi nvlink -e shows").
  double nvlink_crc_per_second = 100;
};

// The findings of a snapshot's fault facts, critical first, then by device. Pure: the
// snapshot's devices say which PCI address is which device.
struct Snapshot;
std::vector<FaultFinding> judge_faults(const Snapshot& s, const FaultBaseline& baseline,
                                       const FaultThresholds& thresholds = {});

// "Xid 79 (fallen off the bus) x3, last at 11:43:14": an Xid's code, its meaning (the
// table's row), how often and when (FaultFinding::when), as every Xid line says it.
std::string xid_words(int code, uint64_t count, const std::string& when);

// Whether the PCI address an Xid record names is a GPU of this node: one decision, read by
// judge_faults (gdsb-topo --health and the platform check) and gdsb-cluster's fleet view.
//   Present: a GPU on the bus now (the snapshot's).
//   Missing: not on the bus now, but a GPU of this node: its known-good facts list it (the
//            --expect file, the fleet's class reference), or the log is the node's own (read
//            in the boot the facts were collected in: its /dev/kmsg; the NVIDIA driver logs
//            Xids only for the GPUs it drives). A GPU that fell off the bus and left PCI.
//   NotKnown: neither (a log file of another node?).
enum class GpuOfNode { Present, Missing, NotKnown };
GpuOfNode gpu_of_node(bool gpu_on_bus, bool known_good_lists_it, bool own_log);
GpuOfNode gpu_of_node(const Snapshot& s, const FaultBaseline& b, const std::string& bdf);

// The finding of an Xid on a GPU of this node that is no longer on its bus (GpuOfNode::
// Missing): critical whatever the code, the GPU is gone ("GPU 0000:cb:00.0 missing: Xid 79
// (fallen off the bus) at 11:43:14: drain, reboot"). `when` as FaultFinding::when.
FaultFinding missing_gpu_xid(const std::string& bdf, int xid, uint64_t count, const std::string& when);

// What gdsb-topo --health does with a finding: "drain" (critical) or "warn". The platform
// check and the fleet view say it with each fault.
std::string_view health_action_name(const FaultFinding& f);

}  // namespace gdsb::topo
