#include "gdsb/report/gate.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/report/compare.hpp"

namespace gdsb::report {
namespace {

std::string describe(const MetricDelta& d) {
  const auto& info = metric_info(d.metric);
  std::string s = std::string(info.label) + " " + format_number(d.before) + " -> " +
                  format_number(d.after) + " " + std::string(info.unit) + " (" +
                  format_percent(d.delta_percent) + ")";
  if (d.u_test) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "; U test p=%.4f, %zu vs %zu repetitions", d.u_test->p_value,
                  d.u_test->n1, d.u_test->n2);
    s += buf;
  }
  return s;
}

bool is_gds_path(const std::string& p) { return p.rfind("gds", 0) == 0; }

}  // namespace

std::size_t GateResult::count(Outcome o) const {
  std::size_t n = 0;
  for (const auto& c : cases) n += c.outcome == o ? 1U : 0U;
  return n;
}

std::string threshold_key(Metric m) {
  const auto& info = metric_info(m);
  return "max_" + std::string(info.key) + (info.higher_is_better ? "_drop" : "_rise");
}

Thresholds default_thresholds() {
  Thresholds t;
  t.max_worse_percent[static_cast<std::size_t>(Metric::Throughput)] = 5.0;
  t.max_worse_percent[static_cast<std::size_t>(Metric::Iops)] = 5.0;
  t.max_worse_percent[static_cast<std::size_t>(Metric::P50)] = 10.0;
  t.max_worse_percent[static_cast<std::size_t>(Metric::P99)] = 10.0;
  return t;
}

std::optional<double> parse_percent(std::string_view text, std::string_view what) {
  std::string s(text);
  if (s == "off" || s == "none") return std::nullopt;
  if (!s.empty() && s.back() == '%') s.pop_back();
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v) || v < 0) {
    throw UsageError(std::string(what) + ": \"" + std::string(text) +
                     "\" is not a percentage (write e.g. 5% or 5, or off)");
  }
  return v;
}

void apply_thresholds_json(Thresholds& t, const nlohmann::json& j, const std::string& name) {
  if (!j.is_object()) throw UsageError(name + ": a thresholds file holds one JSON object");
  for (const auto& [key, value] : j.items()) {
    const std::string what = name + ": " + key;
    if (key == "alpha") {
      if (!value.is_number() || !(value.get<double>() > 0 && value.get<double>() < 1)) {
        throw UsageError(what + " must be a number between 0 and 1");
      }
      t.alpha = value.get<double>();
      continue;
    }
    if (key == "allow_missing") {
      if (!value.is_boolean()) throw UsageError(what + " must be true or false");
      t.allow_missing = value.get<bool>();
      continue;
    }
    bool known = false;
    for (const auto& info : all_metrics()) {
      if (key != threshold_key(info.metric)) continue;
      known = true;
      auto& slot = t.max_worse_percent.at(static_cast<std::size_t>(info.metric));
      if (value.is_null()) {
        slot.reset();
      } else if (value.is_number()) {
        slot = parse_percent(std::to_string(value.get<double>()), what);
      } else if (value.is_string()) {
        slot = parse_percent(value.get<std::string>(), what);
      } else {
        throw UsageError(what + " must be a number, a string like \"5%\", or null");
      }
    }
    if (!known) {
      std::string keys;
      for (const auto& info : all_metrics()) keys += threshold_key(info.metric) + ", ";
      throw UsageError(what + " is not a known threshold (known: " + keys +
                       "alpha, allow_missing)");
    }
  }
}

