// ext4 data mode: read from /proc/fs/ext4/<dev>/options (gdsb/topo/ext4_mode.hpp says why
// /proc/mounts is not enough) and decided once for every tool.
#include "gdsb/topo/ext4_mode.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <sstream>
#include <system_error>

#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace {

// The data= value among comma-separated options, "" when none.
std::string data_option(const std::string& options) {
  std::istringstream in(options);
  std::string opt;
  while (std::getline(in, opt, ','))
    if (opt.rfind("data=", 0) == 0) return opt.substr(5);
  return "";
}

Ext4DataMode mode_named(const std::string& v) {
  if (v == "ordered") return Ext4DataMode::Ordered;
  if (v == "writeback") return Ext4DataMode::Writeback;
  if (v == "journal") return Ext4DataMode::Journal;
  return Ext4DataMode::Unknown;
}

// The kernel's name of the mounted block device (its s_id): the live mount point's st_dev
// resolved through /sys/dev/block, which also names device-mapper volumes ("dm-0") and
// "/dev/root"; else the basename of the source ("/dev/nvme0n1p1" -> "nvme0n1p1").
std::string device_name(bool live, const Mount& m) {
  std::error_code ec;
  if (live) {
    struct stat st {};
    if (::stat(m.target.c_str(), &st) == 0) {
      fs::path link = fs::path("/sys/dev/block") /
                      (std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)));
      fs::path dev = fs::read_symlink(link, ec);
      if (!ec && !dev.filename().empty()) return dev.filename().string();
    }
    fs::path real = fs::canonical(m.source, ec);
    if (!ec) return real.filename().string();
  }
  return fs::path(m.source).filename().string();
}

}  // namespace

std::string_view ext4_data_mode_name(Ext4DataMode m) {
  switch (m) {
    case Ext4DataMode::Ordered: return "ordered";
    case Ext4DataMode::Writeback: return "writeback";
    case Ext4DataMode::Journal: return "journal";
    case Ext4DataMode::NoJournal: return "no journal";
    case Ext4DataMode::Unknown: break;
  }
  return "unknown";
}

Ext4Mode ext4_data_mode(const Mount& m) {
  if (m.fstype != "ext4") return {};
  const std::string file = "/proc/fs/ext4/" + m.ext4_dev + "/options";
  if (m.ext4_options) {
    const std::string v = data_option(*m.ext4_options);
    if (!v.empty()) return {mode_named(v), file + ": data=" + v};
  }
  // /proc/mounts prints data= whenever it differs from the default.
  if (const std::string v = data_option(m.options); !v.empty())
    return {mode_named(v), "/proc/mounts: data=" + v};
  if (!m.ext4_options) return {};
  // Some kernels print data= only when it is not the default: without data=, the journal
  // alone tells a default journaled mount (ordered) from one without a journal.
  if (!m.ext4_journal)
    return {Ext4DataMode::Unknown,
            file + ": no data= line, and /proc/fs/jbd2 was not readable: unknown journal mode"};
  if (*m.ext4_journal)
    return {Ext4DataMode::Ordered,
            file + ": no data= line, and a jbd2 journal of " + m.ext4_dev +
                " is listed in /proc/fs/jbd2: the default mode (ordered)"};
  return {Ext4DataMode::NoJournal,
          file + ": no data= line, and /proc/fs/jbd2 lists no journal of " + m.ext4_dev};
}

std::string ext4_mode_refusal(const Ext4Mode& m) {
  switch (m.mode) {
    case Ext4DataMode::Writeback:
      return "ext4 data=writeback: GDS supports ext4 in ordered mode only";
    case Ext4DataMode::Journal:
      return "ext4 data=journal: GDS supports ext4 in ordered mode only (data=journal also "
             "disables O_DIRECT)";
    default: return "";
  }
}

void read_ext4_modes(const fs::path& root, bool live, std::vector<Mount>& mounts) {
  std::error_code ec;
  const fs::path jbd2 = root / "proc/fs/jbd2";
  const bool jbd2_known = fs::is_directory(jbd2, ec);
  for (Mount& m : mounts) {
    if (m.fstype != "ext4") continue;
    m.ext4_dev = device_name(live, m);
    if (m.ext4_dev.empty()) continue;
    auto text = detail::read_text(root / "proc/fs/ext4" / m.ext4_dev / "options");
    if (!text) continue;
    std::string joined;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      line = detail::trim(line);
      if (line.empty()) continue;
      joined += (joined.empty() ? "" : ",") + line;
    }
    m.ext4_options = joined;
    if (!jbd2_known) continue;
    // jbd2 names an internal journal "<dev>-<journal inode>" (usually "<dev>-8").
    bool journal = false;
    for (fs::directory_iterator it(jbd2, ec), end; !ec && it != end; it.increment(ec))
      journal = journal || it->path().filename().string().rfind(m.ext4_dev + "-", 0) == 0;
    m.ext4_journal = journal;
  }
}

}  // namespace gdsb::topo
