#include "gdsb/report/compare.hpp"

#include <cmath>
#include <limits>

#include "gdsb/error.hpp"

namespace gdsb::report {
namespace {

std::vector<double> samples(const RunResult& r, Metric m) {
  std::vector<double> v;
  for (const auto& rep : r.repetitions) v.push_back(metric_value(rep, m));
  return v;
}

MetricDelta delta_for(const RunResult& b, const RunResult& a, Metric m, double alpha) {
  MetricDelta d;
  d.metric = m;
  d.before = metric_value(b.result, m);
  d.after = metric_value(a.result, m);
  d.delta = d.after - d.before;
  d.delta_percent =
      d.before != 0 ? d.delta / d.before * 100.0 : std::numeric_limits<double>::quiet_NaN();
  d.worse_percent = metric_info(m).higher_is_better ? -d.delta_percent : d.delta_percent;
  const auto xs = samples(b, m);
  const auto ys = samples(a, m);
  if (xs.size() >= 2 && ys.size() >= 2) {
    d.u_test = mann_whitney_u(xs, ys);
    d.test_has_power = d.u_test->min_p < alpha;
  }
  const bool better = metric_info(m).higher_is_better ? d.delta > 0 : d.delta < 0;
  if (d.delta == 0) {
    d.change = Change::Unchanged;
  } else if (d.test_has_power && d.u_test->p_value >= alpha) {
    d.change = Change::NotSignificant;
  } else {
    d.change = better ? Change::Better : Change::Worse;
  }
  return d;
}

bool takes_part(const RunResult& r, const std::optional<XferType>& filter) {
  return !filter || r.workload.xfer == *filter;
}

}  // namespace

std::string_view change_name(Change c) {
  switch (c) {
    case Change::Better:
      return "better";
    case Change::Worse:
      return "worse";
    case Change::Unchanged:
      return "unchanged";
    case Change::NotSignificant:
      return "not significant";
  }
  return "?";
}

Comparison compare_runs(const std::vector<RunResult>& before, const std::vector<RunResult>& after,
                        const CompareOptions& options) {
  Comparison c;
  c.options = options;
  const bool ignore_xfer = options.baseline_xfer.has_value() || options.current_xfer.has_value();
  std::vector<bool> used(after.size(), false);
  for (std::size_t i = 0; i < before.size(); ++i) {
    const auto& b = before[i];
    if (!takes_part(b, options.baseline_xfer)) continue;
    const auto key = identity_key(b.workload, ignore_xfer);
    std::optional<std::size_t> found;
    for (std::size_t j = 0; j < after.size() && !found; ++j) {
      if (!used[j] && takes_part(after[j], options.current_xfer) &&
          identity_key(after[j].workload, ignore_xfer) == key) {
        found = j;
      }
    }
    const auto label = run_label(b.workload);
    if (!found) {
      c.unmatched.push_back(
          {"before", i, label,
           "no run with the same workload in " + std::string("the other document")});
      continue;
    }
    used[*found] = true;
    const auto& a = after[*found];
    if (b.status != RunStatus::Ok || a.status != RunStatus::Ok) {
      const auto& bad = b.status != RunStatus::Ok ? b : a;
      c.not_comparable.push_back({b.status != RunStatus::Ok ? "before" : "after",
                                  b.status != RunStatus::Ok ? i : *found, label,
                                  std::string(run_status_name(bad.status)) +
                                      (bad.reason.empty() ? "" : ": " + bad.reason)});
      continue;
    }
    RunMatch m;
    m.before_index = i;
    m.after_index = *found;
    m.label = ignore_xfer
                  ? run_label(a.workload) + " vs " + std::string(xfer_label(b.workload.xfer))
                  : label;
    m.identity = identity_json(b.workload);
    if (ignore_xfer) m.identity.erase("xfer_type"), m.identity.erase("xfer_name");
    m.before_path = b.path.path_used;
    m.after_path = a.path.path_used;
    m.before_reps = b.repetitions.size();
    m.after_reps = a.repetitions.size();
    for (const auto& info : all_metrics())
      m.metrics.push_back(delta_for(b, a, info.metric, options.alpha));
    c.matches.push_back(std::move(m));
  }
  for (std::size_t j = 0; j < after.size(); ++j) {
    if (!used[j] && takes_part(after[j], options.current_xfer)) {
      c.unmatched.push_back({"after", j, run_label(after[j].workload),
                             "no run with the same workload in the other document"});
    }
  }
  return c;
}

Comparison compare_documents(const Document& before, const Document& after,
                             const CompareOptions& options) {
  require_kind(before, DocKind::Io, "compare");
  require_kind(after, DocKind::Io, "compare");
  if (!(options.alpha > 0 && options.alpha < 1))
    throw UsageError("--alpha must lie between 0 and 1");
  auto c = compare_runs(io_runs(before), io_runs(after), options);
  c.before_name = before.path;
  c.after_name = after.path;
  for (const auto* d : {&before, &after}) {
    if (d->json.value("interrupted", false)) {
      c.notes.push_back(d->path + " was interrupted: its figures cover part of the planned runs");
    }
  }
  if (options.baseline_xfer || options.current_xfer) {
    c.notes.push_back(
        "transfer types compared: baseline " +
        std::string(options.baseline_xfer ? xfer_label(*options.baseline_xfer) : "any") +
        ", current " +
        std::string(options.current_xfer ? xfer_label(*options.current_xfer) : "any"));
  }
  return c;
}

}  // namespace gdsb::report
