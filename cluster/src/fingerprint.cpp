#include "gdsb/cluster/fingerprint.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "gdsb/topo/fingerprint_file.hpp"

namespace gdsb::cluster {
namespace {

std::string presence_words(const std::string& node, const std::string& key, const std::string& value,
                           int others, int total) {
  const std::string of = others == total - 1 ? "the " + std::to_string(others) + " other nodes"
                                             : std::to_string(others) + " of the " + std::to_string(total - 1) + " other nodes";
  if (value == "absent") return node + ": " + key + " absent; present on " + of + " of its class";
  return node + ": " + key + " " + value + "; absent on " + of + " of its class";
}

using Value = std::optional<topo::FactValue>;  // nullopt: the node lacks the fact

std::string value_words(const Value& v) { return v ? topo::value_text(*v) : "absent"; }

}  // namespace

std::vector<FingerprintDiff> diff_against_majority(const std::vector<NamedFingerprint>& nodes) {
  std::vector<FingerprintDiff> out;
  if (nodes.size() < 2) return out;
  // The same typed facts gdsb-topo --health compares: a link at its trained capability, not
  // at the power state of the moment the node report was taken.
  std::vector<topo::FactMap> facts;
  facts.reserve(nodes.size());
  for (const auto& n : nodes) facts.push_back(topo::facts_from_texts(*n.fingerprint, "node " + n.node + ": fingerprint"));
  // key -> the values seen and how often; a key has few values, so a list per key.
  std::map<topo::FactKey, std::vector<std::pair<Value, int>>> counts;
  auto count = [](std::vector<std::pair<Value, int>>& values, const Value& v, int n) {
    for (auto& [have, c] : values)
      if (have == v) return void(c += n);
    values.emplace_back(v, n);
  };
  for (const auto& f : facts)
    for (const auto& [k, v] : f) count(counts[k], v, 1);
  const int total = static_cast<int>(nodes.size());
  struct Norm {
    const topo::FactKey* key;
    Value value;
    int count;
  };
  std::vector<Norm> majority;  // sorted by key, as every fingerprint is
  for (auto& [k, values] : counts) {
    int present = 0;
    for (const auto& [v, c] : values) present += c;
    if (present < total) count(values, std::nullopt, total - present);
    for (const auto& [v, c] : values)
      if (c * 2 > total) majority.push_back({&k, v, c});
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    // Devices this node lacks (or has alone) come first, one line each; their other facts
    // are not repeated.
    std::set<topo::FactKey> gone;
    std::vector<FingerprintDiff> fact_diffs;
    // One walk over two sorted lists, not a lookup per key: linear in the facts.
    auto it = facts[i].begin();
    for (const auto& m : majority) {
      const topo::FactKey& k = *m.key;
      while (it != facts[i].end() && it->first < k) ++it;
      const Value value = it != facts[i].end() && it->first == k ? Value(it->second) : std::nullopt;
      if (value == m.value) continue;
      if (k.kind != topo::FactKind::Node && !k.is_presence() && gone.count(k.subject())) continue;
      const std::string key = topo::key_text(k), now = value_words(value), want = value_words(m.value);
      FingerprintDiff d{n.node, key, now, want, m.count, ""};
      if (k.is_presence()) {
        gone.insert(k);
        d.words = presence_words(n.node, key, now, m.count, total);
        out.push_back(std::move(d));
        continue;
      }
      d.words = n.node + ": " + key + " " + now + " (" + std::to_string(m.count) +
                (m.count == 1 ? " other: " : " others: ") + want + ")";
      fact_diffs.push_back(std::move(d));
    }
    for (auto& d : fact_diffs) out.push_back(std::move(d));
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
