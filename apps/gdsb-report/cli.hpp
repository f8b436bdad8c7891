// gdsb-report's subcommands: options structs, their CLI11 setup, and the run functions.
// run_* return an exit code; library exceptions are mapped to exit codes in main.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gdsb/report/gate.hpp"
#include "gdsb/run_context.hpp"

namespace gdsb::report::cli {

struct HtmlOptions {
  std::string input;
  std::string output;  // default: the input name with .html
  bool allow_overwrite = false;
};

struct CompareOptions {
  std::vector<std::string> inputs;  // BEFORE AFTER, or one document with the xfer filters
  std::string html;
  std::string json;
  std::string baseline_xfer;  // --baseline-xfer 2
  std::string xfer;           // --xfer 0
  double alpha = 0.05;
  bool allow_overwrite = false;
};

// The change-point knobs shared by `history show` and `gate --history` (Otava's -P and -M).
struct ChangePointFlags {
  std::string method = "level";  // "level" (the gate's own) or "otava" (Otava's windowed E-Divisive)
  double max_pvalue = 0.001;     // otava only
  double min_magnitude = 0.0;    // a fraction: 0.05 = 5%
  std::size_t min_runs = 3;      // level only: nights that must all be beyond the threshold
};

struct GateOptions {
  std::string history;  // gate --history DB: the gate on the stored series
  int64_t accept_through = 0;  // gate --history --accept-through RUN (0: none)
  ChangePointFlags change_points;
  std::string baseline;
  std::string current;
  std::string thresholds_file;
  std::string max_throughput_drop, max_iops_drop, max_p50_rise, max_p99_rise, max_cpu_rise;
  double alpha = 0;  // 0 = keep the default or the thresholds file's
  bool allow_missing = false;
  std::string junit;
  std::string markdown;
  bool allow_overwrite = false;
};

// gdsb-report history add|show|export (issue 37).
struct HistoryOptions {
  std::string database;
  std::vector<std::string> documents;  // add
  std::string html, json;              // show
  std::string csv_dir;                 // export --csv DIR
  ChangePointFlags change_points;
  int busy_timeout_s = 60;
  bool allow_overwrite = false;
};

struct Options {
  HtmlOptions html;
  CompareOptions compare;
  GateOptions gate;
  HistoryOptions history;
};

// Registers the subcommands; `command` tells afterwards which one ran.
void setup(CLI::App& app, Options& opt);
int run_html(const HtmlOptions& opt);
int run_compare(const CompareOptions& opt, const nlohmann::json& meta);
int run_gate(const GateOptions& opt);
// A gate's verdict to stdout, --junit and --markdown; exit 3 when it failed.
int report_gate(const GateResult& result, const GateOptions& opt);

// The history subcommands (cli_history.cpp).
void setup_history(CLI::App& app, HistoryOptions& opt);
void add_change_point_flags(CLI::App& cmd, ChangePointFlags& flags);
// The subcommand of `history` that ran: "add", "show" or "export".
int run_history(CLI::App& cmd, const HistoryOptions& opt, const nlohmann::json& meta);
int run_gate_history(const GateOptions& opt);

// tool, argv and context (host, kernel, times, CUFILE_*/CUDA_* env) for documents we write;
// context comes from gdsb::collect_context() at start, ended_at is set here.
nlohmann::json run_meta(int argc, char** argv, RunContext context);

}  // namespace gdsb::report::cli
