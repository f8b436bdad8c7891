// NVML loaded at run time (dlopen of libnvidia-ml.so.1), kvikio-style: a typed function
// table filled by symbol lookup, so gdsbench builds without nvml.h and runs where no
// driver is installed, saying why NVML is unavailable. The NVML types used here are
// declared below with the values and layouts of nvml.h (NVML API 12.x).
//
// One Library object owns one nvmlInit_v2/nvmlShutdown pair. Calls return Result<T>
// (the NVML return code and the value); a missing optional symbol reads as
// kErrorFunctionNotFound, never as a crash.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gdsb::nvml {

// ---- NVML types, as declared in nvml.h -------------------------------------------------
using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorUnknown = 999;

struct DeviceSt;            // nvmlDevice_st, opaque
using Device = DeviceSt*;   // nvmlDevice_t

inline constexpr unsigned kPciBusIdBufferSize = 32;     // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
inline constexpr unsigned kPciBusIdLegacySize = 16;     // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
inline constexpr unsigned kDeviceNameBufferSize = 96;   // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned kDeviceVbiosVersionBufferSize = 32;  // NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE
inline constexpr unsigned kDeviceUuidBufferSize = 96;   // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kNvLinkMaxLinks = 18;         // NVML_NVLINK_MAX_LINKS

// nvmlPciInfo_t (the layout nvmlDeviceGetPciInfo_v3 and ...RemotePciInfo_v2 fill).
struct PciInfo {
  char bus_id_legacy[kPciBusIdLegacySize];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;     // (device id << 16) | vendor id
  unsigned int pci_subsystem_id;
  char bus_id[kPciBusIdBufferSize];  // "00000000:00:06.0"
};

struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct Bar1Memory {  // nvmlBAR1Memory_t
  unsigned long long bar1_total;
  unsigned long long bar1_free;
  unsigned long long bar1_used;
};

enum class EnableState : int { Disabled = 0, Enabled = 1 };  // nvmlEnableState_t
enum class AffinityScope : unsigned { Node = 0, Socket = 1 };  // nvmlAffinityScope_t

// nvmlGpuTopologyLevel_t
enum class TopologyLevel : int {
  Internal = 0, Single = 10, Multiple = 20, HostBridge = 30, Node = 40, System = 50
};

// nvmlGpuP2PCapsIndex_t
enum class P2PCapsIndex : int { Read = 0, Write = 1, NvLink = 2, Atomics = 3, Pci = 4 };

// nvmlGpuP2PStatus_t
enum class P2PStatus : int {
  Ok = 0,
  ChipsetNotSupported = 1,
  GpuNotSupported = 2,
  IohTopologyNotSupported = 3,
  DisabledByRegkey = 4,
  NotSupported = 5,
  Unknown = 6,
};

// nvmlIntNvLinkDeviceType_t: what the far end of an NVLink is.
enum class NvLinkDeviceType : int { Gpu = 0, IbmNpu = 1, Switch = 2, Unknown = 0xFF };

