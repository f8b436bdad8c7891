#include "health_state.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/topo/fingerprint_file.hpp"

namespace gdsb::topo_app {
namespace {

constexpr const char* kFirstSchema = "gdsbench.health-state/1";

}  // namespace

std::optional<topo::LogPosition> load_health_state(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const std::string what = "--state " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(what + ": cannot open the file");
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  const std::string schema = doc.is_object() ? doc.value("schema", "") : "";
  const bool first = schema == kFirstSchema;
  if (doc.is_discarded() || (!first && schema != kHealthStateSchema))
    throw UsageError(what + ": not a gdsb-topo health state file (schema " + kHealthStateSchema +
                     "); remove it or pick another path");
  try {
    if (first) {  // {"boot_id", "reported_seq"}: the /dev/kmsg cursor of that boot
      topo::LogPosition p;
      p.boot = topo::boot_id_key(doc.value("boot_id", ""));
      if (const auto it = doc.find("reported_seq"); it != doc.end() && it->is_number_unsigned())
        p.seq = it->get<uint64_t>();
      return p;
    }
    return topo::log_position_from(doc.at("position"));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(what + ": damaged (" + e.what() + "); remove it: the next check reports every Xid of this boot");
  }
}

void save_health_state(const std::string& path, const topo::LogPosition& state) {
  const nlohmann::json doc = {{"schema", kHealthStateSchema},
                              {"position", topo::log_position_json(state)},
                              {"checked_at", utc_now_iso8601()}};
  // A file of the first schema is this tool's own: replaced as one of this one.
  try {
    report::write_output_atomic({path, "--state", kHealthStateSchema}, doc.dump(1) + "\n", false);
  } catch (const UsageError&) {
    report::write_output_atomic({path, "--state", kFirstSchema}, doc.dump(1) + "\n", false);
  }
}

}  // namespace gdsb::topo_app
