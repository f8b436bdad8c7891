// The analysis of a history: for every series, its change points (changepoint.hpp, E-Divisive
// as Apache Otava runs it), the segments between them, and for each change what differed in
// the runs' recorded context on either side of it; the fleet view (which nodes changed at
// the same run); the gate on the newest runs; and the gdsbench.history/1 document that
// `history show --json` writes and its HTML page renders.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gdsb/report/changepoint.hpp"
#include "gdsb/report/gate.hpp"
#include "gdsb/report/history.hpp"

namespace gdsb::report::history {

inline constexpr const char* kHistorySchema = "gdsbench.history/1";

// A fact that differs across a change point: between the last run before it and the first
// run after it; or, where nothing differs there, between two neighbouring runs at most two
// runs from it (a change point's place in noisy runs is often off by one or two): `at_run`
// then names the run that first had the new value.
struct FactChange {
  std::string name;    // "nvidia_fs"
  std::string before;  // its value in the run before
  std::string after;   // in the run after
  int64_t at_run = 0;  // 0: at the change point itself; else the run near it where it changed
};

struct Change {
  ChangePoint point;        // index into the series' points
  int64_t run = 0;          // the first run after the change
  std::string time;         // its date
  bool worse = false;       // throughput down, latency up
  std::vector<FactChange> changed;
  // Facts the run before or the run after did not record (documents of older versions):
  // these could not be compared.
  std::vector<std::string> not_compared;
  std::string sentence;     // "GPUD READ 1 MiB throughput -38.2% at run 57 (2026-11-20), when ..."
};

struct SeriesAnalysis {
  const SeriesData* data = nullptr;
  const MetricDef* metric = nullptr;  // nullptr for a metric this version does not know
  std::vector<SegmentSummary> segments;
  std::vector<Change> changes;
  std::string note;  // why nothing was analysed ("2 runs: ..."), "" otherwise
  // The level method's verdict on the newest nights (ChangePointMethod::Level only).
  std::optional<LevelVerdict> level;
};

struct Analysis {
  const History* history = nullptr;
  ChangePointOptions options;
  std::optional<int64_t> accept_through;  // runs up to this one are accepted (--accept-through)
  std::vector<SeriesAnalysis> series;
};

// Every series of `h` (which must outlive the result). `accept_through`: a team that has looked
// at a regression and takes it as the new normal names its run; the level method then judges
// the newest nights against the level after it.
Analysis analyse(const History& h, const ChangePointOptions& options,
                 std::optional<int64_t> accept_through = std::nullopt);

// Change points of two or more nodes on the same night (the UTC date of the first run after
// each) that name the same changed fact: a fleet-wide event, whichever documents carried the
// runs (per-node io documents of different run ids, or one cluster document). Change points
// that name no fact group by night alone (fact ""). A run without a start time groups by
// its run id instead of a night.
struct FleetEvent {
  std::string night;               // "2026-11-20"; "" for runs without a time
  std::string fact;                // "driver"; "" when the change points name no fact
  int64_t run = 0;                 // the earliest first-run-after among them
  std::string time;                // its time
  std::vector<std::string> nodes;  // every node with such a change point, sorted
  std::vector<std::string> values; // the fact's transitions seen, "570.86 -> 580.65", sorted
  std::size_t changes = 0;         // change points in the event, all nodes and series
};
std::vector<FleetEvent> fleet_events(const Analysis& a);
// "2026-11-20: 2 nodes changed when NVIDIA driver changed (550.54.15 -> 570.86.15): n1 n2"
std::string fleet_sentence(const FleetEvent& e);

// Each node's newest night of each document kind: (node, kind) -> its runs. The night is the
// node's newest run by the history's order and the node's runs of that kind up to 12 hours
// before it (a nightly job may write one document a test; by their recorded times, the newest
// run alone when a time is missing). A run counts for a node where it recorded the node's
// facts, a test's facts or a point. The one decision of "newest" that the gate and show read.
using NodeKind = std::pair<std::string, std::string>;
std::map<NodeKind, std::set<int64_t>> newest_nights(const History& h);

// gate --history. Per series, with the level method: red when the newest nights sit below
// the last accepted level beyond the noise (level_gate.hpp), until the regression is accepted
// (`accept_through` given to analyse()) or the level comes back; a warning when only some of
// them do. With Otava's methods: red when the last change point is a regression significant at
// max_pvalue, unless accepted. Either way a test whose node's newest run asked for it and got
// no figure fails with the run's reason, also when it never had a figure; series too short to
// judge are skipped with the reason. UsageError when the history has neither series nor such
// a failed test.
GateResult gate_history(const Analysis& a);

// "throughput" of a test, in words: "GPUD READ 1 MiB throughput".
std::string series_title(const SeriesAnalysis& s);

// The gdsbench.history/1 document; meta supplies tool, argv and context.
nlohmann::json analysis_to_json(const Analysis& a, const nlohmann::json& meta);
// The terminal's summary: one line per change point, then a count.
std::string analysis_text(const Analysis& a);

}  // namespace gdsb::report::history
