// Page-aligned host memory (RAII), optionally bound to one NUMA node. Page alignment
// satisfies O_DIRECT on every Linux filesystem and block device.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace gdsb {

// Binds [p, p + bytes) to NUMA node `node` (mbind MPOL_BIND, moving pages already touched);
// p must be page aligned. Throws RuntimeError naming the node and the system error. The
// one implementation for every host buffer of the project (engine slots, GPU staging and
// the -m 3/4 buffers of the cuFile types).
void bind_memory_to_node(void* p, std::size_t bytes, int node);

class HostBuffer {
 public:
  HostBuffer() = default;
  // Maps `bytes` (rounded up to whole pages) of anonymous memory. With numa_node, binds it
  // there (mbind MPOL_BIND) before touching it. Pages are touched so later first use
  // costs no page faults. Throws RuntimeError naming the size and the system error.
  explicit HostBuffer(std::size_t bytes, std::optional<int> numa_node = std::nullopt);
  ~HostBuffer();
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::span<std::byte> span() const noexcept { return {data_, size_}; }

 private:
  void release() noexcept;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;    // as requested
  std::size_t mapped_ = 0;  // rounded to pages
};

}  // namespace gdsb
