// BAR1 too small for the buffers: cuFile cannot map them and falls back (gdsb-topo's bar1
// check, or cuFile's BAR1 errors in a run).
#include "cufile_evidence.hpp"
#include "topo_check_rule.hpp"

namespace gdsb::doctor {
namespace {

constexpr const char* kFix =
    "BIOS: enable 'Above 4G Decoding' and 'Re-Size BAR Support' (Resizable BAR); check with "
    "nvidia-smi -q -d MEMORY (BAR1 Memory Usage)";

std::vector<Finding> run(const Facts& facts) {
  auto out = detail::from_topo_check(facts, "bar1", {topo::Verdict::Fail, topo::Verdict::Warn},
                                     "bar1", "BAR1 too small: ", Confidence::Certain,
                                     Confidence::Possible, kFix);
  // Cross-check with the BARs the input lists: a GPU with a large 64-bit BAR elsewhere
  // than index 1 (lspci numbers BAR registers: BAR1 of a 64-bit BAR0 is "Region 2") has
  // its BAR1; such a result is kept only as possible.
  for (auto& f : out) {
    if (!facts.platform || f.confidence == Confidence::Possible) continue;
    for (const auto& bdf : f.devices) {
      const topo::Device* d = facts.platform->snapshot->find(bdf);
      if (!d || d->role != topo::Role::Gpu) continue;
      uint64_t largest = 0;
      for (const auto& b : d->bars) largest = std::max(largest, b.size);
      if (largest > (256ULL << 20)) {
        f.confidence = Confidence::Possible;
        f.impact_gb_s = 0;
        f.evidence.push_back(bdf + " lists a " + std::to_string(largest >> 20) +
                             " MiB BAR: the input shows a large BAR1 (register numbering)");
      }
    }
  }
  for (const auto& r : facts.figures.runs) {
    if (!xfer_uses_cufile(r.workload.xfer)) continue;
    const auto ev = detail::bar1_exhausted(r);
    if (ev.empty()) continue;
    Finding f;
    f.rule = "bar1";
    f.title = "BAR1 exhausted: cuFile could not map the GPU buffers";
    f.confidence = Confidence::Certain;
    f.evidence = ev;
    f.fix = std::string(kFix) + "; or use smaller/fewer buffers (gdsb-io -i, -w)";
    const GpuDiagnosis* g = facts.gpu_of(r);
    if (g) f.devices.push_back(g->label);
    detail::expect_ceiling(f, g, run_gb_s(r));
    out.push_back(std::move(f));
    break;
  }
  return out;
}

}  // namespace

Rule bar1_rule() { return {"bar1", "BAR1 too small for the GPU buffers", run}; }

}  // namespace gdsb::doctor
