#include "health_state.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/run_context.hpp"

namespace gdsb::topo_app {

std::optional<HealthState> load_health_state(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const std::string what = "--state " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(what + ": cannot open the file");
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("schema", "") != kHealthStateSchema)
    throw UsageError(what + ": not a gdsb-topo health state file (schema " + kHealthStateSchema +
                     "); remove it or pick another path");
  HealthState s;
  s.boot_id = doc.value("boot_id", "");
  if (const auto it = doc.find("reported_seq"); it != doc.end() && it->is_number_unsigned())
    s.reported_seq = it->get<uint64_t>();
  return s;
}

void save_health_state(const std::string& path, const HealthState& state) {
  nlohmann::json doc = {{"schema", kHealthStateSchema},
                        {"boot_id", state.boot_id},
                        {"reported_seq", state.reported_seq ? nlohmann::json(*state.reported_seq) : nlohmann::json()},
                        {"checked_at", utc_now_iso8601()}};
  report::write_output_atomic({path, "--state", kHealthStateSchema}, doc.dump(1) + "\n", false);
}

}  // namespace gdsb::topo_app
