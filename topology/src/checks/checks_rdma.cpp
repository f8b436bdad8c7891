// GPUDirect RDMA stack (issue 25): what gdscheck -p prints in its DRIVER CONFIGURATION section,
// each a fact with its evidence: GPU memory registration for RDMA NICs (nvidia-peermem or
// DMA-BUF), cuFile's user-space RDMA library and rdma_dev_addr_list, the RDMA ports' states,
// and the network file-system drivers cuFile can use here. A verdict only where a mount reads
// its data over RDMA; docs/gdsb-topo.md ("GPUDirect RDMA stack") cites the documents.
#include <algorithm>
#include <sstream>

#include "check_util.hpp"
#include "gdsb/gds_storage.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "gdsb/topo/p2pdma.hpp"
#include "network_carriers.hpp"

namespace gdsb::topo {
namespace {

constexpr const char* kId = "rdma-stack";
constexpr const char* kTitle = "GPUDirect RDMA stack";
// GPU Operator, "Common Prerequisites": DMA-BUF needs Linux 5.12 or newer and the open GPU
// kernel module; nvidia-peermem has no kernel minimum.
constexpr std::pair<int, int> kDmaBufKernel{5, 12};

bool has_module(const NetworkFacts& n, std::string_view name) {
  return std::find(n.modules.begin(), n.modules.end(), name) != n.modules.end();
}

// The mounts whose data GDS would read over RDMA, by the one transport decision of the
// network-storage reading (mount_transport.hpp): NFS over rdma or rdma6, Lustre over o2ib,
// NVMe-oF over RDMA. `unsure`: those whose transport the node does not show (WekaFS, IBM
// Storage Scale, BeeGFS on a node with RDMA devices) and where GDS may engage; no verdict
// rests on them.
struct RdmaMounts {
  std::vector<const Mount*> rdma, unsure;
};

RdmaMounts rdma_mounts(const CheckContext& ctx) {
  RdmaMounts out;
  for (const NetworkMount& nm : network_mounts(ctx.snapshot, &ctx.model.view())) {
    if (nm.transport.rdma())
      out.rdma.push_back(nm.mount);
    else if (nm.transport.kind == TransportKind::Unknown && nm.engage != Engage::No)
      out.unsure.push_back(nm.mount);
  }
  return out;
}

std::string mount_list(const std::vector<const Mount*>& ms) {
  std::string out;
  for (const Mount* m : ms)
    out += (out.empty() ? "" : ", ") + m->target + " " + m->fstype + " (" + m->source + ")";
  return out;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// DMA-BUF for GPUDirect RDMA: usable, not usable (why), or unknown (what is not recorded).
struct DmaBuf {
  enum State { Usable, Unusable, Unknown } state = Unknown;
  std::vector<std::string> evidence;
  std::string why_not;  // Unusable: the requirement this node misses; Unknown: what is unread
};

DmaBuf dma_buf(const Machine& m) {
  DmaBuf d;
  const auto kv = kernel_major_minor(m.kernel_release);
  const std::string need =
      std::to_string(kDmaBufKernel.first) + "." + std::to_string(kDmaBufKernel.second);
  std::vector<std::string> missing, unknown;
  if (!kv) {
    unknown.push_back("the kernel release");
  } else {
    const bool ok = *kv >= kDmaBufKernel;
    d.evidence.push_back("kernel " + m.kernel_release + (ok ? " (>= " : " (< ") + need +
                         ": DMA-BUF for RDMA needs " + need + " or newer)");
    if (!ok) missing.push_back("kernel " + m.kernel_release + " is older than " + need);
  }
  const std::string& v = m.network.nvidia_driver_version;
  if (v.empty()) {
    unknown.push_back("the GPU kernel module flavour (/proc/driver/nvidia/version)");
  } else if (nvidia_kernel_module(v).flavour == NvidiaKernelModule::Open) {
    d.evidence.push_back("/proc/driver/nvidia/version: " + trimmed(v) +
                         " (open GPU kernel module)");
  } else {
    d.evidence.push_back("/proc/driver/nvidia/version: " + trimmed(v) +
                         " (proprietary GPU kernel module: DMA-BUF needs the open one)");
    missing.push_back("the GPU kernel module is the proprietary one");
  }
  if (!missing.empty()) {
    d.state = DmaBuf::Unusable;
    d.why_not = joined(missing, "; ");
  } else if (!unknown.empty()) {
    d.why_not = joined(unknown, " and ") + " not read";
  } else {
    d.state = DmaBuf::Usable;
  }
  return d;
}

// The waived reason's tail where no mount reads over RDMA: the mounts whose transport is not
// shown, named with what to run, else "nothing needs them".
std::string nothing_needs(const RdmaMounts& mounts, const std::string& what) {
  if (mounts.unsure.empty())
    return "no mount here reads its data over RDMA, so nothing needs " + what;
  return "no mount here is known to read its data over RDMA: " + mount_list(mounts.unsure) +
         " may (the node does not show its client's transport; gdsb-topo's file-system "
         "result names the command that tells)";
}

CheckResult registration(const Machine& m, const RdmaMounts& rdma) {
  const std::vector<const Mount*>& mounts = rdma.rdma;
  const std::string title = "GPU memory registration for RDMA (nvidia-peermem or DMA-BUF)";
  const NetworkFacts& n = m.network;
  const bool peermem =
      n.modules_known && (has_module(n, "nvidia_peermem") || has_module(n, "nv_peer_mem"));
  CheckResult r = make(kId, title, Verdict::Pass);
  if (!n.modules_known)
    r.evidence.push_back("/proc/modules not read: nvidia-peermem unknown");
  else if (peermem)
    r.evidence.push_back(std::string("/proc/modules: ") +
                         (has_module(n, "nvidia_peermem") ? "nvidia_peermem" : "nv_peer_mem") +
                         " loaded");
  else
    r.evidence.push_back("/proc/modules: no nvidia_peermem (nor nv_peer_mem)");
  const DmaBuf d = dma_buf(m);
  r.evidence.insert(r.evidence.end(), d.evidence.begin(), d.evidence.end());
  if (peermem) return r;
  if (d.state == DmaBuf::Usable) {
    r.evidence.push_back("DMA-BUF usable: open GPU kernel module on a kernel 5.12 or newer");
    return r;
  }
  if (!n.modules_known || d.state == DmaBuf::Unknown) {
    r.verdict = Verdict::Waived;
    r.reason = std::string("cannot tell: ") + (n.modules_known ? "" : "/proc/modules not read; ") +
               "DMA-BUF " + (d.state == DmaBuf::Unknown ? "unknown, " : "unusable, ") + d.why_not +
               "; run lsmod | grep nvidia_peermem, uname -r and cat /proc/driver/nvidia/version";
    return r;
  }
  if (mounts.empty()) {
    r.verdict = Verdict::Waived;
    r.reason = "neither nvidia-peermem nor DMA-BUF (" + d.why_not + "); " +
               nothing_needs(rdma, "them");
    return r;
  }
  r.verdict = Verdict::Fail;
  r.consequence = "neither nvidia-peermem is loaded nor is DMA-BUF usable (" + d.why_not +
                  "): the RDMA NIC cannot reach GPU memory, so GDS reads of " + mount_list(mounts) +
                  " cannot go GPUDirect (compat mode or an error)";
  r.remedy =
      "load nvidia-peermem (modprobe nvidia-peermem; needs MLNX_OFED or DOCA-OFED), or use "
      "DMA-BUF: the open GPU kernel module on a Linux kernel 5.12 or newer";
  return r;
}

CheckResult rdma_library(const Snapshot& s) {
  const std::string title =
      "cuFile user-space RDMA library (" + std::string(gpu::cufile::kCufileRdmaLibrary) + ")";
  const Machine& m = s.machine;
  if (!m.cufile_rdma)
    return waived(kId, title,
                  "not probed: only a live run tries to load it (its saved snapshot keeps the "
                  "answer), and this input holds none");
  const auto& p = *m.cufile_rdma;
  CheckResult r = make(kId, title, Verdict::Pass);
  r.evidence.push_back("dlopen(" + p.library +
                       "): " + (p.loaded ? std::string("loaded") : "not loaded (" + p.error + ")"));
  if (p.loaded) return r;
  const auto& list = m.cufile.rdma_dev_addr_list;
  if (list && !list->empty()) {
    r.verdict = Verdict::Warn;
    r.consequence = m.cufile.path +
                    " lists RDMA NICs (rdma_dev_addr_list) for cuFile's user-space RDMA, and "
                    "cuFile cannot load the library that does it";
    r.remedy =
        "install the libcufile-rdma package of this CUDA version and rdma-core (libibverbs, "
        "librdmacm, libmlx5), which it needs";
    return r;
  }
  r.verdict = Verdict::Waived;
  r.reason =
      "cuFile's user-space RDMA is unavailable here; nothing asks for it (no "
      "rdma_dev_addr_list)";
  return r;
}

std::string port_text(const RdmaDevice& d, const RdmaPort& p) {
  std::string t = d.name + " port " + std::to_string(p.port) + ": " +
                  (p.state.empty() ? std::string("state unknown") : p.state);
  if (!p.phys_state.empty()) t += " (" + p.phys_state + ")";
  if (!p.rate.empty()) t += ", " + p.rate;
  return t;
}

// Each listed entry -> the interface that holds it (or is named) -> the RDMA ports under it; or
// an RDMA device named -> its ports.
CheckResult addr_list(const Machine& m) {
  const std::string title = "cuFile RDMA NICs (rdma_dev_addr_list)";
  const CufileSettings& c = m.cufile;
  if (!c.found) return waived(kId, title, "no cufile.json (" + c.path + ")");
  std::vector<std::pair<std::string, std::string>> addrs;  // (address, key)
  CheckResult r = make(kId, title, Verdict::Pass);
  auto list_text = [](const std::vector<std::string>& v) {
    std::string t(1, '[');
    t += joined(v, ", ");
    t += ']';
    return t;
  };
  if (c.rdma_dev_addr_list) {
    r.evidence.push_back(c.path + ": properties.rdma_dev_addr_list " +
                         list_text(*c.rdma_dev_addr_list));
    for (const auto& a : *c.rdma_dev_addr_list) addrs.emplace_back(a, "properties");
  } else {
    r.evidence.push_back(c.path + ": properties.rdma_dev_addr_list absent");
  }
  for (const auto& [fs, list] : c.fs_rdma_dev_addr_list) {
    r.evidence.push_back(c.path + ": fs." + fs + ".rdma_dev_addr_list " + list_text(list));
    for (const auto& a : list) addrs.emplace_back(a, "fs." + fs);
  }
  if (addrs.empty()) {
    r.verdict = Verdict::Waived;
    r.reason = "no RDMA NIC listed for cuFile (gdscheck: \"rdma devices: Not configured\")";
    return r;
  }
  const NetworkFacts& n = m.network;
  if (!n.net_known) {
    r.verdict = Verdict::Waived;
    r.reason =
        "the node's interfaces (/sys/class/net) were not read: the addresses cannot be "
        "matched to NICs";
    return r;
  }
  std::vector<std::string> bad;
  for (const auto& [entry, key] : addrs) {
    const std::string head = entry + " (" + key + ")";
    // The carriers read each entry the same way (network_carriers.hpp).
    const net::CufileEntry e = net::resolve_cufile_entry(n, entry);
    std::vector<std::pair<std::string, const RdmaPort*>> lines;  // the path, its port
    if (e.kind == net::CufileEntry::RdmaDeviceName) {
      for (const RdmaPort& p : e.rdma->ports) lines.emplace_back(head + " -> " + port_text(*e.rdma, p), &p);
    } else if (e.iface) {
      for (const net::NetLeaf& leaf : net::net_leaves(n, e.iface->name))
        if (leaf.port)
          lines.emplace_back(head + " -> " + e.iface->name +
                                 (leaf.netdev == e.iface->name ? "" : " -> " + leaf.netdev) +
                                 " -> " + port_text(*leaf.rdma, *leaf.port),
                             leaf.port);
      if (lines.empty()) {
        std::string line = head + " -> " + e.iface->name + ": " +
                           (n.rdma_known ? "no RDMA port is bound to it" : "RDMA ports not recorded");
        r.evidence.push_back(line);
        if (n.rdma_known) bad.push_back(line);
        continue;
      }
    } else {
      bad.push_back(head + (net::is_ip_address(entry)
                                ? ": no interface of this node has this address"
                                : ": no RDMA device or interface of this node has this name"));
      r.evidence.push_back(bad.back());
      continue;
    }
    for (const auto& [line, port] : lines) {
      r.evidence.push_back(line);
      if (port->state != "ACTIVE") bad.push_back(line);
    }
  }
  if (!bad.empty()) {
    r.verdict = Verdict::Warn;
    r.consequence =
        "cuFile spreads user-space RDMA over the listed NICs; not ACTIVE or not "
        "found here: " +
        joined(bad, "; ");
    r.remedy =
        "bring the port up (ibstat; cable, switch, subnet manager) or list only this "
        "node's ACTIVE RDMA interfaces in rdma_dev_addr_list of " +
        c.path;
  }
  return r;
}

// gdscheck's rdma_device_status: every RDMA port and its state.
CheckResult ports(const Machine& m, const RdmaMounts& rdma) {
  const std::vector<const Mount*>& mounts = rdma.rdma;
  const std::string title = "RDMA ports";
  const NetworkFacts& n = m.network;
  if (!n.rdma_known) return waived(kId, title, "/sys/class/infiniband was not read");
  CheckResult r = make(kId, title, Verdict::Pass);
  int up = 0, down = 0;
  for (const RdmaDevice& d : n.rdma_devices)
    for (const RdmaPort& p : d.ports) {
      (p.state == "ACTIVE" ? up : down) += 1;
      std::string line = port_text(d, p);
      if (!p.link_layer.empty() || !p.netdev.empty())
        line += " [" + p.link_layer + (p.netdev.empty() ? "" : " " + p.netdev) + "]";
      if (!d.bdf.empty()) line += " at " + d.bdf;
      r.evidence.push_back(line);
      if (!d.bdf.empty()) add_unique(r.devices, d.bdf);
    }
  r.evidence.insert(r.evidence.begin(), "/sys/class/infiniband: ACTIVE " + std::to_string(up) +
                                            ", not ACTIVE " + std::to_string(down));
  if (up > 0) return r;
  if (!mounts.empty()) {
    r.verdict = Verdict::Fail;
    r.consequence =
        "no RDMA port is ACTIVE, and " + mount_list(mounts) + " read their data over RDMA";
    r.remedy =
        "bring an RDMA port up (ibstat; cable, switch, subnet manager) or load the NIC's "
        "RDMA driver (mlx5_ib)";
    return r;
  }
  r.verdict = Verdict::Waived;
  r.reason = n.rdma_devices.empty() ? "no RDMA device on this node" : "no RDMA port is ACTIVE";
  if (!rdma.unsure.empty()) r.reason += "; " + nothing_needs(rdma, "one");
  return r;
}

// The network file systems gdscheck -p lists, each with the kernel module it rests on here.
struct FsDriver {
  const char* name;
  std::vector<const char*> modules;  // all needed
  const char* what;
};

CheckResult fs_drivers(const Machine& m) {
  const std::string title = "file-system drivers for GDS over the network";
  const NetworkFacts& n = m.network;
  if (!n.modules_known) return waived(kId, title, "/proc/modules was not read");
  static const std::vector<FsDriver> kDrivers = {
      {"NFS over RDMA", {"rpcrdma"}, "the kernel's NFS RDMA transport"},
      {"Lustre (DDN EXAScaler)", {"lnet", "ko2iblnd"}, "LNet with the o2ib LND"},
      {"WekaFS", {"wekafsgw"}, "the Weka client"},
      {"IBM Storage Scale (GPFS)", {"mmfs26"}, "the GPFS kernel module"},
      {"BeeGFS", {"beegfs"}, "the BeeGFS client"},
      {"NVMe-oF (RDMA)", {"nvme_rdma"}, "the NVMe over RDMA host driver"},
  };
  CheckResult r = make(kId, title, Verdict::Pass);
  int usable = 0;
  const std::string fs_state = m.nvidia_fs_loaded ? "nvidia-fs loaded" : "nvidia-fs not loaded";
  for (const FsDriver& f : kDrivers) {
    std::vector<std::string> loaded, absent;
    for (const char* mod : f.modules) (has_module(n, mod) ? loaded : absent).push_back(mod);
    const bool ok = absent.empty() && m.nvidia_fs_loaded;
    usable += ok ? 1 : 0;
    r.evidence.push_back(std::string(f.name) + ": " + (ok ? "usable (" : "not usable (") +
                         (absent.empty() ? joined(loaded, ", ") + " loaded"
                                         : joined(absent, ", ") + " not loaded: " + f.what) +
                         ", " + fs_state + ")");
  }
  // cuFile's own RDMA path (gdscheck: "Userspace RDMA"): the library and the NICs it uses.
  const bool lib = m.cufile_rdma && m.cufile_rdma->loaded;
  const bool listed = m.cufile.rdma_dev_addr_list && !m.cufile.rdma_dev_addr_list->empty();
  r.evidence.push_back(
      std::string("user-space RDMA: ") + (lib && listed ? "usable (" : "not usable (") +
      (m.cufile_rdma ? (lib ? "library loads" : "library does not load") : "library not probed") +
      ", rdma_dev_addr_list " + (listed ? "set" : "empty or absent") + ")");
  usable += lib && listed ? 1 : 0;
  if (usable == 0) {
    r.verdict = Verdict::Waived;
    r.reason =
        "no file system here can be read by GDS over the network (each one's evidence "
        "listed)";
  }
  return r;
}

class RdmaStackCheck final : public Check {
 public:
  std::string id() const override { return kId; }
  std::string title() const override { return kTitle; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    if (auto w = waive_without_host_facts(ctx, id(), title())) return {*w};
    const Machine& m = ctx.snapshot.machine;
    const RdmaMounts mounts = rdma_mounts(ctx);
    std::vector<CheckResult> out;
    out.push_back(registration(m, mounts));
    out.push_back(rdma_library(ctx.snapshot));
    out.push_back(addr_list(m));
    out.push_back(ports(m, mounts));
    out.push_back(fs_drivers(m));
    facts_only_without_gds(ctx, out);
    return out;
  }
};

}  // namespace

std::unique_ptr<Check> make_rdma_stack_check() { return std::make_unique<RdmaStackCheck>(); }

}  // namespace gdsb::topo
