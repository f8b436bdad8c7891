#include "validate.hpp"

#include <sys/stat.h>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"

namespace gdsb::io {
namespace {

std::string sz(uint64_t v) { return format_size(v); }

bool writes(const Workload& w) {
  if (w.mixed_read_percent) return *w.mixed_read_percent < 100;
  return pattern_is_write(w.pattern);
}

bool is_block_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
}

}  // namespace

std::string cli_name(Field f) {
  switch (f) {
    case Field::File:
      return "-f/--file";
    case Field::Dir:
      return "-D/--dir";
    case Field::Threads:
      return "-w/--threads";
    case Field::Size:
      return "-s/--size";
    case Field::Offset:
      return "-o/--offset";
    case Field::IoSize:
      return "-i/--io-size";
    case Field::Xfer:
      return "-x/--xfer-type";
    case Field::Pattern:
      return "-I/--io-type";
    case Field::Alignment:
      return "-a/--alignment";
    case Field::Unaligned:
      return "-U/--unaligned";
    case Field::Mixed:
      return "-M/--mixed-read";
    case Field::Odirect:
      return "-O/--no-odirect";
    case Field::Engine:
      return "--engine";
    case Field::Iodepth:
      return "--iodepth";
    case Field::Repeat:
      return "--repeat";
    case Field::Duration:
      return "-T/--duration";
    case Field::Warmup:
      return "--warmup";
    case Field::BatchSize:
      return "-B/--batch-size";
  }
  return "?";
}

void size_from_existing_file(Workload& w) {
  if (w.file_size != 0 || writes(w) || !w.file_list.empty()) return;
  const auto files = w.resolved_files();
  struct stat st {};
  if (files.empty() || ::stat(files.front().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > w.start_offset) w.file_size = size - w.start_offset;
}

bool uses_odirect(const Workload& w) { return w.odirect && w.xfer != XferType::CpuCachedGpu; }

void validate_workload(const Workload& w, const FieldNamer& name) {
  const auto fail = [](const std::string& msg) { throw UsageError(msg); };
  if (!w.file.empty() && !w.directory.empty()) {
    fail(name(Field::File) + " and " + name(Field::Dir) +
         " cannot be used together: -f names one file shared by all threads, -D a directory "
         "with one file per thread");
  }
  if (!w.file_list.empty() && (!w.file.empty() || !w.directory.empty())) {
    fail("filelist cannot be combined with " + name(Field::File) + " or " + name(Field::Dir) +
         ": give one way of naming the files");
  }
  if (w.file.empty() && w.directory.empty() && w.file_list.empty()) {
    fail(name(Field::File) + " or " + name(Field::Dir) +
         " is required: name the file or directory to test");
  }
  if (w.fsync && !writes(w)) fail("fsync applies to writes; this job only reads");
  if (w.naive_load) {
    // The framework-style load: whole files from a list, buffered, copied to the GPU.
    if (w.file_list.empty()) fail("naive_load=1 needs filelist: the files it loads whole");
    if (w.pattern != IoPattern::Read) fail("naive_load=1 models a load: rw must be read");
    if (w.xfer != XferType::CpuCachedGpu || w.odirect) {
      fail("naive_load=1 is buffered I/O through the page cache and a copy to the GPU: give "
           "xfer_type=4 and odirect=0");
    }
  }
  if (w.threads == 0) fail(name(Field::Threads) + ": must be at least 1");
  if (w.io_size == 0) fail(name(Field::IoSize) + ": must be above 0");
  if (w.io_size > (uint64_t{1} << 30))
    fail(name(Field::IoSize) + " " + sz(w.io_size) + ": must be at most 1G");
  if (w.file_size == 0 && writes(w)) {
    fail(name(Field::Size) + " is required for writes: give the file size (e.g. -s 1G)");
  }
  // Reads without a size use the whole file (or block device); the runner finds its size.
  if (w.file_size != 0) {
    if (w.io_size > w.file_size) {
      fail(name(Field::IoSize) + " " + sz(w.io_size) + " is larger than the file size " +
           name(Field::Size) + " " + sz(w.file_size));
    }
  }
  if (w.mixed_read_percent && *w.mixed_read_percent > 100) {
    fail(name(Field::Mixed) + ": " + std::to_string(*w.mixed_read_percent) +
         " is not a percentage (0-100)");
  }
  if (w.verify && w.mixed_read_percent) {
    fail("-V/--verify and " + name(Field::Mixed) +
         " cannot be combined: verification needs the write pass to finish before reading");
  }
  if (w.random_alignment == 0) fail(name(Field::Alignment) + ": must be above 0");
  if (w.repeat == 0) fail(name(Field::Repeat) + ": must be at least 1");
  if (w.iodepth == 0) fail(name(Field::Iodepth) + ": must be at least 1");
  if (w.iodepth > 4096)
    fail(name(Field::Iodepth) + ": " + std::to_string(w.iodepth) + " is above the limit of 4096");
  if (w.threads > 4096)
    fail(name(Field::Threads) + ": " + std::to_string(w.threads) + " is above the limit of 4096");
  const bool cpu_path = w.xfer == XferType::CpuOnly || w.xfer == XferType::CpuCachedGpu;
  if (cpu_path && w.iodepth > 1 && w.engine == SubmitEngine::Psync) {
    fail(name(Field::Iodepth) + " " + std::to_string(w.iodepth) + " needs the io_uring engine (" +
         name(Field::Engine) + " io_uring); psync keeps one I/O per thread");
  }

  if (uses_odirect(w)) {
    const std::string how = "; O_DIRECT needs multiples of 4096 (use " + name(Field::Odirect) +
                            " 1 or -x 4 for buffered I/O)";
    if (w.io_size % kDirectIoAlignment != 0) {
      fail(name(Field::IoSize) + " " + sz(w.io_size) + " is not a multiple of 4096" + how);
    }
    if (w.start_offset % kDirectIoAlignment != 0) {
      fail(name(Field::Offset) + " " + sz(w.start_offset) + " is not a multiple of 4096" + how);
    }
    if (pattern_is_random(w.pattern)) {
      if (w.unaligned_random) {
        fail(name(Field::Unaligned) + " gives unaligned random offsets, which O_DIRECT cannot do" +
             how);
      }
      if (w.random_alignment % kDirectIoAlignment != 0) {
        fail(name(Field::Alignment) + " " + sz(w.random_alignment) + " is not a multiple of 4096" +
             how);
      }
    }
  }
  if (writes(w) && w.file_list.empty()) {
    for (const auto& f : w.resolved_files()) {
      if (is_block_device(f)) {
        fail(name(w.file.empty() ? Field::Dir : Field::File) + " " + f +
             " is a block device: gdsb-io never writes to block devices (reads are fine)");
      }
    }
  }
}

}  // namespace gdsb::io
