// The kernel log's NVIDIA driver records (NVRM Xid events), read in one pass with bounded
// memory from /dev/kmsg (live) or from text a person saved: `dmesg`, `dmesg -T`,
// `journalctl -k` (short, short-iso, short-monotonic, export), kern.log / syslog, or
// /dev/kmsg records. A log that spans reboots is split at each boot (KernelLog::xids are the
// last boot's, earlier_xids the others'). Each Xid record is reduced to
// its PCI address, code, time and a few words; repeated (GPU, code) pairs are one XidEvent
// with a count. Nothing but the record's structure (address, code, pid=, name=, Xid 154's
// action code) is read: the verdict comes from the Xid table (hw_faults.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "gdsb/topo/hw_faults.hpp"

namespace gdsb::topo {

// Feeds text in chunks of any size; memory stays bounded by kMaxXidKeys events and one line
// (a line past kMaxLineBytes is cut there; its Xid record, if any, is still read).
class KernelLogReader {
 public:
  static constexpr size_t kMaxLineBytes = 64 * 1024;
  // `source` names the input in errors ("--kernel-log dmesg.txt"). Records whose /dev/kmsg
  // sequence number is at or before after_seq are counted in before_cursor, not kept.
  explicit KernelLogReader(std::string source, std::optional<uint64_t> after_seq = std::nullopt);
  // Throws RuntimeError naming the source and byte offset at a byte no text log holds (NUL,
  // control bytes other than tab, CR, ESC; a gzip header): a binary or compressed file.
  void feed(std::string_view chunk);
  // One whole record (/dev/kmsg hands out one per read()).
  void feed_record(std::string_view record);
  // Ends the input. A last line without a newline (a log still being written) is read when
  // it parses; one that does not (cut inside its prefix or its Xid record) throws
  // RuntimeError: the text was cut off.
  KernelLog finish();

 private:
  void line(std::string_view l);
  void export_field(std::string_view l);
  void record(const LogTime& time, std::string_view message, bool has_prefix);
  void new_boot(std::optional<std::string> id);
  std::string source_;
  std::optional<uint64_t> after_seq_;
  std::string partial_;
  uint64_t offset_ = 0;
  KernelLog log_;
  std::map<std::pair<std::string, int>, size_t> index_, earlier_index_;
  uint64_t records_in_boot_ = 0;      // records of the boot being read (a boundary before any is none)
  std::optional<double> last_uptime_;  // the newest record's time since boot
  bool export_ = false;               // journalctl -o export: KEY=value fields, records end at a blank line
  std::optional<double> export_uptime_;
  std::string export_wall_;
};

// Reads FILE whole (dmesg, dmesg -T, journalctl -k text). RuntimeError naming
// "--kernel-log FILE" when it cannot be opened, is binary or is cut off.
KernelLog read_kernel_log_file(const std::filesystem::path& file);

// Reads /dev/kmsg (or `path`) without blocking, from the oldest record the ring buffer holds
// to the newest, at most max_bytes; records overwritten while reading are skipped. Throws
// RuntimeError naming the path when it cannot be opened (EPERM without CAP_SYSLOG when
// kernel.dmesg_restrict=1).
KernelLog read_kmsg(const std::string& path = "/dev/kmsg", std::optional<uint64_t> after_seq = std::nullopt,
                    size_t max_bytes = 64u << 20);

}  // namespace gdsb::topo
