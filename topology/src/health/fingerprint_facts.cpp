// The node fingerprint's facts: from a snapshot and one NVML session (fingerprint.hpp), and
// their words for output.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "check_util.hpp"
#include "gdsb/error.hpp"
#include "gdsb/nvml.hpp"
#include "gdsb/topo/hw_faults_collect.hpp"
#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/fingerprint.hpp"
#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/nvlink.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {
namespace {

std::string iommu_words(const Machine& m) {
  if (m.iommu_units.empty()) return "off";
  std::set<std::string> types;
  for (const auto& [group, type] : m.iommu_group_types) types.insert(type);
  std::string out;
  for (const auto& t : types) {
    if (!out.empty()) out += '+';
    out += t;
  }
  return out.empty() ? "on" : out;
}

// The kind a device is fingerprinted as, nullopt when it is not (management NICs, others).
std::optional<FactKind> kind_of(const Device& d) {
  switch (d.role) {
    case Role::Gpu: return FactKind::Gpu;
    case Role::Nvme: return FactKind::Nvme;
    case Role::Nic: return is_data_nic(d) ? std::optional(FactKind::Nic) : std::nullopt;
    case Role::RootPort:
    case Role::SwitchUpstream:
    case Role::SwitchDownstream: return FactKind::Port;
    default: return std::nullopt;
  }
}

std::optional<uint64_t> bar1_bytes(const Snapshot& s, const Device& g, const NvmlGpu* nv) {
  if (nv && nv->bar1_bytes) return nv->bar1_bytes;
  const auto facts = s.gpu_facts.find(g.bdf);
  if (facts != s.gpu_facts.end() && facts->second.bar1_total_bytes) return facts->second.bar1_total_bytes;
  if (!g.bars_known) return std::nullopt;
  const Bar* b = second_memory_bar(g);
  return b ? std::optional<uint64_t>(b->size) : std::nullopt;
}

// The link as the path model judges it (path_model.cpp link_hop): a GPU at the speed it and
// its slot can both reach, never its idle speed; other devices at their current speed. Root
// and downstream ports are the far end of the link of the device below them: no fact of
// their own (their LnkSta follows an idle GPU down to Gen1).
std::optional<LinkFact> link_fact(const Snapshot& s, const Device& d) {
  if (!d.link || d.role == Role::RootPort || d.role == Role::SwitchDownstream) return std::nullopt;
  LinkFact l;
  l.width = d.link->cur_width;
  l.max_width = d.link->max_width;
  if (l.width <= 0) return LinkFact{};  // down
  const std::optional<double> speed =
      d.role == Role::Gpu ? capable_link_gts(s, d) : std::optional<double>(d.link->cur_speed_gts);
  if (speed && *speed > 0) l.gts = *speed;
  return l;
}

// A data NIC's RDMA ports, where the input read /sys/class/infiniband: per port its link layer,
// state and rate, each only where the input holds it.
void rdma_port_facts(const Snapshot& s, const Device& nic, FactMap& f) {
  const auto bdf = PciAddress::parse(nic.bdf);
  if (!bdf || !s.machine.network.rdma_known) return;
  for (const RdmaDevice* r : rdma_devices_of(s.machine.network, nic.bdf)) {
    for (const RdmaPort& p : r->ports) {
      auto key = [&](Fact fact) { return FactKey{FactKind::Nic, *bdf, fact, p.port, r->name}; };
      if (!p.link_layer.empty()) f[key(Fact::RdmaLinkLayer)] = p.link_layer;
      if (!p.state.empty()) f[key(Fact::RdmaState)] = p.state;
      if (p.rate_gbps) f[key(Fact::RdmaRate)] = Gbps{*p.rate_gbps};
    }
  }
}

void device_facts(const Snapshot& s, const Device& d, FactKind kind, const GpuSoftware& software, FactMap& f) {
  const auto bdf = PciAddress::parse(d.bdf);
  if (!bdf) return;  // not a PCI address a fact can be keyed by (never from a collector)
  auto key = [&](Fact fact) { return FactKey{kind, *bdf, fact}; };
  f[key(Fact::Present)] = Presence{};
  if (d.device != 0) f[key(Fact::Device)] = PciIds{d.vendor, d.device};  // 0: not recorded
  if (const auto l = link_fact(s, d)) f[key(Fact::Link)] = *l;
  if (d.acs) f[key(Fact::Acs)] = AcsControl{d.acs->ctl};
  if (kind == FactKind::Port) return;  // a port's NUMA node and driver (pcieport) say nothing
  if (d.numa_node && *d.numa_node >= 0) f[key(Fact::NumaNode)] = int64_t{*d.numa_node};
  if (!d.driver.empty()) f[key(Fact::Driver)] = d.driver;
  if (kind == FactKind::Nic) rdma_port_facts(s, d, f);
  if (kind != FactKind::Gpu) return;
  const auto nv_it = software.gpus.find(d.bdf);
  const NvmlGpu* nv = nv_it == software.gpus.end() ? nullptr : &nv_it->second;
  if (const auto bar1 = bar1_bytes(s, d, nv)) f[key(Fact::Bar1)] = Mebibytes{*bar1 >> 20};
  if (nv && nv->nvlinks) f[key(Fact::NvlinkLinks)] = int64_t{*nv->nvlinks};
  else if (const auto links = nvlinks_active(s, d.bdf)) f[key(Fact::NvlinkLinks)] = int64_t{*links};
}

// A failing GPU, not a missing feature: the check fails on it.
bool is_fault(nvml::Return rc) {
  return rc != nvml::kSuccess && rc != nvml::kErrorNotSupported && rc != nvml::kErrorFunctionNotFound &&
         rc != nvml::kErrorInvalidArgument && rc != nvml::kErrorNoPermission && rc != nvml::kErrorNotFound &&
         rc != nvml::kErrorInsufficientSize;
}

}  // namespace

