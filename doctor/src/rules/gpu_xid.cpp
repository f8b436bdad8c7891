// A GPU under test (one a run measured) with an Xid in the kernel log the platform snapshot
// holds: the NVIDIA driver reported the GPU itself failing (fallen off the bus, a GSP or
// context switch timeout, a memory error), so its figure measures the fault, not the
// storage path. The Xids are judged as gdsb-topo --health judges them (topo::judge_faults,
// the Xid table's rows); nothing here reads log text (issue 42: no input ignored).
#include "gdsb/topo/hw_faults.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

std::vector<Finding> run(const Facts& facts) {
  if (!facts.platform || !facts.platform->snapshot->faults.kernel_log) return {};
  const topo::Snapshot& snap = *facts.platform->snapshot;
  std::vector<Finding> out;
  for (const topo::FaultFinding& x : topo::judge_faults(snap, topo::FaultBaseline{})) {
    if (x.kind != topo::FaultKind::Xid) continue;
    for (const auto& g : facts.gpus) {
      // A GPU no run measured is not under test: gdsb-topo (FAULTS, --health) names it.
      if (g.bdf != x.bdf || !g.measured_gb_s) continue;
      const bool critical = x.severity == topo::FaultSeverity::Critical;
      Finding f;
      f.rule = "gpu-xid";
      f.title = g.label + " " + g.bdf + " " + topo::xid_words(x.xid, x.count, x.when) +
                ": its figure is not a path problem";
      // An Xid the health check drains on is the GPU failing; one it only warns about (an
      // application's fault, Xid 13 or 43) may have been this run's or another program's.
      f.confidence = critical ? Confidence::Likely : Confidence::Possible;
      f.devices = {g.bdf, g.label};
      f.evidence.push_back("kernel log " + snap.faults.kernel_log->source + ": " + x.words);
      f.evidence.push_back(detail::measured_evidence(g));
      f.fix = x.action + ", then measure again (gdsb-topo --health --expect FILE says when the GPU is back)";
      detail::expect_ceiling(f, &g, critical ? g.measured_gb_s : std::nullopt);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace

Rule gpu_xid_rule() {
  return {"gpu-xid", "an Xid in the kernel log on a GPU a run measured (the GPU failed, not its path)", run};
}

}  // namespace gdsb::doctor
