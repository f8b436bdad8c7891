// gdsb-io's top level: decides between the survey, a job file and command-line jobs,
// runs them, prints, writes the JSON report and returns the exit code. Never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "gdsb/report/output_file.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/result.hpp"
#include "options.hpp"

namespace gdsb::io {

int run_io(const Options& opt);

// The --json FILE target: replaces only an earlier gdsbench.io report unless allowed.
report::OutputTarget io_json_target(const std::string& path);

// Writes the gdsbench.io/1 document to json (its path may be empty) and its HTML view to
// html_path (may be empty; each through a temp file + rename); ended_at is set here. A
// workload preset's summary (time to result first) goes in as "workload_summary", the node
// mode's figures as "node": sections are added to the document under their keys.
void write_io_report(const report::OutputTarget& json, const std::string& html_path,
                     const std::vector<std::string>& argv, RunContext context,
                     std::span<const RunResult> runs, bool interrupted, bool allow_overwrite,
                     const std::vector<std::pair<std::string, nlohmann::json>>& sections = {});

// Prints an error as "gdsb-io: <message>" on stderr.
void print_error(const std::string& message);

}  // namespace gdsb::io
