// The data mode of an ext4 mount, decided in one place for gdsb-topo's file-system check and
// gdsb-doctor's compat-mode rule.
//
// /proc/mounts prints data= only when it differs from the default, so a default journaled
// mount shows none. The kernel states the options of each mounted ext4 in
// /proc/fs/ext4/<dev>/options, one per line (fs/ext4/super.c: ext4_seq_options_show calls
// _ext4_show_options with nodefs set, which prints data=journal|ordered|writeback for a
// journaled mount). A journal-less ext4 has no data mode at all (the kernel clears the data
// flags when it mounts one without a journal), so no data= line is printed.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

enum class Ext4DataMode { Unknown, Ordered, Writeback, Journal, NoJournal };
std::string_view ext4_data_mode_name(Ext4DataMode m);  // "ordered", ..., "no journal"

struct Ext4Mode {
  Ext4DataMode mode = Ext4DataMode::Unknown;
  std::string evidence;  // where the mode was read, e.g. "/proc/fs/ext4/vda/options: data=..."
};

// Meaningful for fstype "ext4"; any other mount is Unknown. In order: a data= line of
// /proc/fs/ext4/<dev>/options; a data= option of /proc/mounts (printed when non-default);
// an options file without data=: the default (ordered) where a jbd2 journal of <dev> is
// listed (kernels that print data= only when non-default), no journal where /proc/fs/jbd2
// was read and lists none, Unknown ("unknown journal mode") where /proc/fs/jbd2 could not
// be read; nothing read: Unknown (older snapshots, inputs without /proc/fs/ext4), never
// assumed.
Ext4Mode ext4_data_mode(const Mount& m);

// "" when GDS may use the mount's data mode, else why not (data=writeback, data=journal:
// the GDS documents support ext4 in ordered mode only).
std::string ext4_mode_refusal(const Ext4Mode& m);

// Fills Mount::ext4_dev/ext4_options/ext4_journal of the ext4 mounts from
// root/proc/fs/ext4/<dev>/options and root/proc/fs/jbd2. live: <dev> from the mount point's
// st_dev through /sys/dev/block (device-mapper and /dev/root resolve); a recorded root: the
// basename of the mount's source.
void read_ext4_modes(const std::filesystem::path& root, bool live, std::vector<Mount>& mounts);

}  // namespace gdsb::topo
