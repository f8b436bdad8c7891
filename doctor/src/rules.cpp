// The registry, in report order (ties in ranking keep this order).
#include "gdsb/doctor/rules.hpp"

namespace gdsb::doctor {

std::vector<Rule> all_rules() {
  return {compat_mode_rule(),   cufile_missing_rule(), unaligned_io_rule(), acs_redirect_rule(),
          iommu_rule(),         locality_rule(),       link_rule(),         shared_uplink_rule(),
          bar1_rule(),          numa_bounce_rule(),    page_cache_rule(),   workload_limit_rule(),
          single_drive_rule(),  network_storage_rule(), rdma_stack_rule(),
          gpu_xid_rule(),       aer_path_rule(),       gpu_throttle_rule(),   gpu_memory_rule()};
}

}  // namespace gdsb::doctor
