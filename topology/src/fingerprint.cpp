// The node fingerprint: facts by PCI address (fingerprint.hpp says which).
#include "gdsb/topo/fingerprint.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <set>

#include "check_util.hpp"
#include "gdsb/nvml.hpp"
#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/nvlink.hpp"

namespace gdsb::topo {
namespace {

int gen_of(double gts) {
  const double rates[] = {2.5, 5, 8, 16, 32, 64};
  for (int i = 0; i < 6; ++i)
    if (std::abs(gts - rates[i]) < 0.3) return i + 1;
  return 0;
}

std::string iommu_words(const Machine& m) {
  if (m.iommu_units.empty()) return "off";
  std::set<std::string> types;
  for (const auto& [group, type] : m.iommu_group_types) types.insert(type);
  std::string out;
  for (const auto& t : types) out += (out.empty() ? "" : "+") + t;
  return out.empty() ? "on" : out;
}

// The kind a device is fingerprinted as, "" when it is not (management NICs, other devices).
std::string kind_of(const Device& d) {
  switch (d.role) {
    case Role::Gpu: return "GPU";
    case Role::Nvme: return "NVMe";
    case Role::Nic: return is_data_nic(d) ? "NIC" : "";
    case Role::RootPort:
    case Role::SwitchUpstream:
    case Role::SwitchDownstream: return "port";
    default: return "";
  }
}

std::string hex4(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "%04x", v);
  return b;
}

std::optional<uint64_t> bar1_bytes(const Snapshot& s, const Device& g) {
  const auto facts = s.gpu_facts.find(g.bdf);
  if (facts != s.gpu_facts.end() && facts->second.bar1_total_bytes) return facts->second.bar1_total_bytes;
  if (!g.bars_known) return std::nullopt;
  const Bar* b = second_memory_bar(g);
  return b ? std::optional<uint64_t>(b->size) : std::nullopt;
}

void device_facts(const Snapshot& s, const Device& d, const std::string& who,
                  const GpuSoftware& software, Fingerprint& f) {
  f[who] = "present";
  if (d.device != 0) f[who + " device"] = hex4(d.vendor) + ":" + hex4(d.device);  // 0: not recorded
  if (d.link) f[who + " link"] = d.link->cur_width > 0 ? link_words(d.link->cur_speed_gts, d.link->cur_width) : "down";
  if (d.acs) f[who + " ACS"] = acs_words(d.acs->ctl);
  if (d.role == Role::RootPort || d.role == Role::SwitchUpstream || d.role == Role::SwitchDownstream)
    return;  // a port's NUMA node and driver (pcieport) say nothing a GPU's would not
  if (d.numa_node && *d.numa_node >= 0) f[who + " NUMA node"] = std::to_string(*d.numa_node);
  if (!d.driver.empty()) f[who + " driver"] = d.driver;
  if (d.role != Role::Gpu) return;
  if (const auto bar1 = bar1_bytes(s, d)) f[who + " BAR1"] = std::to_string(*bar1 >> 20) + " MiB";
  const auto vbios = software.vbios.find(d.bdf);
  f[who + " VBIOS"] = vbios != software.vbios.end() ? vbios->second : kNotAvailable;
  if (const auto links = nvlinks_active(s, d.bdf)) f[who + " NVLink links"] = std::to_string(*links);
}

}  // namespace

GpuSoftware read_gpu_software(const std::string& nvml_lib) {
  GpuSoftware out;
  std::unique_ptr<nvml::Library> lib;
  try {
    lib = nvml::Library::open(nvml_lib);
  } catch (const std::exception&) {
    return out;  // no driver: the fingerprint leaves the driver out, the rest not available
  }
  if (const auto v = lib->driver_version(); v.ok()) out.driver = v.value;
  if (const auto v = lib->cuda_driver_version(); v.ok()) out.cuda_driver = nvml::cuda_version_text(v.value);
  const auto count = lib->device_count();
  for (unsigned i = 0; count.ok() && i < count.value; ++i) {
    const auto d = lib->device_by_index(i);
    if (!d.ok()) continue;
    const auto bus = lib->bus_id(d.value);
    const auto vbios = lib->vbios_version(d.value);
    if (bus.ok() && vbios.ok()) out.vbios[bus.value] = vbios.value;
  }
  return out;
}

