// Internal: checking a workload against the files it names, and opening them safely.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gdsb/transfer_path.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::detail {

// O_DIRECT offsets and sizes must be multiples of this (the largest logical block size in
// common use; gdsio asks the same).
inline constexpr uint64_t kDirectIoAlignment = 4096;
// The extended attribute that marks files gdsbench created (and may overwrite).
inline constexpr const char* kCreatedXattr = "user.gdsbench.created";

// Whose an existing file is, decided here and nowhere else (issue 34). A file this job
// created (job_files: an earlier run of the same job, in this process or on another rank)
// is its own on every file system, user xattrs or not (NFSv3, VAST and BeeGFS by default
// refuse them); else gdsbench's mark from an earlier job, where the file system keeps it;
// else it is someone else's, written only with --allow-overwrite.
enum class FileOwner { ThisJob, MarkedByGdsbench, Foreign };
FileOwner file_owner(const std::string& path, const std::vector<std::string>& job_files);

// Whether the job reads (any read pattern, or -M with reads) and whether it writes.
// The descriptors this process holds now (/proc/self/fd; 0 where it cannot be read).
uint64_t open_descriptor_count();

bool job_reads(const Workload& w);
bool job_writes(const Workload& w);

// Checks that need no file system access. Throws UsageError naming the option.
void validate_workload(const Workload& w, bool odirect);

// Opened files of one run; closes them when destroyed.
class RunFiles {
 public:
  RunFiles() = default;
  ~RunFiles();
  RunFiles(RunFiles&& other) noexcept;
  RunFiles& operator=(RunFiles&&) = delete;
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;

  FileSet set;
  uint64_t data_size = 0;             // bytes per file the run covers (-s, or what a read found)
  std::vector<uint64_t> sizes;        // with a file list: bytes each file covers (reads without
                                      // -s: each file's own size minus -o)
  std::vector<uint64_t> open_ns;      // how long each open(2) took
  std::vector<std::string> warnings;  // e.g. a file could not be marked as ours
  std::vector<int> own_fds;           // open_per_file: each thread's number and /dev/null
};

// Checks every file first (nothing is created when one check fails), then opens them:
// reads need an existing file (or block device) of at least -o + -s bytes; writes never
// touch block devices and refuse an existing file that file_owner() calls Foreign unless
// allow_overwrite. New files are created and marked. Throws UsageError for refusals and
// RuntimeError (naming the path and the system error) for what the system refuses.
// With Workload::open_per_file (reads only) the files are checked and sized but not opened:
// file f belongs to thread f % threads (the runner's thread_regions), whose one descriptor
// number, held on /dev/null until the thread opens a file, every fds[f] of it names.
RunFiles open_run_files(const Workload& w, bool odirect,
                        const std::vector<std::string>& job_files = {});

// A descriptor of a run's file for page-cache calls outside the I/O: the run's own, or with
// open_per_file (no file open between files) one opened for the call and closed after.
class CacheFd {
 public:
  CacheFd(const RunFiles& files, uint32_t file)
      : fd_(files.set.open_per_file ? ::open(files.set.paths.at(file).c_str(), O_RDONLY | O_CLOEXEC)
                                    : files.set.fds.at(file)),
        own_(files.set.open_per_file) {}
  ~CacheFd() {
    if (own_ && fd_ >= 0) ::close(fd_);
  }
  CacheFd(const CacheFd&) = delete;
  CacheFd& operator=(const CacheFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
  bool own_;
};

}  // namespace gdsb::detail
