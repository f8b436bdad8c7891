// The known-good fingerprint file (schema gdsbench.fingerprint/1, docs/schema) and the
// node_exporter metrics of a health check against it (gdsb-topo --health, docs/gdsb-topo.md).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gdsb/topo/fingerprint.hpp"

namespace gdsb::topo {

inline constexpr const char* kFingerprintSchema = "gdsbench.fingerprint/1";

// Where the facts came from, kept in the file so an operator can tell one file from another.
struct FingerprintOrigin {
  std::string tool;     // "gdsb-topo"
  std::string version;  // the tool's version
  std::string host;     // the node whose facts these are
  std::string source;   // "live", "--lspci-text hgx.txt", ...
  std::string created;  // UTC ISO 8601
  std::string note;     // gdsb-cluster: "reference of class X: node n03, like 7 of 8 nodes"
};

nlohmann::json fingerprint_document(const Fingerprint& f, const FingerprintOrigin& origin);
// The facts of a gdsbench.fingerprint/1 document. Throws UsageError naming `what` (the
// option and file) when it is not one, or holds a fact that is not a string.
Fingerprint fingerprint_from_document(const nlohmann::json& doc, const std::string& what);
// Reads FILE; UsageError naming "<option> FILE" when it is missing, unreadable or not a
// fingerprint (the health check exits 2: the check itself could not be set up).
Fingerprint load_fingerprint(const std::string& path, const std::string& option);

struct HealthMetricsContext {
  std::string tool, version;
  std::string expect_file;
  std::string node;
  double checked_at_unix_s = 0;
};
// The Prometheus/OpenMetrics text of one health check (gdsb_health_* gauges; the names and
// their units are listed in docs/gdsb-topo.md), ending in "# EOF".
std::string health_openmetrics(const Fingerprint& now, const Fingerprint& expected,
                               const std::vector<HealthDifference>& differences,
                               const HealthMetricsContext& ctx);

}  // namespace gdsb::topo
