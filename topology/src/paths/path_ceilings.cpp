// The ceilings of the path model (path_model.hpp): each transfer is a flow along its chain's
// hops, a hop shared by several flows caps their sum (the flow solve, flow_solver.hpp); each
// ceiling names the hops that run full and what no input bounds.
#include <algorithm>
#include <cstdio>

#include "flow_solver.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::topo {

namespace {

// "8 nearest NVMe (PIX): <the hops that run full, each named by its kind>" and what no
// input bounds.
std::string describe(const FlowResult& r, size_t n, const std::string& what,
                     const std::string& label) {
  std::string out = std::to_string(n) + " " + what + (label.empty() ? "" : " (" + label + ")");
  if (!r.binding.empty()) {
    out += ": ";
    for (size_t i = 0; i < r.binding.size() && i < 4; ++i) out += (i ? ", " : "") + r.binding[i];
    if (r.binding.size() > 4) out += " and " + std::to_string(r.binding.size() - 4) + " more";
  }
  if (r.host_bridge)
    out += "; path crosses the host bridge, whose peer-to-peer rate no input records: expect less";
  if (r.socket)
    out += "; path crosses the CPU socket interconnect (UPI/xGMI/Infinity Fabric), whose "
           "bandwidth no input records: not bounded here, expect less";
  if (r.acs) out += "; ACS redirect routes it through the root complex";
  return out;
}

// Which rate bounded the NICs counted: their network link where recorded, else PCIe.
std::string nic_basis(const std::vector<const DataPath*>& flows) {
  size_t net = 0;
  for (const DataPath* f : flows)
    net += std::any_of(f->hops.begin(), f->hops.end(),
                       [](const PathHop& h) { return h.source == CapacitySource::NetworkRate; });
  if (net == flows.size()) return "network rate";
  if (net == 0) return "PCIe line rate";
  return "network rate where recorded, else PCIe line rate";
}

Ceiling ceiling_for(const std::string& gpu, const std::vector<const DataPath*>& flows,
                    DataSource kind, const std::string& what, const std::string& label) {
  Ceiling c;
  c.gpu = gpu;
  for (const DataPath* f : flows) c.peers.push_back(f->source);
  std::string full = what;
  if (kind == DataSource::DataNic) {
    // The NICs are named: the hops at capacity that follow may be a GPU's or a switch's.
    c.basis = nic_basis(flows);
    std::string sources;
    for (size_t i = 0; i < c.peers.size() && i < 4; ++i) sources += (i ? ", " : "") + c.peers[i];
    if (c.peers.size() > 4) sources += " and " + std::to_string(c.peers.size() - 4) + " more";
    full += " (" + sources + ") at " + c.basis;
  }
  const FlowResult r = solve_flows(flows, c.hops);
  if (kind == DataSource::Virtual) {
    // Each disk once: several GPUs reading one disk are several flows over it.
    std::vector<std::string> seen;
    std::string names;
    for (const DataPath* f : flows) {
      if (std::find(seen.begin(), seen.end(), f->hops.front().what) != seen.end()) continue;
      seen.push_back(f->hops.front().what);
      names += (names.empty() ? "" : ", ") + f->hops.front().what;
    }
    c.limited_by = "virtual storage (" + names +
                   "): measure it (gdsb-io -x 1); GDS peer-to-peer does not apply";
    return c;
  }
  if (r.unknown) {  // name the links of unknown capacity
    std::string unknown;
    for (const auto& h : c.hops)
      if (!h.gb_s) unknown += (unknown.empty() ? "" : ", ") + h.what;
    c.limited_by = unknown.empty() ? "link width/speed of a drive, NIC or GPU unknown in this input"
                                   : "capacity unknown in this input: " + unknown;
    return c;
  }
  c.gb_s = r.gb_s;
  c.limited_by = describe(r, flows.size(), full, label);
  return c;
}

std::string no_source_text(const TopologyView& v, DataSource kind) {
  const bool nic = kind == DataSource::DataNic;
  const std::string what = nic ? "data NIC" : "NVMe drive";
  for (const Device* d : v.virtual_devices())
    if (nic == (d->role == Role::Nic))
      return "no PCIe " + what + ": " + (nic ? "networking" : "storage") + " here is virtual (" +
             d->bdf + " " + virtual_device_kind(*d) + ")";
  return "no " + what + " in this input";
}

}  // namespace

