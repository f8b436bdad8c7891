// The registry and the overall verdict (ceilings: path_ceilings.cpp, over flow_solver.cpp).
#include <algorithm>
#include <cstdio>

#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Pass:
      return "pass";
    case Verdict::Warn:
      return "warn";
    case Verdict::Fail:
      return "fail";
    case Verdict::Waived:
      return "waived";
  }
  return "fail";
}

std::vector<std::unique_ptr<Check>> all_checks() {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(make_acs_check());
  checks.push_back(make_iommu_check());
  checks.push_back(make_pair_check());
  checks.push_back(make_link_check());
  checks.push_back(make_bar1_check());
  checks.push_back(make_numa_check());
  checks.push_back(make_gds_stack_check());
  checks.push_back(make_rdma_stack_check());
  return checks;
}

Report evaluate(const Snapshot& s, const TopologyView& view) {
  const PathModel model(view);
  return evaluate(s, view, model);
}

Report evaluate(const Snapshot& s, const TopologyView& view, const PathModel& model) {
  Report r;
  CheckContext ctx{s, view, model};
  for (const auto& check : all_checks())
    for (auto& res : check->run(ctx)) r.checks.push_back(std::move(res));
  for (const auto& c : r.checks) {
    if (c.verdict == Verdict::Fail) r.verdict = Verdict::Fail;
    if (c.verdict == Verdict::Warn && r.verdict == Verdict::Pass) r.verdict = Verdict::Warn;
  }
  for (const Device* g : view.gpus()) {
    r.ceilings.push_back(model.gpu_ceiling(g->bdf, DataSource::LocalNvme));
    r.nic_ceilings.push_back(model.gpu_ceiling(g->bdf, DataSource::DataNic));
  }
  r.node_nvme = model.node_ceiling(DataSource::LocalNvme);
  r.node_nic = model.node_ceiling(DataSource::DataNic);
  r.gds_applicable = model.gds_applicable();
  r.applicability = model.applicability();
  r.data_paths = model.paths();
  for (const NetworkMount& nm : network_mounts(s, &view)) {
    std::vector<std::string> nics;
    for (const auto& c : nm.carriers)
      if (!c.bdf.empty() && std::find(nics.begin(), nics.end(), c.bdf) == nics.end())
        nics.push_back(c.bdf);
    if (nics.empty()) continue;  // the mount's reading says why no NIC was found
    Report::MountCeilings mc{nm.mount->target, nm.kind, model.carriers_ceiling(nics, ""), {}};
    for (const Device* g : view.gpus()) mc.gpus.push_back(model.carriers_ceiling(nics, g->bdf));
    r.mount_ceilings.push_back(std::move(mc));
  }
  r.faults = judge_faults(s, FaultBaseline{});
  return r;
}

std::vector<Ceiling> compute_ceilings(const Snapshot&, const TopologyView& v) {
  const PathModel m(v);
  std::vector<Ceiling> out;
  for (const Device* g : v.gpus()) out.push_back(m.gpu_ceiling(g->bdf, DataSource::LocalNvme));
  return out;
}

}  // namespace gdsb::topo
