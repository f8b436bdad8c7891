// --state FILE of --health: what the previous check saw last, so an Xid is reported by the
// check after it happened and not by every check until the next reboot. The file holds the
// boot's identity and the newest /dev/kmsg sequence number read; a check in another boot,
// or without the file, reports every Xid since boot (docs/gdsb-topo.md "Hardware faults").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gdsb::topo_app {

inline constexpr const char* kHealthStateSchema = "gdsbench.health-state/1";

struct HealthState {
  std::string boot_id;
  std::optional<uint64_t> reported_seq;
};

// nullopt when the file does not exist yet. A file that is not one (damaged, another schema)
// throws UsageError naming --state and the file.
std::optional<HealthState> load_health_state(const std::string& path);
// Written by temporary file and rename; an existing file of another kind is kept (UsageError).
void save_health_state(const std::string& path, const HealthState& state);

}  // namespace gdsb::topo_app
