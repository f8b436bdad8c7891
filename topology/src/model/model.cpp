#include "gdsb/topo/model.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <utility>

#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {
namespace {

constexpr std::array<std::pair<Role, std::string_view>, 11> kRoles{
    {{Role::Gpu, "gpu"},
     {Role::Nvme, "nvme"},
     {Role::Nic, "nic"},
     {Role::RootPort, "root_port"},
     {Role::SwitchUpstream, "switch_upstream"},
     {Role::SwitchDownstream, "switch_downstream"},
     {Role::Bridge, "bridge"},
     {Role::HostBridge, "host_bridge"},
     {Role::Other, "other"},
     {Role::Storage, "storage"},
     {Role::NvSwitch, "nvswitch"}}};

constexpr std::array<std::pair<SourceKind, std::string_view>, 6> kKinds{
    {{SourceKind::Live, "live"},
     {SourceKind::Snapshot, "snapshot"},
     {SourceKind::SysfsRoot, "sysfs-root"},
     {SourceKind::PciDump, "pci-dump"},
     {SourceKind::LspciText, "lspci-text"},
     {SourceKind::HwlocXml, "hwloc-xml"}}};

int parse_hex(std::string_view s) {
  int v = -1;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() ? v : -1;
}

}  // namespace

std::string_view role_name(Role r) {
  for (const auto& [role, name] : kRoles)
    if (role == r) return name;
  return "other";
}

std::optional<Role> role_from_name(std::string_view s) {
  for (const auto& [role, name] : kRoles)
    if (name == s) return role;
  return std::nullopt;
}

std::string_view source_kind_name(SourceKind k) {
  for (const auto& [kind, name] : kKinds)
    if (kind == k) return name;
  return "live";
}

std::optional<SourceKind> source_kind_from_name(std::string_view s) {
  for (const auto& [kind, name] : kKinds)
    if (name == s) return kind;
  return std::nullopt;
}

int Device::bus() const {
  // "DDDD:BB:dd.f"
  return bdf.size() >= 7 ? parse_hex(std::string_view(bdf).substr(5, 2)) : -1;
}

std::vector<const RdmaDevice*> rdma_devices_of(const NetworkFacts& n, std::string_view bdf) {
  std::vector<const RdmaDevice*> out;
  for (const RdmaDevice& r : n.rdma_devices)
    if (r.bdf == bdf) out.push_back(&r);
  return out;
}

std::vector<const NetInterface*> interfaces_of(const NetworkFacts& n, std::string_view bdf) {
  std::vector<const NetInterface*> out;
  for (const NetInterface& i : n.interfaces)
    if (i.bdf == bdf) out.push_back(&i);
  return out;
}

const Device* Snapshot::find(std::string_view bdf) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), bdf,
                             [](const Device& d, std::string_view b) { return d.bdf < b; });
  return it != devices.end() && it->bdf == bdf ? &*it : nullptr;
}

std::vector<const Device*> Snapshot::with_role(Role r) const {
  std::vector<const Device*> out;
  for (const auto& d : devices)
    if (d.role == r) out.push_back(&d);
  return out;
}

void apply_gpu_facts(Snapshot& s, const GpuFactsProvider& provider) {
  for (const auto& d : s.devices)
    if (d.role == Role::Gpu)
      if (auto f = provider.facts_for(d)) s.gpu_facts[d.bdf] = *f;
  s.gpu_pairs = provider.pair_facts(s.with_role(Role::Gpu));
}

Role classify_role(const Device& d) {
  uint16_t cls = d.class_id();
  // GPUs by class and vendor, never by device ID: every NVIDIA 3D or VGA controller.
  if (d.vendor == 0x10de && (cls == 0x0302 || cls == 0x0300)) return Role::Gpu;
  // NVSwitch: NVIDIA's "bridge/other" function (DGX-2 hwloc XML 10de:1ac2 class 0680, HGX
  // H100 lspci "Bridge [0680]: NVIDIA"), never a PCI-to-PCI bridge (0604).
  if (d.vendor == 0x10de && cls == 0x0680) return Role::NvSwitch;
  if (cls == 0x0108) return virtual_device_reason(d).empty() ? Role::Nvme : Role::Storage;
  if (d.base_class() == 0x01) return Role::Storage;
  // InfiniBand is 0207 (network) or 0c06 (serial bus: hwloc and older pci.ids classes).
  if (cls == 0x0200 || cls == 0x0207 || cls == 0x0c06) return Role::Nic;
  switch (d.port_type) {
    case kPortRootPort:
      return Role::RootPort;
    case kPortUpstream:
      return Role::SwitchUpstream;
    case kPortDownstream:
      return Role::SwitchDownstream;
    default:
      break;
  }
  if (cls == 0x0600) return Role::HostBridge;
  if (cls == 0x0604 || cls == 0x0609) return Role::Bridge;
  return Role::Other;
}

