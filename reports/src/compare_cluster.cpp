// Comparison of the shared-storage phase of two cluster documents (issue 26). The fields
// read here were validated by load_document (document.cpp: validate_cluster).
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/report/cluster_storage.hpp"
#include "gdsb/report/metrics.hpp"

namespace gdsb::report {
namespace {

using nlohmann::json;

std::string text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>()
                                                                   : "";
}

double number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
}

const json& storage(const Document& d) {
  static const json kEmpty = json::object();
  return d.json.contains("shared_storage") ? d.json.at("shared_storage") : kEmpty;
}

std::string point_label(const json& p) {
  const std::string mode = text(p, "mode_label").empty()
                               ? "mode " + std::to_string(p.at("mode").get<int>())
                               : text(p, "mode_label");
  const auto n = p.at("nodes").get<std::size_t>();
  return std::to_string(n) + (n == 1 ? " node " : " nodes ") + mode + " " + text(p, "op");
}

std::string point_key(const json& p) {
  return std::to_string(p.at("nodes").get<std::size_t>()) + "|" +
         std::to_string(p.at("mode").get<int>()) + "|" + text(p, "op");
}

StorageDelta delta(std::string metric, std::string label, std::string unit, bool higher_is_better,
                   double before, double after) {
  StorageDelta d;
  d.metric = std::move(metric);
  d.label = std::move(label);
  d.unit = std::move(unit);
  d.higher_is_better = higher_is_better;
  d.before = before;
  d.after = after;
  d.delta = after - before;
  d.delta_percent =
      before != 0 ? d.delta / before * 100.0 : std::numeric_limits<double>::quiet_NaN();
  d.worse_percent = higher_is_better ? -d.delta_percent : d.delta_percent;
  const bool better = higher_is_better ? d.delta > 0 : d.delta < 0;
  d.change = d.delta == 0 ? Change::Unchanged : better ? Change::Better : Change::Worse;
  return d;
}

std::string status_words(const json& j) {
  const std::string s = text(j, "status");
  std::string why = text(j, "reason");
  if (s == "clock" && j.contains("clock_suspects") && j.at("clock_suspects").is_array()) {
    std::string who;
    for (const auto& n : j.at("clock_suspects"))
      who += (who.empty() ? "" : ", ") + (n.is_string() ? n.get<std::string>() : n.dump());
    if (!who.empty()) why += (why.empty() ? "" : "; ") + std::string("clock suspects ") + who;
  }
  return (s.empty() ? std::string("no status") : s) + (why.empty() ? "" : ": " + why);
}

void compare_points(const json& before, const json& after, StorageComparison& c) {
  const json none = json::array();
  const json& bp = before.contains("points") ? before.at("points") : none;
  const json& ap = after.contains("points") ? after.at("points") : none;
  std::vector<bool> used(ap.size(), false);
  for (std::size_t i = 0; i < bp.size(); ++i) {
    const auto& b = bp.at(i);
    std::optional<std::size_t> found;
    for (std::size_t j = 0; j < ap.size() && !found; ++j)
      if (!used[j] && point_key(ap.at(j)) == point_key(b)) found = j;
    const std::string label = point_label(b);
    if (!found) {
      c.unmatched.push_back({"before", i, label, "no point of the same nodes, mode and op"});
      continue;
    }
    used[*found] = true;
    const auto& a = ap.at(*found);
    const bool b_ok = text(b, "status") == "ok", a_ok = text(a, "status") == "ok";
    if (!b_ok || !a_ok) {
      c.not_comparable.push_back({b_ok ? "after" : "before", b_ok ? *found : i, label,
                                  status_words(b_ok ? a : b)});
      continue;
    }
    StorageMatch m;
    m.label = label;
    m.identity = {{"nodes", b.at("nodes")}, {"mode", b.at("mode")}, {"op", text(b, "op")}};
    m.metrics.push_back(delta("aggregate", "Aggregate", "GB/s", true, number(b, "aggregate_gb_s"),
                              number(a, "aggregate_gb_s")));
    c.matches.push_back(std::move(m));
  }
  for (std::size_t j = 0; j < ap.size(); ++j)
    if (!used[j])
      c.unmatched.push_back({"after", j, point_label(ap.at(j)), "no point of the same nodes, mode and op"});
}

