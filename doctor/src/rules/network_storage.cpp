// Reads from a network mount (NFS, Lustre, WekaFS, IBM Storage Scale, BeeGFS, NVMe-oF) that
// run short of the node's NICs (issue 25): storage alone on the mount (--io-dir there)
// against the NICs that carry it (topo/network_storage.hpp) and the path model's ceilings.
// Causes, each with its evidence, a fix and the figure to expect after it:
//   - GDS cannot engage (TCP where RDMA would apply, a file system no GDS document lists);
//   - the reads ride fewer rails than the node has (one 100 Gb/s rail = 12.5 GB/s);
//   - a carrier's RDMA port trained below its peers, or is down;
//   - the carrier sits on the other socket from the GPU that reads.
#include <algorithm>
#include <map>

#include "gdsb/topo/mounts.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

using topo::Engage;
using topo::NetworkMount;

std::string run_path(const Workload& w) { return w.directory.empty() ? w.file : w.directory; }

// The network mount a run read from, or nullptr.
const NetworkMount* mount_of(const std::vector<NetworkMount>& mounts, const topo::Snapshot& s,
                             const RunResult& r) {
  const std::string path = run_path(r.workload);
  if (path.empty()) return nullptr;
  const topo::Mount* m = topo::mount_holding(s.machine.mounts, path);
  for (const auto& nm : mounts)
    if (m && nm.mount == m) return &nm;
  return nullptr;
}

// The RDMA ports of a NIC function, with their device name.
std::vector<std::pair<const topo::RdmaDevice*, const topo::RdmaPort*>> ports_of(
    const topo::Snapshot& s, const std::string& bdf) {
  std::vector<std::pair<const topo::RdmaDevice*, const topo::RdmaPort*>> out;
  for (const auto& d : s.machine.network.rdma_devices)
    if (d.bdf == bdf)
      for (const auto& p : d.ports) out.emplace_back(&d, &p);
  return out;
}

// The distinct PCI functions that carry a mount, in the order the mount reading found them.
std::vector<std::string> carrier_nics(const NetworkMount& nm) {
  std::vector<std::string> out;
  for (const auto& c : nm.carriers) detail::add_unique(out, c.bdf);
  return out;
}

std::string carrier_names(const topo::Snapshot& s, const std::vector<std::string>& nics) {
  std::string out;
  for (const auto& bdf : nics) {
    std::string names;
    for (const auto& i : s.machine.network.interfaces)
      if (i.bdf == bdf) names += (names.empty() ? "" : "/") + i.name;
    out += (out.empty() ? "" : ", ") + (names.empty() ? bdf : names + " " + bdf);
  }
  return out;
}

// How to spread one mount's reads over more NICs, by file system.
std::string spread_fix(const NetworkMount& nm, const std::string& all_ifs) {
  const std::string list = "list the RDMA NICs' local addresses in cufile.json "
                           "properties.rdma_dev_addr_list (cuFile spreads its reads over them)";
  if (nm.kind == "NFS")
    return "mount with nconnect=16 and one client port per rail (VAST's NFS client: "
           "remoteports=<the servers' addresses>,localports=" + all_ifs + "), or use NFS "
           "session trunking; " + list;
  if (nm.kind == "Lustre")
    return "configure LNet Multi-Rail over every data NIC (lnetctl net add --net o2ib0 --if " +
           all_ifs + "); " + list;
  return list;
}

