// CI regression gate. io documents: every baseline run must be matched in the current
// document and no metric may get worse by more than its threshold; where both sides were
// repeated and the U test can decide, a change that is not significant does not fail.
// topo documents: a check whose verdict was pass or warn in the baseline must not fail now.
// doctor documents: their runs as io, plus no new certain or likely finding.
// cluster documents: the shared-storage scaling points, GPUs fed and checkpoint rates.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/report/document.hpp"
#include "gdsb/report/metrics.hpp"

namespace gdsb::report {

struct Thresholds {
  // Largest tolerated worsening per metric, in percent of the baseline; nullopt = not gated.
  std::array<std::optional<double>, kMetricCount> max_worse_percent{};
  double alpha = 0.05;
  bool allow_missing = false;  // a baseline run absent from the current document passes
};

// throughput and IOPS drop 5%, p50 and p99 rise 10%; CPU not gated.
Thresholds default_thresholds();
// "5%", "5", "0.5%" -> percent; "off" or "none" -> nullopt. UsageError naming `what` otherwise.
std::optional<double> parse_percent(std::string_view text, std::string_view what);
// {"max_throughput_drop": "5%", "max_iops_drop": 5, "max_p50_rise": ..., "max_p99_rise": ...,
//  "max_cpu_rise": ..., "alpha": 0.05, "allow_missing": false}; a null value turns a gate off.
void apply_thresholds_json(Thresholds& t, const nlohmann::json& j, const std::string& name);
// "max_throughput_drop" etc.: the option/key name for a metric.
std::string threshold_key(Metric m);

enum class Outcome { Pass, Fail, Skip };

struct GateCase {
  std::string group;  // the run label or "topology"
  std::string name;   // metric key, "presence", "status", "path" or the check id
  Outcome outcome = Outcome::Pass;
  std::string message;  // one line
};

struct GateResult {
  std::string kind;  // "io", "topo", "doctor" or "cluster"
  std::string baseline_name;
  std::string current_name;
  std::vector<GateCase> cases;
  std::vector<std::string> notes;
  std::size_t count(Outcome o) const;
  bool failed() const { return count(Outcome::Fail) > 0; }
};

// Dispatches on the documents' kind; UsageError when they differ or the kind has no gate,
// or when no run of the current document matches any baseline run.
GateResult run_gate(const Document& baseline, const Document& current, const Thresholds& t);
GateResult gate_io(const Document& baseline, const Document& current, const Thresholds& t);
GateResult gate_topo(const Document& baseline, const Document& current);
// doctor documents: the io gate on their runs, and no certain or likely finding that the
// baseline did not have (a finding the baseline had and the current lacks is "fixed").
GateResult gate_doctor(const Document& baseline, const Document& current, const Thresholds& t);
// cluster documents (issue 26): their shared_storage. Each baseline point's aggregate, the
// GPUs fed and the checkpoint save/load rates may drop by at most max_throughput_drop; a
// baseline point missing now fails (unless allow_missing), one ok before and not ok now
// fails. UsageError when the baseline has no shared_storage (nothing to gate), when the
// current has none, or when no point matches.
GateResult gate_cluster(const Document& baseline, const Document& current, const Thresholds& t);

std::string gate_text(const GateResult& r);
std::string gate_junit(const GateResult& r);     // JUnit XML, one testcase per case
std::string gate_markdown(const GateResult& r);  // summary for CI job pages / PR comments

}  // namespace gdsb::report
