// hwloc: NUMA locality and OS device names for the live collector, and a complete
// (if coarser) collector for hwloc XML exports. I/O objects are dropped by hwloc by
// default, so every topology here is loaded with the I/O filter set to KEEP_ALL.
#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <cstdio>
#include <cstring>
#include <memory>

#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/nvlink.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "internal.hpp"

namespace gdsb::topo {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

TopologyPtr load(const char* xml, std::string& error) {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) {
    error = "hwloc_topology_init failed";
    return nullptr;
  }
  TopologyPtr topo(t);
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (xml && hwloc_topology_set_xml(t, xml) != 0) {
    error = std::string("hwloc cannot read XML ") + xml;
    return nullptr;
  }
  if (hwloc_topology_load(t) != 0) {
    error = "hwloc_topology_load failed";
    return nullptr;
  }
  return topo;
}

std::string bdf_of(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  char b[16];
  std::snprintf(b, sizeof b, "%04x:%02x:%02x.%u", domain & 0xffff, bus & 0xff, dev & 0x1f,
                func & 7);
  return b;
}

const hwloc_obj_attr_u::hwloc_pcidev_attr_s* pci_attr(hwloc_obj_t o) {
  if (o->type == HWLOC_OBJ_PCI_DEVICE) return &o->attr->pcidev;
  if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
    return &o->attr->bridge.upstream.pci;
  return nullptr;
}

std::optional<int> numa_of(hwloc_topology_t t, hwloc_obj_t o) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, o);
  if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1) return std::nullopt;
  return hwloc_bitmap_first(anc->nodeset);
}

std::optional<int> package_of(hwloc_topology_t t, hwloc_obj_t o) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, o);
  if (anc && anc->type != HWLOC_OBJ_PACKAGE)
    anc = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, anc);
  if (!anc) return std::nullopt;
  // P# as lstopo prints it; hwloc's own order where the OS gave no number.
  return static_cast<int>(anc->os_index != HWLOC_UNKNOWN_INDEX ? anc->os_index : anc->logical_index);
}

void add_os_devices(hwloc_obj_t pci, Device& d) {
  for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name) continue;
    auto type = c->attr->osdev.type;
    auto& list = type == HWLOC_OBJ_OSDEV_BLOCK ? d.block_devices : d.net_devices;
    if (type != HWLOC_OBJ_OSDEV_BLOCK && type != HWLOC_OBJ_OSDEV_NETWORK) continue;
    if (std::find(list.begin(), list.end(), c->name) == list.end()) list.emplace_back(c->name);
  }
  std::sort(d.block_devices.begin(), d.block_devices.end());
  std::sort(d.net_devices.begin(), d.net_devices.end());
}

bool is_nvswitch(hwloc_obj_t o) {
  // hwloc's NVML backend marks NVSwitches it found through NVLink (the DGX-2 XML has one
  // whose config space read as zeros: only the subtype says what it is).
  return o->subtype != nullptr && std::strcmp(o->subtype, "NVSwitch") == 0;
}

// The PCI device an object of the NVLinkBandwidth matrix stands for: a GPU's NVML OS
// device (nvml0) hangs below its PCI device; NVSwitches are PCI devices themselves.
std::string bdf_of_object(hwloc_obj_t o) {
  while (o && o->type == HWLOC_OBJ_OS_DEVICE) o = o->parent;
  if (!o || o->type != HWLOC_OBJ_PCI_DEVICE) return {};
  return bdf_of(o->attr->pcidev.domain, o->attr->pcidev.bus, o->attr->pcidev.dev,
                o->attr->pcidev.func);
}

// hwloc's GPUModel: on the PCI object itself, or on the GPU's OS devices (NVML, CUDA,
// OpenCL: the DGX-2 file has it on nvml<N> only). Kept as the GPU's product name, which
// display_name() prefers over the pci.ids name.
void gpu_names(hwloc_topology_t t, Snapshot& s) {
  auto keep = [&](hwloc_obj_t o) {
    const char* model = hwloc_obj_get_info_by_name(o, "GPUModel");
    const std::string bdf = bdf_of_object(o);
    const Device* d = s.find(bdf);
    if (!model || !*model || !d || d->role != Role::Gpu) return;
    GpuFacts& f = s.gpu_facts[bdf];
    if (!f.name.empty()) return;  // the PCI object's own, seen first
    f.source = "hwloc";
    f.name = model;
  };
  for (hwloc_obj_t o = hwloc_get_next_pcidev(t, nullptr); o; o = hwloc_get_next_pcidev(t, o))
    keep(o);
  for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o))
    keep(o);
}

