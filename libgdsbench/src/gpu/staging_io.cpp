#include "gdsb/gpu/staging_io.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gdsb/error.hpp"

namespace gdsb::gpu {
namespace {

struct FreeDeleter {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};

class PosixStagingIo final : public StagingIo {
 public:
  PosixStagingIo(const FileSet& files, const StagingSpec& spec)
      : files_(files), spec_(spec), stride_((spec.slot_bytes + 4095) / 4096 * 4096) {
    if (spec.depth == 0 || spec.slot_bytes == 0) {
      throw std::invalid_argument("posix staging: depth and slot size must be positive");
    }
    void* p = nullptr;
    const std::size_t total = stride_ * spec.depth;
    if (posix_memalign(&p, 4096, total) != 0) {
      throw RuntimeError("cannot allocate " + std::to_string(total) + " bytes of staging memory");
    }
    mem_.reset(static_cast<std::byte*>(p));
    if (spec.numa_node) bind_memory_to_node(p, total, *spec.numa_node);
    std::memset(p, 0, total);  // first touch after mbind places the pages
  }

  uint32_t depth() const override { return spec_.depth; }
  std::size_t slot_bytes() const override { return spec_.slot_bytes; }
  std::byte* slot(uint32_t i) override { return mem_.get() + stride_ * i; }
  uint32_t in_flight() const override { return static_cast<uint32_t>(done_.size()); }

  void submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      if (r.slot >= spec_.depth || r.length > spec_.slot_bytes || r.file >= files_.fds.size()) {
        throw std::logic_error("posix staging: request outside its slots or files");
      }
      done_.push_back({r.tag, transfer(r)});
    }
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    if (min_complete > done_.size()) {
      throw std::logic_error("posix staging: asked to wait for more than was submitted");
    }
    std::size_t n = 0;
    while (n < out.size() && !done_.empty()) {
      out[n++] = done_.front();
      done_.pop_front();
    }
    return n;
  }

 private:
  int64_t transfer(const IoRequest& r) {
    const int fd = files_.fds[r.file];
    std::byte* buf = slot(r.slot);
    std::size_t done = 0;
    while (done < r.length) {
      const auto off = static_cast<off_t>(r.offset + done);
      const ssize_t n = r.dir == IoDir::Read ? ::pread(fd, buf + done, r.length - done, off)
                                             : ::pwrite(fd, buf + done, r.length - done, off);
      if (n < 0) {
        if (errno == EINTR) continue;
        return -errno;
      }
      if (n == 0) break;  // end of file on a read
      done += static_cast<std::size_t>(n);
    }
    return static_cast<int64_t>(done);
  }

  const FileSet& files_;
  StagingSpec spec_;
  std::size_t stride_;
  std::unique_ptr<std::byte, FreeDeleter> mem_;
  std::deque<IoCompletion> done_;
};

std::vector<int> parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty() || part == "\n") continue;
    const auto dash = part.find('-');
    const int lo = std::stoi(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace

std::unique_ptr<StagingIo> make_posix_staging_io(const FileSet& files, const StagingSpec& spec) {
  return std::make_unique<PosixStagingIo>(files, spec);
}

bool bind_memory_to_node(void* p, std::size_t bytes, int node) {
  if (node < 0 || node >= 64) return false;
  constexpr int kMpolBind = 2;
  unsigned long mask = 1UL << static_cast<unsigned>(node);
  const long rc = ::syscall(SYS_mbind, p, bytes, kMpolBind, &mask, 64UL, 0U);
  return rc == 0;
}

void bind_thread_to_node(int node) {
  const std::string path = "/sys/devices/system/node/node" + std::to_string(node) + "/cpulist";
  std::ifstream in(path);
  std::string text;
  if (!in || !std::getline(in, text)) {
    throw RuntimeError("-n " + std::to_string(node) + ": no such NUMA node (" + path +
                       " unreadable)");
  }
  const auto cpus = parse_cpulist(text);
  if (cpus.empty()) throw RuntimeError("-n " + std::to_string(node) + ": the node has no CPUs");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(static_cast<std::size_t>(c), &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    throw RuntimeError("-n " + std::to_string(node) + ": sched_setaffinity: " +
                       std::strerror(errno));
  }
}

}  // namespace gdsb::gpu
