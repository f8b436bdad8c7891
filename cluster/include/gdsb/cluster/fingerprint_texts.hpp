// A node's fingerprint as its node report carries it (key text -> value text), held as ids
// into a table of texts shared by the nodes read together. A fleet shares almost every key
// and most values: 25,000 HGX nodes hold 8 million facts but a few thousand distinct texts,
// so a node costs 8 bytes a fact instead of a map node and two strings (about 150 bytes).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gdsb::cluster {

// Texts interned to dense ids (0, 1, 2, ... in the order first seen). Safe to share between
// threads: id() from any thread, text() of any id a thread was given. A text keeps its id
// and its address for the table's life.
class TextTable {
 public:
  TextTable();
  ~TextTable();
  TextTable(const TextTable&) = delete;
  TextTable& operator=(const TextTable&) = delete;

  uint32_t id(std::string_view text);
  std::string_view text(uint32_t id) const;
  std::size_t size() const;

 private:
  struct Shard;
  static constexpr std::size_t kShards = 32;
  static constexpr std::size_t kChunkBits = 12;  // 4096 texts a chunk
  static constexpr std::size_t kMaxChunks = std::size_t{1} << 14;
  uint32_t append(std::string_view text);

  std::unique_ptr<Shard[]> shards_;
  // Fixed array of chunk pointers: never moved, so text() needs no lock.
  std::unique_ptr<std::unique_ptr<std::string[]>[]> chunks_;
  mutable std::mutex append_mutex_;
  std::size_t size_ = 0;  // guarded by append_mutex_
};

// Key text -> value text, in key order, as std::map<std::string, std::string> was: set()
// replaces a key's value. Copies share the table; a fingerprint made without one gets its own.
class FingerprintTexts {
 public:
  struct Entry {
    uint32_t key = 0, value = 0;  // ids in table()
  };

  FingerprintTexts() = default;
  explicit FingerprintTexts(std::shared_ptr<TextTable> table) : table_(std::move(table)) {}
  FingerprintTexts(std::initializer_list<std::pair<const std::string, std::string>> texts);
  FingerprintTexts(const std::map<std::string, std::string>& texts,  // NOLINT: a map is one
                   std::shared_ptr<TextTable> table = nullptr);

  void set(std::string_view key, std::string_view value);
  // The same, trying first the fact at this position of `like`, a fingerprint on the same
  // table that this one is probably like (the node read before): a fleet's nodes list the
  // same keys in the same order, so most facts are two text compares, no lookup.
  void set(std::string_view key, std::string_view value, const FingerprintTexts* like);
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void shrink_to_fit() { entries_.shrink_to_fit(); }

  const std::vector<Entry>& entries() const { return entries_; }  // by key text
  const std::shared_ptr<TextTable>& table() const { return table_; }
  std::string_view key(const Entry& e) const { return table_->text(e.key); }
  std::string_view value(const Entry& e) const { return table_->text(e.value); }

  std::map<std::string, std::string> texts() const;
  bool operator==(const FingerprintTexts& other) const { return texts() == other.texts(); }

 private:
  std::shared_ptr<TextTable> table_;
  std::vector<Entry> entries_;
};

}  // namespace gdsb::cluster
