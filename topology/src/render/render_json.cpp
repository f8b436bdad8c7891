#include <cstdio>
#include <nlohmann/json.hpp>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/p2pdma.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "gdsb/topo/render.hpp"
#include "internal.hpp"

namespace gdsb::topo {
namespace {

std::string hex4(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "%04x", v);
  return b;
}

// A data NIC's RDMA device(s) and ports and its net devices, where the input read them
// (absent: not read; an empty list: read, none), each as the snapshot writes it.
void add_network(nlohmann::json& j, const NetworkFacts& n, const std::string& bdf) {
  if (n.rdma_known) {
    j["rdma_devices"] = nlohmann::json::array();
    for (const RdmaDevice* r : rdma_devices_of(n, bdf)) j["rdma_devices"].push_back(detail::rdma_device_json(*r));
  }
  if (n.net_known || !n.interfaces.empty()) {
    j["net_interfaces"] = nlohmann::json::array();
    for (const NetInterface* i : interfaces_of(n, bdf)) j["net_interfaces"].push_back(detail::interface_json(*i));
  }
}

nlohmann::json device_json(const Snapshot& s, const Device& d) {
  nlohmann::json j = {
      {"bdf", d.bdf},
      {"role", role_name(d.role)},
      {"vendor", hex4(d.vendor)},
      {"device", hex4(d.device)},
      {"class", hex4(d.class_id())},
      {"name", d.name},
      {"parent", d.parent.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.parent)},
      {"numa_node", d.numa_node ? nlohmann::json(*d.numa_node) : nlohmann::json(nullptr)},
      {"iommu_group", d.iommu_group ? nlohmann::json(*d.iommu_group) : nlohmann::json(nullptr)},
      {"block_devices", d.block_devices},
      {"net_devices", d.net_devices}};
  j["link"] = d.link ? nlohmann::json{{"cur_speed_gts", d.link->cur_speed_gts},
                                      {"cur_width", d.link->cur_width},
                                      {"max_speed_gts", d.link->max_speed_gts},
                                      {"max_width", d.link->max_width}}
                     : nlohmann::json(nullptr);
  j["acs"] = d.acs ? nlohmann::json{{"cap", hex16(d.acs->cap)}, {"ctl", hex16(d.acs->ctl)}}
                   : nlohmann::json(nullptr);
  // Additive fields (allowed by the contract): why ACS is unknown, the root complex.
  j["root_complex"] = d.root_complex;
  j["driver"] = d.driver;
  if (!d.ext_config_readable) j["acs_unknown_reason"] = d.acs_note;
  if (d.recorded_link_gb_s) j["recorded_link_gb_s"] = *d.recorded_link_gb_s;
  if (d.net_speed_mbps) j["net_speed_mbps"] = *d.net_speed_mbps;
  if (d.role == Role::Nic) {
    const NicClass c = classify_nic(d);
    j["nic_role"] = nic_role_name(c.role);
    j["nic_role_reason"] = c.why;
    if (c.role == NicRole::Data) add_network(j, s.machine.network, d.bdf);
  }
  return j;
}

// Per network mount: whether GDS can engage on it, why, and the NIC ports that carry it, each
// with its PCIe locality to every GPU and, for people and the HTML view, describe_carrier().
nlohmann::json network_mounts_json(const Snapshot& s, const TopologyView& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const NetworkMount& m : network_mounts(s, &v)) {
    nlohmann::json carriers = nlohmann::json::array();
    for (const MountCarrier& c : m.carriers) {
      nlohmann::json gpus = nlohmann::json::array();
      for (const auto& g : c.gpus)
        gpus.push_back({{"gpu", g.gpu}, {"label", g.label}, {"path", path_label_name(g.path)}});
      carriers.push_back({{"netdev", c.netdev},
                          {"bdf", c.bdf},
                          {"rdma_dev", c.rdma_dev},
                          {"rdma_port", c.rdma_port},
                          {"rdma_state", c.rdma_state},
                          {"how", c.how},
                          {"nearest_gpu", c.nearest_gpu},
                          {"gpus", gpus},
                          {"description", describe_carrier(c)}});
    }
    out.push_back({{"target", m.mount->target},
                   {"source", m.mount->source},
                   {"fstype", m.mount->fstype},
                   {"kind", m.kind},
                   {"transport", m.transport.name},
                   {"transport_kind", transport_kind_name(m.transport.kind)},
                   {"transport_evidence", m.transport.evidence},
                   {"servers", m.servers},
                   {"engage", engage_name(m.engage)},
                   {"why", m.why},
                   {"what_to_run", m.what_to_run},
                   {"carriers", carriers},
                   {"carriers_note", m.carriers_note}});
  }
  return out;
}

}  // namespace

nlohmann::json hops_json(const std::vector<PathHop>& hops) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& h : hops)
    out.push_back({{"kind", hop_kind_name(h.kind)},
                   {"device", h.device},
                   {"gb_s", h.gb_s ? nlohmann::json(*h.gb_s) : nlohmann::json(nullptr)},
                   {"source", capacity_source_name(h.source)},
                   {"what", h.what}});
  return out;
}