std::string link_words(double speed_gts, int width) {
  const int gen = gen_of(speed_gts);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%gGT/s", speed_gts);
  return (gen > 0 ? "Gen" + std::to_string(gen) : std::string(rate)) + " x" + std::to_string(width);
}

std::string acs_words(uint16_t ctl) {
  static const std::pair<uint16_t, const char*> bits[] = {{0x01, "SV"}, {0x02, "TB"}, {0x04, "RR"},
                                                          {0x08, "CR"}, {0x10, "UF"}, {0x20, "EC"},
                                                          {0x40, "DT"}};
  std::string out;
  for (const auto& [bit, name] : bits)
    if ((ctl & bit) != 0) out += (out.empty() ? "" : "+") + std::string(name);
  return out.empty() ? "off" : out;
}

Fingerprint make_fingerprint(const Snapshot& s, const GpuSoftware& software) {
  Fingerprint f;
  for (const Device& d : s.devices) {
    const std::string kind = kind_of(d);
    if (!kind.empty()) device_facts(s, d, kind + " " + d.bdf, software, f);
  }
  const Machine& m = s.machine;
  if (m.iommu_known) f["IOMMU"] = iommu_words(m);
  if (m.proc_known) {
    f["kernel"] = m.kernel_release;
    f["kernel command line"] = m.cmdline;
    f["nvidia-fs"] = !m.nvidia_fs_loaded ? "not loaded" : m.nvidia_fs_version.empty() ? "loaded" : m.nvidia_fs_version;
  }
  if (!software.driver.empty()) f["NVIDIA driver"] = software.driver;
  f["CUDA driver"] = software.cuda_driver.empty() ? kNotAvailable : software.cuda_driver;
  return f;
}

std::string_view fact_subject(std::string_view key) {
  const auto space = key.find(' ');
  if (space == std::string_view::npos) return {};
  const std::string_view kind = key.substr(0, space);
  if (kind != "GPU" && kind != "NVMe" && kind != "NIC" && kind != "port") return {};
  const auto end = key.find(' ', space + 1);
  return end == std::string_view::npos ? key : key.substr(0, end);
}

bool is_presence(std::string_view key) {
  const auto subject = fact_subject(key);
  return !subject.empty() && subject.size() == key.size();
}

DeviceCounts count_devices(const Fingerprint& f) {
  DeviceCounts c;
  for (const auto& [k, v] : f) {
    if (!is_presence(k)) continue;
    if (k.rfind("GPU ", 0) == 0) ++c.gpus;
    if (k.rfind("NVMe ", 0) == 0) ++c.drives;
    if (k.rfind("NIC ", 0) == 0) ++c.data_nics;
  }
  return c;
}

std::string counts_words(const DeviceCounts& c) {
  auto n = [](int v, const char* one, const char* many) { return std::to_string(v) + " " + (v == 1 ? one : many); };
  return n(c.gpus, "GPU", "GPUs") + ", " + n(c.drives, "drive", "drives") + ", " +
         n(c.data_nics, "data NIC", "data NICs");
}

std::vector<HealthDifference> compare_with_expected(const Fingerprint& now, const Fingerprint& expected) {
  std::vector<HealthDifference> devices, facts;
  std::set<std::string_view> gone;  // subjects absent now: their other facts are not repeated
  for (const auto& [k, v] : expected)
    if (is_presence(k) && now.count(k) == 0) {
      devices.push_back({k, "absent", v, k + " absent, expected " + v});
      gone.insert(k);
    }
  for (const auto& [k, v] : now)
    if (is_presence(k) && expected.count(k) == 0) devices.push_back({k, v, "absent", k + " " + v + ", expected absent"});
  for (const auto& [k, want] : expected) {
    if (is_presence(k)) continue;
    const std::string_view subject = fact_subject(k);
    if (!subject.empty() && gone.count(subject)) continue;
    const auto it = now.find(k);
    const std::string have = it == now.end() ? "unknown" : it->second;
    if (have != want) facts.push_back({k, have, want, k + " " + have + ", expected " + want});
  }
  devices.insert(devices.end(), facts.begin(), facts.end());
  return devices;
}

}  // namespace gdsb::topo
