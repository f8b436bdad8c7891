#include "gdsb/report/openmetrics.hpp"

#include <cmath>
#include <cstdio>

#include "gdsb/report/output_file.hpp"

namespace gdsb::report::openmetrics {

std::string label_value(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') o += '\\';
    o += c;
  }
  return o;
}

std::string labels(const Labels& l) {
  if (l.empty()) return {};
  std::string o = "{";
  for (const auto& [k, v] : l) o += (o.size() > 1 ? "," : "") + k + "=\"" + label_value(v) + "\"";
  return o + "}";
}

void gauge_family(std::ostream& o, std::string_view name, std::string_view help) {
  o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " gauge\n";
}

void sample(std::ostream& o, std::string_view name, const Labels& l, double value) {
  char b[40];
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
    std::snprintf(b, sizeof b, "%.0f", value);
  else
    std::snprintf(b, sizeof b, "%.17g", value);
  o << name << labels(l) << ' ' << b << '\n';
}

void generator_info(std::ostream& o, std::string_view tool, std::string_view version) {
  gauge_family(o, "gdsb_generator_info",
               std::string("Which gdsbench tool wrote this file (") + std::string(kGeneratorMark) +
                   "'s writer; always 1)");
  sample(o, "gdsb_generator_info", {{"tool", std::string(tool)}, {"version", std::string(version)}}, 1);
}

}  // namespace gdsb::report::openmetrics