void compare_gpus_fed(const json& before, const json& after, StorageComparison& c) {
  if (!before.contains("gpus_fed")) {
    if (after.contains("gpus_fed"))
      c.unmatched.push_back({"after", 0, "GPUs fed", "not measured in " + c.before_name});
    return;
  }
  const auto& b = before.at("gpus_fed");
  if (!after.contains("gpus_fed")) {
    c.unmatched.push_back({"before", 0, "GPUs fed", "not measured in " + c.after_name});
    return;
  }
  const auto& a = after.at("gpus_fed");
  StorageMatch m;
  m.label = "GPUs fed";
  m.identity = {{"part", "gpus_fed"}};
  m.metrics.push_back(
      delta("gpus", "GPUs fed", "GPUs", true, number(b, "gpus"), number(a, "gpus")));
  const double db = number(b, "demand_per_gpu_gb_s"), da = number(a, "demand_per_gpu_gb_s");
  if (db != da) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "the demand per GPU differs (%s GB/s before, %s GB/s after)",
                  format_number(db).c_str(), format_number(da).c_str());
    m.incomparable = buf;
  }
  c.matches.push_back(std::move(m));
}

void compare_checkpoint(const json& before, const json& after, StorageComparison& c) {
  const json none = json::object();
  const json& b = before.contains("checkpoint") ? before.at("checkpoint") : none;
  const json& a = after.contains("checkpoint") ? after.at("checkpoint") : none;
  const bool sizes_differ = !b.empty() && !a.empty() && number(b, "model_bytes") != number(a, "model_bytes");
  if (sizes_differ)
    c.notes.push_back("the checkpoint model size differs (" + format_bytes(static_cast<std::uint64_t>(number(b, "model_bytes"))) +
                      " before, " + format_bytes(static_cast<std::uint64_t>(number(a, "model_bytes"))) +
                      "): its times are not comparable, its rates are");
  for (const char* step : {"save", "load"}) {
    const std::string label = std::string("checkpoint ") + step;
    const bool in_b = b.contains(step), in_a = a.contains(step);
    if (!in_b || !in_a) {
      if (in_b || in_a)
        c.unmatched.push_back({in_b ? "before" : "after", 0, label,
                               "not measured in " + (in_b ? c.after_name : c.before_name)});
      continue;
    }
    const auto &sb = b.at(step), &sa = a.at(step);
    const bool b_ok = text(sb, "status") == "ok", a_ok = text(sa, "status") == "ok";
    if (!b_ok || !a_ok) {
      c.not_comparable.push_back({b_ok ? "after" : "before", 0, label, status_words(b_ok ? sa : sb)});
      continue;
    }
    StorageMatch m;
    m.label = label;
    m.identity = {{"part", "checkpoint"}, {"step", step}};
    m.metrics.push_back(delta("rate", "Aggregate", "GB/s", true, number(sb, "aggregate_gb_s"),
                              number(sa, "aggregate_gb_s")));
    auto secs = delta("seconds", "Time", "s", false, number(sb, "seconds"), number(sa, "seconds"));
    secs.gated = false;
    m.metrics.push_back(secs);
    c.matches.push_back(std::move(m));
  }
}

// GPUs are counted, not measured.
std::string figure(const StorageDelta& d, double v) {
  return d.unit == "GPUs" ? std::to_string(std::llround(v)) : format_number(v);
}

}  // namespace

bool has_shared_storage(const Document& doc) {
  if (doc.kind != DocKind::Cluster || !doc.json.contains("shared_storage")) return false;
  const auto& ss = doc.json.at("shared_storage");
  return !ss.value("points", json::array()).empty() || ss.contains("gpus_fed") ||
         ss.contains("checkpoint");
}

