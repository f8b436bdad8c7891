#include "gdsb/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "gdsb/error.hpp"

namespace gdsb::nvml {

std::string_view return_name(Return rc) noexcept {
  switch (rc) {
    case 0: return "NVML_SUCCESS";
    case 1: return "NVML_ERROR_UNINITIALIZED";
    case 2: return "NVML_ERROR_INVALID_ARGUMENT";
    case 3: return "NVML_ERROR_NOT_SUPPORTED";
    case 4: return "NVML_ERROR_NO_PERMISSION";
    case 5: return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6: return "NVML_ERROR_NOT_FOUND";
    case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10: return "NVML_ERROR_TIMEOUT";
    case 11: return "NVML_ERROR_IRQ_ISSUE";
    case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15: return "NVML_ERROR_GPU_IS_LOST";
    case 16: return "NVML_ERROR_RESET_REQUIRED";
    case 17: return "NVML_ERROR_OPERATING_SYSTEM";
    case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19: return "NVML_ERROR_IN_USE";
    case 20: return "NVML_ERROR_MEMORY";
    case 21: return "NVML_ERROR_NO_DATA";
    case 999: return "NVML_ERROR_UNKNOWN";
    default: return "NVML_ERROR_(unlisted)";
  }
}

std::string_view topology_level_name(TopologyLevel level) noexcept {
  switch (level) {
    case TopologyLevel::Internal: return "X";
    case TopologyLevel::Single: return "PIX";
    case TopologyLevel::Multiple: return "PXB";
    case TopologyLevel::HostBridge: return "PHB";
    case TopologyLevel::Node: return "NODE";
    case TopologyLevel::System: return "SYS";
  }
  return "?";
}

std::string_view p2p_status_code(P2PStatus s) noexcept {
  switch (s) {
    case P2PStatus::Ok: return "OK";
    case P2PStatus::ChipsetNotSupported: return "CNS";
    case P2PStatus::GpuNotSupported: return "GNS";
    case P2PStatus::IohTopologyNotSupported: return "TNS";
    case P2PStatus::DisabledByRegkey: return "DR";
    case P2PStatus::NotSupported: return "NS";
    case P2PStatus::Unknown: return "U";
  }
  return "U";
}

std::optional<P2PStatus> p2p_status_from_code(std::string_view code) noexcept {
  for (int v = 0; v <= static_cast<int>(P2PStatus::Unknown); ++v) {
    const auto s = static_cast<P2PStatus>(v);
    if (p2p_status_code(s) == code) return s;
  }
  return std::nullopt;
}

std::optional<TopologyLevel> topology_level_from_name(std::string_view name) noexcept {
  for (TopologyLevel l : {TopologyLevel::Internal, TopologyLevel::Single, TopologyLevel::Multiple,
                          TopologyLevel::HostBridge, TopologyLevel::Node, TopologyLevel::System}) {
    if (topology_level_name(l) == name) return l;
  }
  return std::nullopt;
}

std::string_view nvlink_device_type_name(NvLinkDeviceType t) noexcept {
  switch (t) {
    case NvLinkDeviceType::Gpu: return "gpu";
    case NvLinkDeviceType::IbmNpu: return "ibmnpu";
    case NvLinkDeviceType::Switch: return "nvswitch";
    case NvLinkDeviceType::Unknown: return "unknown";
  }
  return "unknown";
}

std::string normalize_bus_id(std::string_view bus_id) {
  std::string s(bus_id);
  // Trim trailing NULs/spaces that fixed-size NVML buffers may carry.
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) {
    s.pop_back();
  }
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto colon = s.find(':');
  // Only a domain:bus:dev.fn form has two colons; keep the last 4 digits of the domain.
  if (colon != std::string::npos && s.find(':', colon + 1) != std::string::npos) {
    std::string domain = s.substr(0, colon);
    if (domain.size() > 4) domain = domain.substr(domain.size() - 4);
    while (domain.size() < 4) domain.insert(domain.begin(), '0');
    s = domain + s.substr(colon);
  } else if (colon != std::string::npos) {
    s = "0000:" + s;
  }
  return s;
}

std::string nvml_bus_id(std::string_view bdf) {
  std::string s = normalize_bus_id(bdf);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s.find(':') == 4 ? "0000" + s : s;
}

