// The history's store: one SQLite file (the distribution's libsqlite3), schema documented in
// docs/gdsb-report.md ("history"), its version in the table gdsb_history. Safe with several
// writers: WAL journal, a busy timeout, and each document added in one IMMEDIATE
// transaction, so a run is all there or not at all.
//
// Errors, each named in its message and never after writing anything:
//   RuntimeError (exit 1): "database locked" (another writer held it past the timeout),
//     "database damaged" (truncated, corrupt: SQLite's integrity check fails),
//     "not a gdsbench history" (another SQLite file, or not SQLite at all), "cannot open";
//   UsageError (exit 2): "newer schema" (written by a newer gdsb-report).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gdsb/report/history.hpp"

struct sqlite3;

namespace gdsb::report::history {

inline constexpr int kHistorySchemaVersion = 1;
// PRAGMA application_id of a gdsbench history ("GDSB" in ASCII): a file of another
// application is refused by its id, before any table is read.
inline constexpr int32_t kHistoryApplicationId = 0x47445342;

struct AddResult {
  int64_t run_id = 0;
  bool added = false;  // false: the document was already there (same content), nothing written
};

class HistoryDb {
 public:
  enum class Mode { ReadOnly, Create };  // Create: read-write, the file is made when missing
  // busy_timeout_ms: how long a writer waits for another to finish before "database locked".
  static std::unique_ptr<HistoryDb> open(const std::string& path, Mode mode, int busy_timeout_ms = 60000);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  // Adds one run (idempotent by rec.key); writes its points and facts in one transaction.
  AddResult add(const RunRecord& rec);
  // Everything, ordered as History says.
  History load() const;
  const std::string& path() const { return path_; }

 private:
  HistoryDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace gdsb::report::history
