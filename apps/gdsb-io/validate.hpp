// Checks a Workload before anything is created or run, so bad input is a usage error
// (exit 2) that names the option or job-file key. Shared by the command line and job files.
#pragma once

#include <functional>
#include <string>

#include "gdsb/workload.hpp"

namespace gdsb::io {

// The inputs a message may have to name.
enum class Field {
  File,
  Dir,
  Threads,
  Size,
  Offset,
  IoSize,
  Xfer,
  Pattern,
  Alignment,
  Unaligned,
  Mixed,
  Odirect,
  Engine,
  Iodepth,
  Repeat,
  Duration,
  Warmup,
  BatchSize
};

// How to name a field for the user: "-i/--io-size" on the command line,
// "[job1] bs (line 7)" in a job file.
using FieldNamer = std::function<std::string(Field)>;

// Names of the command-line options.
std::string cli_name(Field f);

// Reads without -s cover the rest of an existing regular file: sets file_size to its size
// minus -o so that reports (gdsio's DataSetSize) show it. Block devices and missing files
// are left to the runner.
void size_from_existing_file(Workload& w);

// Throws UsageError for a workload that cannot be run as asked: -f with -D, no target,
// sizes that do not fit, O_DIRECT with unaligned sizes/offsets, writes to block devices.
void validate_workload(const Workload& w, const FieldNamer& name);

// Whether the workload's storage I/O bypasses the page cache.
bool uses_odirect(const Workload& w);

inline constexpr uint64_t kDirectIoAlignment = 4096;

}  // namespace gdsb::io
