// What a run's evidence establishes about cuFile, read by message: cuFile's log records
// (gdsb/gpu/path_evidence.hpp parse_log_record) matched on what the record says, and
// gdsb-io's own hints and error labels. A line that merely mentions udev, BAR1 or a number
// makes no finding. Private to the doctor library.
#pragma once

#include <string>
#include <vector>

#include "gdsb/result.hpp"

namespace gdsb::doctor::detail {

// cuFile could not read the udev properties of the file's block device ("udev property
// not found: ID_FS_USAGE dm-0", "error creating udev_device for block device dev_no:
// 259:1"): a missing udev database, or a device (device mapper, md) udev has no file
// system record for.
std::vector<std::string> udev_lookup_failures(const RunResult& r);
// gdsb-io checked the file's udev record and found it (or the whole database) missing:
// its "no-udev" hint.
std::vector<std::string> udev_record_missing(const RunResult& r);
// The file lies on no block device: gdsb-io's hint after checking /sys/dev/block, or
// cuFile's udev_device error for a device of major 0 (tmpfs, overlay, fuse).
std::vector<std::string> no_block_device(const RunResult& r);
// cuFile could not pin GPU memory in BAR1: the failure's error label
// CU_FILE_GPU_MEMORY_PINNING_FAILED (5036), or nvidia-fs's "Inc-bar-usage failed" record.
std::vector<std::string> bar1_exhausted(const RunResult& r);

}  // namespace gdsb::doctor::detail