GateResult gate_io(const Document& baseline, const Document& current, const Thresholds& t) {
  CompareOptions opt;
  opt.alpha = t.alpha;
  const auto base_runs = io_runs(baseline);
  const auto cur_runs = io_runs(current);
  auto c = compare_runs(base_runs, cur_runs, opt);
  GateResult r;
  r.kind = "io";
  r.baseline_name = baseline.path;
  r.current_name = current.path;
  if (c.matches.empty() && c.not_comparable.empty()) {
    throw UsageError(
        current.path + ": no run matches a run of the baseline " + baseline.path +
        " (workload identity: xfer_type, io_pattern, io_size, threads, mixed_read_percent, "
        "engine, iodepth, mem_type, odirect); gate documents of the same benchmark");
  }
  if (current.json.value("interrupted", false)) {
    r.cases.push_back({"document", "complete", Outcome::Fail,
                       current.path + " was interrupted: a partial run cannot pass a gate"});
  }
  for (const auto& m : c.matches) {
    r.cases.push_back({m.label, "status", Outcome::Pass, "ok in both"});
    const bool lost_gds = is_gds_path(m.before_path) && m.after_path == "compat";
    r.cases.push_back({m.label, "path", lost_gds ? Outcome::Fail : Outcome::Pass,
                       lost_gds
                           ? "cuFile fell back to compat mode (baseline took " + m.before_path + ")"
                           : "path " + (m.after_path.empty() ? std::string("-") : m.after_path)});
    for (const auto& d : m.metrics) {
      const auto& limit = t.max_worse_percent.at(static_cast<std::size_t>(d.metric));
      GateCase gc{m.label, std::string(metric_info(d.metric).key), Outcome::Pass, describe(d)};
      if (!limit) {
        gc.outcome = Outcome::Skip;
        gc.message += "; not gated";
      } else if (!std::isfinite(d.worse_percent)) {
        gc.outcome = Outcome::Skip;
        gc.message += "; baseline is 0, no relative change";
      } else if (d.worse_percent > *limit) {
        if (d.test_has_power && d.u_test->p_value >= t.alpha) {
          gc.message += "; worse than the " + format_limit_percent(*limit) + " limit but within run-to-run noise";
        } else {
          gc.outcome = Outcome::Fail;
          gc.message +=
              "; exceeds the " + format_limit_percent(*limit) + " limit" +
              (d.u_test ? (d.test_has_power
                               ? " and is significant"
                               : " (too few repetitions for the U test; the threshold decides)")
                        : "");
        }
      } else {
        gc.message += "; within the " + format_limit_percent(*limit) + " limit";
      }
      r.cases.push_back(std::move(gc));
    }
  }
  for (const auto& u : c.not_comparable) {
    const bool base_bad = u.side == "before";
    r.cases.push_back({u.label, "status", base_bad ? Outcome::Skip : Outcome::Fail,
                       (base_bad ? "baseline run is " : "current run is ") + u.why});
  }
  for (const auto& u : c.unmatched) {
    if (u.side == "before") {
      r.cases.push_back(
          {u.label, "presence", t.allow_missing ? Outcome::Skip : Outcome::Fail,
           "baseline run #" + std::to_string(u.index) + " has no match in " + current.path});
    } else {
      r.notes.push_back("new run without a baseline: " + u.label);
    }
  }
  return r;
}

GateResult run_gate(const Document& baseline, const Document& current, const Thresholds& t) {
  if (baseline.kind != current.kind) {
    throw UsageError("gate: the baseline " + baseline.path + " is " +
                     std::string(schema_name(baseline.kind)) + " but the current " + current.path +
                     " is " + std::string(schema_name(current.kind)) +
                     "; gate two documents of the same kind");
  }
  switch (baseline.kind) {
    case DocKind::Io:
      return gate_io(baseline, current, t);
    case DocKind::Topo:
      return gate_topo(baseline, current);
    case DocKind::Doctor:
      return gate_doctor(baseline, current, t);
    case DocKind::Cluster:
      return gate_cluster(baseline, current, t);
    default:
      throw UsageError("gate: " + std::string(schema_name(baseline.kind)) +
                       " documents have no gate (gate io, topo, doctor or cluster documents)");
  }
}

std::string gate_text(const GateResult& r) {
  std::ostringstream o;
  for (const auto& c : r.cases) {
    const bool noise =
        c.outcome == Outcome::Pass && c.message.find("run-to-run noise") != std::string::npos;
    if (c.outcome == Outcome::Pass && !noise) continue;
    if (c.outcome == Outcome::Skip && c.message.ends_with("not gated"))
      continue;  // JUnit lists them
    o << (c.outcome == Outcome::Fail ? "FAIL "
          : noise                    ? "pass "
                                     : "skip ")
      << c.group << " / " << c.name << ": " << c.message << "\n";
  }
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  o << "gate " << (r.failed() ? "FAILED" : "passed") << ": " << r.count(Outcome::Fail)
    << " failed, " << r.count(Outcome::Pass) << " passed, " << r.count(Outcome::Skip)
    << " skipped (baseline " << r.baseline_name << ", current " << r.current_name << ")\n";
  return o.str();
}

}  // namespace gdsb::report
