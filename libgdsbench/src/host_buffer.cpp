#include "gdsb/host_buffer.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gdsb/error.hpp"

namespace gdsb {
namespace {

// From <numaif.h> (kernel ABI); libnuma is not a dependency.
constexpr int kMpolBind = 2;
constexpr unsigned kMpolMfMove = 1U << 1;

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

void bind_memory_to_node(void* p, std::size_t bytes, int node) {
  if (node < 0 || node >= 4096) {
    throw RuntimeError("NUMA node " + std::to_string(node) + " is out of range");
  }
  constexpr std::size_t kBitsPerWord = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(static_cast<std::size_t>(node) / kBitsPerWord + 1, 0UL);
  mask[static_cast<std::size_t>(node) / kBitsPerWord] |=
      1UL << (static_cast<std::size_t>(node) % kBitsPerWord);
  const long rc = syscall(SYS_mbind, p, bytes, kMpolBind, mask.data(),
                          mask.size() * kBitsPerWord + 1, kMpolMfMove);
  if (rc != 0) {
    const int err = errno;
    throw RuntimeError("cannot bind host buffer memory to NUMA node " + std::to_string(node) +
                       " (mbind): " + errno_text(err));
  }
}

HostBuffer::HostBuffer(std::size_t bytes, std::optional<int> numa_node) : size_(bytes) {
  if (bytes == 0) return;
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  mapped_ = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    mapped_ = 0;
    throw RuntimeError("cannot allocate " + std::to_string(bytes) +
                       " bytes of host buffer memory: " + errno_text(err));
  }
  data_ = static_cast<std::byte*>(p);
  if (numa_node) {
    try {
      bind_memory_to_node(p, mapped_, *numa_node);
    } catch (...) {
      release();
      throw;
    }
  }
  std::memset(data_, 0, mapped_);  // fault the pages in now, on the bound node
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

void HostBuffer::release() noexcept {
  if (data_ != nullptr) munmap(data_, mapped_);
  data_ = nullptr;
  mapped_ = 0;
}

}  // namespace gdsb
