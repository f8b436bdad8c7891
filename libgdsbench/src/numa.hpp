// Internal: binding worker threads to a NUMA node's CPUs (hwloc).
#pragma once

#include <memory>
#include <string>

namespace gdsb::detail {

class NumaBinding {
 public:
  // Loads the topology and finds node `os_index`; UsageError naming the nodes that exist
  // when there is no such node.
  explicit NumaBinding(int os_index);
  ~NumaBinding();
  NumaBinding(const NumaBinding&) = delete;
  NumaBinding& operator=(const NumaBinding&) = delete;

  // Binds the calling thread to the node's CPUs; RuntimeError with the system error.
  void bind_current_thread() const;
  const std::string& cpus() const { return cpus_; }  // e.g. "0-15"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int node_;
  std::string cpus_;
};

}  // namespace gdsb::detail
