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

}  // namespace

namespace {

// The typed facts of a class's fingerprints, each distinct (key text, value text) read once:
// a fleet repeats the same few thousand texts, and a typed fact map per node (the former
// route) held as much memory again as the texts themselves. Keys get dense indices; a key's
// typed values get indices of their own, so that a node's facts are pairs of small numbers.
class TypedFacts {
 public:
  static constexpr int kAbsent = -1;
  struct Fact {
    int key = kAbsent;    // index into keys(); kAbsent: "not available", no fact
    int value = kAbsent;  // index into values(key)
  };

  explicit TypedFacts(const TextTable& table) : table_(table) {}

  // The fact of one entry, read the first time its texts are met (throws UsageError naming
  // `node` for a fact it cannot read, as topo::facts_from_texts does).
  Fact fact(const FingerprintTexts::Entry& e, const std::string& node) {
    if (e.key >= memo_.size()) memo_.resize(std::max<std::size_t>(table_.size(), e.key + 1));
    KeyMemo& memo = memo_[e.key];
    for (const auto& [value_id, f] : memo.few)
      if (value_id == e.value) return f;
    if (const auto it = memo.many.find(e.value); it != memo.many.end()) return it->second;
    const std::map<std::string, std::string> one{{std::string(table_.text(e.key)), std::string(table_.text(e.value))}};
    const topo::FactMap typed = topo::facts_from_texts(one, "node " + node + ": fingerprint");
    Fact f;
    if (!typed.empty()) {
      const auto& [key, value] = *typed.begin();
      const auto [it, added] = key_index_.emplace(key, static_cast<int>(keys_.size()));
      if (added) {
        keys_.push_back(key);
        values_.emplace_back();
      }
      f.key = it->second;
      f.value = value_index(values_[static_cast<std::size_t>(f.key)], value);
    }
    if (memo.few.size() < kFew)
      memo.few.emplace_back(e.value, f);
    else
      memo.many.emplace(e.value, f);
    return f;
  }
  const std::vector<topo::FactKey>& keys() const { return keys_; }
  const topo::FactValue& value(int key, int value) const {
    return values_[static_cast<std::size_t>(key)].list[static_cast<std::size_t>(value)];
  }

 private:
  // A key's values: most keys have one or two, a few one a node (a kernel command line with
  // the node's root UUID), so lookups stay constant time either way.
  static constexpr std::size_t kFew = 8;
  struct KeyMemo {
    std::vector<std::pair<uint32_t, Fact>> few;  // value text id -> fact
    std::unordered_map<uint32_t, Fact> many;     // the rest
  };
  struct Values {
    std::vector<topo::FactValue> list;  // distinct typed values
    std::unordered_map<std::string, std::vector<int>> by_text;  // value_text -> indices
  };
  static int value_index(Values& values, const topo::FactValue& value) {
    std::vector<int>& same_text = values.by_text[topo::value_text(value)];
    for (int i : same_text)
      if (values.list[static_cast<std::size_t>(i)] == value) return i;
    same_text.push_back(static_cast<int>(values.list.size()));
    values.list.push_back(value);
    return same_text.back();
  }

  const TextTable& table_;
  std::vector<KeyMemo> memo_;  // by key text id
  std::map<topo::FactKey, int> key_index_;
  std::vector<topo::FactKey> keys_;
  std::vector<Values> values_;  // by key index
};

// A node's facts as key index -> value index (kAbsent where it has none), filled and cleared
// per node: later texts of one typed key replace earlier ones, as in a topo::FactMap.
class NodeFacts {
 public:
  void fill(TypedFacts& typed, const NamedFingerprint& n) {
    for (const auto& e : n.fingerprint->entries()) {
      const TypedFacts::Fact f = typed.fact(e, n.node);
      if (f.key == TypedFacts::kAbsent) continue;
      const auto k = static_cast<std::size_t>(f.key);
      if (k >= slot_.size()) slot_.resize(k + 1, TypedFacts::kAbsent);
      if (slot_[k] == TypedFacts::kAbsent) held_.push_back(f.key);
      slot_[k] = f.value;
    }
  }
  void clear() {
    for (int k : held_) slot_[static_cast<std::size_t>(k)] = TypedFacts::kAbsent;
    held_.clear();
  }
  int at(int key) const {
    const auto k = static_cast<std::size_t>(key);
    return k < slot_.size() ? slot_[k] : TypedFacts::kAbsent;
  }
  const std::vector<int>& held() const { return held_; }