std::optional<PciAddress> PciAddress::parse(std::string_view text) {
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  const std::string t(text);
  if (t.size() != 12 || std::sscanf(t.c_str(), "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4 ||
      dev > 0x1f || fn > 7)
    return std::nullopt;
  return PciAddress{dom, static_cast<uint8_t>(bus), static_cast<uint8_t>(dev), static_cast<uint8_t>(fn), true};
}

std::string PciAddress::text() const {
  if (!set) return {};
  char b[16];
  std::snprintf(b, sizeof b, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return b;
}

std::string kind_text(FactKind k) {
  switch (k) {
    case FactKind::Gpu: return "GPU";
    case FactKind::Nvme: return "NVMe";
    case FactKind::Nic: return "NIC";
    case FactKind::Port: return "port";
    case FactKind::Node: break;
  }
  return "";
}

std::string fact_text(Fact f) {
  switch (f) {
    case Fact::Present: return "present";
    case Fact::Device: return "device";
    case Fact::Link: return "link";
    case Fact::Acs: return "ACS";
    case Fact::NumaNode: return "NUMA node";
    case Fact::Driver: return "driver";
    case Fact::Bar1: return "BAR1";
    case Fact::Vbios: return "VBIOS";
    case Fact::NvlinkLinks: return "NVLink links";
    case Fact::Iommu: return "IOMMU";
    case Fact::Kernel: return "kernel";
    case Fact::KernelCommandLine: return "kernel command line";
    case Fact::NvidiaFs: return "nvidia-fs";
    case Fact::NvidiaDriver: return "NVIDIA driver";
    case Fact::CudaDriver: return "CUDA driver";
    case Fact::RdmaLinkLayer: return "link layer";
    case Fact::RdmaState: return "state";
    case Fact::RdmaRate: return "rate";
  }
  return "";
}

std::string key_text(const FactKey& k) {
  if (k.kind == FactKind::Node) return fact_text(k.fact);
  std::string subject = kind_text(k.kind) + " " + k.bdf.text();
  if (k.port > 0) subject += (k.rdma_dev.empty() ? "" : " (" + k.rdma_dev + ")") + " port " + std::to_string(k.port);
  return k.fact == Fact::Present ? subject : subject + " " + fact_text(k.fact);
}

std::string link_words(double speed_gts, int width) { return link_text(speed_gts, width); }

std::string link_words(const LinkFact& l) {
  if (l.width <= 0) return "down";
  std::string out = link_text(l.gts.value_or(0), l.width);
  if (l.max_width > l.width) out += " of x" + std::to_string(l.max_width);
  return out;
}

std::string acs_words(uint16_t ctl) {
  static const std::pair<uint16_t, const char*> bits[] = {{kAcsSv, "SV"}, {kAcsTb, "TB"}, {kAcsRr, "RR"},
                                                          {kAcsCr, "CR"}, {kAcsUf, "UF"}, {kAcsEc, "EC"},
                                                          {kAcsDt, "DT"}};
  std::string out;
  for (const auto& [bit, name] : bits) {
    if ((ctl & bit) == 0) continue;
    if (!out.empty()) out += '+';
    out += name;
  }
  return out.empty() ? "off" : out;
}

std::string value_text(const FactValue& v) {
  struct Words {
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(int64_t n) const { return std::to_string(n); }
    std::string operator()(const Presence&) const { return "present"; }
    std::string operator()(const PciIds& p) const { return hex4(p.vendor) + ":" + hex4(p.device); }
    std::string operator()(const LinkFact& l) const { return link_words(l); }
    std::string operator()(const AcsControl& a) const { return acs_words(a.ctl); }
    std::string operator()(const Mebibytes& m) const { return std::to_string(m.mib) + " MiB"; }
    std::string operator()(const Gbps& g) const {
      char b[32];
      std::snprintf(b, sizeof b, "%g Gb/s", g.gbps);
      return b;
    }
  };
  return std::visit(Words{}, v);
}

GpuSoftware read_gpu_software(const std::string& nvml_lib, const StepNote& step) {
  GpuSoftware out;
  auto note = [&](const std::string& what) {
    if (step) step(what);
  };
  std::unique_ptr<nvml::Library> lib;
  note("NVML: loading and initialising " + (nvml_lib.empty() ? std::string("libnvidia-ml.so.1") : nvml_lib));
  try {
    lib = nvml::Library::open(nvml_lib);
  } catch (const std::exception& e) {
    out.unavailable = Unreadable{e.what(), false};  // no driver: said, never guessed
    return out;
  }
  note("NVML: system versions");
  if (const auto v = lib->driver_version(); v.ok()) out.driver = v.value;
  else if (is_fault(v.rc)) throw NvmlFault("NVML: " + lib->error_string(v.rc));
  if (const auto v = lib->cuda_driver_version(); v.ok()) out.cuda_driver = nvml::cuda_version_text(v.value);
  const auto count = lib->device_count();
  if (!count.ok() && is_fault(count.rc)) throw NvmlFault("NVML: " + lib->error_string(count.rc));
  for (unsigned i = 0; count.ok() && i < count.value; ++i) {
    const std::string index = "GPU index " + std::to_string(i) + " NVML";
    note(index);
    const auto d = lib->device_by_index(i);
    if (!d.ok()) {
      if (is_fault(d.rc)) throw NvmlFault(index + ": " + lib->error_string(d.rc));
      continue;
    }
    const auto bus = lib->bus_id(d.value);
    if (!bus.ok()) {
      if (is_fault(bus.rc)) throw NvmlFault(index + ": " + lib->error_string(bus.rc));
      continue;
    }
    const std::string who = "GPU " + bus.value + " NVML";
    note(who);
    auto check = [&](nvml::Return rc) {
      if (is_fault(rc)) throw NvmlFault(who + ": " + lib->error_string(rc));
    };
    NvmlGpu g;
    g.index = static_cast<int>(i);
    const auto uuid = lib->uuid(d.value);
    check(uuid.rc);
    if (uuid.ok()) g.uuid = uuid.value;
    const auto vbios = lib->vbios_version(d.value);
    check(vbios.rc);
    if (vbios.ok()) g.vbios = vbios.value;
    const auto bar1 = lib->bar1_memory_info(d.value);
    check(bar1.rc);
    if (bar1.ok()) g.bar1_bytes = bar1.value.bar1_total;
    // Link states only: the NVLink remote walk and the pair matrix are the full run's.
    int active = 0;
    bool answered = false, absent = false;
    for (unsigned link = 0; link < nvml::kNvLinkMaxLinks && !absent; ++link) {
      const auto a = lib->nvlink_active(d.value, link);
      if (a.rc == nvml::kErrorFunctionNotFound) absent = true;
      else check(a.rc);
      answered = answered || a.ok() || a.rc == nvml::kErrorNotSupported || a.rc == nvml::kErrorInvalidArgument;
      if (a.ok() && a.value) ++active;
    }
    if (answered && !absent) g.nvlinks = active;
    note(who + " error counters");
    out.errors[bus.value] = read_gpu_errors(*lib, d.value, check);
    out.gpus[bus.value] = std::move(g);
  }
  return out;
}

Fingerprint make_fingerprint(const Snapshot& s, const GpuSoftware& software) {
  Fingerprint out;
  FactMap& f = out.facts;
  for (const Device& d : s.devices)
    if (const auto kind = kind_of(d)) device_facts(s, d, *kind, software, f);
  const Machine& m = s.machine;
  if (m.iommu_known) f[{FactKind::Node, {}, Fact::Iommu}] = iommu_words(m);
  if (m.proc_known) {
    f[{FactKind::Node, {}, Fact::Kernel}] = m.kernel_release;
    f[{FactKind::Node, {}, Fact::KernelCommandLine}] = m.cmdline;
    f[{FactKind::Node, {}, Fact::NvidiaFs}] =
        !m.nvidia_fs_loaded ? "not loaded" : m.nvidia_fs_version.empty() ? "loaded" : m.nvidia_fs_version;
  }
  // NVML facts: present when NVML said them, absent otherwise (never "not available"); why
  // they are absent is kept for "cannot read X now (why)".
  auto nvml_fact = [&](const FactKey& k, const std::string& value, const char* why) {
    if (!value.empty()) f[k] = value;
    else out.unreadable[k] = software.unavailable ? *software.unavailable : Unreadable{why, false};
  };
  nvml_fact({FactKind::Node, {}, Fact::NvidiaDriver}, software.driver, "NVML does not say");
  nvml_fact({FactKind::Node, {}, Fact::CudaDriver}, software.cuda_driver, "NVML does not say");
  for (const Device* g : s.with_role(Role::Gpu)) {
    const auto bdf = PciAddress::parse(g->bdf);
    if (!bdf) continue;
    const auto nv = software.gpus.find(g->bdf);
    if (nv == software.gpus.end()) nvml_fact({FactKind::Gpu, *bdf, Fact::Vbios}, "", "NVML does not list this GPU");
    else nvml_fact({FactKind::Gpu, *bdf, Fact::Vbios}, nv->second.vbios, "NVML does not say");
  }
  return out;
}

DeviceCounts count_devices(const FactMap& f) {
  DeviceCounts c;
  for (const auto& [k, v] : f) {
    if (!k.is_presence()) continue;
    if (k.kind == FactKind::Gpu) ++c.gpus;
    if (k.kind == FactKind::Nvme) ++c.drives;
    if (k.kind == FactKind::Nic) ++c.data_nics;
  }
  return c;
}

std::string counts_words(const DeviceCounts& c) {
  auto n = [](int v, const char* one, const char* many) { return std::to_string(v) + " " + (v == 1 ? one : many); };
  return n(c.gpus, "GPU", "GPUs") + ", " + n(c.drives, "drive", "drives") + ", " +
         n(c.data_nics, "data NIC", "data NICs");
}

}  // namespace gdsb::topo