// Error and retirement queries (nvml.h): nvmlMemoryErrorType_t, nvmlEccCounterType_t,
// nvmlPageRetirementCause_t, nvmlNvLinkErrorCounter_t.
enum class MemoryErrorType : int { Corrected = 0, Uncorrected = 1 };
enum class EccCounterType : int { Volatile = 0, Aggregate = 1 };
enum class PageRetirementCause : int { MultipleSingleBitEcc = 0, DoubleBitEcc = 1 };
enum class NvLinkErrorCounter : int { DlReplay = 0, DlRecovery = 1, DlCrcFlit = 2, DlCrcData = 3 };
// nvmlFieldValue_t (nvml.h), as nvmlDeviceGetFieldValues fills it: 40 bytes, the value a
// union of 8. Field ids are nvml.h's NVML_FI_* numbers.
struct FieldValue {
  unsigned field_id = 0;
  unsigned scope_id = 0;
  long long timestamp = 0;
  long long latency_us = 0;
  int value_type = 0;  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ulonglong, 4 slonglong, 5 sint, 6 ushort
  Return nvml_return = 0;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value{};
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION (driver R560 and newer): the value is an
// nvmlDeviceGpuRecoveryAction_t, 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset.
inline constexpr unsigned kFieldGpuRecoveryAction = 230;
struct RemappedRows {  // nvmlDeviceGetRemappedRows' four outputs
  unsigned correctable = 0, uncorrectable = 0, pending = 0, failed = 0;
};

// ---- The function table ---------------------------------------------------------------
struct Api {
  Return (*init_v2)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*system_get_driver_version)(char*, unsigned) = nullptr;
  Return (*system_get_cuda_driver_version_v2)(int*) = nullptr;
  Return (*system_get_cuda_driver_version)(int*) = nullptr;
  Return (*device_get_count_v2)(unsigned*) = nullptr;
  Return (*device_get_handle_by_index_v2)(unsigned, Device*) = nullptr;
  Return (*device_get_handle_by_pci_bus_id_v2)(const char*, Device*) = nullptr;
  Return (*device_get_name)(Device, char*, unsigned) = nullptr;
  Return (*device_get_vbios_version)(Device, char*, unsigned) = nullptr;
  Return (*device_get_uuid)(Device, char*, unsigned) = nullptr;
  Return (*device_get_pci_info_v3)(Device, PciInfo*) = nullptr;
  Return (*device_get_memory_info)(Device, Memory*) = nullptr;
  Return (*device_get_bar1_memory_info)(Device, Bar1Memory*) = nullptr;
  Return (*device_get_curr_pcie_link_generation)(Device, unsigned*) = nullptr;
  Return (*device_get_max_pcie_link_generation)(Device, unsigned*) = nullptr;
  Return (*device_get_curr_pcie_link_width)(Device, unsigned*) = nullptr;
  Return (*device_get_max_pcie_link_width)(Device, unsigned*) = nullptr;
  Return (*device_get_numa_node_id)(Device, unsigned*) = nullptr;  // driver >= 550
  Return (*device_get_memory_affinity)(Device, unsigned, unsigned long*, AffinityScope) = nullptr;
  Return (*device_get_p2p_status)(Device, Device, P2PCapsIndex, P2PStatus*) = nullptr;
  Return (*device_get_topology_common_ancestor)(Device, Device, TopologyLevel*) = nullptr;
  Return (*device_get_nvlink_state)(Device, unsigned, EnableState*) = nullptr;
  Return (*device_get_nvlink_remote_pci_info_v2)(Device, unsigned, PciInfo*) = nullptr;
  Return (*device_get_nvlink_remote_device_type)(Device, unsigned, NvLinkDeviceType*) = nullptr;
  Return (*device_get_total_ecc_errors)(Device, MemoryErrorType, EccCounterType, unsigned long long*) = nullptr;
  Return (*device_get_retired_pages)(Device, PageRetirementCause, unsigned*, unsigned long long*) = nullptr;
  Return (*device_get_retired_pages_pending_status)(Device, EnableState*) = nullptr;
  Return (*device_get_remapped_rows)(Device, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  Return (*device_get_current_clocks_event_reasons)(Device, unsigned long long*) = nullptr;
  Return (*device_get_current_clocks_throttle_reasons)(Device, unsigned long long*) = nullptr;
  Return (*device_get_nvlink_error_counter)(Device, unsigned, NvLinkErrorCounter, unsigned long long*) = nullptr;
  Return (*device_get_field_values)(Device, int, FieldValue*) = nullptr;
};

template <class T>
struct Result {
  Return rc = kErrorUninitialized;
  T value{};
  bool ok() const noexcept { return rc == kSuccess; }
  std::optional<T> get() const { return ok() ? std::optional<T>(value) : std::nullopt; }
};

// The NVML name of a return code when the library is not loaded ("NVML_ERROR_...").
std::string_view return_name(Return rc) noexcept;
std::string_view topology_level_name(TopologyLevel level) noexcept;  // "PIX", "PHB", ...
std::string_view p2p_status_code(P2PStatus s) noexcept;  // "OK", "CNS", "GNS", "TNS", ...
// The inverses, for replaying recorded codes; nullopt for an unknown text.
std::optional<P2PStatus> p2p_status_from_code(std::string_view code) noexcept;
std::optional<TopologyLevel> topology_level_from_name(std::string_view name) noexcept;
std::string_view nvlink_device_type_name(NvLinkDeviceType t) noexcept;  // "gpu", "nvswitch", ...

// NVML's CUDA driver version number as nvidia-smi prints it: 13000 -> "13.0", 12040 -> "12.4"
// (NVML_CUDA_DRIVER_VERSION_MAJOR/MINOR).
std::string cuda_version_text(int version);

// "00000000:00:06.0" or "0000:00:06.0" -> "0000:00:06.0" (lower case, 4-digit domain).
std::string normalize_bus_id(std::string_view bus_id);
// The reverse, as NVML writes a bus id (nvmlPciInfo_t.busId, NVML_DEVICE_PCI_BUS_ID_FMT
// "%08X:%02X:%02X.0"; dcgm-exporter's pci_bus_id label after it): "0000:00:1b.0" ->
// "00000000:00:1B.0".
std::string nvml_bus_id(std::string_view bdf);

class Library {
 public:
  // Loads the library (path "" = "libnvidia-ml.so.1") and calls nvmlInit_v2. Throws
  // gdsb::RuntimeError saying what is missing: the library, a required symbol, or the
  // driver (the nvmlInit_v2 error string).
  static std::unique_ptr<Library> open(const std::string& path = "");
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const Api& api() const noexcept { return api_; }
  const std::string& path() const noexcept { return path_; }
  std::string error_string(Return rc) const;  // nvmlErrorString, or return_name()