nlohmann::json to_json(const Snapshot& s, const TopologyView& v, const Report& r,
                       const RunContext& ctx) {
  nlohmann::json j;
  j["schema"] = "gdsbench.topo/1";
  j["tool"] = {{"name", "gdsb-topo"}, {"version", ctx.tool_version}};
  j["argv"] = ctx.argv;
  j["context"] = ctx.run;
  j["interrupted"] = false;
  j["source"] = {{"kind", source_kind_name(s.kind)},
                 {"path", s.path.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.path)}};
  j["devices"] = nlohmann::json::array();
  for (const auto& d : s.devices) j["devices"].push_back(device_json(s, d));
  j["checks"] = nlohmann::json::array();
  for (const auto& c : r.checks)
    j["checks"].push_back({{"id", c.id},
                           {"title", c.title},
                           {"verdict", verdict_name(c.verdict)},
                           {"devices", c.devices},
                           {"evidence", c.evidence},
                           {"consequence", c.consequence},
                           {"remedy", c.remedy},
                           {"reason", c.reason}});
  // cuFile's P2PDMA mode, fact by fact (gdsb/topo/p2pdma.hpp): what the gds-stack result
  // says in words, as data for gdsb-doctor and scripts.
  const P2pdmaReadiness p2pdma = p2pdma_readiness(s);
  j["p2pdma"] = {{"verdict", p2pdma.verdict()}, {"ready", p2pdma.ready()}, {"facts", nlohmann::json::array()}};
  for (const P2pdmaFact& f : p2pdma.facts)
    j["p2pdma"]["facts"].push_back({{"name", f.name},
                                    {"state", fact_state_name(f.state)},
                                    {"evidence", f.evidence},
                                    {"fix", f.fix}});
  j["pairs"] = nlohmann::json::array();
  for (const auto& p : v.pairs())
    j["pairs"].push_back({{"gpu", p.gpu},
                          {"peer", p.peer},
                          {"peer_role", role_name(p.peer_role)},
                          {"label", path_label_name(p.label)},
                          {"p2pdma", p2pdma_map_name(p.p2pdma)},
                          {"distance", p.distance},
                          {"acs_redirect_ports", p.acs_redirect_ports}});
  const auto ceiling = [](const Ceiling& c) {
    nlohmann::json o{{"gb_s", c.gb_s ? nlohmann::json(*c.gb_s) : nlohmann::json(nullptr)},
                     {"limited_by", c.limited_by},
                     {"peers", c.peers},
                     {"hops", hops_json(c.hops)}};
    if (!c.gpu.empty()) o["gpu"] = c.gpu;
    if (!c.basis.empty()) o["basis"] = c.basis;
    return o;
  };
  j["ceilings"] = nlohmann::json::array();
  for (const auto& c : r.ceilings) j["ceilings"].push_back(ceiling(c));
  // Additive: remote GDS per GPU through its NICs, and the node-wide aggregates.
  j["nic_ceilings"] = nlohmann::json::array();
  for (const auto& c : r.nic_ceilings) j["nic_ceilings"].push_back(ceiling(c));
  j["node_ceilings"] = {{"nvme", ceiling(r.node_nvme)}, {"nic", ceiling(r.node_nic)}};
  // Additive (issue 25): per network mount, its carriers' ceilings node-wide and per GPU.
  j["mount_ceilings"] = nlohmann::json::array();
  for (const auto& m : r.mount_ceilings) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& c : m.gpus) gpus.push_back(ceiling(c));
    j["mount_ceilings"].push_back(
        {{"target", m.target}, {"kind", m.kind}, {"node", ceiling(m.node)}, {"gpus", gpus}});
  }
  // Additive (issue 25): per network mount, whether GDS engages on it and what carries it.
  j["network_mounts"] = network_mounts_json(s, v);
  j["virtual_devices"] = nlohmann::json::array();
  for (const Device* d : v.virtual_devices())
    j["virtual_devices"].push_back({{"bdf", d->bdf}, {"reason", virtual_device_reason(*d)}});
  // Additive: the path model's sources per GPU and whether GDS applies at all.
  j["gds_applicable"] = r.gds_applicable;
  j["applicability"] = r.applicability;
  j["data_paths"] = nlohmann::json::array();
  for (const auto& p : r.data_paths)
    j["data_paths"].push_back({{"gpu", p.gpu},
                               {"source", p.source},
                               {"kind", data_source_name(p.kind)},
                               {"p2p", p.p2p},
                               {"why", p.why}});
  // Additive (issue 42): the fault facts judged as --health would without a known-good file,
  // each once, with what it would do ("drain", "warn"); the facts themselves are in snapshot.
  j["faults"] = nlohmann::json::array();
  for (const FaultFinding& f : r.faults)
    j["faults"].push_back({{"kind", fault_kind_name(f.kind)}, {"severity", fault_severity_name(f.severity)},
                           {"health", health_action_name(f)}, {"bdf", f.bdf}, {"device", f.device},
                           {"xid", f.xid ? nlohmann::json(f.xid) : nlohmann::json(nullptr)}, {"count", f.count},
                           {"when", f.when}, {"action", f.action}, {"words", f.words}});
  j["verdict"] = verdict_name(r.verdict);
  j["notes"] = s.notes;
  // Additive: every fact the checks and gdsb-doctor's rules read (BARs, bridge buses, host
  // facts, NVML facts), in the snapshot's own layout, so gdsb-doctor --topo diagnoses from
  // the same model as a live run or a replay. The raw config bytes stay in snapshots only.
  j["snapshot"] = snapshot_json(s, false);
  return j;
}

}  // namespace gdsb::topo