std::string display_name(const Snapshot& s, const Device& d) {
  const auto f = s.gpu_facts.find(d.bdf);
  if (f != s.gpu_facts.end() && !f->second.name.empty()) return f->second.name;
  if (!d.name.empty()) return d.name;
  return "[" + pci_ids_text(d) + "]";
}

std::string pci_ids_text(const Device& d) {
  if (d.vendor == 0) return "unknown";
  char ids[24];
  if (d.device == 0)
    std::snprintf(ids, sizeof ids, "%04x:unknown", d.vendor);
  else
    std::snprintf(ids, sizeof ids, "%04x:%04x", d.vendor, d.device);
  return ids;
}

std::string virtual_device_reason(const Device& d) {
  struct Known {
    uint16_t vendor, device;  // device 0: any device of the vendor
    std::string_view what;
  };
  static constexpr std::array<Known, 14> kKnown{{
      {0x1af4, 0x1001, "virtio-blk disk"},
      {0x1af4, 0x1042, "virtio-blk disk"},
      {0x1af4, 0x1004, "virtio-scsi controller"},
      {0x1af4, 0x1048, "virtio-scsi controller"},
      {0x1af4, 0x1000, "virtio-net NIC"},
      {0x1af4, 0x1041, "virtio-net NIC"},
      {0x1af4, 0, "virtio device"},
      {0x1b36, 0x0010, "QEMU emulated NVMe controller"},
      {0x15ad, 0x07f0, "VMware virtual NVMe controller"},
      {0x15ad, 0x07c0, "VMware PVSCSI controller"},
      {0x15ad, 0x07e0, "VMware virtual SATA controller"},
      {0x15ad, 0x07b0, "VMware VMXNET3 NIC"},
      {0x1d0f, 0x8061, "Amazon EBS volume (NVMe interface to network block storage)"},
      {0x1ae0, 0x001f, "Google Compute Engine persistent disk (NVMe interface)"},
  }};
  for (const auto& k : kKnown)
    if (d.vendor == k.vendor && (k.device == 0 || d.device == k.device)) {
      return std::string(k.what) + " (" + pci_ids_text(d) +
             "): the hypervisor (or the cloud's storage service) moves its data, so there is "
             "no PCIe peer-to-peer path to a GPU (cuFile runs in compat mode)";
    }
  return "";
}

void finalize(Snapshot& s) {
  for (auto& d : s.devices) {
    decode_config(d);
    d.role = classify_role(d);
  }
  std::stable_sort(s.devices.begin(), s.devices.end(),
                   [](const Device& a, const Device& b) { return a.bdf < b.bdf; });
}

void rebuild_tree_from_bus_numbers(Snapshot& s) {
  // A device's parent is the bridge of its domain whose secondary bus is its bus. A bus
  // that is no bridge's secondary bus is a root bus; its number names the root complex.
  for (auto& d : s.devices) {
    d.parent.clear();
    std::string domain = d.bdf.substr(0, 4);
    int bus = d.bus();
    for (const auto& b : s.devices)
      if (&b != &d && b.secondary_bus && *b.secondary_bus == bus && b.bdf.substr(0, 4) == domain &&
          *b.secondary_bus != b.bus()) {
        d.parent = b.bdf;
        break;
      }
  }
  for (auto& d : s.devices) {
    const Device* top = &d;
    for (int guard = 0; guard < 64 && !top->parent.empty(); ++guard) {
      const Device* p = s.find(top->parent);
      if (!p) break;
      top = p;
    }
    d.root_complex = top->bdf.substr(0, 7);
  }
}

void infer_port_types(Snapshot& s) {
  // Without the PCIe capability (non-root readers see 64 bytes, hwloc XML has none) a
  // bridge's port type follows from its place in the tree: a bridge on a root bus is a
  // root port, a bridge below a root or downstream port is a switch upstream port, a
  // bridge below an upstream port is a downstream port. Parents come first in BDF order
  // only by accident, so iterate until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& d : s.devices) {
      // Where the capability list was readable (256 or more config bytes, lspci text run
      // as root), a bridge without the PCIe capability is a conventional PCI (PCI-X,
      // CardBus) bridge, no port: only unreadable port types are inferred.
      if (d.port_type >= 0 || !d.secondary_bus || d.ext_config_readable) continue;
      const Device* p = d.parent.empty() ? nullptr : s.find(d.parent);
      int type = -1;
      if (!p)
        type = 4;
      else if (p->port_type == 4 || p->port_type == 6)
        type = 5;
      else if (p->port_type == 5)
        type = 6;
      if (type < 0) continue;
      d.port_type = type;
      d.role = classify_role(d);
      changed = true;
    }
  }
}

}  // namespace gdsb::topo
