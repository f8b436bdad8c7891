// --state FILE of --health: what the last check whose verdict was delivered had seen of the
// kernel log, so an Xid is reported by the check after it happened and not by every check
// until the next reboot. The file holds the boot and the log position (hw_faults.hpp
// LogPosition: /dev/kmsg's newest sequence number read, and the boot's Xids with their counts
// and last records). It is written only once the verdict was delivered: after the drain
// succeeded, or when nothing needed draining; a check whose drain failed leaves it, so the
// next check reports the fault again. A check in another boot, or without the file, reports
// every Xid of its boot (docs/gdsb-topo.md "Hardware faults").
#pragma once

#include <optional>
#include <string>

#include "gdsb/topo/hw_faults.hpp"

namespace gdsb::topo_app {

inline constexpr const char* kHealthStateSchema = "gdsbench.health-state/2";

// nullopt when the file does not exist yet, or is of the first schema (its cursor, a sequence
// number without the boot's Xids, is read as the position). A file that is not one (damaged,
// another schema) throws UsageError naming --state and the file.
std::optional<topo::LogPosition> load_health_state(const std::string& path);
// Written by temporary file and rename; an existing file of another kind is kept (UsageError).
void save_health_state(const std::string& path, const topo::LogPosition& state);

}  // namespace gdsb::topo_app
