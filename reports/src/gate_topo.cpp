// Topology gate: a check that passed (or only warned) in the baseline must not fail now.
#include <algorithm>
#include <map>

#include "gdsb/report/gate.hpp"

namespace gdsb::report {
namespace {

struct CheckView {
  std::string id;
  std::string title;
  std::string verdict;
  std::string first_evidence;
};

// Checks repeat per device (one ACS check per switch port), so the key is id + devices.
std::string check_key(const nlohmann::json& c) {
  std::vector<std::string> devs = c.value("devices", std::vector<std::string>{});
  std::sort(devs.begin(), devs.end());
  std::string key = c.at("id").get<std::string>();
  for (const auto& d : devs) key += " " + d;
  return key;
}

std::map<std::string, CheckView> checks_of(const Document& d) {
  std::map<std::string, CheckView> out;
  for (const auto& c : d.json.value("checks", nlohmann::json::array())) {
    CheckView v{c.at("id").get<std::string>(), c.value("title", std::string()),
                c.at("verdict").get<std::string>(), ""};
    const auto ev = c.value("evidence", std::vector<std::string>{});
    if (!ev.empty()) v.first_evidence = ev.front();
    out.emplace(check_key(c), std::move(v));
  }
  return out;
}

}  // namespace

GateResult gate_topo(const Document& baseline, const Document& current) {
  GateResult r;
  r.kind = "topo";
  r.baseline_name = baseline.path;
  r.current_name = current.path;
  const auto base = checks_of(baseline);
  const auto cur = checks_of(current);
  for (const auto& [key, b] : base) {
    const auto it = cur.find(key);
    const std::string name = key;
    if (it == cur.end()) {
      r.cases.push_back({"topology", name, Outcome::Skip, "not run in " + current.path});
      continue;
    }
    const auto& c = it->second;
    const bool was_ok = b.verdict == "pass" || b.verdict == "warn";
    std::string msg = (b.title.empty() ? b.id : b.title) + ": " + b.verdict + " -> " + c.verdict;
    if (!c.first_evidence.empty()) msg += " (" + c.first_evidence + ")";
    Outcome o = Outcome::Pass;
    if (c.verdict == "fail" && was_ok) {
      o = Outcome::Fail;
    } else if (b.verdict == "waived" || b.verdict == "fail") {
      o = Outcome::Skip;  // nothing to hold the current machine to
      msg += "; baseline did not pass";
    } else if (b.verdict == "pass" && c.verdict == "warn") {
      r.notes.push_back("now warns: " + msg);
    }
    r.cases.push_back({"topology", name, o, msg});
  }
  for (const auto& [key, c] : cur) {
    if (!base.contains(key) && c.verdict == "fail") {
      r.notes.push_back("check not in the baseline fails now: " + key + " (" + c.first_evidence +
                        ")");
    }
  }
  const auto bv = baseline.json.value("verdict", std::string("?"));
  const auto cv = current.json.value("verdict", std::string("?"));
  if (bv != cv) r.notes.push_back("overall verdict " + bv + " -> " + cv);
  return r;
}

}  // namespace gdsb::report
