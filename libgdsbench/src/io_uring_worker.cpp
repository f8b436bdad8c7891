#include "io_uring_worker.hpp"

#include <liburing.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gdsb/env_choice.hpp"
#include "gdsb/error.hpp"
#include "gdsb/host_buffer.hpp"

// Kernel 6.15's "do not count this wait as I/O wait" (older uapi headers lack them).
#ifndef IORING_ENTER_NO_IOWAIT
#define IORING_ENTER_NO_IOWAIT (1U << 7)
#endif
#ifndef IORING_FEAT_NO_IOWAIT
#define IORING_FEAT_NO_IOWAIT (1U << 17)
#endif

namespace gdsb::detail {
namespace {

// liburing's flag for a registered ring fd in io_uring::int_flags (liburing's int_flags.h,
// the same value since 2.2, when io_uring_register_ring_fd appeared).
constexpr unsigned kLiburingRegisteredRing = 1U << 0;

std::string errno_text(int err) {
  return std::string(std::strerror(err)) + " (errno " + std::to_string(err) + ")";
}

class IoUringWorker final : public HostIoWorker {
 public:
  IoUringWorker(const HostIoOptions& o, const FileSet& files)
      : fds_(files.fds), depth_(std::max<uint32_t>(o.depth, 1)), slot_bytes_(o.slot_bytes) {
    stride_ = slot_stride(o.slot_bytes);
    memory_ = HostBuffer(std::size_t{depth_} * stride_, o.numa_node);
    slots_.resize(depth_);
    init_ring(o.single_thread, parse_uring_taskrun(std::getenv("GDSB_IO_URING_TASKRUN")),
              parse_uring_wait(std::getenv("GDSB_IO_URING_WAIT")));
    submit_each_ = parse_uring_submit(std::getenv("GDSB_IO_URING_SUBMIT")) == UringSubmit::Each;
    notes_ += submit_each_ ? ", one enter per request" : ", requests entered in batches";
    // A registered ring fd saves a file-table lookup per io_uring_enter; it belongs to
    // the registering thread, so only a single-thread ring has one.
    if (o.single_thread && io_uring_register_ring_fd(&ring_) == 1) notes_ += ", registered ring fd";
    register_files(files);
    if (o.register_buffers) register_buffers();
    notes_ += fixed_buffers_ ? ", registered buffers" : ", buffers not registered";
    notes_ += fixed_files_ ? ", registered files" : ", files not registered";
  }

  ~IoUringWorker() override { io_uring_queue_exit(&ring_); }
  IoUringWorker(const IoUringWorker&) = delete;
  IoUringWorker& operator=(const IoUringWorker&) = delete;

  uint32_t depth() const override { return depth_; }
  std::byte* slot_data(uint32_t slot) override {
    return memory_.data() + std::size_t{slot} * stride_;
  }
  uint32_t slot_bytes() const override { return slot_bytes_; }
  std::string describe() const override {
    return "io_uring, depth " + std::to_string(depth_) + notes_;
  }

  void submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      Slot& s = slots_[r.slot];
      s.tag = r.tag;
      s.file = r.file;
      s.offset = r.offset;
      s.length = r.length;
      s.done = 0;
      s.dir = r.dir;
      queue(r.slot);
      if (submit_each_) flush();
    }
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    std::size_t got = 0;
    min_complete = std::min(min_complete, out.size());
    while (true) {
      // Hand the queued SQEs over; waiting is a second step, as fio does, so the wait
      // can say it is not I/O wait.
      if (pending_ > 0) flush();
      const auto want = static_cast<unsigned>(got < min_complete ? min_complete - got : 0);
      if (want > 0 && io_uring_cq_ready(&ring_) < want) {
        check_enter(wait(want));
      } else if (defer_ && want == 0 && got == 0) {
        io_uring_get_events(&ring_);  // a poll: deferred completions are posted only on entry
      }
      std::array<io_uring_cqe*, 64> cqes{};
      const unsigned max =
          static_cast<unsigned>(std::min<std::size_t>(cqes.size(), out.size() - got));
      const unsigned n = max == 0 ? 0 : io_uring_peek_batch_cqe(&ring_, cqes.data(), max);
      for (unsigned i = 0; i < n; ++i) {
        const auto slot = static_cast<uint32_t>(io_uring_cqe_get_data64(cqes[i]));
        if (complete(slot, cqes[i]->res)) out[got++] = {slots_[slot].tag, slots_[slot].result};
      }
      io_uring_cq_advance(&ring_, n);
      if (got >= min_complete && pending_ == 0) return got;
      if (got == out.size()) return got;
    }
  }

