// Before/after comparison of io documents: runs matched by workload identity, a delta per
// metric, and, where both sides were repeated, a Mann-Whitney U test deciding whether the
// change stands out from the run-to-run noise.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/report/document.hpp"
#include "gdsb/report/metrics.hpp"
#include "gdsb/report/stats.hpp"

namespace gdsb::report {

struct CompareOptions {
  double alpha = 0.05;  // significance level of the U test
  // Transfer-type filters ("GDS vs CPU path"): when set, only runs of that type take part on
  // that side and xfer_type is left out of the identity.
  std::optional<XferType> baseline_xfer;
  std::optional<XferType> current_xfer;
};

enum class Change {
  Better,          // a real improvement (significant, or single runs that moved the right way)
  Worse,           // a real regression (idem)
  Unchanged,       // identical figures
  NotSignificant,  // repeated on both sides and the U test finds no significant difference
};
std::string_view change_name(Change c);  // "better", "worse", "unchanged", "not significant"

struct MetricDelta {
  Metric metric = Metric::Throughput;
  double before = 0;  // the document's reported figure (median repetition with --repeat)
  double after = 0;
  double delta = 0;
  double delta_percent = 0;     // NaN when before is 0
  std::optional<UTest> u_test;  // when both sides have >= 2 repetitions
  bool test_has_power = false;  // u_test present and its smallest possible p is below alpha
  Change change = Change::Unchanged;
  // Signed badness in percent: > 0 means worse for this metric (drop for throughput, rise
  // for latency). NaN when before is 0.
  double worse_percent = 0;
};

struct RunMatch {
  std::size_t before_index = 0;
  std::size_t after_index = 0;
  std::string label;
  nlohmann::json identity;
  std::string before_path;  // path_used
  std::string after_path;
  std::size_t before_reps = 0;
  std::size_t after_reps = 0;
  std::vector<MetricDelta> metrics;
};

struct UnmatchedRun {
  std::string side;  // "before" or "after"
  std::size_t index = 0;
  std::string label;
  std::string why;
};

struct Comparison {
  std::string before_name;  // file names as given
  std::string after_name;
  CompareOptions options;
  std::vector<RunMatch> matches;
  std::vector<UnmatchedRun> unmatched;       // no run of the same workload on the other side
  std::vector<UnmatchedRun> not_comparable;  // matched, but one side waived or failed
  std::vector<std::string> notes;            // e.g. interrupted documents
};

Comparison compare_runs(const std::vector<RunResult>& before, const std::vector<RunResult>& after,
                        const CompareOptions& options);
// Both documents must be io documents (UsageError otherwise); one document may be passed
// twice with xfer filters for the in-document case.
Comparison compare_documents(const Document& before, const Document& after,
                             const CompareOptions& options);

// The gdsbench.compare/1 document; meta supplies tool, argv and context.
nlohmann::json comparison_to_json(const Comparison& c, const nlohmann::json& meta);
// Plain text table for the terminal.
std::string comparison_text(const Comparison& c);

}  // namespace gdsb::report
