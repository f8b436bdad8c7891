// Markdown summary for CI job pages and merge-request comments: the verdict first, then
// only what failed, then a compact table of everything.
#include <sstream>

#include "gdsb/report/gate.hpp"
#include "gdsb/report/output_file.hpp"

namespace gdsb::report {
namespace {

// Table cells: pipes and newlines would break the row; backslash-escape Markdown syntax
// so that names coming from documents cannot inject links or HTML.
std::string md_cell(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
      case '|':
        out += "\\|";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '*':
      case '_':
      case '`':
      case '[':
      case ']':
      case '\\':
        out += '\\';
        out += ch;
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string_view outcome_word(Outcome o) {
  switch (o) {
    case Outcome::Pass:
      return "pass";
    case Outcome::Fail:
      return "**FAIL**";
    case Outcome::Skip:
      return "skip";
  }
  return "?";
}

}  // namespace

std::string gate_markdown(const GateResult& r) {
  std::ostringstream o;
  o << "<!-- " << kGeneratorMark << " -->\n";
  o << "## gdsbench " << r.kind << " gate: " << (r.failed() ? "FAILED" : "passed") << "\n\n";
  o << r.count(Outcome::Fail) << " failed, " << r.count(Outcome::Pass) << " passed, "
    << r.count(Outcome::Skip) << " skipped. Baseline " << md_cell(r.baseline_name) << ", current "
    << md_cell(r.current_name) << ".\n\n";
  if (r.failed()) {
    o << "### Regressions\n\n";
    for (const auto& c : r.cases) {
      if (c.outcome == Outcome::Fail) {
        o << "- " << md_cell(c.group) << " / " << md_cell(c.name) << ": " << md_cell(c.message)
          << "\n";
      }
    }
    o << "\n";
  }
  if (!r.notes.empty()) {
    o << "### Notes\n\n";
    for (const auto& n : r.notes) o << "- " << md_cell(n) << "\n";
    o << "\n";
  }
  o << "| run | check | result | detail |\n|---|---|---|---|\n";
  for (const auto& c : r.cases) {
    o << "| " << md_cell(c.group) << " | " << md_cell(c.name) << " | " << outcome_word(c.outcome)
      << " | " << md_cell(c.message) << " |\n";
  }
  return o.str();
}

}  // namespace gdsb::report
