// A node's history (issue 37): what one gdsbench document contributes to it, and the whole
// history read back, as plain data. The SQLite store (history_db.hpp) keeps these records;
// the analysis (history_analysis.hpp) reads them. Nothing here touches a database.
//
// A run is one document. It adds points to series keyed by node, test and metric, and the
// facts it depended on: per node (kernel, driver, nvidia-fs, cufile.json settings,
// gdsbench version...) and per node and test (the path cuFile took, thread count, engine).
// A fact a document did not record is absent, never guessed: attribution then says it
// could not be compared. docs/gdsb-report.md, "history", lists the facts and metrics.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/report/document.hpp"

namespace gdsb::report::history {

// Fact name -> value, e.g. {"kernel": "6.8.0-49-generic", "nvidia_fs": "2.20.5"}.
using Facts = std::map<std::string, std::string>;

// The metrics a history keeps, defined once: key, label, unit and direction.
struct MetricDef {
  std::string_view key;    // "throughput", "iops", "p99", "aggregate", "h2d", ...
  std::string_view label;  // "read throughput" is built from the test; this is the metric's word
  std::string_view unit;   // "GiB/s" (base 1024), "GB/s" (base 1000), "IOPS", "us"
  bool higher_is_better;
};
const std::vector<MetricDef>& metric_defs();
// nullptr for a key the table does not have (a newer database's metric).
const MetricDef* find_metric(std::string_view key);

// What a fact is called in a sentence ("NVIDIA driver", "nvidia-fs"); the name itself for
// facts the table does not list (cufile.json keys, environment variables).
std::string fact_label(std::string_view name);

struct Point {
  std::string node;
  std::string test;    // "GPUD READ 1 MiB", "node GPUD", "shared storage 4 nodes CPUONLY read"
  std::string metric;  // a MetricDef key
  double value = 0;
};

// A test a run asked for and got no figure from (waived, failed, page cache) is recorded by
// two test facts, no points: why the series has no point there (the gate fails on it).
inline constexpr std::string_view kNoFigureStatus = "no_figure";   // "failed", "waived", "page cache"
inline constexpr std::string_view kNoFigureReason = "no_figure_reason";

struct TestFacts {
  std::string node;
  std::string test;
  Facts facts;  // path, threads, engine, iodepth, ...
};

// What one document adds.
struct RunRecord {
  std::string key;     // SHA-256 of the document's canonical JSON: the same document is one run
  std::string kind;    // "io", "doctor", "p2p", "cluster"
  std::string time;    // context.started_at (ISO 8601 UTC); "" when the document has none
  std::string source;  // the file name as given to `history add`
  std::map<std::string, Facts> node_facts;  // node -> facts
  std::vector<TestFacts> test_facts;
  std::vector<Point> points;
};

// The record of a loaded, validated document (io, doctor, p2p or cluster); UsageError
// naming the file for the kinds that have no figures (topo, compare).
RunRecord extract_run(const Document& doc);

// The history read back from a store.
struct RunInfo {
  int64_t id = 0;  // run number: the order runs were added in
  std::string key, kind, time, source;
};

struct SeriesData {
  std::string node, test, metric;
  std::vector<std::pair<int64_t, double>> points;  // (run id, value), in run order
};

struct History {
  std::string path;                     // the database file, for messages
  std::vector<RunInfo> runs;            // ordered by time, then id
  std::map<int64_t, std::map<std::string, Facts>> node_facts;  // run -> node -> facts
  // run -> (node, test) -> facts
  std::map<int64_t, std::map<std::pair<std::string, std::string>, Facts>> test_facts;
  std::vector<SeriesData> series;       // ordered by node, test, metric

  const RunInfo* run(int64_t id) const;
  // The node's facts and the test's, merged (test facts win): what a point depended on.
  Facts facts_of(int64_t run, const std::string& node, const std::string& test) const;
};

// Apache Otava's CSV layout (docs/CSV.md of apache/otava): one file per node and test, a
// header row, then one row per run in time order: `time` ("2026-11-20 10:40:03 +0000"),
// the attribute columns (`run`, `document`, then every fact recorded for that test), then
// one column per metric; and `otava.yaml` declaring each file as a csv test with its
// metrics' direction (1 higher is better, -1 lower). A run lacking one of its test's
// metrics, or a time, is left out and named in `notes`.
struct ExportFile {
  std::string name;  // file name inside the export directory
  std::string text;
};
struct OtavaExport {
  std::vector<ExportFile> files;  // the CSV files, then otava.yaml
  std::vector<std::string> notes;
};
OtavaExport otava_csv(const History& h);
// True when `name` in `dir` is a CSV file an earlier export wrote: the directory's otava.yaml
// carries the generator mark (kGeneratorMark) and declares `file: "name"`. A CSV file has no
// room for a mark of its own (Otava reads every line), so ownership is the yaml's word;
// `history export` replaces such files and refuses any other.
bool exported_csv(const std::string& dir, const std::string& name);

}  // namespace gdsb::report::history
