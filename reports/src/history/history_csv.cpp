// The history in Apache Otava's CSV layout, so a team on Otava keeps its pipeline.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "gdsb/report/history.hpp"
#include "gdsb/report/output_file.hpp"

namespace gdsb::report::history {
namespace {

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (const char ch : v) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string yaml_string(const std::string& v) {
  std::string out = "\"";
  for (const char ch : v) out += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
  return out + "\"";
}

// A name Otava and a file system both take: letters, digits, '.', '-', '_'.
std::string safe_name(const std::string& v) {
  std::string out;
  for (const char ch : v) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' ? ch : '_';
  return out;
}

// "2026-11-20T10:40:03Z" -> "2026-11-20 10:40:03 +0000" (Otava's own output format).
std::string otava_time(const std::string& iso) {
  if (iso.size() < 19 || iso[10] != 'T') return {};
  return iso.substr(0, 10) + " " + iso.substr(11, 8) + " +0000";
}

}  // namespace

OtavaExport otava_csv(const History& h) {
  // (node, test) -> metric -> run -> value
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::map<int64_t, double>>> tests;
  for (const auto& s : h.series)
    for (const auto& [run, v] : s.points) tests[{s.node, s.test}][s.metric][run] = v;
  OtavaExport out;
  std::string yaml = "# " + std::string(kGeneratorMark) + " (gdsb-report history export)\ntests:\n";
  std::set<std::string> used;
  for (const auto& [key, metrics] : tests) {
    const auto& [node, test] = key;
    std::string name = safe_name(node + "." + test);
    for (int i = 2; used.count(name) != 0; ++i) name = safe_name(node + "." + test) + "_" + std::to_string(i);
    used.insert(name);
    std::set<std::string> facts;
    for (const auto& r : h.runs) {
      // A run that gave the test no figure (its no_figure facts) adds no column.
      const bool measured = std::any_of(metrics.begin(), metrics.end(),
                                        [&](const auto& m) { return m.second.count(r.id) != 0; });
      if (!measured) continue;
      for (const auto& kv : h.facts_of(r.id, node, test)) facts.insert(kv.first);
    }
    std::string csv = "time,run,document";
    for (const auto& f : facts) csv += "," + csv_field(f);
    for (const auto& m : metrics) csv += "," + csv_field(m.first);
    csv += "\n";
    std::size_t rows = 0;
    for (const auto& r : h.runs) {
      bool any = false, all = true;
      for (const auto& m : metrics) {
        const bool has = m.second.count(r.id) != 0;
        any = any || has;
        all = all && has;
      }
      if (!any) continue;
      const std::string t = otava_time(r.time);
      if (!all || t.empty()) {
        out.notes.push_back(name + ": run " + std::to_string(r.id) + " left out (" +
                            (t.empty() ? "its document has no start time" : "a metric of the test is missing") + ")");
        continue;
      }
      const Facts f = h.facts_of(r.id, node, test);
      csv += t + "," + std::to_string(r.id) + "," + csv_field(r.source);
      for (const auto& name_of_fact : facts) {
        const auto it = f.find(name_of_fact);
        csv += "," + csv_field(it == f.end() ? std::string() : it->second);
      }
      for (const auto& m : metrics) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", m.second.at(r.id));
        csv += std::string(",") + buf;
      }
      csv += "\n";
      ++rows;
    }
    if (rows == 0) continue;
    out.files.push_back({name + ".csv", csv});
    yaml += "  " + yaml_string(name) + ":\n    type: csv\n    file: " + yaml_string(name + ".csv") +
            "\n    time_column: time\n    attributes: [run, document";
    for (const auto& f : facts) yaml += ", " + yaml_string(f);
    yaml += "]\n    metrics:\n";
    for (const auto& m : metrics) {
      const auto* def = find_metric(m.first);
      yaml += "      " + yaml_string(m.first) + ": {direction: " + (def != nullptr && !def->higher_is_better ? "-1" : "1") + "}\n";
    }
    yaml += "    csv_options: {delimiter: \",\", quote_char: '\"'}\n";
  }
  out.files.push_back({"otava.yaml", yaml});
  return out;
}

bool exported_csv(const std::string& dir, const std::string& name) {
  const std::string yaml = dir + "/otava.yaml";
  if (!is_gdsbench_output(yaml)) return false;
  std::ifstream in(yaml);
  const std::string declared = "file: " + yaml_string(name);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(' ') != std::string::npos && line.substr(line.find_first_not_of(' ')) == declared)
      return true;
  return false;
}

}  // namespace gdsb::report::history
