// The GPUDirect RDMA stack a network mount needs is missing (gdsb-topo's rdma-stack check):
// no nvidia-peermem and no DMA-BUF, no ACTIVE RDMA port, a cufile.json RDMA address on a port
// that is down. The check fails only where a mount reads over RDMA (issue 25).
#include "topo_check_rule.hpp"

namespace gdsb::doctor {

Rule rdma_stack_rule() {
  return {"rdma-stack", "the GPUDirect RDMA stack a network mount needs is missing",
          [](const Facts& f) {
            return detail::from_topo_check(f, "rdma-stack",
                                           {topo::Verdict::Fail, topo::Verdict::Warn},
                                           "rdma-stack", "GPUDirect RDMA: ", Confidence::Certain,
                                           Confidence::Likely, "");
          }};
}

}  // namespace gdsb::doctor
