#include "run_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"

namespace gdsb::detail {
namespace {

std::string sys_error(int err) { return std::strerror(err); }

struct Planned {
  std::string path;
  bool exists = false;
  bool block_device = false;
  uint64_t size = 0;  // regular files only; block devices are measured once open
};

Planned inspect(const Workload& w, const std::string& path,
                const std::vector<std::string>& job_files) {
  Planned p;
  p.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err != ENOENT) throw RuntimeError("cannot access " + path + ": " + sys_error(err));
    if (job_reads(w)) {
      throw RuntimeError("cannot read " + path + ": " + sys_error(err) +
                         " (create it first, e.g. with a write job: -I 1)");
    }
    return p;
  }
  p.exists = true;
  p.block_device = S_ISBLK(st.st_mode);
  if (!p.block_device && !S_ISREG(st.st_mode)) {
    throw UsageError(path + " is neither a regular file nor a block device");
  }
  if (job_writes(w)) {
    if (p.block_device) {
      throw UsageError("refusing to write to block device " + path +
                       ": gdsb-io never writes to block devices (reads are fine)");
    }
    if (!w.allow_overwrite && file_owner(path, job_files) == FileOwner::Foreign) {
      throw UsageError("refusing to overwrite " + path +
                       ": it exists and was not created by gdsbench; pass --allow-overwrite "
                       "to write to it, or name a new file");
    }
  }
  p.size = static_cast<uint64_t>(st.st_size);
  return p;
}

uint64_t block_device_size(int fd, const std::string& path) {
  uint64_t bytes = 0;
  if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0) {
    throw RuntimeError("cannot get the size of block device " + path + ": " + sys_error(errno));
  }
  return bytes;
}

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// A run that keeps many files open (a file list) makes room for them. cuFile opens a
// second descriptor of its own for every registered file (for unaligned I/O; measured on
// the H100 machine, cuFile 1.15: a 10,000-file run failed with EMFILE at file 9,979 when
// only one per file was counted), and CUDA and cuFile hold more the more GPUs the node has:
// on 4 x H100 a 9,950-file run failed at fd 9,975 with two per file and 64 to spare (issue
// 35): about 100 more than on one GPU, under a hard limit of 20,000. That share cannot be
// known before the driver opens, so the need is what is open now, one or two a file and 64
// to spare, and a registration that still runs out is explained by cuFile's error (the
// descriptors hint of cufile_errors.cpp). The soft limit is raised to the hard one (gdsbench waits with poll, never
// select, so a large limit costs nothing); where the hard one is short, root may raise it
// (CAP_SYS_RESOURCE, up to fs.nr_open); otherwise the run is refused with the figures.
void ensure_descriptors(std::size_t files, bool cufile) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  const rlim_t per_file = cufile ? 2 : 1;
  const rlim_t open_now = open_descriptor_count();
  const rlim_t want = open_now + static_cast<rlim_t>(files) * per_file + 64;
  if (rl.rlim_cur >= want) return;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
    const rlimit raised{want, want};
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return;
    throw UsageError("the run opens " + std::to_string(files) + " files" +
                     (cufile ? " (two descriptors each: cuFile opens one of its own)" : "") +
                     " and needs " + std::to_string(want) + " descriptors (" + std::to_string(open_now) +
                     " open already), but the limit is " + std::to_string(rl.rlim_max) +
                     " (ulimit -Hn) and cannot be raised here; raise it or use fewer files");
  }
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? std::max<rlim_t>(want, rl.rlim_cur) * 4 : rl.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &rl);
}

}  // namespace

FileOwner file_owner(const std::string& path, const std::vector<std::string>& job_files) {
  // The same file, however it is named (a relative path, a symlink): device and inode.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    for (const std::string& mine : job_files) {
      struct stat m {};
      if (::stat(mine.c_str(), &m) == 0 && m.st_dev == st.st_dev && m.st_ino == st.st_ino)
        return FileOwner::ThisJob;
    }
  }
  char value[8];
  if (::getxattr(path.c_str(), kCreatedXattr, value, sizeof value) >= 0)
    return FileOwner::MarkedByGdsbench;
  return FileOwner::Foreign;
}

