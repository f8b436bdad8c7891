// gate --history: the analysis' verdict on each series' newest nights, as gate cases, and the
// tests whose newest run asked for a figure and got none.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>

#include "gdsb/error.hpp"
#include "gdsb/report/history_analysis.hpp"
#include "gdsb/report/metrics.hpp"

namespace gdsb::report::history {
namespace {

// The first line of a run's reason (cuFile's failures go on with the log lines they quote).
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string run_label(const History& h, int64_t run) {
  const auto* r = h.run(run);
  return "run " + std::to_string(run) + (r == nullptr || r->time.empty() ? "" : " (" + r->time.substr(0, 10) + ")");
}

// Seconds since the epoch of an ISO 8601 UTC time ("2026-11-20T10:40:03Z", fractions and an
// offset allowed); nullopt when it does not parse.
std::optional<std::int64_t> epoch_seconds(const std::string& iso) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &se) != 6) return std::nullopt;
  std::tm t{};
  t.tm_year = y - 1900, t.tm_mon = mo - 1, t.tm_mday = d, t.tm_hour = h, t.tm_min = mi, t.tm_sec = se;
  std::int64_t secs = ::timegm(&t);
  const auto tz = iso.find_first_of("+-", 19);
  int oh = 0, om = 0;
  if (tz != std::string::npos && std::sscanf(iso.c_str() + tz + 1, "%2d:%2d", &oh, &om) == 2)
    secs -= (iso[tz] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
  return secs;
}

// A nightly job may write several documents (one gdsb-io call a test): the runs of a node
// within this long before its newest run are that night's.
constexpr std::int64_t kNightSeconds = 12 * 3600;

// The history's order and kinds, and each node's newest night (newest_nights()).
struct Newest {
  std::map<int64_t, std::size_t> order;
  std::map<int64_t, std::string> kind;
  std::map<NodeKind, std::set<int64_t>> night;

  explicit Newest(const History& h) : night(newest_nights(h)) {
    for (std::size_t i = 0; i < h.runs.size(); ++i) order[h.runs[i].id] = i, kind[h.runs[i].id] = h.runs[i].kind;
  }
  // The newest run of the night (for messages).
  int64_t newest(const NodeKind& key) const {
    const auto& ids = night.at(key);
    return *std::max_element(ids.begin(), ids.end(), [&](int64_t a, int64_t b) { return order.at(a) < order.at(b); });
  }
};

// The no-figure facts of `test` on `node` in run `id`, or nullptr.
const Facts* no_figure_in(const History& h, int64_t id, const std::string& node, const std::string& test) {
  const auto run = h.test_facts.find(id);
  if (run == h.test_facts.end()) return nullptr;
  const auto t = run->second.find({node, test});
  return t != run->second.end() && t->second.count(std::string(kNoFigureStatus)) != 0 ? &t->second : nullptr;
}

std::string no_figure_message(const Facts& f, int64_t newest, std::optional<int64_t> last) {
  const auto reason = f.find(std::string(kNoFigureReason));
  return "no figure in the node's newest run " + std::to_string(newest) + ": " + f.at(std::string(kNoFigureStatus)) +
         (reason == f.end() ? std::string() : ": " + first_line(reason->second)) +
         (last ? " (last figure in run " + std::to_string(*last) + ")" : " (it never gave a figure)");
}

std::string figure(double v, const MetricDef& m) { return format_number(v) + " " + std::string(m.unit); }