std::vector<Finding> run(const Facts& facts) {
  if (!facts.platform) return {};
  const Platform& p = *facts.platform;
  const topo::Snapshot& s = *p.snapshot;
  const topo::PathModel& model = *p.model;
  const std::vector<NetworkMount> mounts = topo::network_mounts(s, p.view.get());
  if (mounts.empty()) return {};
  const RunResult* x1 = facts.storage_alone();
  const NetworkMount* nm = x1 ? mount_of(mounts, s, *x1) : nullptr;
  // Without storage alone on a network mount, the GPU run on one places it.
  const RunResult* gpu_run = nullptr;
  for (XferType x : {XferType::GpuDirect, XferType::CpuGpu, XferType::CpuAsyncGpu,
                     XferType::CpuCachedGpu, XferType::GpuDirectAsync, XferType::GpuBatch,
                     XferType::GpuBatchStream})
    if (const RunResult* r = facts.best_read(x); r && mount_of(mounts, s, *r) &&
                                                 (!gpu_run || *run_gb_s(*r) > *run_gb_s(*gpu_run)))
      gpu_run = r;
  if (!nm && gpu_run) nm = mount_of(mounts, s, *gpu_run);
  if (!nm) return {};
  const std::optional<double> alone = x1 && mount_of(mounts, s, *x1) == nm ? run_gb_s(*x1)
                                                                         : std::nullopt;
  const std::optional<double> seen = alone ? alone : gpu_run ? run_gb_s(*gpu_run) : std::nullopt;
  const std::string seen_by = alone ? "storage alone (" + detail::describe_run(*x1) + ")"
                                    : gpu_run ? detail::describe_run(*gpu_run) : "";
  const GpuDiagnosis* g = gpu_run ? facts.gpu_of(*gpu_run) : nullptr;
  const std::string where = nm->mount->target + " (" + nm->kind +
                            (nm->transport.name.empty() ? "" : " over " + nm->transport.name) + ")";
  const std::vector<std::string> nics = carrier_nics(*nm);
  const topo::Ceiling carried = model.carriers_ceiling(nics, "");
  std::vector<std::string> rails;  // the data NICs that are up
  for (const topo::Device* d : model.data_nics())
    if (!model.is_down(d->bdf)) rails.push_back(d->bdf);
  const topo::Ceiling all = model.carriers_ceiling(rails, "");
  std::string all_ifs;
  for (const auto& i : s.machine.network.interfaces)
    if (std::find(rails.begin(), rails.end(), i.bdf) != rails.end())
      all_ifs += (all_ifs.empty() ? "" : ",") + i.name;
  if (all_ifs.empty()) all_ifs = "<each data NIC>";

  std::vector<Finding> out;
  const auto base = [&](const std::string& title, Confidence conf) {
    Finding f;
    f.rule = "network-storage";
    f.title = title;
    f.confidence = conf;
    f.path_bounded = true;  // expected figures come from carriers_ceiling
    f.devices = nics;
    if (g) f.devices.insert(f.devices.begin(), g->bdf);
    if (seen) f.evidence.push_back(seen_by + ": " + detail::gb(*seen));
    f.evidence.push_back(where + ": " + nm->why);
    for (const auto& c : nm->carriers)
      f.evidence.push_back("carried by " + (c.netdev.empty() ? c.rdma_dev : c.netdev) +
                           (c.bdf.empty() ? "" : " " + c.bdf) + ": " + c.how);
    if (nm->carriers.empty() && !nm->carriers_note.empty())
      f.evidence.push_back("carriers: " + nm->carriers_note);
    return f;
  };

  // GDS cannot engage on the mount at all: everything else is secondary.
  if (nm->engage == Engage::No) {
    Finding f = base("GDS cannot engage on " + where + ": cuFile reads it in compat mode",
                     Confidence::Certain);
    // The mount reading's own remedy (every "no" verdict carries one); its why otherwise.
    f.fix = nm->remedy.empty() ? nm->why : nm->remedy;
    if (carried.gb_s)
      detail::expect_after_fix(f, *carried.gb_s, " over RDMA through " + carrier_names(s, nics) +
                                                      " (" + carried.limited_by + ")",
                               seen);
    out.push_back(std::move(f));
    return out;
  }

  // A carrier port below its peers, or down.
  double best_rate = 0;
  for (const auto& d : s.machine.network.rdma_devices)
    if (model.is_data_nic(d.bdf))
      for (const auto& port : d.ports)
        if (port.state == "ACTIVE" && port.rate_gbps) best_rate = std::max(best_rate, *port.rate_gbps);
  for (const auto& bdf : nics)
    for (const auto& [dev, port] : ports_of(s, bdf)) {
      const bool down = port->state != "ACTIVE";
      const bool slow = !down && port->rate_gbps && best_rate > 0 && *port->rate_gbps < best_rate;
      if (!down && !slow) continue;
      char rate[64];
      std::snprintf(rate, sizeof rate, "%.0f Gb/s", port->rate_gbps.value_or(0));
      char peer[64];
      std::snprintf(peer, sizeof peer, "%.0f Gb/s", best_rate);
      Finding f = base("NIC " + bdf + " (" + dev->name + ") port " + std::to_string(port->port) +
                           (down ? " carrying " + nm->mount->target + " is " + port->state
                                 : " carrying " + nm->mount->target + " runs at " + rate +
                                       ", its peers at " + peer),
                       // Down, or below its peers while the reads run at what the carriers
                       // allow (>= 80%): the port binds them, so it comes before the rails.
                       down || (seen && carried.gb_s && *seen >= 0.8 * *carried.gb_s)
                           ? Confidence::Certain
                           : Confidence::Likely);
      f.evidence.push_back("/sys/class/infiniband/" + dev->name + "/ports/" +
                           std::to_string(port->port) + ": state " + port->state + ", phys_state " +
                           port->phys_state + ", rate " + port->rate);
      f.fix = "check the cable, transceiver and switch port of " + dev->name + " port " +
              std::to_string(port->port) + " (ibstat " + dev->name + "; mlxlink -d " +
              dev->name + " -p " + std::to_string(port->port) + "), then reseat or replace";
      if (slow && carried.gb_s && port->rate_gbps) {
        // At its peers' rate the port adds what it lacks now, within the other hops.
        const double gain = (best_rate - *port->rate_gbps) / 8.0;
        detail::expect_after_fix(f, std::min(*carried.gb_s + gain, all.gb_s.value_or(1e30)),
                                 " with the port at " + std::string(peer), seen);
      }
      out.push_back(std::move(f));
    }

  // One rail of many: what storage delivers is what the carriers can carry, while the node
  // has more data NICs idle.
  if (seen && carried.gb_s && all.gb_s && *seen >= 0.8 * *carried.gb_s &&
      nics.size() < rails.size() && *all.gb_s >= 1.5 * *carried.gb_s) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.0f Gb/s", *carried.gb_s * 8.0);
    const std::string rail_words =
        nics.size() == 1 ? "one " + std::string(rate) + " rail" : std::to_string(nics.size()) +
                                                                   " rails (" + rate + ")";
    Finding f = base((alone ? "Storage alone " : "Reads ") + detail::gb(*seen) + " = " +
                         detail::pct(*seen / *carried.gb_s) + " of " + rail_words + " (" +
                         carrier_names(s, nics) + "): " + nm->mount->target + " rides " +
                         std::to_string(nics.size()) + " of " + std::to_string(rails.size()) +
                         " data NICs",
                     Confidence::Likely);
    f.evidence.push_back("the carriers allow ~" + detail::gb(*carried.gb_s) + " (" +
                         carried.limited_by + ")");
    f.evidence.push_back("every data NIC together allows ~" + detail::gb(*all.gb_s) + " (" +
                         all.limited_by + ")");
    f.fix = spread_fix(*nm, all_ifs);
    f.storage_fix = true;
    detail::expect_after_fix(f, *all.gb_s,
                             " with every rail in use, if the storage servers can serve it", seen);
    out.push_back(std::move(f));
  }

  // The carrier sits across the socket interconnect from the GPU that reads.
  if (g)
    for (const auto& bdf : nics) {
      const topo::Pair* pr = p.view->pair(g->bdf, bdf);
      if (!pr || pr->label != topo::PathLabel::Sys) continue;
      Finding f = base("the NIC carrying " + nm->mount->target + " (" + bdf +
                           ") is on the other socket from " + g->label + " (SYS)",
                       Confidence::Likely);
      const topo::Pair* near = nullptr;
      for (const topo::Pair* q : p.view->best_for_gpu(g->bdf, topo::Role::Nic))
        if (model.is_data_nic(q->peer) && !model.is_down(q->peer)) {
          near = q;
          break;
        }
      f.fix = near ? "carry " + g->label + "'s reads on " + near->peer + " (" +
                         std::string(topo::path_label_name(near->label)) +
                         "): put its address in cufile.json rdma_dev_addr_list or the mount's "
                         "localports=, or run on a GPU near " + bdf
                   : "run on a GPU on the socket of " + bdf;
      if (const auto c = model.carriers_ceiling({near ? near->peer : bdf}, g->bdf); c.gb_s && near)
        detail::expect_after_fix(f, *c.gb_s, " through " + near->peer, seen);
      out.push_back(std::move(f));
    }
  return out;
}

}  // namespace

Rule network_storage_rule() {
  return {"network-storage",
          "network mount: GDS cannot engage, one rail of many, a port below rate, NIC far "
          "from the GPU",
          run};
}

}  // namespace gdsb::doctor
