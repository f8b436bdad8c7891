// The pieces of a Prometheus/OpenMetrics text file that every gdsbench writer shares: label
// escaping, a label set, the HELP/TYPE header of a family, sample values. What is written is
// valid in both formats a reader may use: node_exporter's textfile collector (Prometheus text
// format 0.0.4, where "# EOF" is a comment) and the OpenMetrics parser (which requires it).
// So: only gauges (text format has no "info" type; `_info` metrics are gauges of value 1),
// no comment lines other than HELP/TYPE/EOF (OpenMetrics rejects them).
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gdsb::report::openmetrics {

// A label value with \, " and newline escaped as both formats require.
std::string label_value(std::string_view s);

using Labels = std::vector<std::pair<std::string, std::string>>;
// {a="x",b="y"}; "" for no labels.
std::string labels(const Labels& l);

// "# HELP name help" and "# TYPE name gauge". help must not hold a newline or backslash.
void gauge_family(std::ostream& o, std::string_view name, std::string_view help);

// One sample line: name{labels} value (integers without a fraction, others %.17g).
void sample(std::ostream& o, std::string_view name, const Labels& l, double value);

// A gdsb_generator_info family naming the tool: its HELP carries report::kGeneratorMark, so
// a rerun recognises the file as its own and replaces it without --allow-overwrite.
void generator_info(std::ostream& o, std::string_view tool, std::string_view version);

inline constexpr std::string_view kEof = "# EOF\n";

}  // namespace gdsb::report::openmetrics