 private:
  struct Slot {
    uint64_t tag = 0;
    uint64_t offset = 0;
    uint32_t file = 0;
    uint32_t length = 0;
    uint32_t done = 0;
    IoDir dir = IoDir::Read;
    int64_t result = 0;
  };

  static std::size_t slot_stride(uint32_t bytes) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return (std::size_t{bytes} + page - 1) / page * page;
  }

  // Hands every queued SQE to the kernel. A transient refusal (EINTR, EAGAIN, EBUSY)
  // leaves them counted as pending, so the next flush hands them over again.
  void flush() {
    const int rc = io_uring_submit(&ring_);
    check_enter(rc);
    if (rc >= 0) pending_ = 0;
  }

  static void check_enter(int rc) {
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY && rc != -ETIME) {
      throw RuntimeError("io_uring_enter failed: " + errno_text(-rc));
    }
  }

  // Sleeps in the kernel until `want` completions are posted (deferred task work runs
  // there too). Where the kernel offers it, the sleep is not counted as I/O wait, as fio
  // asks: liburing before 2.8 has no call for that flag, so this one enter is made here.
  int wait(unsigned want) {
    if (!no_iowait_ || sqpoll_) return io_uring_wait_cqe_nr(&ring_, &scratch_, want);
    unsigned flags = IORING_ENTER_GETEVENTS | IORING_ENTER_NO_IOWAIT;
    if ((ring_.int_flags & kLiburingRegisteredRing) != 0) flags |= IORING_ENTER_REGISTERED_RING;
    const long rc = syscall(__NR_io_uring_enter, ring_.enter_ring_fd, 0U, want, flags, nullptr, 0UL);
    return rc < 0 ? -errno : static_cast<int>(rc);
  }

  void init_ring(bool single_thread, UringTaskrun taskrun, UringWait wait_mode) {
    // Newest flags first; older kernels reject them with EINVAL and we step back.
    // Single-thread rings defer completion task work to our waits, as fio 3.42 sets up its
    // rings: on a file system whose reads the kernel hands to io-wq workers (tmpfs), every
    // completion otherwise interrupts the thread; 2.0 x fio there against 0.84 x with
    // COOP_TASKRUN alone (H100 VM, docs/PERFORMANCE.md). COOP stays selectable.
    std::vector<unsigned> ladder;
    if (taskrun == UringTaskrun::Sqpoll) {
      if (single_thread) ladder.push_back(IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER);
      ladder.push_back(IORING_SETUP_SQPOLL);
    }
    if (single_thread && taskrun == UringTaskrun::Defer) {
      ladder.push_back(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
                       IORING_SETUP_DEFER_TASKRUN);
    }
    if (single_thread) ladder.push_back(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
    ladder.push_back(IORING_SETUP_COOP_TASKRUN);
    ladder.push_back(0);
    int rc = -EINVAL;
    for (const unsigned flags : ladder) {
      io_uring_params p{};
      // One completion per slot at most: a CQ ring as small as the SQ ring, as fio's.
      p.flags = flags | IORING_SETUP_CQSIZE;
      p.cq_entries = depth_;
      // The polling thread sleeps after 1 s without submissions (a run's gaps are shorter).
      if ((flags & IORING_SETUP_SQPOLL) != 0) p.sq_thread_idle = 1000;
      rc = io_uring_queue_init_params(depth_, &ring_, &p);
      if (rc == 0) {
        no_iowait_ = wait_mode == UringWait::NoIowait && (p.features & IORING_FEAT_NO_IOWAIT) != 0;
        if (no_iowait_) notes_ += ", waits not counted as I/O wait";
        sqpoll_ = (flags & IORING_SETUP_SQPOLL) != 0;
        if (sqpoll_) {
          notes_ += ", kernel submission polling (its thread's CPU is not in the per-I/O figure)";
        }
        if ((flags & IORING_SETUP_SINGLE_ISSUER) != 0) notes_ += ", single issuer";
        defer_ = (flags & IORING_SETUP_DEFER_TASKRUN) != 0;
        if (defer_) notes_ += ", deferred task work";
        return;
      }
      // SQPOLL may also be refused for want of privilege (EPERM) on old kernels.
      if (rc != -EINVAL && !(rc == -EPERM && (flags & IORING_SETUP_SQPOLL) != 0)) break;
    }
    throw RuntimeError("io_uring_setup(" + std::to_string(depth_) +
                       " entries) failed: " + errno_text(-rc) + "; use --engine psync");
  }

  void register_files(const FileSet& files) {
    // Per-file open re-points each descriptor at file after file; a fixed-file table would
    // keep the file it found at registration.
    if (fds_.empty() || files.open_per_file) return;
    fixed_files_ =
        io_uring_register_files(&ring_, fds_.data(), static_cast<unsigned>(fds_.size())) == 0;
  }

  void register_buffers() {
    std::vector<iovec> iov(depth_);
    for (uint32_t i = 0; i < depth_; ++i) iov[i] = {slot_data(i), slot_bytes_};
    // Fails with ENOMEM when RLIMIT_MEMLOCK is small; plain buffers still work.
    fixed_buffers_ = io_uring_register_buffers(&ring_, iov.data(), depth_) == 0;
  }

  void queue(uint32_t slot) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      // With depth_ entries and one request per slot the ring is full only while a polling
      // kernel thread (SQPOLL) has not yet consumed entries whose completions we already
      // reaped: hand them over and wait for the room.
      flush();
      sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr && sqpoll_ && io_uring_sqring_wait(&ring_) >= 0) sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) throw RuntimeError("io_uring submission queue is full");
    }
    const Slot& s = slots_[slot];
    std::byte* buf = slot_data(slot) + s.done;
    const unsigned len = s.length - s.done;
    const uint64_t off = s.offset + s.done;
    const int fd = fixed_files_ ? static_cast<int>(s.file) : fds_[s.file];
    if (fixed_buffers_) {
      if (s.dir == IoDir::Read) {
        io_uring_prep_read_fixed(sqe, fd, buf, len, off, static_cast<int>(slot));
      } else {
        io_uring_prep_write_fixed(sqe, fd, buf, len, off, static_cast<int>(slot));
      }
    } else if (s.dir == IoDir::Read) {
      io_uring_prep_read(sqe, fd, buf, len, off);
    } else {
      io_uring_prep_write(sqe, fd, buf, len, off);
    }
    if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, slot);
    ++pending_;
  }

  // Accounts one CQE; true when the slot's request is finished (result set).
  bool complete(uint32_t slot, int res) {
    Slot& s = slots_[slot];
    if (res == -EINTR || res == -EAGAIN) {
      queue(slot);
      return false;
    }
    if (res < 0) {
      // After partial progress a read error (e.g. O_DIRECT past an unaligned EOF) is EOF.
      s.result = (s.dir == IoDir::Read && s.done > 0) ? int64_t{s.done} : int64_t{res};
      return true;
    }
    if (res == 0) {
      s.result = s.dir == IoDir::Read ? int64_t{s.done} : -EIO;
      return true;
    }
    s.done += static_cast<uint32_t>(res);
    if (s.done < s.length) {  // short transfer: finish the rest
      queue(slot);
      return false;
    }
    s.result = s.done;
    return true;
  }

  std::vector<int> fds_;
  uint32_t depth_;
  uint32_t slot_bytes_;
  std::size_t stride_ = 0;
  HostBuffer memory_;
  std::vector<Slot> slots_;
  io_uring ring_{};
  io_uring_cqe* scratch_ = nullptr;
  unsigned pending_ = 0;
  bool fixed_files_ = false;
  bool defer_ = false;
  bool sqpoll_ = false;
  bool no_iowait_ = false;
  bool fixed_buffers_ = false;
  bool submit_each_ = true;
  std::string notes_;
};

}  // namespace

