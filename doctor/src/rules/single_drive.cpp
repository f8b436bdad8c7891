// The GPU has several nearest drives, but storage delivers what one of them can: the data
// lives on one drive (no striping) where several were expected.
#include "gdsb/topo/pci_config.hpp"
#include "gdsb/topo/path_model.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

std::vector<Finding> run(const Facts& facts) {
  if (!facts.platform) return {};
  const RunResult* x1 = facts.storage_alone();
  std::vector<Finding> out;
  for (const auto& g : facts.gpus) {
    const auto near = facts.platform->view->best_for_gpu(g.bdf, topo::Role::Nvme);
    const auto drives = facts.drives(g);
    if (near.size() < 2 || !drives) continue;
    const topo::Device* one = facts.platform->snapshot->find(near.front()->peer);
    const auto hop = one ? topo::link_hop(*facts.platform->snapshot, *one) : std::nullopt;
    if (!hop || !hop->gb_s) continue;
    const double single = *hop->gb_s;  // the path model's drive link
    // The best storage figure reaching this GPU (or storage alone).
    std::optional<double> seen = g.measured_gb_s;
    std::string by = g.measured_by;
    // Storage alone says nothing about a GPU; it counts for the GPU the runs named (-d).
    if (x1 && facts.gpu_of(*x1) == &g && (!seen || *run_gb_s(*x1) > *seen)) {
      seen = run_gb_s(*x1);
      by = detail::describe_run(*x1);
    }
    if (!seen || *seen > 1.1 * single || *seen < 0.75 * single || *seen > 0.6 * *drives) continue;
    Finding f;
    f.rule = "single-drive";
    f.title = "storage delivers one drive's worth (" + detail::gb(*seen) + ") where " +
              std::to_string(near.size()) + " drives are near " + g.label;
    f.confidence = Confidence::Likely;
    f.devices.push_back(g.bdf);
    for (const auto* pr : near) f.devices.push_back(pr->peer);
    f.evidence.push_back(by + ": " + detail::gb(*seen) + " = " + detail::pct(*seen / single) +
                         " of one drive (" + hop->what + ", " + detail::gb(single) + ")");
    f.evidence.push_back("the " + std::to_string(near.size()) + " nearest drives allow " +
                         detail::gb(*drives));
    f.fix = "stripe the data over the drives (mdadm --create /dev/md0 --level=0 --raid-devices=" +
            std::to_string(near.size()) + " ... ; mkfs.xfs or ext4 -o data=ordered), or read "
            "one file per drive (gdsb-io -D per drive)";
    f.storage_fix = true;  // RAID0 changes the storage: today's storage figure is no bound
    f.expected_gb_s = g.path_ceiling_gb_s ? g.path_ceiling_gb_s : drives;
    f.expected = "~" + detail::gb(*f.expected_gb_s) + " with every drive in use";
    f.impact_gb_s = *f.expected_gb_s - *seen;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule single_drive_rule() {
  return {"single-drive", "one drive where several were expected", run};
}

}  // namespace gdsb::doctor
