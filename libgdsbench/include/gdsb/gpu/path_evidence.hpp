// Which path cuFile really took: GDS through nvidia-fs, GDS through kernel P2PDMA, or
// compat mode (POSIX through cuFile's bounce buffers). Collecting (files under /proc,
// /etc, /run/udev, cuFile's log) is separate from judging (decide_path), so the judgement
// runs on fixtures in tests. Every reader takes its root as a parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/result.hpp"

namespace gdsb::gpu {

// /proc/driver/nvidia-fs: present when the nvidia-fs module is loaded.
struct NvfsSnapshot {
  bool loaded = false;
  std::string version;        // "2.20.5" from .../version, or the stats header
  bool stats_readable = false;
  uint64_t reads = 0, read_mib = 0;    // "Reads : n=.. readMiB=.."
  uint64_t writes = 0, write_mib = 0;  // "Writes : n=.. writeMiB=.."
};
NvfsSnapshot read_nvfs(const std::string& dir = "/proc/driver/nvidia-fs");
NvfsSnapshot parse_nvfs_stats(std::string_view stats_text);

// cufile.json: JSON with // and /* */ comments.
struct CufileConfig {
  std::string path;
  bool found = false;
  std::string error;  // parse error, when found but unreadable
  std::optional<bool> allow_compat_mode, force_compat_mode, use_pci_p2pdma;
  std::optional<long long> max_direct_io_size_kb, per_buffer_cache_size_kb;  // properties.*
  std::string log_dir, log_level;
  std::string text;   // the file with comments removed (valid JSON when error is empty)
};
std::string strip_json_comments(std::string_view text);
// path: CUFILE_ENV_PATH_JSON when set, else /etc/cufile.json.
std::string cufile_config_path(const char* env_value);
CufileConfig read_cufile_config(const std::string& path);
// A private copy of the effective configuration with logging.dir (and logging.level
// unless the user set one) replaced; returns the JSON text.
std::string private_cufile_config(const CufileConfig& base, const std::string& log_dir,
                                  const std::string& default_level);

// One record of cuFile's log, e.g.
//  " 09-06-2025 07:01:23:837 [pid=276 tid=454] ERROR  cufio-udev:67 udev property not found: ID_FS_USAGE dm-0"
// found anywhere in a line (a report quotes records behind "cuFile log: " or indented).
// Readers judge a record by its message, never by a word anywhere in the line.
struct CufileLogRecord {
  std::string level;    // "ERROR", "NOTICE", ...
  std::string source;   // "cufio-udev:67" (cuFile's module and line; "0:1072" in older logs)
  std::string message;  // "udev property not found: ID_FS_USAGE dm-0"
};
std::optional<CufileLogRecord> parse_log_record(std::string_view line);

// The lines of cuFile's log files in dir that explain a path or a failure.
std::vector<std::string> relevant_log_lines(const std::string& dir, std::size_t max_lines = 12);
std::vector<std::string> filter_log_lines(const std::vector<std::string>& lines,
                                          std::size_t max_lines = 12);

// The file system and udev facts about the block device holding a file.
struct FileFacts {
  std::string fs_type;       // from mountinfo, by the file's st_dev
  std::string udev_record;   // "<udev_root>/data/b<maj>:<min>"
  bool udev_database_present = false;
  bool udev_record_present = false;
  // The file's st_dev "maj:min", and whether that is a block device (<sys_root>/dev/block/
  // <maj:min> exists). tmpfs, overlay and NFS files have none, and cuFile finds a file's
  // file system through the udev record of its block device.
  std::string device;
  std::optional<bool> block_device;
  // What an O_DIRECT open of the file, tried here, gave: 0 when it opened, else its errno;
  // nullopt when the file could not be examined. Hints claim that a file system refuses
  // O_DIRECT only from this, never from the file system's name.
  std::optional<int> odirect_open_errno;
};
FileFacts file_facts(const std::string& path, const std::string& mountinfo = "/proc/self/mountinfo",
                     const std::string& udev_root = "/run/udev",
                     const std::string& sys_root = "/sys");
// 0 when `path` opens read-only with O_DIRECT (closed again at once), else the errno.
int try_odirect_open(const std::string& path);

struct DriverProps {
  bool known = false;
  unsigned nvfs_major = 0, nvfs_minor = 0;
  bool allow_compat = false;
  bool p2p_supported = false;       // fflags CU_FILE_P2P_SUPPORTED (newer cuFile)
  bool nvme_p2p_supported = false;  // nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED (GDS 1.13-1.15)
  bool batch_supported = false;
  bool streams_supported = false;
};

struct PathFacts {
  NvfsSnapshot before, after;
  CufileConfig config;
  std::optional<bool> env_force_compat;   // CUFILE_FORCE_COMPAT_MODE
  DriverProps props;
  bool handles_registered = false;
  std::vector<std::string> log_lines;
  uint64_t reads = 0, writes = 0;         // ops this run completed through cuFile
  std::string library;                    // the libcufile used
  std::string log_dir;
};

// "gds-nvfs", "gds-p2pdma" or "compat", the fact that decided it (PathReport::decided_by),
// the evidence, and a warning for compat. P2PDMA is cuFile's own word: a P2PDMA bit of
// cuFileDriverGetProperties with nvidia-fs absent; cufile.json's use_pci_p2pdma is evidence.
PathReport decide_path(const PathFacts& f);
// Before any I/O: whether the facts already prove compat mode (for --require-gds).
std::optional<std::string> compat_certain_before_run(const PathFacts& f);

std::optional<bool> parse_bool_env(const char* value);

}  // namespace gdsb::gpu