Ceiling PathModel::gpu_ceiling(const std::string& gpu, DataSource kind) const {
  auto best = nearest(gpu, kind);
  std::string down;
  for (const DataPath* p : best)
    if (is_down(p->source)) down += (down.empty() ? "" : ", ") + p->source;
  best.erase(std::remove_if(best.begin(), best.end(),
                            [&](const DataPath* p) { return is_down(p->source); }),
             best.end());
  if (best.empty() && !down.empty()) {
    Ceiling c;
    c.gpu = gpu;
    c.limited_by = "its nearest data NICs carry nothing: RDMA ports down on " + down;
    return c;
  }
  if (best.empty()) {
    Ceiling c;
    c.gpu = gpu;
    c.limited_by = no_source_text(v_, kind);
    return c;
  }
  std::string label;
  if (kind != DataSource::Virtual) {
    label = path_label_name(best.front()->pair->label);
    if (best.front()->pair->label > PathLabel::Pxb) label += ", none below this GPU's switch";
  }
  const std::string what = kind == DataSource::LocalNvme ? "nearest NVMe"
                           : kind == DataSource::DataNic ? (best.size() == 1 ? "nearest data NIC"
                                                                          : "nearest data NICs")
                                                         : "virtual disk(s)";
  Ceiling c = ceiling_for(gpu, best, kind, what, label);
  if (!down.empty()) c.limited_by += "; not counted, RDMA ports down: " + down;
  return c;
}

Ceiling PathModel::node_ceiling(DataSource kind) const {
  std::vector<const DataPath*> flows;
  if (kind != DataSource::Virtual)
    for (const Device* p : v_.peers()) {
      const Pair* b = v_.best_for_peer(p->bdf);
      if (!b) continue;
      for (const auto& path : paths_)
        if (path.pair == b && path.kind == kind && !is_down(path.source)) flows.push_back(&path);
    }
  if (flows.empty()) {
    Ceiling c;
    c.limited_by = v_.gpus().empty() ? "no GPU in this input" : no_source_text(v_, kind);
    return c;
  }
  Ceiling c = ceiling_for("", flows, kind,
                          kind == DataSource::LocalNvme ? "NVMe drives, each read by its nearest GPU"
                                                        : "data NICs, each into its nearest GPU",
                          "");
  if (kind == DataSource::DataNic && !down_nics_.empty()) {
    c.limited_by += "; not counted, RDMA ports down:";
    for (const auto& d : down_nics_) c.limited_by += " " + d;
  }
  return c;
}

Ceiling PathModel::reads_ceiling(const std::vector<GpuReads>& reads) const {
  std::vector<const DataPath*> flows;
  std::string skipped;
  for (const GpuReads& r : reads) {
    bool any = false;
    for (const std::string& src : r.sources)
      for (const auto& path : paths_)
        if (path.gpu == r.gpu && path.source == src && !is_down(src)) {
          flows.push_back(&path);
          any = true;
        }
    if (!any) skipped += (skipped.empty() ? "" : ", ") + (r.gpu.empty() ? std::string("a GPU not in this input") : r.gpu);
  }
  Ceiling c;
  if (flows.empty()) {
    c.limited_by = reads.empty() ? "no GPU reads" : "no path from the sources read to the GPUs in this input";
    return c;
  }
  // One kind names the sources; a mix (a directory on a drive, another on a network mount)
  // is counted as drives and NICs alike by the flow solve.
  const DataSource kind = flows.front()->kind;
  const bool one_kind = std::all_of(flows.begin(), flows.end(), [&](const DataPath* f) { return f->kind == kind; });
  const std::string what = !one_kind ? "sources each GPU reads"
                           : kind == DataSource::LocalNvme ? "NVMe drives the GPUs read"
                           : kind == DataSource::DataNic   ? "data NICs the GPUs read through"
                                                           : "virtual disks the GPUs read";
  c = ceiling_for("", flows, one_kind ? kind : DataSource::LocalNvme, what, "");
  if (!skipped.empty()) c.limited_by += "; not counted, no path in this input: " + skipped;
  return c;
}

Ceiling PathModel::carriers_ceiling(const std::vector<std::string>& nics,
                                    const std::string& gpu) const {
  std::vector<const DataPath*> flows;
  std::string skipped;
  for (const std::string& nic : nics) {
    if (is_down(nic)) {
      skipped += (skipped.empty() ? "" : ", ") + nic + " (its RDMA ports are down)";
      continue;
    }
    if (!is_data_nic(nic)) {
      skipped += (skipped.empty() ? "" : ", ") + nic + " (not a data NIC)";
      continue;
    }
    const Pair* b = gpu.empty() ? v_.best_for_peer(nic) : nullptr;
    for (const auto& path : paths_)
      if (path.kind == DataSource::DataNic && path.source == nic &&
          (gpu.empty() ? path.pair == b : path.gpu == gpu)) {
        flows.push_back(&path);
        break;
      }
  }
  if (flows.empty()) {
    Ceiling c;
    c.gpu = gpu;
    c.limited_by = skipped.empty() ? "no data NIC carries it in this input"
                                   : "no data NIC carries it: " + skipped;
    return c;
  }
  std::string label;
  if (!gpu.empty()) {
    label = path_label_name(flows.front()->pair->label);
    for (const DataPath* f : flows)
      if (f->pair->label != flows.front()->pair->label) label.clear();
  }
  const std::string what = std::string(flows.size() == 1 ? "NIC" : "NICs") + " carrying it" +
                           (gpu.empty() ? ", each into its nearest GPU" : "");
  Ceiling c = ceiling_for(gpu, flows, DataSource::DataNic, what, label);
  if (!skipped.empty()) c.limited_by += "; not counted: " + skipped;
  return c;
}

}  // namespace gdsb::topo