// hwloc's NVML backend names each GPU's OS device nvml<N>, N being NVML's index, and gives
// it the GPU's UUID (NVIDIAUUID): dcgm-exporter's `gpu` and `UUID` labels for the GPU.
void gpu_nvml_ids(hwloc_topology_t t, Snapshot& s) {
  for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o)) {
    unsigned index = 0;
    char tail = 0;
    if (!o->name || std::sscanf(o->name, "nvml%u%c", &index, &tail) != 1) continue;
    const std::string bdf = bdf_of_object(o);
    const Device* d = s.find(bdf);
    if (!d || d->role != Role::Gpu) continue;
    GpuFacts& f = s.gpu_facts[bdf];
    if (f.source.empty()) f.source = "hwloc";
    f.nvml_index = static_cast<int>(index);
    if (const char* uuid = hwloc_obj_get_info_by_name(o, "NVIDIAUUID"); uuid && *uuid) f.uuid = uuid;
  }
}

// pci_link_speed: hwloc computes it from the link status (LnkSta: current speed and width)
// as the data rate after line encoding, in GB/s per direction (hwloc's
// hwloc_pcidisc_find_linkspeed: lanes x GT/s x 8b/10b or 128b/130b / 8). 0: not recorded.
std::optional<double> link_gb_s_of(float linkspeed) {
  if (!(linkspeed > 0)) return std::nullopt;
  return static_cast<double>(linkspeed);
}

// hwloc 2.x stores NVLink as a heterogeneous distance matrix named NVLinkBandwidth (GPU OS
// devices and NVSwitch PCI devices; unidirectional MB/s, the sum over the links of each
// pair; the diagonal is 0 in older files and an artificial 1000000 in newer ones).
void nvlink_bandwidth(hwloc_topology_t t, Snapshot& s) {
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &dist, 0) != 0 || nr == 0) {
    s.notes.push_back("hwloc XML has no NVLinkBandwidth distances: NVLink unknown");
    return;
  }
  const unsigned n = dist->nbobjs;
  std::vector<std::string> bdf(n);
  for (unsigned i = 0; i < n; ++i) bdf[i] = bdf_of_object(dist->objs[i]);
  for (unsigned i = 0; i < n; ++i) {
    const Device* d = s.find(bdf[i]);
    if (!d || d->role != Role::Gpu) continue;
    std::vector<NvLink> links;
    uint64_t total = 0;
    for (unsigned j = 0; j < n; ++j) {
      const uint64_t bw = dist->values[static_cast<size_t>(i) * n + j];
      if (j == i || bw == 0) continue;
      NvLink l;
      l.remote = bdf[j];
      const Device* r = s.find(bdf[j]);
      // A CPU package (IBM POWER's NVLink to the host) has no BDF.
      const bool cpu = dist->objs[j]->type == HWLOC_OBJ_PACKAGE;
      l.remote_type = cpu ? "cpu"
                      : !r ? "unknown"
                      : r->role == Role::NvSwitch ? "nvswitch"
                      : r->role == Role::Gpu      ? "gpu"
                                                  : "unknown";
      l.bandwidth_mbps = bw;
      total += bw;
      links.push_back(std::move(l));
    }
    const auto rate = hwloc_link_rate_mbps(total);
    for (NvLink& l : links) l.count = rate ? static_cast<int>(*l.bandwidth_mbps / *rate) : 0;
    if (!rate && total > 0)
      s.notes.push_back("NVLink bandwidth of " + bdf[i] + " (" + std::to_string(total) +
                        " MB/s) fits no known per-link rate: its link count is unknown");
    GpuFacts& f = s.gpu_facts[bdf[i]];
    if (f.source.empty()) f.source = "hwloc";
    f.nvlinks = std::move(links);
  }
  hwloc_distances_release(t, dist);
}

}  // namespace

std::string enrich_with_hwloc(Snapshot& s) {
  std::string error;
  auto topo = load(nullptr, error);
  if (!topo) return "hwloc unavailable (" + error + "): NUMA locality from sysfs only";
  hwloc_topology_t t = topo.get();
  s.machine.numa_nodes =
      std::max(s.machine.numa_nodes, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE));
  for (auto& d : s.devices) {
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    if (std::sscanf(d.bdf.c_str(), "%x:%x:%x.%u", &dom, &bus, &dev, &fn) != 4) continue;
    hwloc_obj_t o = hwloc_get_pcidev_by_busid(t, dom, bus, dev, fn);
    if (!o) continue;
    // sysfs says -1 on single-node machines and some VMs; hwloc's locality is the fallback.
    if (!d.numa_node && s.machine.numa_nodes > 1) d.numa_node = numa_of(t, o);
    if (!d.package) d.package = package_of(t, o);
    add_os_devices(o, d);
  }
  return {};
}

