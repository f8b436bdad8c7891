// A link on the GPU's or a drive's path trained narrower or slower than both ends allow
// (gdsb-topo's link check, failed results only: idle GPU downclocking only warns).
#include "gdsb/topo/pci_config.hpp"
#include "topo_check_rule.hpp"

namespace gdsb::doctor {
namespace {

std::vector<Finding> run(const Facts& facts) {
  auto out = detail::from_topo_check(
      facts, "link", {topo::Verdict::Fail}, "link", "link degraded: ", Confidence::Likely,
      Confidence::Possible,
      "reseat the card or cable/riser; BIOS: set the slot's 'PCIe Link Speed' to Auto (or the "
      "generation both ends support); then check LnkSta with lspci -vvv");
  if (!facts.platform) return out;
  for (auto& f : out) {
    // The expected figure once trained at capability: the degraded device's own link.
    for (const auto& bdf : f.devices) {
      const topo::Device* d = facts.platform->snapshot->find(bdf);
      if (!d || !d->link || d->link->max_width <= 0) continue;
      const double now = topo::link_gb_s(d->link->cur_speed_gts, d->link->cur_width);
      const double cap = topo::link_gb_s(d->link->max_speed_gts, d->link->max_width);
      // An unknown speed (0 GT/s in the snapshot) gives no figure to quote: the check's
      // own evidence (the lanes) stands alone (issue 24).
      if (now <= 0 || cap <= now) continue;
      f.evidence.push_back(bdf + " LnkSta " + topo::link_text(d->link->cur_speed_gts, d->link->cur_width) +
                           " (" + detail::gb(now) + ") of LnkCap " +
                           topo::link_text(d->link->max_speed_gts, d->link->max_width) + " (" +
                           detail::gb(cap) + ")");
      f.confidence = Confidence::Certain;
      break;
    }
  }
  return out;
}

}  // namespace

Rule link_rule() { return {"link", "a link trained narrower or slower than it can", run}; }

}  // namespace gdsb::doctor