  Result<std::string> driver_version() const;
  // The CUDA version the driver supports (nvidia-smi's "CUDA Version"), as NVML's number
  // (13000 = 13.0): nvmlSystemGetCudaDriverVersion_v2, else nvmlSystemGetCudaDriverVersion;
  // kErrorFunctionNotFound when the library has neither.
  Result<int> cuda_driver_version() const;
  Result<unsigned> device_count() const;
  Result<Device> device_by_index(unsigned index) const;
  Result<Device> device_by_pci_bus_id(const std::string& bus_id) const;
  Result<std::string> name(Device d) const;
  // The GPU's firmware (nvmlDeviceGetVbiosVersion, "96.00.74.00.01").
  Result<std::string> vbios_version(Device d) const;
  // The GPU's UUID as NVML and dcgm-exporter write it ("GPU-3e09735f-3ae0-a103-7d7f-6ea8f6241eee";
  // nvmlDeviceGetUUID).
  Result<std::string> uuid(Device d) const;
  Result<PciInfo> pci_info(Device d) const;
  Result<std::string> bus_id(Device d) const;  // normalized, from pci_info
  Result<Memory> memory_info(Device d) const;
  Result<Bar1Memory> bar1_memory_info(Device d) const;
  Result<unsigned> curr_pcie_link_generation(Device d) const;
  Result<unsigned> max_pcie_link_generation(Device d) const;
  Result<unsigned> curr_pcie_link_width(Device d) const;
  Result<unsigned> max_pcie_link_width(Device d) const;
  // The GPU's own memory NUMA node (coherent GPU memory, e.g. Grace Hopper); most PCIe
  // GPUs answer NOT_SUPPORTED.
  Result<unsigned> numa_node(Device d) const;
  // The host NUMA nodes closest to the GPU (nvidia-smi topo -m's "NUMA Affinity").
  Result<std::vector<unsigned>> memory_affinity_nodes(Device d) const;
  Result<P2PStatus> p2p_status(Device a, Device b, P2PCapsIndex index) const;
  Result<TopologyLevel> common_ancestor(Device a, Device b) const;
  Result<bool> nvlink_active(Device d, unsigned link) const;
  Result<PciInfo> nvlink_remote_pci_info(Device d, unsigned link) const;
  // Optional symbol (NVML of driver 450 and newer); kErrorFunctionNotFound without it.
  Result<NvLinkDeviceType> nvlink_remote_device_type(Device d, unsigned link) const;
  // Errors and retirement; each an optional symbol (kErrorFunctionNotFound without it), and
  // NOT_SUPPORTED where the GPU has no ECC or no row remapper.
  Result<unsigned long long> total_ecc_errors(Device d, MemoryErrorType type, EccCounterType counter) const;
  Result<unsigned> retired_pages_count(Device d, PageRetirementCause cause) const;
  Result<bool> retired_pages_pending(Device d) const;
  Result<RemappedRows> remapped_rows(Device d) const;
  // nvmlDeviceGetCurrentClocksEventReasons, else ...ThrottleReasons (older drivers).
  Result<unsigned long long> clocks_event_reasons(Device d) const;
  Result<unsigned long long> nvlink_error_counter(Device d, unsigned link, NvLinkErrorCounter counter) const;
  // One field of nvmlDeviceGetFieldValues as an unsigned integer (the field's own return
  // code where the call succeeded but the field did not: NOT_SUPPORTED on older drivers).
  Result<unsigned long long> field_value_uint(Device d, unsigned field_id) const;

 private:
  Library() = default;
  void* handle_ = nullptr;
  std::string path_;
  Api api_;
};

}  // namespace gdsb::nvml