// The level method's verdict, in words; Fail for a regression.
void level_case(const Analysis& a, const SeriesAnalysis& s, GateCase& c, GateResult& r) {
  const auto& v = *s.level;
  const auto& pts = s.data->points;
  const auto& h = *a.history;
  const auto& m = *s.metric;
  using State = LevelVerdict::State;
  if (v.state == State::TooFew) {
    c.outcome = Outcome::Skip;
    c.message = v.why;
    return;
  }
  const std::string ref = "reference " + figure(v.reference, m) + " (median of " + std::to_string(v.reference_nights) +
                          " nights, runs " + std::to_string(pts[v.reference_begin].first) + "-" +
                          std::to_string(pts[v.reference_end - 1].first) + ")";
  char noise[96];
  std::snprintf(noise, sizeof noise, "%.3g noise units (noise %s)", a.options.level.threshold,
                figure(v.noise, m).c_str());
  const std::string held = "the newest " + std::to_string(v.newest) + " nights' median " + figure(v.newest_median, m) +
                           " against " + ref + "; threshold " + figure(v.threshold, m) + ", " + noise +
                           " from the reference";
  const auto change_at = [&](std::size_t index) -> const Change* {
    for (const auto& ch : s.changes)
      if (ch.point.index == index) return &ch;
    return nullptr;
  };
  std::string began;
  if (v.regression_at) {
    const auto* ch = change_at(*v.regression_at);
    began = ch != nullptr ? ch->sentence : "level shift at " + run_label(h, pts[*v.regression_at].first);
  }
  // A regression the user accepted, met on the way to the reference: said before the verdict.
  const auto accepted_clause = [&]() -> std::string {
    if (!v.accepted_at || v.regression_at || !a.accept_through) return "";
    const auto* ch = change_at(*v.accepted_at);
    return "accepted regression (--accept-through " + std::to_string(*a.accept_through) + "): " +
           (ch != nullptr ? ch->sentence : "level shift at " + run_label(h, pts[*v.accepted_at].first)) + "; since then ";
  };
  switch (v.state) {
    case State::Regression:
      c.outcome = Outcome::Fail;
      c.message = "regression: " +
                  (v.regression_at ? began + "; still below: "
                                   : "the newest " + std::to_string(pts.size() - v.drop_begin) + " nights, since " +
                                         run_label(h, pts[v.drop_begin].first) + ", sit below the reference; ") +
                  held;
      break;
    case State::Accepted:
      c.message = "accepted regression (--accept-through " + std::to_string(*a.accept_through) + "): " + held;
      r.notes.push_back(c.group + " " + c.name + ": " + c.message);
      break;
    case State::Warning:
      c.message = accepted_clause() + "warning: " + std::to_string(v.beyond) + " of the newest " +
                  std::to_string(v.newest) + " nights beyond the threshold (red when all are): " + held;
      r.notes.push_back(c.group + " " + c.name + ": " + c.message);
      break;
    default:
      if (!accepted_clause().empty()) {
        c.message = accepted_clause() + "within the noise: " + held;
        r.notes.push_back(c.group + " " + c.name + ": " + c.message);
      } else {
        c.message = (v.regression_at ? "recovered from " + began + ": " : std::string("within the noise: ")) + held;
      }
      break;
  }
}

// Otava's way: the last change point, a regression when worse and significant.
void otava_case(const Analysis& a, const SeriesAnalysis& s, GateCase& c, GateResult& r) {
  if (s.changes.empty()) {
    const auto& seg = s.segments.front();
    c.message = "no change point in " + std::to_string(s.data->points.size()) + " runs (median " +
                format_number(seg.median) + ", quartiles " + format_number(seg.q1) + " to " +
                format_number(seg.q3) + " " + std::string(s.metric->unit) + ")";
    return;
  }
  const auto& ch = s.changes.back();
  const auto& p = ch.point;
  const std::string pv = format_pvalue(p.p_value);
  const std::string figures = "; newest " + std::to_string(p.after.end - p.after.begin) + " runs median " +
                              format_number(p.after.median) + " against " + format_number(p.before.median) + " " +
                              std::string(s.metric->unit) + " in the " +
                              std::to_string(p.before.end - p.before.begin) + " runs before, p=" + pv;
  const auto& accept_through = a.accept_through;
  const bool accepted = ch.worse && accept_through && ch.run <= *accept_through;
  // The figures reported are for the final segments. A regression fails the gate only when
  // those segments differ at the gate's own significance (on 4 x H100 six noisy runs gave a
  // kept point at p = 0.21: not a regression to stop a pipeline for).
  const bool significant = p.p_value <= a.options.max_pvalue;
  char max_p[32];
  std::snprintf(max_p, sizeof max_p, "%g", a.options.max_pvalue);
  c.outcome = ch.worse && !accepted && significant ? Outcome::Fail : Outcome::Pass;
  c.message = (accepted ? "accepted regression (--accept-through " + std::to_string(*accept_through) + "): "
               : !significant && ch.worse
                   ? std::string("not significant at --max-pvalue ") + max_p + " (kept as a change point): "
               : ch.worse ? std::string("regression: ")
                          : std::string("latest change is not a regression: ")) +
              ch.sentence + figures;
  if (accepted) r.notes.push_back(c.group + " " + c.name + ": " + c.message);  // passes are not listed
}

std::string method_note(const ChangePointOptions& o) {
  char text[320];
  if (o.method == ChangePointMethod::Level) {
    std::snprintf(text, sizeof text,
                  "level gate: red when the newest %zu nights all sit more than %g noise units below the last "
                  "accepted level (a healthy series goes red on at most 1 night in 500 at these settings, "
                  "measured on the labelled corpus: docs/changepoints.md); levels cut at %g x ln(nights)",
                  o.level.min_runs, o.level.threshold, o.level.penalty);
  } else {
    std::snprintf(text, sizeof text,
                  "change points: E-Divisive with means (%s, as Apache Otava), max p-value %g, min magnitude %g%%",
                  o.method == ChangePointMethod::Windowed ? "windowed" : "permutation test", o.max_pvalue,
                  o.min_magnitude * 100);
  }
  return text;
}

}  // namespace

