// The CPU bounce path (-x 2/3) staged through host memory on the wrong socket: -x 2 is
// well below both the storage alone and the host link it is made of.
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

std::vector<Finding> run(const Facts& facts) {
  std::vector<Finding> out;
  const RunResult* x1 = facts.storage_alone();
  for (XferType x : {XferType::CpuGpu, XferType::CpuAsyncGpu}) {
    const RunResult* r = facts.best_read(x);
    if (!r || !x1) continue;
    const GpuDiagnosis* g = facts.gpu_of(*r);
    const auto h2d = g ? facts.hop(*g, topo::HopKind::HostLink) : std::nullopt;
    const double storage = *run_gb_s(*x1);
    const double parts = h2d ? std::min(storage, *h2d) : storage;
    const double bounce = *run_gb_s(*r);
    if (bounce >= 0.8 * parts) continue;
    std::optional<int> gpu_node;
    if (facts.platform && g)
      if (const topo::Device* d = facts.platform->snapshot->find(g->bdf))
        gpu_node = facts.platform->view->numa_of(*d);
    const auto bound = r->workload.numa_node;
    if (!gpu_node || (bound && *bound == *gpu_node)) continue;  // unknown, or already local
    if (facts.platform->snapshot->machine.numa_nodes == 1) continue;  // one node: nothing remote
    Finding f;
    f.rule = "numa-bounce";
    f.title = "bounce buffers of -x " + std::to_string(static_cast<int>(x)) +
              " are not bound to the GPU's NUMA node" +
              " (" + std::to_string(*gpu_node) + ")";
    f.confidence = Confidence::Likely;
    if (g) f.devices.push_back(g->label + (g->bdf.empty() ? "" : " " + g->bdf));
    f.evidence.push_back(detail::run_line(*r, bounce) + ", NUMA binding " +
                         (bound ? std::to_string(*bound) : std::string("none (-n not given)")));
    f.evidence.push_back("storage alone " + detail::run_line(*x1, storage));
    if (h2d) f.evidence.push_back("pinned H2D " + detail::gb(*h2d));
    f.evidence.push_back("bounce / min(storage, H2D) = " + detail::pct(bounce / parts));
    const std::string node = std::to_string(*gpu_node);
    f.fix = "bind threads and staging memory to node " + node + ": gdsb-io -n " + node +
            ", or numactl --cpunodebind=" + node + " --membind=" + node + " <application>";
    f.expected_gb_s = parts;
    f.expected = "~" + detail::gb(parts) + " (the slower of storage alone and H2D)";
    f.impact_gb_s = parts - bounce;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule numa_bounce_rule() {
  return {"numa-bounce", "bounce buffers on the remote socket (-x 2 slower than its parts)", run};
}

}  // namespace gdsb::doctor
