// Cluster gate (issue 26): the shared-storage phase of two gdsbench.cluster/1 documents.
// Every baseline point's aggregate, the GPUs fed and the checkpoint rates are held to the
// throughput drop threshold; a point that ran in the baseline must run now and be ok.
#include <cmath>
#include <cstdio>

#include "gdsb/error.hpp"
#include "gdsb/report/cluster_storage.hpp"
#include "gdsb/report/gate.hpp"

namespace gdsb::report {
namespace {

GateCase judge(const StorageMatch& m, const StorageDelta& d, const std::optional<double>& limit) {
  const auto figure = [&](double v) {  // GPUs are counted, not measured
    return d.unit == "GPUs" ? std::to_string(static_cast<long long>(std::llround(v)))
                            : format_number(v);
  };
  GateCase gc{m.label, d.metric, Outcome::Pass,
              d.label + " " + figure(d.before) + " -> " + figure(d.after) + " " + d.unit + " (" +
                  format_percent(d.delta_percent) + ")"};
  if (!d.gated) {
    gc.outcome = Outcome::Skip;
    gc.message += "; the time restates the rate, which is gated: not gated";
  } else if (!m.incomparable.empty()) {
    gc.outcome = Outcome::Skip;
    gc.message += "; not gated: " + m.incomparable;
  } else if (!limit) {
    gc.outcome = Outcome::Skip;
    gc.message += "; not gated";
  } else if (!std::isfinite(d.worse_percent)) {
    gc.outcome = Outcome::Skip;
    gc.message += "; baseline is 0, no relative change";
  } else if (d.worse_percent > *limit) {
    gc.outcome = Outcome::Fail;
    gc.message += "; exceeds the " + format_limit_percent(*limit) + " limit";
  } else {
    gc.message += "; within the " + format_limit_percent(*limit) + " limit";
  }
  return gc;
}

}  // namespace

GateResult gate_cluster(const Document& baseline, const Document& current, const Thresholds& t) {
  if (!has_shared_storage(baseline)) {
    throw UsageError("gate: the baseline " + baseline.path +
                     " has no shared_storage results: nothing to gate (gdsb-cluster writes them "
                     "with --scale, --aggregate or --model-bytes)");
  }
  if (!has_shared_storage(current)) {
    throw UsageError("gate: " + current.path + " has no shared_storage results but the baseline " +
                     baseline.path +
                     " has: run gdsb-cluster with the baseline's --scale/--aggregate/--model-bytes");
  }
  const auto c = compare_cluster(baseline, current);
  if (c.matches.empty() && c.not_comparable.empty()) {
    throw UsageError(current.path + ": no shared-storage point matches one of the baseline " +
                     baseline.path + " (points match by nodes, mode and op); gate documents of " +
                     "the same benchmark");
  }
  GateResult r;
  r.kind = "cluster";
  r.baseline_name = baseline.path;
  r.current_name = current.path;
  r.notes = c.notes;
  if (current.json.value("interrupted", false)) {
    r.cases.push_back({"document", "complete", Outcome::Fail,
                       current.path + " was interrupted: a partial run cannot pass a gate"});
  }
  const auto& limit = t.max_worse_percent.at(static_cast<std::size_t>(Metric::Throughput));
  for (const auto& m : c.matches) {
    r.cases.push_back({m.label, "status", Outcome::Pass, "ok in both"});
    for (const auto& d : m.metrics) r.cases.push_back(judge(m, d, limit));
  }
  for (const auto& u : c.not_comparable) {
    const bool base_bad = u.side == "before";
    r.cases.push_back({u.label, "status", base_bad ? Outcome::Skip : Outcome::Fail,
                       (base_bad ? "baseline is " : "was ok in the baseline, now ") + u.why});
  }
  for (const auto& u : c.unmatched) {
    if (u.side == "before")
      r.cases.push_back({u.label, "presence", t.allow_missing ? Outcome::Skip : Outcome::Fail,
                         "in the baseline, missing from " + current.path});
    else
      r.notes.push_back("new without a baseline: " + u.label);
  }
  return r;
}

}  // namespace gdsb::report
