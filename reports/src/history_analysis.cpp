// Change points per series and what differed in the runs' context across each of them.
#include "gdsb/report/history_analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <tuple>

#include "gdsb/error.hpp"
#include "gdsb/report/metrics.hpp"

namespace gdsb::report::history {
namespace {

// The first line of a run's reason (cuFile's failures go on with the log lines they quote).
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// A change point needs three runs (changepoint.hpp: Otava's t-test needs three values).
constexpr std::size_t kMinRuns = 3;

// What an absent fact means, by name: documents always carry their environment allowlist,
// so an absent env.* is unset; a cufile.json key absent from a recorded file takes cuFile's
// default; a GPU absent from a recorded stack is absent. Other absent facts were not
// recorded (documents of older versions): unknown, never guessed.
std::optional<std::string> absent_value(const std::string& name, const Facts& run) {
  if (name.rfind("env.", 0) == 0) return "unset";
  if (name.rfind("cufile.", 0) == 0 && run.count("cufile_json") != 0) return "default";
  if (name.rfind("gpu ", 0) == 0 && run.count("nvidia_fs") != 0) return "absent";
  return std::nullopt;
}

std::optional<std::string> value_of(const std::string& name, const Facts& run) {
  if (const auto it = run.find(name); it != run.end()) return it->second;
  return absent_value(name, run);
}

std::string date_of(const std::string& time) { return time.substr(0, 10); }

std::string change_sentence(const SeriesAnalysis& s, const Change& c) {
  std::string out = series_title(s) + " " + format_percent(c.point.forward_change_percent) + " at run " +
                    std::to_string(c.run) + (c.time.empty() ? "" : " (" + date_of(c.time) + ")");
  if (c.changed.empty()) {
    out += ", with no difference in the recorded context";
  } else {
    out += ", when ";
    for (std::size_t i = 0; i < c.changed.size(); ++i) {
      const auto& f = c.changed[i];
      out += (i == 0 ? "" : i + 1 == c.changed.size() ? " and " : ", ") + fact_label(f.name) +
             " went from " + f.before + " to " + f.after +
             (f.at_run == 0 ? "" : " (at run " + std::to_string(f.at_run) + ", near the change point)");
    }
  }
  if (!c.not_compared.empty()) {
    out += " (not recorded on both sides, so not compared:";
    for (const auto& n : c.not_compared) out += " " + fact_label(n) + (&n == &c.not_compared.back() ? "" : ",");
    out += ")";
  }
  return out;
}

// Attribution at the boundary: what differs between the last run before the change point
// and the first run after it, so a fact that changed earlier or later in either segment (a
// kernel update fifteen runs before a driver's step) is not named. Where nothing differs
// there, the neighbouring pairs of runs up to two runs either side of it, inside the two
// segments, are looked at: the point's place in noise is often off by one or two.
Change attribute(const History& h, const SeriesAnalysis& s, const ChangePoint& p) {
  const auto& pts = s.data->points;
  Change c;
  c.point = p;
  c.run = pts.at(p.index).first;
  if (const auto* r = h.run(c.run)) c.time = r->time;
  const bool up = p.forward_change_percent > 0;
  c.worse = s.metric != nullptr && p.forward_change_percent != 0 && up != s.metric->higher_is_better;
  const auto facts = [&](std::size_t i) { return h.facts_of(pts.at(i).first, s.data->node, s.data->test); };
  // The facts that differ between runs i - 1 and i; `unknown` gets those one of them lacks.
  const auto differ = [&](std::size_t i, std::vector<std::string>* unknown) {
    const Facts before = facts(i - 1), after = facts(i);
    std::set<std::string> names;
    for (const auto* f : {&before, &after})
      for (const auto& kv : *f) names.insert(kv.first);
    std::vector<FactChange> out;
    for (const auto& name : names) {
      const auto b = value_of(name, before);
      const auto a = value_of(name, after);
      if (!b || !a) {
        if (unknown != nullptr) unknown->push_back(name);
      } else if (*b != *a) {
        out.push_back({name, *b, *a, 0});
      }
    }
    return out;
  };
  c.changed = differ(p.index, &c.not_compared);
  if (c.changed.empty()) {
    constexpr std::size_t kNear = 2;
    const std::size_t first = std::max(p.before.begin + 1, p.index > kNear ? p.index - kNear : 1);
    const std::size_t last = std::min(p.after.end, p.index + kNear + 1);  // one past
    for (std::size_t i = first; i < last; ++i) {
      if (i == p.index) continue;
      for (auto f : differ(i, nullptr)) {
        f.at_run = pts[i].first;
        c.changed.push_back(std::move(f));
      }
    }
  }
  c.sentence = change_sentence(s, c);
  return c;
}

}  // namespace

std::string series_title(const SeriesAnalysis& s) {
  const std::string metric = s.metric != nullptr ? std::string(s.metric->label) : s.data->metric;
  return s.data->test + " " + metric + (s.data->node.empty() ? "" : " on " + s.data->node);
}

Analysis analyse(const History& h, const ChangePointOptions& options) {
  Analysis a;
  a.history = &h;
  a.options = options;
  for (const auto& d : h.series) {
    SeriesAnalysis s;
    s.data = &d;
    s.metric = find_metric(d.metric);
    std::vector<double> values;
    for (const auto& p : d.points) values.push_back(p.second);
    if (s.metric == nullptr) {
      s.note = "metric \"" + d.metric + "\" is unknown to this gdsb-report (a newer one added it)";
    } else if (values.size() < kMinRuns) {
      s.note = std::to_string(values.size()) + (values.size() == 1 ? " run" : " runs") +
               ": too few to judge (a change point needs " + std::to_string(kMinRuns) + " or more)";
    }
    const auto points = s.note.empty() ? find_change_points(values, options) : std::vector<ChangePoint>{};
    s.segments = summarize_segments(values, points);
    for (const auto& p : points) s.changes.push_back(attribute(h, s, p));
    a.series.push_back(std::move(s));
  }
  return a;
}

std::vector<FleetEvent> fleet_events(const Analysis& a) {
  // (night or "run N", fact) -> event
  std::map<std::pair<std::string, std::string>, FleetEvent> groups;
  const auto add = [&](const SeriesAnalysis& s, const Change& c, const std::string& fact, const std::string& value) {
    const std::string night = date_of(c.time);
    auto& e = groups[{night.empty() ? "run " + std::to_string(c.run) : night, fact}];
    e.night = night;
    e.fact = fact;
    if (e.run == 0 || c.run < e.run) e.run = c.run, e.time = c.time;
    ++e.changes;
    if (std::find(e.nodes.begin(), e.nodes.end(), s.data->node) == e.nodes.end()) e.nodes.push_back(s.data->node);
    if (!value.empty() && std::find(e.values.begin(), e.values.end(), value) == e.values.end())
      e.values.push_back(value);
  };
  for (const auto& s : a.series)
    for (const auto& c : s.changes) {
      if (c.changed.empty()) add(s, c, "", "");
      for (const auto& f : c.changed) add(s, c, f.name, f.before + " -> " + f.after);
    }
  std::vector<FleetEvent> out;
  for (auto& [key, e] : groups) {
    if (e.nodes.size() < 2) continue;
    std::sort(e.nodes.begin(), e.nodes.end());
    std::sort(e.values.begin(), e.values.end());
    out.push_back(std::move(e));
  }
  // In time; on one night the named facts before the change points that name none.
  std::stable_sort(out.begin(), out.end(), [](const FleetEvent& x, const FleetEvent& y) {
    return std::make_tuple(x.night, x.fact.empty(), x.run) < std::make_tuple(y.night, y.fact.empty(), y.run);
  });
  return out;
}

GateResult gate_history(const Analysis& a, std::optional<int64_t> accept_through) {
  const History& h = *a.history;
  if (h.series.empty())
    throw UsageError(h.path + ": the history has no series (add documents with `gdsb-report history add`)");
  // Each node's newest run of each document kind: a series without a point there either
  // gave no figure in it (the run recorded why: the gate fails) or is no longer measured.
  // A run counts for a node where it recorded the node's facts (a run whose every test
  // failed has no point, and is the newest all the same) or a point.
  std::map<int64_t, std::size_t> order;
  std::map<int64_t, std::string> kind_of;
  for (std::size_t i = 0; i < h.runs.size(); ++i) order[h.runs[i].id] = i, kind_of[h.runs[i].id] = h.runs[i].kind;
  std::map<std::pair<std::string, std::string>, int64_t> newest;  // (node, kind) -> run
  const auto saw = [&](const std::string& node, int64_t run) {
    auto& n = newest[{node, kind_of[run]}];
    if (n == 0 || order[run] > order[n]) n = run;
  };
  for (const auto& [run, nodes] : h.node_facts)
    for (const auto& [node, facts] : nodes) saw(node, run);
  for (const auto& s : h.series) saw(s.node, s.points.back().first);
  GateResult r;
  r.kind = "history";
  r.baseline_name = h.path + " (" + std::to_string(h.runs.size()) + " runs)";
  const auto& latest = h.runs.back();
  r.current_name = "run " + std::to_string(latest.id) + (latest.time.empty() ? "" : " (" + latest.time + ")");
  for (const auto& s : a.series) {
    GateCase c;
    c.group = s.data->node + " " + s.data->test;
    c.name = s.data->metric;
    const auto last = s.data->points.back().first;
    const int64_t node_newest = newest[{s.data->node, kind_of[last]}];
    const Facts* no_figure = nullptr;
    if (const auto run = h.test_facts.find(node_newest); run != h.test_facts.end())
      if (const auto t = run->second.find({s.data->node, s.data->test});
          t != run->second.end() && t->second.count(std::string(kNoFigureStatus)) != 0)
        no_figure = &t->second;
    if (last != node_newest && no_figure != nullptr) {
      const auto reason = no_figure->find(std::string(kNoFigureReason));
      c.outcome = Outcome::Fail;
      c.message = "no figure in the node's newest run " + std::to_string(node_newest) + ": " +
                  no_figure->at(std::string(kNoFigureStatus)) +
                  (reason == no_figure->end() ? std::string() : ": " + first_line(reason->second)) +
                  " (last figure in run " + std::to_string(last) + ")";
    } else if (!s.note.empty()) {
      c.outcome = Outcome::Skip;
      c.message = s.note;
    } else if (last != node_newest) {
      c.outcome = Outcome::Skip;
      c.message = "not measured in the node's newest run " + std::to_string(node_newest) +
                  " (last in run " + std::to_string(last) + ")";
    } else if (s.changes.empty()) {
      const auto& seg = s.segments.front();
      c.message = "no change point in " + std::to_string(s.data->points.size()) + " runs (median " +
                  format_number(seg.median) + ", quartiles " + format_number(seg.q1) + " to " +
                  format_number(seg.q3) + " " + std::string(s.metric->unit) + ")";
    } else {
      const auto& ch = s.changes.back();
      const auto& p = ch.point;
      char pv[32];
      std::snprintf(pv, sizeof pv, "%.2g", p.p_value);
      const std::string figures = "; newest " + std::to_string(p.after.end - p.after.begin) +
                                  " runs median " + format_number(p.after.median) + " against " +
                                  format_number(p.before.median) + " " + std::string(s.metric->unit) +
                                  " in the " + std::to_string(p.before.end - p.before.begin) +
                                  " runs before, p=" + pv;
      const bool accepted = ch.worse && accept_through && ch.run <= *accept_through;
      // The change point search keeps a point its merge step re-tested against its own
      // neighbours; the figures reported here are for the final segments. A regression fails
      // the gate only when those segments differ at the gate's own significance (on 4 x H100
      // six noisy runs gave a kept point at p = 0.21: not a regression to stop a pipeline for).
      const bool significant = p.p_value <= a.options.max_pvalue;
      char max_p[32];
      std::snprintf(max_p, sizeof max_p, "%g", a.options.max_pvalue);
      c.outcome = ch.worse && !accepted && significant ? Outcome::Fail : Outcome::Pass;
      c.message = (accepted     ? "accepted regression (--accept-through " + std::to_string(*accept_through) + "): "
                   : !significant && ch.worse
                       ? std::string("not significant at --max-pvalue ") + max_p + " (kept as a change point): "
                   : ch.worse ? std::string("regression: ")
                              : std::string("latest change is not a regression: ")) +
                  ch.sentence + figures;
      if (accepted) r.notes.push_back(c.group + " " + c.name + ": " + c.message);  // passes are not listed
    }
    r.cases.push_back(std::move(c));
  }
  char opts[160];
  std::snprintf(opts, sizeof opts,
                "change points: E-Divisive with means (%s, as Apache Otava), max p-value %g, min magnitude %g%%",
                a.options.method == ChangePointMethod::Windowed ? "windowed" : "permutation test",
                a.options.max_pvalue, a.options.min_magnitude * 100);
  r.notes.emplace_back(opts);
  for (const auto& e : fleet_events(a)) {
    std::string nodes;
    for (const auto& n : e.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
    r.notes.push_back("run " + std::to_string(e.run) + ": " + std::to_string(e.nodes.size()) +
                      " nodes changed at once (" + nodes + ")");
  }
  return r;
}

}  // namespace gdsb::report::history