 private:
  std::vector<int> slot_;
  std::vector<int> held_;  // the keys set, to clear
};

// The fingerprints on one table: theirs when they all share one (nodes read together), else
// copies on a new one (summaries made one by one, as in tests).
std::vector<FingerprintTexts> on_one_table(const std::vector<NamedFingerprint>& nodes) {
  const auto shared = [&] {
    for (const auto& n : nodes)
      if (!n.fingerprint->empty() && n.fingerprint->table() != nodes.front().fingerprint->table()) return false;
    return true;
  };
  std::vector<FingerprintTexts> copies;
  if (shared() && nodes.front().fingerprint->table()) return copies;
  const auto table = std::make_shared<TextTable>();
  copies.reserve(nodes.size());
  for (const auto& n : nodes) {
    FingerprintTexts& c = copies.emplace_back(table);
    for (const auto& e : n.fingerprint->entries()) c.set(n.fingerprint->key(e), n.fingerprint->value(e));
  }
  return copies;
}

}  // namespace

std::vector<FingerprintDiff> diff_against_majority(const std::vector<NamedFingerprint>& nodes_given) {
  std::vector<FingerprintDiff> out;
  if (nodes_given.size() < 2) return out;
  const std::vector<FingerprintTexts> copies = on_one_table(nodes_given);
  std::vector<NamedFingerprint> nodes = nodes_given;
  for (std::size_t i = 0; i < copies.size(); ++i) nodes[i].fingerprint = &copies[i];
  const TextTable* table = nullptr;
  for (const auto& n : nodes)
    if (n.fingerprint->table()) table = n.fingerprint->table().get();
  if (table == nullptr) return out;  // no node has a fact
  // The same typed facts gdsb-topo --health compares: a link at its trained capability, not
  // at the power state of the moment the node report was taken.
  TypedFacts typed(*table);
  NodeFacts facts;
  // key index -> how many nodes hold each of its value indices.
  std::vector<std::vector<int>> counts;
  for (const auto& n : nodes) {
    facts.fill(typed, n);
    if (counts.size() < typed.keys().size()) counts.resize(typed.keys().size());
    for (int k : facts.held()) {
      auto& per_value = counts[static_cast<std::size_t>(k)];
      const auto v = static_cast<std::size_t>(facts.at(k));
      if (v >= per_value.size()) per_value.resize(v + 1);
      ++per_value[v];
    }
    facts.clear();
  }
  const int total = static_cast<int>(nodes.size());
  struct Norm {
    int key;
    int value;  // TypedFacts::kAbsent: the majority lacks the fact
    int count;
  };
  std::vector<Norm> majority;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    int present = 0;
    for (std::size_t v = 0; v < counts[k].size(); ++v) {
      const int c = counts[k][v];
      present += c;
      if (c * 2 > total) majority.push_back({static_cast<int>(k), static_cast<int>(v), c});
    }
    if ((total - present) * 2 > total) majority.push_back({static_cast<int>(k), TypedFacts::kAbsent, total - present});
  }
  // Judged in key order, as every fingerprint is sorted.
  const auto& keys = typed.keys();
  std::sort(majority.begin(), majority.end(), [&](const Norm& a, const Norm& b) {
    return keys[static_cast<std::size_t>(a.key)] < keys[static_cast<std::size_t>(b.key)];
  });
  const auto words = [&](int key, int value) {
    return value == TypedFacts::kAbsent ? std::string("absent") : topo::value_text(typed.value(key, value));
  };
  for (const auto& n : nodes) {
    facts.fill(typed, n);
    // Devices this node lacks (or has alone) come first, one line each; their other facts
    // are not repeated.
    std::set<topo::FactKey> gone;
    std::vector<FingerprintDiff> fact_diffs;
    for (const auto& m : majority) {
      const topo::FactKey& k = keys[static_cast<std::size_t>(m.key)];
      const int value = facts.at(m.key);
      if (value == m.value) continue;
      if (k.kind != topo::FactKind::Node && !k.is_presence() && gone.count(k.subject())) continue;
      const std::string key = topo::key_text(k), now = words(m.key, value), want = words(m.key, m.value);
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
    facts.clear();
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
