// ACS redirect (RR/CR/EC in ACSCtl) on a port of the GPU-drive path: the kernel routes
// the peer-to-peer traffic up through the root complex instead of turning in the switch.
#include <map>

#include "gdsb/topo/pci_config.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

std::string bits(uint16_t ctl) {
  std::string s;
  for (auto [bit, name] : {std::pair{topo::kAcsRr, "ReqRedir"}, std::pair{topo::kAcsCr, "CmpltRedir"},
                           std::pair{topo::kAcsEc, "EgressCtrl"}})
    if (ctl & bit) s += std::string(s.empty() ? "" : " ") + name;
  return s;
}

std::vector<Finding> run(const Facts& facts) {
  if (!facts.platform) return {};
  const Platform& p = *facts.platform;
  std::vector<Finding> out;
  for (const auto& g : facts.gpus) {
    // port -> drives whose path to this GPU crosses it with redirect on
    std::map<std::string, std::vector<const topo::Pair*>> ports;
    for (const auto& pr : p.view->pairs())
      if (pr.gpu == g.bdf && pr.peer_role == topo::Role::Nvme)
        for (const auto& port : pr.acs_redirect_ports) ports[port].push_back(&pr);
    if (ports.empty()) continue;
    // Only the GPU's nearest drives matter for its figure; others are noted as evidence.
    const auto nearest = p.view->best_for_gpu(g.bdf, topo::Role::Nvme);
    std::string all_ports;
    for (const auto& [port, _] : ports) all_ports += (all_ports.empty() ? "" : ";") + port;
    for (const auto& [port, pairs] : ports) {
      const topo::Device* d = p.snapshot->find(port);
      Finding f;
      f.rule = "acs-redirect";
      f.title = "ACS redirect on " + port + " (" +
                std::string(d ? topo::role_name(d->role) : "port") + ") sends " + g.label +
                "'s storage traffic through the root complex";
      f.confidence = Confidence::Certain;
      f.devices = {port, g.bdf};
      for (const auto* pr : pairs) detail::add_unique(f.devices, pr->peer);
      if (d && d->acs)
        f.evidence.push_back(port + " ACSCtl " + topo::hex16(d->acs->ctl) + " (" +
                             bits(d->acs->ctl) + " set; ACSCap " + topo::hex16(d->acs->cap) + ")");
      for (const auto* pr : pairs) {
        const topo::Device* n = p.snapshot->find(pr->peer);
        auto rec = p.recorded_p2pdma.find(pr->gpu + " " + pr->peer);
        f.evidence.push_back(
            g.label + " x " + pr->peer +
            (n && !n->block_devices.empty() ? " (" + n->block_devices.front() + ")" : "") + ": " +
            std::string(topo::path_label_name(pr->label)) + ", P2PDMA " +
            (rec != p.recorded_p2pdma.end() ? rec->second
                                            : std::string(topo::p2pdma_map_name(pr->p2pdma))) +
            ", distance " + std::to_string(pr->distance) + " via " + pr->common_bridge);
      }
      f.fix = "setpci -s " + port + " ECAP_ACS+6.w=0:2c (clears ReqRedir, CmpltRedir, "
              "EgressCtrl until reboot); persistent: boot parameter pci=disable_acs_redir=" +
              all_ports + " (keep ACS where VMs need isolation)";
      bool binds = std::any_of(pairs.begin(), pairs.end(), [&](const topo::Pair* pr) {
        return std::find(nearest.begin(), nearest.end(), pr) != nearest.end();
      });
      // In compat mode the data crosses the host anyway: the redirect binds once GDS runs.
      const bool gds = g.measured_gds;
      detail::expect_ceiling(f, &g, binds && gds ? g.measured_gb_s : std::nullopt);
      if (!gds && g.measured_gb_s)
        f.expected += " (matters once cuFile runs GDS; the measured run did not)";
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace

Rule acs_redirect_rule() {
  return {"acs-redirect", "ACS redirect on a port between a GPU and its drives", run};
}

}  // namespace gdsb::doctor
