#include "gdsb/cluster/fingerprint_texts.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <unordered_map>

namespace gdsb::cluster {

// Lookups are spread over shards so that the reading threads seldom wait on one lock.
struct TextTable::Shard {
  std::mutex mutex;
  std::unordered_map<std::string_view, uint32_t> ids;  // views of the chunks' texts
};

TextTable::TextTable()
    : shards_(std::make_unique<Shard[]>(kShards)),
      chunks_(std::make_unique<std::unique_ptr<std::string[]>[]>(kMaxChunks)) {}

TextTable::~TextTable() = default;

uint32_t TextTable::append(std::string_view text) {
  const std::lock_guard lock(append_mutex_);
  const std::size_t id = size_;
  const std::size_t chunk = id >> kChunkBits;
  if (chunk >= kMaxChunks) throw std::length_error("TextTable: more than 64 million texts");
  if (!chunks_[chunk]) chunks_[chunk] = std::make_unique<std::string[]>(std::size_t{1} << kChunkBits);
  chunks_[chunk][id & ((std::size_t{1} << kChunkBits) - 1)].assign(text);
  ++size_;
  return static_cast<uint32_t>(id);
}

uint32_t TextTable::id(std::string_view text) {
  Shard& shard = shards_[std::hash<std::string_view>{}(text) % kShards];
  const std::lock_guard lock(shard.mutex);
  if (const auto it = shard.ids.find(text); it != shard.ids.end()) return it->second;
  const uint32_t id = append(text);
  shard.ids.emplace(this->text(id), id);
  return id;
}

std::string_view TextTable::text(uint32_t id) const {
  return chunks_[id >> kChunkBits][id & ((std::size_t{1} << kChunkBits) - 1)];
}

std::size_t TextTable::size() const {
  const std::lock_guard lock(append_mutex_);
  return size_;
}

FingerprintTexts::FingerprintTexts(std::initializer_list<std::pair<const std::string, std::string>> texts) {
  for (const auto& [k, v] : texts) set(k, v);
}

FingerprintTexts::FingerprintTexts(const std::map<std::string, std::string>& texts,
                                   std::shared_ptr<TextTable> table)
    : table_(std::move(table)) {
  entries_.reserve(texts.size());
  for (const auto& [k, v] : texts) set(k, v);
}

void FingerprintTexts::set(std::string_view key, std::string_view value) {
  if (!table_) table_ = std::make_shared<TextTable>();
  // Reports list their facts in key order: appending is the usual case.
  if (entries_.empty() || table_->text(entries_.back().key) < key) {
    entries_.push_back({table_->id(key), table_->id(value)});
    return;
  }
  const auto at = std::lower_bound(entries_.begin(), entries_.end(), key,
                                   [&](const Entry& e, std::string_view k) { return table_->text(e.key) < k; });
  if (at != entries_.end() && table_->text(at->key) == key) {
    at->value = table_->id(value);
    return;
  }
  entries_.insert(at, {table_->id(key), table_->id(value)});
}

void FingerprintTexts::set(std::string_view key, std::string_view value, const FingerprintTexts* like) {
  const std::size_t at = entries_.size();
  if (like == nullptr || !table_ || like->table_ != table_ || at >= like->entries_.size()) return set(key, value);
  const Entry& hint = like->entries_[at];
  if (table_->text(hint.key) != key || (at > 0 && !(table_->text(entries_.back().key) < key)))
    return set(key, value);
  entries_.push_back({hint.key, table_->text(hint.value) == value ? hint.value : table_->id(value)});
}

std::map<std::string, std::string> FingerprintTexts::texts() const {
  std::map<std::string, std::string> out;
  for (const Entry& e : entries_) out.emplace_hint(out.end(), key(e), value(e));
  return out;
}

}  // namespace gdsb::cluster
