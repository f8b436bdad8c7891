#include "gdsb/cluster/fingerprint.hpp"

#include <map>
#include <set>
#include <unordered_map>

namespace gdsb::cluster {
namespace {

std::string presence_words(const std::string& node, const std::string& key, const std::string& value,
                           int others, int total) {
  const std::string of = others == total - 1 ? "the " + std::to_string(others) + " other nodes"
                                             : std::to_string(others) + " of the " + std::to_string(total - 1) + " other nodes";
  if (value == "absent") return node + ": " + key + " absent; present on " + of + " of its class";
  return node + ": " + key + " " + value + "; absent on " + of + " of its class";
}

}  // namespace

std::vector<FingerprintDiff> diff_against_majority(const std::vector<NamedFingerprint>& nodes) {
  std::vector<FingerprintDiff> out;
  if (nodes.size() < 2) return out;
  // key -> value -> count; "absent" for nodes lacking the key.
  std::map<std::string, std::unordered_map<std::string, int>> counts;
  for (const auto& n : nodes)
    for (const auto& [k, v] : *n.fingerprint) ++counts[k][v];
  const int total = static_cast<int>(nodes.size());
  std::map<std::string, std::pair<std::string, int>> majority;
  for (auto& [k, values] : counts) {
    int present = 0;
    for (const auto& [v, c] : values) present += c;
    if (present < total) values["absent"] += total - present;
    std::pair<std::string, int> best{"", 0};
    for (const auto& [v, c] : values)
      if (c > best.second || (c == best.second && v < best.first)) best = {v, c};
    if (best.second * 2 > total) majority[k] = best;
  }
  for (const auto& n : nodes) {
    // Devices this node lacks (or has alone) come first, one line each; their other facts
    // are not repeated.
    std::set<std::string> gone;
    std::vector<FingerprintDiff> facts;
    for (const auto& [k, m] : majority) {
      const auto it = n.fingerprint->find(k);
      const std::string value = it == n.fingerprint->end() ? "absent" : it->second;
      if (value == m.first) continue;
      const std::string subject(topo::fact_subject(k));
      if (!subject.empty() && gone.count(subject)) continue;  // keys sort after their subject
      FingerprintDiff d{n.node, k, value, m.first, m.second, ""};
      if (topo::is_presence(k)) {
        gone.insert(k);
        d.words = presence_words(n.node, k, value, m.second, total);
        out.push_back(std::move(d));
        continue;
      }
      d.words = n.node + ": " + k + " " + value + " (" + std::to_string(m.second) +
                (m.second == 1 ? " other: " : " others: ") + m.first + ")";
      facts.push_back(std::move(d));
    }
    for (auto& d : facts) out.push_back(std::move(d));
  }
  return out;
}

std::size_t reference_member(const std::vector<NamedFingerprint>& nodes) {
  std::unordered_map<std::string, int> diffs;
  for (const auto& d : diff_against_majority(nodes)) ++diffs[d.node];
  std::size_t best = 0;
  for (std::size_t i = 1; i < nodes.size(); ++i)
    if (diffs[nodes[i].node] < diffs[nodes[best].node]) best = i;
  return best;
}

}  // namespace gdsb::cluster