uint64_t open_descriptor_count() {
  std::error_code ec;
  uint64_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

bool job_reads(const Workload& w) {
  return !pattern_is_write(w.pattern) || (w.mixed_read_percent && *w.mixed_read_percent > 0);
}
bool job_writes(const Workload& w) {
  return pattern_is_write(w.pattern) || (w.mixed_read_percent && *w.mixed_read_percent < 100);
}

void validate_workload(const Workload& w, bool odirect) {
  if (!w.file.empty() && !w.directory.empty()) {
    throw UsageError("-f (--file) and -D (--dir) cannot be used together; give one of them");
  }
  if (!w.file_list.empty() && (!w.file.empty() || !w.directory.empty())) {
    throw UsageError("filelist cannot be combined with -f (--file) or -D (--dir); give one of them");
  }
  if (w.file.empty() && w.directory.empty() && w.file_list.empty()) {
    throw UsageError("no data file: give -f FILE or -D DIR");
  }
  if (w.request_blocks == 0) throw UsageError("request_blocks must be at least 1");
  if (w.fsync && !pattern_is_write(w.pattern) && !w.mixed_read_percent) {
    throw UsageError("fsync applies to writes; this job only reads");
  }
  if (w.threads == 0) throw UsageError("-w (threads) must be at least 1");
  if (w.threads > 4096) throw UsageError("-w (threads) must be at most 4096");
  if (w.io_size == 0) throw UsageError("-i (I/O size) must be above 0");
  if (w.io_size > (uint64_t{1} << 30)) throw UsageError("-i (I/O size) must be at most 1G");
  if (w.iodepth == 0) throw UsageError("--iodepth must be at least 1");
  if (w.iodepth > 4096) throw UsageError("--iodepth must be at most 4096");
  // The depth of -x 1/4 is the storage engine's; the GPU types use --iodepth for their own
  // pipelines (-x 3/5), batches (-x 6/7) or slots, whatever the engine (as the CLI).
  const bool engine_depth_only = w.xfer == XferType::CpuOnly || w.xfer == XferType::CpuCachedGpu;
  if (engine_depth_only && w.engine == SubmitEngine::Psync && w.iodepth > 1) {
    throw UsageError("--iodepth " + std::to_string(w.iodepth) +
                     " needs --engine io_uring (psync does one I/O at a time per thread)");
  }
  if (w.repeat == 0) throw UsageError("--repeat must be at least 1");
  if (w.runtime_s < 0) throw UsageError("-T (runtime) must not be negative");
  if (w.warmup_s < 0) throw UsageError("--warmup must not be negative");
  if (w.mixed_read_percent && *w.mixed_read_percent > 100) {
    throw UsageError("-M (mixed read percent) must be between 0 and 100");
  }
  if (w.mixed_read_percent && w.verify) {
    throw UsageError(
        "-V (verify) cannot be combined with -M (mixed reads and writes): reads "
        "could meet blocks not yet written");
  }
  if (w.file_size == 0 && (pattern_is_write(w.pattern) || w.mixed_read_percent)) {
    throw UsageError("-s (file size) is required for writes");
  }
  if (w.file_size != 0 && w.file_size < w.io_size) {
    throw UsageError("-i " + format_size(w.io_size) + " is larger than the file size -s " +
                     format_size(w.file_size));
  }
  if (w.open_per_file && (w.file_list.empty() || job_writes(w))) {
    throw UsageError("open_per_file=1 models a data loader's reads: it needs filelist and a read "
                     "pattern (rw=read or randread)");
  }
  if (pattern_is_random(w.pattern) && w.random_alignment == 0) {
    throw UsageError("-a (random alignment) must be above 0");
  }
  if (!odirect) return;
  const std::string how = " with O_DIRECT (add -O 1 or use -x 4 for buffered I/O)";
  if (w.io_size % kDirectIoAlignment != 0) {
    throw UsageError("-i " + std::to_string(w.io_size) + " must be a multiple of " +
                     std::to_string(kDirectIoAlignment) + how);
  }
  if (w.start_offset % kDirectIoAlignment != 0) {
    throw UsageError("-o " + std::to_string(w.start_offset) + " must be a multiple of " +
                     std::to_string(kDirectIoAlignment) + how);
  }
  if (pattern_is_random(w.pattern)) {
    if (w.unaligned_random) throw UsageError("-U (unaligned random offsets) cannot be used" + how);
    const uint64_t step =
        (w.io_size + w.random_alignment - 1) / w.random_alignment * w.random_alignment;
    if (step % kDirectIoAlignment != 0) {
      throw UsageError("-a " + std::to_string(w.random_alignment) +
                       " gives random offsets that are not multiples of " +
                       std::to_string(kDirectIoAlignment) + how);
    }
  }
}

RunFiles::~RunFiles() {
  if (!set.open_per_file) {
    for (int fd : set.fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  for (int fd : own_fds) ::close(fd);
}

RunFiles::RunFiles(RunFiles&& other) noexcept
    : set(std::exchange(other.set, {})),
      data_size(other.data_size),
      sizes(std::move(other.sizes)),
      open_ns(std::move(other.open_ns)),
      warnings(std::move(other.warnings)),
      own_fds(std::exchange(other.own_fds, {})) {}

namespace {

// open_per_file: sizes from stat, one descriptor number per thread (see run_files.hpp).
RunFiles plan_per_file(const Workload& w, const std::vector<Planned>& plan, bool odirect) {
  RunFiles files;
  files.set.odirect = odirect;
  files.set.open_per_file = true;
  const auto null_fd = [&] {
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw RuntimeError(std::string("cannot open /dev/null: ") + sys_error(errno));
    files.own_fds.push_back(fd);
    return fd;
  };
  files.set.idle_fd = null_fd();
  std::vector<int> thread_fd;
  for (uint32_t t = 0; t < w.threads && t < plan.size(); ++t) thread_fd.push_back(null_fd());
  for (std::size_t f = 0; f < plan.size(); ++f) {
    const Planned& p = plan[f];
    if (p.block_device) throw UsageError("open_per_file=1 reads files; " + p.path + " is a block device");
    if (p.size <= w.start_offset || (w.file_size != 0 && p.size < w.start_offset + w.file_size)) {
      throw RuntimeError(p.path + " is " + std::to_string(p.size) + " bytes, shorter than -o + -s = " +
                         std::to_string(w.start_offset + (w.file_size ? w.file_size : 1)) + " bytes");
    }
    const uint64_t want = w.file_size != 0 ? w.file_size : p.size - w.start_offset;
    files.data_size = files.data_size == 0 ? want : std::min(files.data_size, want);
    files.sizes.push_back(want);
    files.set.paths.push_back(p.path);
    files.set.fds.push_back(thread_fd[f % thread_fd.size()]);
  }
  return files;
}

}  // namespace

RunFiles open_run_files(const Workload& w, bool odirect,
                        const std::vector<std::string>& job_files) {
  const std::vector<std::string> paths = w.resolved_files();
  if (paths.empty()) throw UsageError("file list " + w.file_list + " names no file");
  // open_per_file: per thread its number, the file being opened and cuFile's own.
  ensure_descriptors(w.open_per_file ? std::min<std::size_t>(paths.size(), w.threads) * 2 + 1 : paths.size(),
                     xfer_uses_cufile(w.xfer));
  if (!w.directory.empty()) {
    struct stat st {};
    if (::stat(w.directory.c_str(), &st) != 0) {
      throw RuntimeError("cannot use directory " + w.directory + " (-D): " + sys_error(errno));
    }
    if (!S_ISDIR(st.st_mode)) throw UsageError("-D " + w.directory + " is not a directory");
  }
  std::vector<Planned> plan;
  plan.reserve(paths.size());
  for (const auto& p : paths)
    plan.push_back(inspect(w, p, job_files));  // every check before any change
  if (w.open_per_file) return plan_per_file(w, plan, odirect);

  RunFiles files;
  files.set.odirect = odirect;
  std::vector<std::string> created;
  try {
    for (const Planned& p : plan) {
      int flags = O_CLOEXEC | (job_writes(w) ? O_RDWR : O_RDONLY);
      if (odirect) flags |= O_DIRECT;
      if (!p.exists) flags |= O_CREAT | O_EXCL;
      const uint64_t t_open = mono_ns();
      const int fd = ::open(p.path.c_str(), flags, 0644);
      files.open_ns.push_back(mono_ns() - t_open);
      if (fd < 0) {
        const int err = errno;
        std::string msg = "cannot open " + p.path +
                          (job_writes(w) ? " for writing: " : " for reading: ") + sys_error(err);
        if (err == EINVAL && odirect)
          msg += " (this open asked for O_DIRECT, and EINVAL is how a file system refuses it; add "
                 "-O 1 or use -x 4)";
        throw RuntimeError(msg);
      }
      files.set.paths.push_back(p.path);
      files.set.fds.push_back(fd);
      if (!p.exists) {
        created.push_back(p.path);
        if (::fsetxattr(fd, kCreatedXattr, "1", 1, 0) != 0) {
          files.warnings.push_back("could not mark " + p.path + " as created by gdsbench (" +
                                   sys_error(errno) +
                                   "); a later run writes to it only with --allow-overwrite");
        }
      }
      uint64_t size = p.block_device ? block_device_size(fd, p.path) : p.size;
      if (job_reads(w)) {
        if (size <= w.start_offset || (w.file_size != 0 && size < w.start_offset + w.file_size)) {
          throw RuntimeError(p.path + " is " + std::to_string(size) +
                             " bytes, shorter than -o + -s = " +
                             std::to_string(w.start_offset + (w.file_size ? w.file_size : 1)) +
                             " bytes; write it first (-I 1) or lower -s");
        }
        const uint64_t avail = size - w.start_offset;
        const uint64_t want = w.file_size != 0 ? w.file_size : avail;
        files.data_size = files.data_size == 0 ? want : std::min(files.data_size, want);
        files.sizes.push_back(want);
      } else {
        files.data_size = w.file_size;
        files.sizes.push_back(w.file_size);
      }
    }
  } catch (...) {
    for (const auto& c : created) ::unlink(c.c_str());  // leave nothing behind on failure
    throw;
  }
  return files;
}

}  // namespace gdsb::detail
