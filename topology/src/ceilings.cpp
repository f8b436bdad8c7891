// The ceiling computation over the path model (path_model.hpp): per GPU for its nearest
// sources of a kind, node-wide for every source at once, each read by its nearest GPU.
// Each transfer is a flow along its chain's hops (own link, switch uplinks, root ports,
// a NIC's network rate); a hop shared by several flows caps their sum. What the inputs
// never hold (the socket interconnect, a root complex's internal P2P rate, a hypervisor's
// disk) is named, not invented.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::topo {
namespace {

struct FlowResult {
  double gb_s = 0;
  std::vector<std::string> binding;  // links running at capacity
  bool unknown = false, socket = false, host_bridge = false, acs = false;
};

// Each flow starts at its narrowest hop; every hop carrying more than it can is scaled
// down proportionally, until no hop is over capacity (a few rounds suffice). Hops of unknown
// capacity other than a source's own link (a bridge without a link capability) bound
// nothing; an unknown own link leaves the whole ceiling unknown.
FlowResult solve(const std::vector<const DataPath*>& flows, std::vector<PathHop>& inputs) {
  FlowResult r;
  std::vector<double> rate(flows.size(), 0);
  std::map<std::string, const PathHop*> hops;
  std::set<std::string> seen;
  for (size_t i = 0; i < flows.size(); ++i) {
    const DataPath& f = *flows[i];
    for (const auto& h : f.hops)
      if (seen.insert(h.key).second) inputs.push_back(h);
    r.unknown = r.unknown || f.unknown_capacity;
    r.socket = r.socket || f.crosses_socket;
    r.host_bridge = r.host_bridge || f.crosses_host_bridge;
    r.acs = r.acs || f.acs_redirect;
    if (f.unknown_capacity) continue;
    bool any = false;
    for (const auto& h : f.hops) {
      if (!h.gb_s) continue;
      rate[i] = any ? std::min(rate[i], *h.gb_s) : *h.gb_s;
      any = true;
      hops.emplace(h.key, &h);
    }
    r.unknown = r.unknown || !any;
  }
  if (r.unknown) return r;
  std::map<std::string, double> load;
  const auto compute_load = [&] {
    load.clear();
    for (size_t i = 0; i < flows.size(); ++i)
      for (const auto& h : flows[i]->hops)
        if (h.gb_s) load[h.key] += rate[i];
  };
  compute_load();
  for (int round = 0; round < 256; ++round) {
    // Scale the flows of the most oversubscribed hop, then look again.
    std::string worst;
    double ratio = 1.0001;
    for (const auto& [key, l] : load)
      if (l / *hops[key]->gb_s > ratio) {
        ratio = l / *hops[key]->gb_s;
        worst = key;
      }
    if (worst.empty()) break;
    for (size_t i = 0; i < flows.size(); ++i)
      for (const auto& h : flows[i]->hops)
        if (h.key == worst) {
          rate[i] /= ratio;
          break;
        }
    compute_load();
  }
  for (double x : rate) r.gb_s += x;
  for (const auto& [key, l] : load)
    if (l >= *hops[key]->gb_s * 0.999) r.binding.push_back(hops[key]->what);
  return r;
}

// "8 nearest NVMe (PIX): <the hops that run full>" and what no input bounds.
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
  if (kind == DataSource::DataNic) c.basis = nic_basis(flows);
  const std::string full = kind == DataSource::DataNic ? what + " at " + c.basis : what;
  FlowResult r = solve(flows, c.hops);
  if (kind == DataSource::Virtual) {
    std::string names;
    for (const DataPath* f : flows) names += (names.empty() ? "" : ", ") + f->hops.front().what;
    c.limited_by = "virtual storage (" + names +
                   "): measure it (gdsb-io -x 1); GDS peer-to-peer does not apply";
    return c;
  }
  if (r.unknown) {
    c.limited_by = "link width/speed of a drive, NIC or GPU unknown in this input";
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
             d->bdf + " " + virtual_device_reason(*d) + ")";
  return "no " + what + " in this input";
}

}  // namespace

Ceiling PathModel::gpu_ceiling(const std::string& gpu, DataSource kind) const {
  const auto best = nearest(gpu, kind);
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
                           : kind == DataSource::DataNic ? "nearest data NIC(s)"
                                                         : "virtual disk(s)";
  return ceiling_for(gpu, best, kind, what, label);
}

Ceiling PathModel::node_ceiling(DataSource kind) const {
  std::vector<const DataPath*> flows;
  if (kind != DataSource::Virtual)
    for (const Device* p : v_.peers()) {
      const Pair* b = v_.best_for_peer(p->bdf);
      if (!b) continue;
      for (const auto& path : paths_)
        if (path.pair == b && path.kind == kind) flows.push_back(&path);
    }
  if (flows.empty()) {
    Ceiling c;
    c.limited_by = v_.gpus().empty() ? "no GPU in this input" : no_source_text(v_, kind);
    return c;
  }
  return ceiling_for("", flows, kind,
                     kind == DataSource::LocalNvme ? "NVMe drives, each read by its nearest GPU"
                                                   : "data NICs, each into its nearest GPU",
                     "");
}

std::vector<Ceiling> compute_ceilings(const Snapshot&, const TopologyView& v) {
  const PathModel m(v);
  std::vector<Ceiling> out;
  for (const Device* g : v.gpus()) out.push_back(m.gpu_ceiling(g->bdf, DataSource::LocalNvme));
  return out;
}

}  // namespace gdsb::topo
