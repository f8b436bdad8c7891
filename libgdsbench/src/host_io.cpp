#include "gdsb/host_io.hpp"

#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gdsb/error.hpp"
#include "gdsb/host_buffer.hpp"
#include "io_uring_worker.hpp"

namespace gdsb {

void HostIoWorker::load_slot(uint32_t slot, std::span<const std::byte> data) {
  const std::size_t n = std::min<std::size_t>(data.size(), slot_bytes());
  std::memcpy(slot_data(slot), data.data(), n);
}

void HostIoWorker::read_slot(uint32_t slot, std::span<std::byte> out) {
  const std::size_t n = std::min<std::size_t>(out.size(), slot_bytes());
  std::memcpy(out.data(), slot_data(slot), n);
}

namespace {

// pread/pwrite until the request is done. Reads stop early only at end of file (or when
// the rest cannot be read after partial progress, e.g. O_DIRECT past an unaligned EOF);
// writes report the error that stopped them, so ENOSPC is never hidden.
int64_t transfer_all(int fd, IoDir dir, std::byte* buf, uint32_t length, uint64_t offset) {
  std::size_t done = 0;
  while (done < length) {
    const auto off = static_cast<off_t>(offset + done);
    const ssize_t n = dir == IoDir::Read ? ::pread(fd, buf + done, length - done, off)
                                         : ::pwrite(fd, buf + done, length - done, off);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR || err == EAGAIN) continue;
      if (dir == IoDir::Read && done > 0) break;
      return -err;
    }
    if (n == 0) {
      if (dir == IoDir::Write) return -EIO;  // a write that moves nothing cannot progress
      break;                                 // end of file
    }
    done += static_cast<std::size_t>(n);
  }
  return static_cast<int64_t>(done);
}

class PsyncWorker final : public HostIoWorker {
 public:
  PsyncWorker(const HostIoOptions& o, const FileSet& files)
      : fds_(files.fds),
        depth_(o.depth == 0 ? 1 : o.depth),
        slot_bytes_(o.slot_bytes),
        memory_(static_cast<std::size_t>(depth_) * slot_stride(o.slot_bytes), o.numa_node),
        done_(depth_) {}

  uint32_t depth() const override { return depth_; }
  std::byte* slot_data(uint32_t slot) override {
    return memory_.data() + static_cast<std::size_t>(slot) * slot_stride(slot_bytes_);
  }
  uint32_t slot_bytes() const override { return slot_bytes_; }
  std::string describe() const override {
    return "psync (pread/pwrite), depth " + std::to_string(depth_);
  }

  void submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const int64_t res = transfer_all(fds_[r.file], r.dir, slot_data(r.slot), r.length, r.offset);
      done_[(head_ + count_) % depth_] = {r.tag, res};
      ++count_;
    }
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t /*min_complete*/) override {
    std::size_t n = 0;
    while (count_ > 0 && n < out.size()) {
      out[n++] = done_[head_];
      head_ = (head_ + 1) % depth_;
      --count_;
    }
    return n;
  }

 private:
  // Slots are page multiples apart so each one is O_DIRECT-aligned.
  static std::size_t slot_stride(uint32_t bytes) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return (std::size_t{bytes} + page - 1) / page * page;
  }

  std::vector<int> fds_;
  uint32_t depth_;
  uint32_t slot_bytes_;
  HostBuffer memory_;
  std::vector<IoCompletion> done_;  // ring of finished requests
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

}  // namespace

std::unique_ptr<HostIoWorker> make_host_io_worker(const HostIoOptions& options,
                                                  const FileSet& files) {
  if (options.slot_bytes == 0) throw UsageError("host I/O worker: slot size must be above 0");
  if (options.engine == SubmitEngine::IoUring) return detail::make_io_uring_worker(options, files);
  return std::make_unique<PsyncWorker>(options, files);
}

std::unique_ptr<HostIoWorker> make_host_io_worker(SubmitEngine engine, const FileSet& files,
                                                  uint32_t depth, uint32_t slot_bytes,
                                                  std::optional<int> numa_node) {
  HostIoOptions o;
  o.engine = engine;
  o.depth = depth;
  o.slot_bytes = slot_bytes;
  o.numa_node = numa_node;
  return make_host_io_worker(o, files);
}

Availability probe_io_uring(uint32_t depth) {
  io_uring ring{};
  const int rc = io_uring_queue_init(depth == 0 ? 1 : depth, &ring, 0);
  if (rc < 0) {
    std::string why = "io_uring is unavailable: io_uring_setup(" + std::to_string(depth) +
                      " entries) failed with errno " + std::to_string(-rc) + " (" +
                      std::strerror(-rc) + ")";
    if (rc == -ENOSYS) why += "; the kernel was built without io_uring";
    if (rc == -EPERM) {
      std::ifstream sysctl("/proc/sys/kernel/io_uring_disabled");
      int disabled = 0;
      if (sysctl >> disabled && disabled != 0) {
        why += "; the sysctl kernel.io_uring_disabled is " + std::to_string(disabled) +
               (disabled == 1 ? " (only members of kernel.io_uring_group may use it)"
                              : " (off for everyone)");
      } else {
        why += "; most likely a seccomp filter (containers block io_uring by default)";
      }
    }
    why += "; use --engine psync";
    return Availability::no(why);
  }
  io_uring_queue_exit(&ring);
  return Availability::yes();
}

}  // namespace gdsb
