// A GPU with retired pages or row remapping pending or failed (NVML's retirement and
// remapping queries, topo::GpuErrorCounters): memory errors the GPU works around until the
// next reset, or cannot work around any more. Named as a possible cause of a slow or failing
// run, with NVIDIA's remedy (reset, or drain and service when remapping failed).
#include "gdsb/topo/hw_faults.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

std::vector<Finding> run(const Facts& facts) {
  std::vector<Finding> out;
  for (const auto& [g, e] : detail::gpus_with_errors(facts)) {
    const uint64_t retired = e.retired_pages_sbe.value_or(0) + e.retired_pages_dbe.value_or(0);
    const bool failed = e.remap_failed.value_or(false);
    const bool pending = e.remap_pending.value_or(false) || e.retired_pages_pending.value_or(false);
    if (!failed && !pending && retired == 0) continue;
    Finding f;
    f.rule = "gpu-memory";
    f.title = g.label + " " + g.bdf + (failed    ? " failed to remap a memory row"
                                       : pending ? " has memory rows or pages waiting for a reset"
                                                 : " has retired memory pages");
    f.confidence = failed ? Confidence::Likely : Confidence::Possible;
    f.devices = {g.bdf, g.label};
    if (retired > 0)
      f.evidence.push_back("retired pages: " + std::to_string(e.retired_pages_sbe.value_or(0)) +
                           " single-bit, " + std::to_string(e.retired_pages_dbe.value_or(0)) + " double-bit" +
                           (e.retired_pages_pending.value_or(false) ? ", retirement pending" : ""));
    if (e.remapped_rows_correctable || e.remapped_rows_uncorrectable || e.remap_pending || e.remap_failed)
      f.evidence.push_back("remapped rows: " + std::to_string(e.remapped_rows_correctable.value_or(0)) +
                           " correctable, " + std::to_string(e.remapped_rows_uncorrectable.value_or(0)) +
                           " uncorrectable" + (e.remap_pending.value_or(false) ? ", remap pending" : "") +
                           (failed ? ", remapping FAILED" : ""));
    f.fix = failed ? "drain the node and send the GPU for service (row remapping failed: the memory "
                     "cannot be repaired in the field)"
                   : pending ? "reset the GPU when idle (nvidia-smi -r) or reboot, so the pending rows or "
                               "pages are remapped or retired; drain and service if it recurs"
                             : "watch the count (nvidia-smi -q -d PAGE_RETIREMENT,ROW_REMAPPER); a count that "
                               "rises: drain and service the GPU";
    detail::expect_ceiling(f, &g, std::nullopt);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule gpu_memory_rule() {
  return {"gpu-memory", "a GPU with retired pages or row remapping pending or failed", run};
}

}  // namespace gdsb::doctor