namespace {

template <class Fn>
void bind(void* handle, const char* symbol, Fn& out) {
  // POSIX guarantees dlsym's object pointer converts to a function pointer.
  void* p = dlsym(handle, symbol);
  static_assert(sizeof(p) == sizeof(out));
  std::memcpy(&out, &p, sizeof(out));
}

template <class T, class F>
Result<T> call(F* fn, auto&&... args) {
  Result<T> r;
  if (fn == nullptr) {
    r.rc = kErrorFunctionNotFound;
    return r;
  }
  r.rc = fn(args..., &r.value);
  return r;
}

// The calls that fill a caller's char buffer of NVML's documented size.
template <std::size_t N, class F>
Result<std::string> text_call(F* fn, auto&&... args) {
  Result<std::string> r;
  if (fn == nullptr) {
    r.rc = kErrorFunctionNotFound;
    return r;
  }
  std::array<char, N> buf{};
  r.rc = fn(args..., buf.data(), static_cast<unsigned>(buf.size()));
  if (r.ok()) r.value = buf.data();
  return r;
}

}  // namespace

std::unique_ptr<Library> Library::open(const std::string& path) {
  const std::string name = path.empty() ? "libnvidia-ml.so.1" : path;
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw RuntimeError("NVML library " + name + " could not be loaded (" +
                       (why ? why : "unknown dlopen error") +
                       "): install the NVIDIA driver or point --nvml-lib at libnvidia-ml.so.1");
  }
  std::unique_ptr<Library> lib(new Library());
  lib->handle_ = handle;
  lib->path_ = name;
  Api& a = lib->api_;
  bind(handle, "nvmlInit_v2", a.init_v2);
  bind(handle, "nvmlShutdown", a.shutdown);
  bind(handle, "nvmlErrorString", a.error_string);
  bind(handle, "nvmlSystemGetDriverVersion", a.system_get_driver_version);
  bind(handle, "nvmlSystemGetCudaDriverVersion_v2", a.system_get_cuda_driver_version_v2);
  bind(handle, "nvmlSystemGetCudaDriverVersion", a.system_get_cuda_driver_version);
  bind(handle, "nvmlDeviceGetCount_v2", a.device_get_count_v2);
  bind(handle, "nvmlDeviceGetHandleByIndex_v2", a.device_get_handle_by_index_v2);
  bind(handle, "nvmlDeviceGetHandleByPciBusId_v2", a.device_get_handle_by_pci_bus_id_v2);
  bind(handle, "nvmlDeviceGetName", a.device_get_name);
  bind(handle, "nvmlDeviceGetVbiosVersion", a.device_get_vbios_version);
  bind(handle, "nvmlDeviceGetUUID", a.device_get_uuid);
  bind(handle, "nvmlDeviceGetPciInfo_v3", a.device_get_pci_info_v3);
  bind(handle, "nvmlDeviceGetMemoryInfo", a.device_get_memory_info);
  bind(handle, "nvmlDeviceGetBAR1MemoryInfo", a.device_get_bar1_memory_info);
  bind(handle, "nvmlDeviceGetCurrPcieLinkGeneration", a.device_get_curr_pcie_link_generation);
  bind(handle, "nvmlDeviceGetMaxPcieLinkGeneration", a.device_get_max_pcie_link_generation);
  bind(handle, "nvmlDeviceGetCurrPcieLinkWidth", a.device_get_curr_pcie_link_width);
  bind(handle, "nvmlDeviceGetMaxPcieLinkWidth", a.device_get_max_pcie_link_width);
  bind(handle, "nvmlDeviceGetNumaNodeId", a.device_get_numa_node_id);
  bind(handle, "nvmlDeviceGetMemoryAffinity", a.device_get_memory_affinity);
  bind(handle, "nvmlDeviceGetP2PStatus", a.device_get_p2p_status);
  bind(handle, "nvmlDeviceGetTopologyCommonAncestor", a.device_get_topology_common_ancestor);
  bind(handle, "nvmlDeviceGetNvLinkState", a.device_get_nvlink_state);
  bind(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2", a.device_get_nvlink_remote_pci_info_v2);
  bind(handle, "nvmlDeviceGetNvLinkRemoteDeviceType", a.device_get_nvlink_remote_device_type);
  bind(handle, "nvmlDeviceGetTotalEccErrors", a.device_get_total_ecc_errors);
  bind(handle, "nvmlDeviceGetRetiredPages", a.device_get_retired_pages);
  bind(handle, "nvmlDeviceGetRetiredPagesPendingStatus", a.device_get_retired_pages_pending_status);
  bind(handle, "nvmlDeviceGetRemappedRows", a.device_get_remapped_rows);
  bind(handle, "nvmlDeviceGetCurrentClocksEventReasons", a.device_get_current_clocks_event_reasons);
  bind(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", a.device_get_current_clocks_throttle_reasons);
  bind(handle, "nvmlDeviceGetNvLinkErrorCounter", a.device_get_nvlink_error_counter);
  bind(handle, "nvmlDeviceGetFieldValues", a.device_get_field_values);

  if (a.init_v2 == nullptr || a.shutdown == nullptr || a.device_get_count_v2 == nullptr ||
      a.device_get_handle_by_index_v2 == nullptr) {
    throw RuntimeError("NVML library " + name +
                       " lacks nvmlInit_v2/nvmlDeviceGetCount_v2: the driver is too old "
                       "(NVML from driver 418 or newer is needed)");
  }
  const Return rc = a.init_v2();
  if (rc != kSuccess) {
    a.init_v2 = nullptr;  // so the destructor does not call nvmlShutdown
    throw RuntimeError("nvmlInit_v2 failed: " + lib->error_string(rc) +
                       " (is the NVIDIA kernel driver loaded?)");
  }
  return lib;
}

Library::~Library() {
  if (api_.init_v2 != nullptr && api_.shutdown != nullptr) api_.shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

std::string Library::error_string(Return rc) const {
  std::string s(return_name(rc));
  if (api_.error_string != nullptr) {
    const char* text = api_.error_string(rc);
    if (text != nullptr) s = std::string(text) + " (" + s + ")";
  }
  return s;
}

Result<std::string> Library::driver_version() const {
  return text_call<kSystemDriverVersionBufferSize>(api_.system_get_driver_version);
}

Result<int> Library::cuda_driver_version() const {
  if (api_.system_get_cuda_driver_version_v2 != nullptr)
    return call<int>(api_.system_get_cuda_driver_version_v2);
  return call<int>(api_.system_get_cuda_driver_version);
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

Result<unsigned> Library::device_count() const {
  return call<unsigned>(api_.device_get_count_v2);
}

Result<Device> Library::device_by_index(unsigned index) const {
  return call<Device>(api_.device_get_handle_by_index_v2, index);
}

Result<Device> Library::device_by_pci_bus_id(const std::string& bus_id) const {
  return call<Device>(api_.device_get_handle_by_pci_bus_id_v2, bus_id.c_str());
}

Result<std::string> Library::name(Device d) const {
  return text_call<kDeviceNameBufferSize>(api_.device_get_name, d);
}

Result<std::string> Library::vbios_version(Device d) const {
  return text_call<kDeviceVbiosVersionBufferSize>(api_.device_get_vbios_version, d);
}

Result<std::string> Library::uuid(Device d) const {
  return text_call<kDeviceUuidBufferSize>(api_.device_get_uuid, d);
}

Result<PciInfo> Library::pci_info(Device d) const {
  return call<PciInfo>(api_.device_get_pci_info_v3, d);
}

Result<std::string> Library::bus_id(Device d) const {
  const auto info = pci_info(d);
  Result<std::string> r;
  r.rc = info.rc;
  if (info.ok()) {
    r.value = normalize_bus_id(std::string_view(info.value.bus_id,
                                                strnlen(info.value.bus_id, kPciBusIdBufferSize)));
  }
  return r;
}

Result<Memory> Library::memory_info(Device d) const {
  return call<Memory>(api_.device_get_memory_info, d);
}

Result<Bar1Memory> Library::bar1_memory_info(Device d) const {
  return call<Bar1Memory>(api_.device_get_bar1_memory_info, d);
}

Result<unsigned> Library::curr_pcie_link_generation(Device d) const {
  return call<unsigned>(api_.device_get_curr_pcie_link_generation, d);
}

Result<unsigned> Library::max_pcie_link_generation(Device d) const {
  return call<unsigned>(api_.device_get_max_pcie_link_generation, d);
}

Result<unsigned> Library::curr_pcie_link_width(Device d) const {
  return call<unsigned>(api_.device_get_curr_pcie_link_width, d);
}

Result<unsigned> Library::max_pcie_link_width(Device d) const {
  return call<unsigned>(api_.device_get_max_pcie_link_width, d);
}

Result<unsigned> Library::numa_node(Device d) const {
  return call<unsigned>(api_.device_get_numa_node_id, d);
}

Result<std::vector<unsigned>> Library::memory_affinity_nodes(Device d) const {
  Result<std::vector<unsigned>> r;
  if (api_.device_get_memory_affinity == nullptr) {
    r.rc = kErrorFunctionNotFound;
    return r;
  }
  constexpr unsigned kWords = 16;  // 1024 nodes
  std::array<unsigned long, kWords> set{};
  r.rc = api_.device_get_memory_affinity(d, kWords, set.data(), AffinityScope::Node);
  if (!r.ok()) return r;
  constexpr unsigned kBits = 8 * sizeof(unsigned long);
  for (unsigned w = 0; w < kWords; ++w) {
    for (unsigned b = 0; b < kBits; ++b) {
      if ((set[w] >> b) & 1ul) r.value.push_back(w * kBits + b);
    }
  }
  return r;
}

Result<P2PStatus> Library::p2p_status(Device a, Device b, P2PCapsIndex index) const {
  return call<P2PStatus>(api_.device_get_p2p_status, a, b, index);
}

Result<TopologyLevel> Library::common_ancestor(Device a, Device b) const {
  return call<TopologyLevel>(api_.device_get_topology_common_ancestor, a, b);
}

Result<bool> Library::nvlink_active(Device d, unsigned link) const {
  const auto state = call<EnableState>(api_.device_get_nvlink_state, d, link);
  return {state.rc, state.ok() && state.value == EnableState::Enabled};
}

Result<PciInfo> Library::nvlink_remote_pci_info(Device d, unsigned link) const {
  return call<PciInfo>(api_.device_get_nvlink_remote_pci_info_v2, d, link);
}

Result<NvLinkDeviceType> Library::nvlink_remote_device_type(Device d, unsigned link) const {
  return call<NvLinkDeviceType>(api_.device_get_nvlink_remote_device_type, d, link);
}

Result<unsigned long long> Library::total_ecc_errors(Device d, MemoryErrorType type, EccCounterType counter) const {
  return call<unsigned long long>(api_.device_get_total_ecc_errors, d, type, counter);
}

Result<unsigned> Library::retired_pages_count(Device d, PageRetirementCause cause) const {
  Result<unsigned> r;
  if (api_.device_get_retired_pages == nullptr) {
    r.rc = kErrorFunctionNotFound;
    return r;
  }
  // A zero-sized buffer asks for the count only: INSUFFICIENT_SIZE then means "there are some".
  unsigned count = 0;
  r.rc = api_.device_get_retired_pages(d, cause, &count, nullptr);
  if (r.rc == kErrorInsufficientSize) r.rc = kSuccess;
  r.value = count;
  return r;
}

Result<bool> Library::retired_pages_pending(Device d) const {
  const auto state = call<EnableState>(api_.device_get_retired_pages_pending_status, d);
  return {state.rc, state.ok() && state.value == EnableState::Enabled};
}

Result<RemappedRows> Library::remapped_rows(Device d) const {
  Result<RemappedRows> r;
  if (api_.device_get_remapped_rows == nullptr) {
    r.rc = kErrorFunctionNotFound;
    return r;
  }
  r.rc = api_.device_get_remapped_rows(d, &r.value.correctable, &r.value.uncorrectable, &r.value.pending,
                                       &r.value.failed);
  return r;
}

Result<unsigned long long> Library::clocks_event_reasons(Device d) const {
  if (api_.device_get_current_clocks_event_reasons != nullptr)
    return call<unsigned long long>(api_.device_get_current_clocks_event_reasons, d);
  return call<unsigned long long>(api_.device_get_current_clocks_throttle_reasons, d);
}

Result<unsigned long long> Library::nvlink_error_counter(Device d, unsigned link, NvLinkErrorCounter counter) const {
  return call<unsigned long long>(api_.device_get_nvlink_error_counter, d, link, counter);
}

Result<unsigned long long> Library::field_value_uint(Device d, unsigned field_id) const {
  if (api_.device_get_field_values == nullptr) return {kErrorFunctionNotFound, 0};
  FieldValue v;
  v.field_id = field_id;
  const Return rc = api_.device_get_field_values(d, 1, &v);
  if (rc != kSuccess) return {rc, 0};
  if (v.nvml_return != kSuccess) return {v.nvml_return, 0};
  switch (v.value_type) {
    case 1: return {kSuccess, v.value.ui};
    case 2: return {kSuccess, v.value.ul};
    case 3: return {kSuccess, v.value.ull};
    case 4: return {v.value.sll < 0 ? kErrorUnknown : kSuccess, static_cast<unsigned long long>(v.value.sll)};
    case 5: return {v.value.si < 0 ? kErrorUnknown : kSuccess, static_cast<unsigned long long>(v.value.si)};
    case 6: return {kSuccess, v.value.us};
    default: return {kErrorUnknown, 0};  // a double, or a type this reader does not know
  }
}

}  // namespace gdsb::nvml