UringTaskrun parse_uring_taskrun(const char* text) {
  return parse_env_choice<UringTaskrun>(
      "GDSB_IO_URING_TASKRUN", text,
      {{"defer", UringTaskrun::Defer,
        "IORING_SETUP_DEFER_TASKRUN for single-thread rings, as fio sets up its rings"},
       {"coop", UringTaskrun::Coop, "IORING_SETUP_COOP_TASKRUN only"},
       {"sqpoll", UringTaskrun::Sqpoll, "IORING_SETUP_SQPOLL, a kernel thread polls submissions"}});
}

UringWait parse_uring_wait(const char* text) {
  return parse_env_choice<UringWait>(
      "GDSB_IO_URING_WAIT", text,
      {{"no-iowait", UringWait::NoIowait,
        "waits are not I/O wait (IORING_ENTER_NO_IOWAIT, kernel 6.15+), as fio's"},
       {"iowait", UringWait::Iowait, "waits count as I/O wait, the kernel's default"}});
}

UringSubmit parse_uring_submit(const char* text) {
  return parse_env_choice<UringSubmit>(
      "GDSB_IO_URING_SUBMIT", text,
      {{"each", UringSubmit::Each, "one io_uring_enter per request, as fio's default"},
       {"batch", UringSubmit::Batch, "every queued request in one io_uring_enter"}});
}

std::unique_ptr<HostIoWorker> make_io_uring_worker(const HostIoOptions& options,
                                                   const FileSet& files) {
  return std::make_unique<IoUringWorker>(options, files);
}

}  // namespace gdsb::detail
