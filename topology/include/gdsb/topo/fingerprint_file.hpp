// The known-good fingerprint file (schema gdsbench.fingerprint/2, docs/schema; /1 files are
// still read), and the facts as text for gdsb-cluster's node reports.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gdsb/topo/fingerprint.hpp"

namespace gdsb::topo {

inline constexpr const char* kFingerprintSchema = "gdsbench.fingerprint/2";
inline constexpr const char* kFingerprintSchemaV1 = "gdsbench.fingerprint/1";

// Where the facts came from, kept in the file so an operator can tell one file from another.
struct FingerprintOrigin {
  std::string tool;     // "gdsb-topo"
  std::string version;  // the tool's version
  std::string host;     // the node whose facts these are
  std::string source;   // "live", "--lspci-text hgx.txt", ...
  std::string created;  // UTC ISO 8601
  std::string note;     // gdsb-cluster: "reference of class X: node n03, like 7 of 8 nodes"
};

// /2: "facts" is a list of {kind, bdf, fact, value (typed), text (for people, never read)}.
nlohmann::json fingerprint_document(const FactMap& f, const FingerprintOrigin& origin);
// The facts of a gdsbench.fingerprint/2 (or /1) document. Throws UsageError naming `what`
// (the option and file) when it is not one, or holds a fact it does not know.
FactMap fingerprint_from_document(const nlohmann::json& doc, const std::string& what);
// Reads FILE; UsageError naming "<option> FILE" when it is missing, unreadable or not a
// fingerprint (the health check exits 2: the check itself could not be set up).
FactMap load_fingerprint(const std::string& path, const std::string& option);

// The list of /2 "facts" and back; fingerprint_json adds "unreadable" (why a fact is not
// there): how a collection run hands its facts to the process that judges them.
nlohmann::json facts_json(const FactMap& f);
FactMap facts_from_json(const nlohmann::json& facts, const std::string& what);
nlohmann::json fingerprint_json(const Fingerprint& f);
Fingerprint fingerprint_from_json(const nlohmann::json& j, const std::string& what);

// The known-good file's "hw_baseline": the AER and NVLink error counters when it was saved,
// the boot and the time (and its GPUs), which --health measures rises against
// (hw_faults.hpp). fault_baseline_from_document gives an empty baseline for a file without one.
nlohmann::json fault_baseline_json(const HwFaults& f, const std::vector<std::string>& gpus);
FaultBaseline fault_baseline_from_document(const nlohmann::json& doc);
// A kernel log position (hw_faults.hpp) in the known-good file's "hw_baseline" and the health
// state file: {"boot", "seq", "xids"}. log_position_from throws nlohmann::json's errors on a
// damaged one.
nlohmann::json log_position_json(const LogPosition& p);
LogPosition log_position_from(const nlohmann::json& j);
// The GPUs known-good facts list (their presence keys), by PCI address: FaultBaseline::
// known_gpus, for --health (the --expect file, whoever wrote it) and the fleet view (each
// class's reference, the file gdsb-cluster writes for it).
std::vector<std::string> known_gpus(const FactMap& known_good);

// The facts as key text -> value text (a gdsb-cluster node report's "fingerprint", a /1
// file's "facts"), and back. facts_from_texts skips the "not available" of older files
// and throws UsageError naming `what` and the key for a fact it does not know.
std::map<std::string, std::string> fact_texts(const FactMap& f);
FactMap facts_from_texts(const std::map<std::string, std::string>& texts, const std::string& what);

}  // namespace gdsb::topo
