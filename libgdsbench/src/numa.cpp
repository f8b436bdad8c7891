#include "numa.hpp"

#include <hwloc.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gdsb/error.hpp"

namespace gdsb::detail {

struct NumaBinding::Impl {
  hwloc_topology_t topo = nullptr;
  hwloc_obj_t node = nullptr;
  ~Impl() {
    if (topo != nullptr) hwloc_topology_destroy(topo);
  }
};

NumaBinding::NumaBinding(int os_index) : impl_(std::make_unique<Impl>()), node_(os_index) {
  if (hwloc_topology_init(&impl_->topo) != 0 || hwloc_topology_load(impl_->topo) != 0) {
    throw RuntimeError(std::string("cannot read the machine topology (hwloc): ") +
                       std::strerror(errno));
  }
  std::string known;
  hwloc_obj_t obj = nullptr;
  while ((obj = hwloc_get_next_obj_by_type(impl_->topo, HWLOC_OBJ_NUMANODE, obj)) != nullptr) {
    if (static_cast<int>(obj->os_index) == os_index) impl_->node = obj;
    known += (known.empty() ? "" : ", ") + std::to_string(obj->os_index);
  }
  if (os_index < 0 || impl_->node == nullptr) {
    throw UsageError("-n " + std::to_string(os_index) +
                     ": no such NUMA node; this machine has node(s) " + known);
  }
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, impl_->node->cpuset) >= 0 && text != nullptr) {
    cpus_ = text;
    free(text);  // NOLINT: hwloc allocates with malloc
  }
}

NumaBinding::~NumaBinding() = default;

void NumaBinding::bind_current_thread() const {
  if (hwloc_set_cpubind(impl_->topo, impl_->node->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    throw RuntimeError("cannot bind a worker thread to the CPUs of NUMA node " +
                       std::to_string(node_) + " (" + cpus_ + "): " + std::strerror(errno));
  }
}

}  // namespace gdsb::detail
