// JUnit XML as read by Jenkins, GitLab and GitHub test reporters: one <testcase> per
// run x metric (or per topology check), classname = the run, name = the metric.
#include <map>
#include <sstream>

#include "gdsb/report/gate.hpp"
#include "gdsb/report/output_file.hpp"

namespace gdsb::report {
namespace {

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even as references.
        if (u < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += "?";
        } else {
          out += ch;
        }
    }
  }
  return out;
}

}  // namespace

std::string gate_junit(const GateResult& r) {
  std::map<std::string, std::vector<const GateCase*>> suites;  // one suite per run/group
  std::vector<std::string> order;
  for (const auto& c : r.cases) {
    if (!suites.contains(c.group)) order.push_back(c.group);
    suites[c.group].push_back(&c);
  }
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- " << kGeneratorMark << " gate ("
    << xml_escape(r.kind) << ") -->\n";
  o << "<testsuites name=\"gdsb-report gate\" tests=\"" << r.cases.size() << "\" failures=\""
    << r.count(Outcome::Fail) << "\" skipped=\"" << r.count(Outcome::Skip) << "\">\n";
  for (const auto& group : order) {
    const auto& cases = suites[group];
    std::size_t fails = 0, skips = 0;
    for (const auto* c : cases) {
      fails += c->outcome == Outcome::Fail ? 1U : 0U;
      skips += c->outcome == Outcome::Skip ? 1U : 0U;
    }
    o << "  <testsuite name=\"" << xml_escape(group) << "\" tests=\"" << cases.size()
      << "\" failures=\"" << fails << "\" skipped=\"" << skips << "\">\n";
    for (const auto* c : cases) {
      o << "    <testcase classname=\"gdsb." << xml_escape(r.kind) << "." << xml_escape(group)
        << "\" name=\"" << xml_escape(c->name) << "\"";
      if (c->outcome == Outcome::Pass) {
        o << "><system-out>" << xml_escape(c->message) << "</system-out></testcase>\n";
      } else if (c->outcome == Outcome::Skip) {
        o << "><skipped message=\"" << xml_escape(c->message) << "\"/></testcase>\n";
      } else {
        o << "><failure type=\"regression\" message=\"" << xml_escape(c->message) << "\">"
          << xml_escape("baseline " + r.baseline_name + ", current " + r.current_name + ": " +
                        c->message)
          << "</failure></testcase>\n";
      }
    }
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

}  // namespace gdsb::report