Snapshot collect_hwloc_xml(const std::filesystem::path& file, const CollectOptions& opt) {
  std::string error;
  auto topo = load(file.c_str(), error);
  if (!topo)
    throw RuntimeError(error + " (" + file.string() + "): expected `lstopo --of xml` output");
  hwloc_topology_t t = topo.get();
  Snapshot s;
  s.kind = SourceKind::HwlocXml;
  s.path = file.string();
  s.machine.numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  for (hwloc_obj_t o = hwloc_get_next_pcidev(t, nullptr); o; o = hwloc_get_next_pcidev(t, o)) {
    Device d;
    d.bdf = bdf_of(o->attr->pcidev.domain, o->attr->pcidev.bus, o->attr->pcidev.dev,
                   o->attr->pcidev.func);
    d.vendor = o->attr->pcidev.vendor_id;
    d.device = o->attr->pcidev.device_id;
    d.class_code = static_cast<uint32_t>(o->attr->pcidev.class_id) << 8;
    d.numa_node = numa_of(t, o);
    d.package = package_of(t, o);
    d.acs_note = "hwloc XML carries no config space";
    add_os_devices(o, d);
    d.recorded_link_gb_s = link_gb_s_of(o->attr->pcidev.linkspeed);
    if (const char* n = hwloc_obj_get_info_by_name(o, "PCIDevice")) d.name = n;
    if (is_nvswitch(o)) d.role = Role::NvSwitch;  // kept over classify_role below
    s.devices.push_back(std::move(d));
  }
  for (hwloc_obj_t o = hwloc_get_next_bridge(t, nullptr); o; o = hwloc_get_next_bridge(t, o)) {
    const auto* pa = pci_attr(o);
    if (!pa) continue;
    Device d;
    d.bdf = bdf_of(pa->domain, pa->bus, pa->dev, pa->func);
    d.vendor = pa->vendor_id;
    d.device = pa->device_id;
    d.class_code = static_cast<uint32_t>(pa->class_id) << 8;
    d.recorded_link_gb_s = link_gb_s_of(pa->linkspeed);
    if (const char* n = hwloc_obj_get_info_by_name(o, "PCIDevice")) d.name = n;
    d.secondary_bus = o->attr->bridge.downstream.pci.secondary_bus;
    d.subordinate_bus = o->attr->bridge.downstream.pci.subordinate_bus;
    d.numa_node = numa_of(t, o);
    d.package = package_of(t, o);
    d.acs_note = "hwloc XML carries no config space";
    s.devices.push_back(std::move(d));
  }
  std::stable_sort(s.devices.begin(), s.devices.end(),
                   [](const Device& a, const Device& b) { return a.bdf < b.bdf; });
  // hwloc keeps no places in the file: each address's pci_busid="..." lines, in file order.
  std::map<std::string, std::vector<int>> busid_lines;
  if (auto text = detail::read_text(file)) {
    int line_no = 1;
    constexpr std::string_view kKey = "pci_busid=\"";
    for (size_t pos = 0, counted = 0; (pos = text->find(kKey, pos)) != std::string::npos; pos += kKey.size()) {
      line_no += static_cast<int>(std::count(text->begin() + static_cast<std::ptrdiff_t>(counted),
                                             text->begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
      counted = pos;
      std::string bdf = text->substr(pos + kKey.size(), 12);
      for (auto& c : bdf) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      busid_lines[bdf].push_back(line_no);
    }
  }
  detail::set_origin_lines(s, busid_lines);
  rebuild_tree_from_bus_numbers(s);
  for (auto& d : s.devices) d.port_type = -1;  // hwloc has no PCIe capability
  infer_port_types(s);
  check_consistency(s, true);
  for (auto& d : s.devices)
    if (d.role != Role::NvSwitch) d.role = classify_role(d);
  gpu_names(t, s);
  gpu_nvml_ids(t, s);
  nvlink_bandwidth(t, s);
  // Names hwloc did not record (files exported without PCIVendor/PCIDevice, as the DGX-2
  // one) come from pci.ids, as for every other input.
  if (opt.lookup_names) detail::lookup_names(s, opt.pci_ids_path);
  const bool any_speed = std::any_of(s.devices.begin(), s.devices.end(),
                                     [](const Device& d) { return d.recorded_link_gb_s; });
  s.notes.push_back(any_speed ? "hwloc XML records each link's bandwidth (pci_link_speed, GB/s "
                                "per direction) but no link width/speed, ACS or host facts"
                              : "hwloc XML has no link width/speed, ACS or host facts");
  return s;
}

}  // namespace gdsb::topo
