// The gdsbench.compare/1 document and the terminal table of a comparison.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gdsb/report/compare.hpp"

namespace gdsb::report {
namespace {

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json unmatched_json(const std::vector<UnmatchedRun>& runs) {
  auto arr = nlohmann::json::array();
  for (const auto& u : runs) {
    arr.push_back({{"side", u.side}, {"index", u.index}, {"label", u.label}, {"why", u.why}});
  }
  return arr;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

nlohmann::json comparison_to_json(const Comparison& c, const nlohmann::json& meta) {
  nlohmann::json doc = meta;
  doc["schema"] = "gdsbench.compare/1";
  doc["before"] = {{"path", c.before_name}};
  doc["after"] = {{"path", c.after_name}};
  doc["alpha"] = c.options.alpha;
  doc["baseline_xfer"] = c.options.baseline_xfer
                             ? nlohmann::json(xfer_label(*c.options.baseline_xfer))
                             : nlohmann::json(nullptr);
  doc["current_xfer"] = c.options.current_xfer ? nlohmann::json(xfer_label(*c.options.current_xfer))
                                               : nlohmann::json(nullptr);
  auto matches = nlohmann::json::array();
  for (const auto& m : c.matches) {
    auto metrics = nlohmann::json::array();
    for (const auto& d : m.metrics) {
      const auto& info = metric_info(d.metric);
      nlohmann::json jm{{"metric", info.key},
                        {"label", info.label},
                        {"unit", info.unit},
                        {"higher_is_better", info.higher_is_better},
                        {"before", d.before},
                        {"after", d.after},
                        {"delta", d.delta},
                        {"delta_percent", number_or_null(d.delta_percent)},
                        {"change", change_name(d.change)},
                        {"u_test", nullptr}};
      if (d.u_test) {
        jm["u_test"] = {{"n_before", d.u_test->n1},
                        {"n_after", d.u_test->n2},
                        {"u", d.u_test->u1},
                        {"p_value", d.u_test->p_value},
                        {"exact", d.u_test->exact},
                        {"min_p", d.u_test->min_p},
                        {"has_power", d.test_has_power},
                        {"significant", d.test_has_power && d.u_test->p_value < c.options.alpha}};
      }
      metrics.push_back(std::move(jm));
    }
    matches.push_back({{"label", m.label},
                       {"identity", m.identity},
                       {"before_index", m.before_index},
                       {"after_index", m.after_index},
                       {"before_path_used", m.before_path},
                       {"after_path_used", m.after_path},
                       {"before_repetitions", m.before_reps},
                       {"after_repetitions", m.after_reps},
                       {"metrics", std::move(metrics)}});
  }
  doc["matches"] = std::move(matches);
  doc["unmatched"] = unmatched_json(c.unmatched);
  doc["not_comparable"] = unmatched_json(c.not_comparable);
  doc["notes"] = c.notes;
  return doc;
}

std::string comparison_text(const Comparison& c) {
  std::ostringstream o;
  o << "before: " << c.before_name << "\nafter:  " << c.after_name << "\n";
  for (const auto& n : c.notes) o << "note: " << n << "\n";
  for (const auto& m : c.matches) {
    o << "\n" << m.label;
    if (m.before_path != m.after_path)
      o << "  (path " << m.before_path << " -> " << m.after_path << ")";
    o << "\n  " << pad("metric", 20) << pad("before", 12) << pad("after", 12) << pad("delta", 9)
      << "verdict\n";
    for (const auto& d : m.metrics) {
      const auto& info = metric_info(d.metric);
      o << "  "
        << pad(std::string(info.key) + " (" +
                   std::string(info.unit == "% of machine" ? "%" : info.unit) + ")",
               20)
        << pad(format_number(d.before), 12) << pad(format_number(d.after), 12)
        << pad(format_percent(d.delta_percent), 9) << change_name(d.change);
      if (d.u_test) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  (U test p=%.4f, n=%zu vs %zu%s)", d.u_test->p_value,
                      d.u_test->n1, d.u_test->n2,
                      d.test_has_power ? "" : ", too few repetitions to decide");
        o << buf;
      }
      o << "\n";
    }
  }
  for (const auto& u : c.not_comparable)
    o << "\nnot comparable: " << u.label << " (" << u.side << ": " << u.why << ")";
  for (const auto& u : c.unmatched)
    o << "\nunmatched " << u.side << " run #" << u.index << ": " << u.label;
  if (!c.unmatched.empty() || !c.not_comparable.empty()) o << "\n";
  if (c.matches.empty()) o << "\nno runs matched\n";
  return o.str();
}

}  // namespace gdsb::report
