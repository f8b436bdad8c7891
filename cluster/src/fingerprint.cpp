#include "gdsb/cluster/fingerprint.hpp"

#include <algorithm>
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
  // key -> value -> count; "absent" for nodes lacking the key. Hashed: a fleet of 10,000
  // nodes of a few hundred facts each makes millions of these counts.
  std::unordered_map<std::string, std::unordered_map<std::string, int>> counts;
  for (const auto& n : nodes)
    for (const auto& [k, v] : *n.fingerprint) ++counts[k][v];
  const int total = static_cast<int>(nodes.size());
  struct Norm {
    const std::string* key;
    std::string value;
    int count;
  };
  std::vector<Norm> majority;  // sorted by key, as every fingerprint is
  for (auto& [k, values] : counts) {
    int present = 0;
    for (const auto& [v, c] : values) present += c;
    if (present < total) values["absent"] += total - present;
    std::pair<std::string, int> best{"", 0};
    for (const auto& [v, c] : values)
      if (c > best.second || (c == best.second && v < best.first)) best = {v, c};
    if (best.second * 2 > total) majority.push_back({&k, best.first, best.second});
  }
  std::sort(majority.begin(), majority.end(),
            [](const Norm& a, const Norm& b) { return *a.key < *b.key; });
  static const std::string kAbsent = "absent";
  for (const auto& n : nodes) {
    // Devices this node lacks (or has alone) come first, one line each; their other facts
    // are not repeated.
    std::set<std::string> gone;
    std::vector<FingerprintDiff> facts;
    // One walk over two sorted lists, not a lookup per key: linear in the facts.
    auto it = n.fingerprint->begin();
    for (const auto& m : majority) {
      const std::string& k = *m.key;
      while (it != n.fingerprint->end() && it->first < k) ++it;
      const std::string& value = it != n.fingerprint->end() && it->first == k ? it->second : kAbsent;
      if (value == m.value) continue;
      const std::string subject(topo::fact_subject(k));
      if (!subject.empty() && gone.count(subject)) continue;  // keys sort after their subject
      FingerprintDiff d{n.node, k, value, m.value, m.count, ""};
      if (topo::is_presence(k)) {
        gone.insert(k);
        d.words = presence_words(n.node, k, value, m.count, total);
        out.push_back(std::move(d));
        continue;
      }
      d.words = n.node + ": " + k + " " + value + " (" + std::to_string(m.count) +
                (m.count == 1 ? " other: " : " others: ") + m.value + ")";
      facts.push_back(std::move(d));
    }
    for (auto& d : facts) out.push_back(std::move(d));
  }
  return out;
}

std::size_t reference_member(const std::vector<NamedFingerprint>& nodes,
                             const std::vector<FingerprintDiff>& diffs) {
  std::unordered_map<std::string_view, int> count;
  for (const auto& d : diffs) ++count[d.node];
  std::size_t best = 0;
  for (std::size_t i = 1; i < nodes.size(); ++i)
    if (count[nodes[i].node] < count[nodes[best].node]) best = i;
  return best;
}

}  // namespace gdsb::cluster
