// Before/after comparison of the shared-storage phase of two gdsbench.cluster/1 documents
// (issue 26): each scaling point matched by (nodes, mode, op) with its aggregate GB/s, the
// GPUs fed, and the checkpoint save and load. Single measurements: there are no
// repetitions, so no U test; the sign of a change decides.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gdsb/report/compare.hpp"
#include "gdsb/report/document.hpp"

namespace gdsb::report {

struct StorageDelta {
  std::string metric;  // "aggregate", "gpus", "seconds", "rate"
  std::string label;   // for people
  std::string unit;    // "GB/s" (1e9 B/s), "GPUs", "s"
  bool higher_is_better = true;
  bool gated = true;  // seconds only restate the rate of the same bytes: shown, not gated
  double before = 0;
  double after = 0;
  double delta = 0;
  double delta_percent = 0;  // NaN when before is 0
  double worse_percent = 0;  // > 0: worse (a drop of a rate, a rise of seconds); NaN when before is 0
  Change change = Change::Unchanged;
};

struct StorageMatch {
  std::string label;        // "4 nodes CPUONLY read", "GPUs fed", "checkpoint save"
  nlohmann::json identity;  // {"nodes", "mode", "op"} or {"part": "gpus_fed"} ...
  std::vector<StorageDelta> metrics;
  std::string incomparable;  // non-empty: why the figures measure different things (not gated)
};

struct StorageComparison {
  std::string before_name;
  std::string after_name;
  std::vector<StorageMatch> matches;         // ok on both sides
  std::vector<UnmatchedRun> unmatched;       // a point (or part) on one side only
  std::vector<UnmatchedRun> not_comparable;  // matched, one side not ok (waived, error, clock)
  std::vector<std::string> notes;
};

// Whether the document carries a shared_storage object with anything to compare.
bool has_shared_storage(const Document& doc);

// Both documents must be cluster documents (UsageError otherwise) and at least one must
// carry shared_storage (UsageError: nothing to compare).
StorageComparison compare_cluster(const Document& before, const Document& after);

// gdsbench.compare/1 with "compared": "cluster"; matches[] in the io comparison's shape
// (label, identity, metrics[] with before/after/delta/delta_percent/change, u_test null).
nlohmann::json storage_comparison_to_json(const StorageComparison& c, const nlohmann::json& meta);
std::string storage_comparison_text(const StorageComparison& c);

}  // namespace gdsb::report