StorageComparison compare_cluster(const Document& before, const Document& after) {
  require_kind(before, DocKind::Cluster, "compare");
  require_kind(after, DocKind::Cluster, "compare");
  if (!has_shared_storage(before) && !has_shared_storage(after)) {
    throw UsageError("compare: neither " + before.path + " nor " + after.path +
                     " has shared_storage results: nothing to compare (gdsb-cluster writes them "
                     "with --scale, --aggregate or --model-bytes)");
  }
  StorageComparison c;
  c.before_name = before.path;
  c.after_name = after.path;
  const auto &b = storage(before), &a = storage(after);
  for (const char* key : {"layout", "block_bytes"}) {
    if (b.contains(key) && a.contains(key) && b.at(key) != a.at(key))
      c.notes.push_back(std::string(key) + " differs: " + b.at(key).dump() + " before, " +
                        a.at(key).dump() + " after");
  }
  compare_points(b, a, c);
  compare_gpus_fed(b, a, c);
  compare_checkpoint(b, a, c);
  for (const auto* d : {&before, &after})
    if (d->json.value("interrupted", false))
      c.notes.push_back(d->path + " was interrupted: its figures cover part of the planned points");
  return c;
}

nlohmann::json storage_comparison_to_json(const StorageComparison& c, const nlohmann::json& meta) {
  json doc = meta;
  doc["schema"] = "gdsbench.compare/1";
  doc["compared"] = "cluster";
  doc["before"] = {{"path", c.before_name}};
  doc["after"] = {{"path", c.after_name}};
  auto matches = json::array();
  for (const auto& m : c.matches) {
    auto metrics = json::array();
    for (const auto& d : m.metrics) {
      metrics.push_back({{"metric", d.metric},
                         {"label", d.label},
                         {"unit", d.unit},
                         {"higher_is_better", d.higher_is_better},
                         {"before", d.before},
                         {"after", d.after},
                         {"delta", d.delta},
                         {"delta_percent", std::isfinite(d.delta_percent) ? json(d.delta_percent)
                                                                          : json(nullptr)},
                         {"change", change_name(d.change)},
                         {"u_test", nullptr}});
    }
    json jm{{"label", m.label}, {"identity", m.identity}, {"metrics", std::move(metrics)}};
    if (!m.incomparable.empty()) jm["incomparable"] = m.incomparable;
    matches.push_back(std::move(jm));
  }
  doc["matches"] = std::move(matches);
  const auto runs = [](const std::vector<UnmatchedRun>& v) {
    auto arr = json::array();
    for (const auto& u : v)
      arr.push_back({{"side", u.side}, {"index", u.index}, {"label", u.label}, {"why", u.why}});
    return arr;
  };
  doc["unmatched"] = runs(c.unmatched);
  doc["not_comparable"] = runs(c.not_comparable);
  doc["notes"] = c.notes;
  return doc;
}

std::string storage_comparison_text(const StorageComparison& c) {
  std::ostringstream o;
  o << "before: " << c.before_name << "\nafter:  " << c.after_name << "\n";
  for (const auto& n : c.notes) o << "note: " << n << "\n";
  o << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-24s %-15s %10s %10s %9s  %s\n", "shared storage", "metric",
                "before", "after", "delta", "change");
  o << line;
  for (const auto& m : c.matches) {
    for (const auto& d : m.metrics) {
      std::snprintf(line, sizeof line, "%-24s %-15s %10s %10s %9s  %s%s\n", m.label.c_str(),
                    (d.unit == "GB/s" ? d.metric + " GB/s" : d.metric).c_str(),
                    figure(d, d.before).c_str(), figure(d, d.after).c_str(),
                    format_percent(d.delta_percent).c_str(),
                    std::string(change_name(d.change)).c_str(),
                    m.incomparable.empty() ? "" : (" (" + m.incomparable + ")").c_str());
      o << line;
    }
  }
  for (const auto& u : c.not_comparable)
    o << "\nnot comparable: " << u.label << " (" << u.side << ": " << u.why << ")";
  for (const auto& u : c.unmatched) o << "\nunmatched " << u.side << ": " << u.label << " (" << u.why << ")";
  if (!c.unmatched.empty() || !c.not_comparable.empty()) o << "\n";
  if (c.matches.empty()) o << "\nnothing matched\n";
  return o.str();
}

}  // namespace gdsb::report
