// GPUs and drives share a switch whose uplink carries less than the drives deliver, and
// the GPU's traffic crosses that uplink (bounce/compat path, ACS redirect, or drives
// under another switch): the uplink, not the drives, binds.
#include "gdsb/topo/pci_config.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

std::vector<Finding> run(const Facts& facts) {
  if (!facts.platform) return {};
  const Platform& p = *facts.platform;
  std::vector<Finding> out;
  for (const auto& g : facts.gpus) {
    // The GPU's own switch uplink (the model's hop on the GPU side of its drive paths) and
    // the drives below: the hop's device is the switch's upstream port.
    std::optional<double> uplink;
    std::string usp;
    const topo::Device* dev = p.snapshot->find(g.bdf);
    if (!dev) continue;  // a GPU the runs name but the snapshot lacks
    for (const topo::Device* a : p.view->ancestors(*dev))
      if (a->role == topo::Role::SwitchUpstream) {
        usp = a->bdf;
        if (auto h = topo::link_hop(*p.snapshot, *a)) uplink = h->gb_s;
        break;
      }
    const auto drives = facts.drives(g);
    if (usp.empty() || !uplink || !drives || *drives <= *uplink) continue;
    const auto near = p.model->nearest(g.bdf, topo::DataSource::LocalNvme);
    const bool crosses = !g.measured_gds ||  // bounce or compat: via the host
                         (!near.empty() && (near.front()->acs_redirect ||
                                            near.front()->crosses_host_bridge));
    if (!crosses) continue;
    int gpus_below = 0;
    for (const auto& other : facts.gpus) {
      const topo::Device* o = p.snapshot->find(other.bdf);
      if (!o) continue;
      for (const topo::Device* a : p.view->ancestors(*o))
        if (a->bdf == usp) ++gpus_below;
    }
    Finding f;
    f.rule = "shared-uplink";
    f.title = "switch uplink " + usp + " (" + detail::gb(*uplink) + ") is narrower than the " +
              detail::gb(*drives) + " of drives below it, and " + g.label + "'s reads cross it";
    const bool at_uplink = g.measured_gb_s && *g.measured_gb_s >= 0.85 * *uplink;
    f.confidence = at_uplink ? Confidence::Likely : Confidence::Possible;
    f.devices = {usp, g.bdf};
    f.evidence.push_back("drives " + detail::gb(*drives) + " vs uplink " + detail::gb(*uplink) +
                         " (" + detail::pct(*drives / *uplink) + " oversubscribed), " +
                         std::to_string(gpus_below) + " GPU(s) below the same uplink");
    if (g.measured_gb_s)
      f.evidence.push_back(g.label + " measured " + detail::gb(*g.measured_gb_s) + " = " +
                           detail::pct(*g.measured_gb_s / *uplink) + " of the uplink (" +
                           g.measured_by + ")");
    f.fix = "keep the traffic below the switch: GDS peer-to-peer (PIX, no ACS redirect, not compat "
            "mode) does not cross the uplink; otherwise spread drives and GPUs over switches";
    const double gpu_link = facts.hop(g, topo::HopKind::GpuLink).value_or(*drives);
    detail::expect_after_fix(f, std::min(*drives, gpu_link),
                             " once reads turn inside the switch",
                             at_uplink ? g.measured_gb_s : std::nullopt);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule shared_uplink_rule() {
  return {"shared-uplink", "drives and GPUs share an oversubscribed switch uplink", run};
}

}  // namespace gdsb::doctor