std::map<NodeKind, std::set<int64_t>> newest_nights(const History& h) {
  std::map<int64_t, std::size_t> order;
  std::map<int64_t, std::string> kind;
  std::map<int64_t, std::optional<std::int64_t>> time;
  for (std::size_t i = 0; i < h.runs.size(); ++i) {
    const auto& r = h.runs[i];
    order[r.id] = i, kind[r.id] = r.kind, time[r.id] = epoch_seconds(r.time);
  }
  std::map<NodeKind, std::set<int64_t>> runs;
  for (const auto& [id, nodes] : h.node_facts)
    for (const auto& [node, facts] : nodes) runs[{node, kind[id]}].insert(id);
  for (const auto& [id, tests] : h.test_facts)
    for (const auto& [key, facts] : tests) runs[{key.first, kind[id]}].insert(id);
  for (const auto& s : h.series)
    for (const auto& p : s.points) runs[{s.node, kind[p.first]}].insert(p.first);
  std::map<NodeKind, std::set<int64_t>> night;
  for (const auto& [key, ids] : runs) {
    const int64_t last =
        *std::max_element(ids.begin(), ids.end(), [&](int64_t a, int64_t b) { return order[a] < order[b]; });
    auto& tonight = night[key];
    for (const int64_t id : ids)
      if (id == last || (time[id] && time[last] && *time[last] - *time[id] < kNightSeconds)) tonight.insert(id);
  }
  return night;
}

GateResult gate_history(const Analysis& a) {
  const History& h = *a.history;
  const Newest newest(h);
  GateResult r;
  r.kind = "history";
  r.baseline_name = h.path + " (" + std::to_string(h.runs.size()) + " runs)";
  if (!h.runs.empty()) {
    const auto& latest = h.runs.back();
    r.current_name = "run " + std::to_string(latest.id) + (latest.time.empty() ? "" : " (" + latest.time + ")");
  }
  std::set<std::pair<std::string, std::string>> with_series;  // (node, test)
  for (const auto& s : a.series) {
    with_series.insert({s.data->node, s.data->test});
    GateCase c;
    c.group = s.data->node + " " + s.data->test;
    c.name = s.data->metric;
    const auto last = s.data->points.back().first;
    const NodeKind key{s.data->node, newest.kind.at(last)};
    const auto& tonight = newest.night.at(key);
    const int64_t node_newest = newest.newest(key);
    const Facts* no_figure = nullptr;
    int64_t failed_run = 0;
    for (const int64_t id : tonight)
      if (const Facts* f = no_figure_in(h, id, s.data->node, s.data->test);
          f != nullptr && newest.order.at(id) > newest.order.at(last))
        no_figure = f, failed_run = id;
    if (no_figure != nullptr) {
      c.outcome = Outcome::Fail;
      c.message = no_figure_message(*no_figure, failed_run, last);
    } else if (!s.note.empty()) {
      c.outcome = Outcome::Skip;
      c.message = s.note;
    } else if (tonight.count(last) == 0) {
      c.outcome = Outcome::Skip;
      c.message = "not measured in the node's newest night (its newest run " + std::to_string(node_newest) +
                  "; last in run " + std::to_string(last) + ")";
    } else if (s.level) {
      level_case(a, s, c, r);
    } else {
      otava_case(a, s, c, r);
    }
    r.cases.push_back(std::move(c));
  }
  // Tests that asked for a figure in their node's newest night, got none, and never had one.
  for (const auto& [key, ids] : newest.night)
    for (const int64_t id : ids) {
      const auto run = h.test_facts.find(id);
      if (run == h.test_facts.end()) continue;
      for (const auto& [nt, facts] : run->second) {
        if (nt.first != key.first || facts.count(std::string(kNoFigureStatus)) == 0 || !with_series.insert(nt).second)
          continue;
        r.cases.push_back(
            {nt.first + " " + nt.second, "figure", Outcome::Fail, no_figure_message(facts, id, std::nullopt)});
      }
    }
  if (r.cases.empty())
    throw UsageError(h.path + ": the history has no series (add documents with `gdsb-report history add`)");
  r.notes.push_back(method_note(a.options));
  for (const auto& e : fleet_events(a)) r.notes.push_back("fleet: " + fleet_sentence(e));
  return r;
}

}  // namespace gdsb::report::history
