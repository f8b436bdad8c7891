// Doctor gate (before/after a fix): the runs as io documents are gated, and a certain or
// likely finding the baseline did not have fails.
#include <set>

#include "gdsb/report/gate.hpp"

namespace gdsb::report {
namespace {

bool strong(const nlohmann::json& f) {
  const auto c = f.value("confidence", std::string());
  return c == "certain" || c == "likely";
}

// A finding is the same finding when its rule and devices match (titles carry figures).
std::string finding_key(const std::string& rule, std::vector<std::string> devs) {
  std::string key = rule;
  std::sort(devs.begin(), devs.end());
  for (const auto& d : devs) key += " " + d;
  return key;
}

// One key a GPU for a cause said once for several GPUs (per_gpu, issue 43), so that one GPU
// fixed or newly failing is told apart from the others; else the finding's own key.
std::vector<std::string> finding_keys(const nlohmann::json& f) {
  const std::string rule = f.value("rule", std::string());
  std::vector<std::string> keys;
  for (const auto& g : f.value("per_gpu", nlohmann::json::array()))
    keys.push_back(finding_key(rule, g.value("devices", std::vector<std::string>{})));
  if (keys.empty()) keys.push_back(finding_key(rule, f.value("devices", std::vector<std::string>{})));
  return keys;
}

}  // namespace

GateResult gate_doctor(const Document& baseline, const Document& current, const Thresholds& t) {
  GateResult r;
  const bool runs = !baseline.json.value("runs", nlohmann::json::array()).empty() &&
                    !current.json.value("runs", nlohmann::json::array()).empty();
  if (runs) {
    r = gate_io(baseline, current, t);
  } else {
    r.baseline_name = baseline.path;
    r.current_name = current.path;
    r.notes.push_back("no measured runs on both sides: only the findings are gated");
  }
  r.kind = "doctor";
  std::set<std::string> before;
  for (const auto& f : baseline.json.at("findings"))
    if (strong(f))
      for (auto& key : finding_keys(f)) before.insert(std::move(key));
  std::set<std::string> now;
  for (const auto& f : current.json.at("findings")) {
    if (!strong(f)) continue;
    const std::string msg = "[" + f.value("confidence", std::string()) + "] " +
                            f.value("title", std::string());
    for (const auto& key : finding_keys(f)) {
      now.insert(key);
      if (before.contains(key))
        r.cases.push_back({"findings", key, Outcome::Skip, "still present: " + msg});
      else
        r.cases.push_back({"findings", key, Outcome::Fail, "new: " + msg});
    }
  }
  for (const auto& key : before)
    if (!now.contains(key)) r.cases.push_back({"findings", key, Outcome::Pass, "fixed"});
  return r;
}

}  // namespace gdsb::report
