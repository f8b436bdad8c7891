// The SQLite store of a history. The only file that includes sqlite3.h: the rest of
// gdsb-report reads History values.
#include "gdsb/report/history_db.hpp"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "gdsb/error.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/version.hpp"

namespace gdsb::report::history {
namespace {

// Schema version 1 (docs/gdsb-report.md, "history: the database"). A change of these
// statements is a new version and a migration, never an edit.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS gdsb_history (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, time TEXT NOT NULL,
  source TEXT NOT NULL, added_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS facts (
  run_id INTEGER NOT NULL REFERENCES runs(id), node TEXT NOT NULL, test TEXT NOT NULL,
  name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, node, test, name)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS series (
  id INTEGER PRIMARY KEY, node TEXT NOT NULL, test TEXT NOT NULL, metric TEXT NOT NULL,
  UNIQUE (node, test, metric));
CREATE TABLE IF NOT EXISTS points (
  series_id INTEGER NOT NULL REFERENCES series(id), run_id INTEGER NOT NULL REFERENCES runs(id),
  value REAL NOT NULL, PRIMARY KEY (series_id, run_id)) WITHOUT ROWID;
)sql";

// SQLITE_TRANSIENT (SQLite copies the text when it is bound) without the C cast of its macro.
const sqlite3_destructor_type kCopyText = reinterpret_cast<sqlite3_destructor_type>(static_cast<std::intptr_t>(-1));

bool is_locked(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}
bool is_damaged(int rc) { return (rc & 0xff) == SQLITE_CORRUPT; }

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Why SQLite could not open or write the file, in the file system's words: SQLite says
// only "unable to open database file" or "attempt to write a readonly database". The WAL
// journal keeps two files beside the database (-wal, -shm) that even a reader must be able
// to create when they are not there.
std::string access_reason(const std::string& path) {
  const std::string dir = directory_of(path);
  if (::access(path.c_str(), F_OK) != 0) {
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      return "cannot create the history in " + dir + ": " + std::strerror(errno);
    return "cannot create the history: " + std::string(std::strerror(errno));
  }
  if (::access((path + "-shm").c_str(), F_OK) != 0 && ::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot create the shared-memory file beside the database (" + path + "-shm): " + dir + ": " +
           std::strerror(errno) + "; the history's WAL journal needs a directory it can write";
  if (::access(path.c_str(), W_OK) != 0) return "cannot write the file: " + std::string(std::strerror(errno));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot create the WAL journal beside the database (" + path + "-wal): " + dir + ": " +
           std::strerror(errno);
  return {};
}

[[noreturn]] void fail(sqlite3* db, const std::string& path, int rc, const std::string& doing) {
  // SQLite's message for the code, then the connection's, when it says more.
  const std::string code_text = sqlite3_errstr(rc);
  const std::string conn_text = db != nullptr ? sqlite3_errmsg(db) : "";
  const std::string detail = code_text + (conn_text.empty() || conn_text == code_text ? "" : ": " + conn_text);
  if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) {
    const std::string why = access_reason(path);
    if (!why.empty())
      throw RuntimeError(path + ": " + why + " (SQLite, " + doing + ": " + detail +
                         "); nothing was written");
  }
  if (is_locked(rc))
    throw RuntimeError(path + ": database locked: another writer held it longer than the busy "
                       "timeout while " + doing + " (" + detail + "); nothing was written, run it again");
  if ((rc & 0xff) == SQLITE_NOTADB)
    throw RuntimeError(path + ": not a gdsbench history: not an SQLite database, or its header is damaged (" +
                       detail + "); nothing was written");
  if (is_damaged(rc))
    throw RuntimeError(path + ": database damaged: " + doing + " failed (" + detail +
                       "); nothing was written; restore the file from a copy or start a new one");
  throw RuntimeError(path + ": " + doing + " failed (" + detail + ")");
}

// A prepared statement, finalized on every path.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    const int rc = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr);
    if (rc != SQLITE_OK) fail(db, path, rc, "reading the database");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), kCopyText);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  // true while a row is there.
  bool step(const char* doing) {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, path_, rc, doing);
  }
  void run(const char* doing) {
    while (step(doing)) {
    }
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(s_, col);
    return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p));
  }
  int64_t integer(int col) const { return sqlite3_column_int64(s_, col); }
  double real(int col) const { return sqlite3_column_double(s_, col); }

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* s_ = nullptr;
};

void exec(sqlite3* db, const std::string& path, const char* sql, const char* doing) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(db, path, rc, doing);
}

// Rolls back unless committed: an exception leaves the file as it was.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path, bool write) : db_(db), path_(path) {
    exec(db, path, write ? "BEGIN IMMEDIATE" : "BEGIN", write ? "waiting to write" : "reading");
  }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    exec(db_, path_, "COMMIT", "committing");
    done_ = true;
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  bool done_ = false;
};

// An existing file must be a gdsbench history, whole, of a schema this tool reads, before
// anything is written to it.
void check_existing(sqlite3* db, const std::string& path) {
  int64_t app_id = 0;
  {
    Stmt s(db, path, "PRAGMA application_id");
    if (s.step("reading the header")) app_id = s.integer(0);
  }
  if (app_id == 0) {
    // An SQLite file with no tables and no application id is no history being created: a
    // history's tables and its id are written in one transaction (create_schema), before
    // which the file is empty (0 bytes, which open() takes over). It is someone else's.
    Stmt s(db, path, "SELECT count(*) FROM sqlite_schema");
    if (s.step("reading the tables") && s.integer(0) == 0)
      throw RuntimeError(path + ": not a gdsbench history: an empty SQLite database of another application "
                         "(no tables, application_id 0); nothing was written (choose another file name)");
  }
  if (app_id != kHistoryApplicationId) {
    throw RuntimeError(path + ": not a gdsbench history: an SQLite file of another application "
                       "(application_id " + std::to_string(app_id) + "); nothing was written");
  }
  {
    Stmt s(db, path, "PRAGMA quick_check");
    std::string first;
    if (s.step("checking the file")) first = s.text(0);
    if (first != "ok") {
      throw RuntimeError(path + ": database damaged: SQLite's check says \"" + first +
                         "\"; nothing was written; restore the file from a copy or start a new one");
    }
  }
  Stmt s(db, path, "SELECT value FROM gdsb_history WHERE key = 'schema_version'");
  int version = 0;
  if (s.step("reading the schema version")) version = std::atoi(s.text(0).c_str());
  if (version > kHistorySchemaVersion) {
    throw UsageError(path + ": newer schema: the history has schema version " + std::to_string(version) +
                     ", this gdsb-report reads version " + std::to_string(kHistorySchemaVersion) +
                     "; use the gdsb-report that wrote it (nothing was written)");
  }
  if (version < 1)
    throw RuntimeError(path + ": database damaged: no schema version in gdsb_history; nothing was written");
}

void create_schema(sqlite3* db, const std::string& path) {
  Transaction t(db, path, true);
  // A writer that created the file at the same moment may have got here first.
  exec(db, path, kSchemaV1, "creating the tables");
  const std::string app = "PRAGMA application_id = " + std::to_string(kHistoryApplicationId);
  exec(db, path, app.c_str(), "marking the file");
  Stmt ins(db, path, "INSERT OR IGNORE INTO gdsb_history (key, value) VALUES (?, ?)");
  ins.bind(1, std::string("schema_version")).bind(2, std::to_string(kHistorySchemaVersion)).run("creating the tables");
  ins.bind(1, std::string("created_by")).bind(2, version_line("gdsb-report")).run("creating the tables");
  t.commit();
}

}  // namespace

std::unique_ptr<HistoryDb> HistoryDb::open(const std::string& path, Mode mode, int busy_timeout_ms) {
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) throw RuntimeError(path + ": not a regular file; a history is one SQLite file");
  if (!exists && mode == Mode::ReadOnly)
    throw RuntimeError(path + ": cannot open the history: " + std::strerror(errno) +
                       " (create it with `gdsb-report history add " + path + " DOC...`)");
  sqlite3* raw = nullptr;
  const int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<HistoryDb> db(new HistoryDb(raw, path));
  if (rc != SQLITE_OK) fail(raw, path, rc, "opening the history");
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  sqlite3_extended_result_codes(raw, 1);
  if (exists && st.st_size > 0) {
    check_existing(raw, path);
    return db;
  }
  if (mode == Mode::ReadOnly) throw RuntimeError(path + ": not a gdsbench history: the database is empty");
  // New (or empty) file. Tables first (a writer that created the file at the same moment
  // waits for this transaction, or this one for its), then WAL, which lets readers go on
  // while one writer adds; it is kept in the file, so every later connection uses it.
  create_schema(raw, path);
  if (const int wal = sqlite3_exec(raw, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr); wal != SQLITE_OK) {
    Stmt mode_now(raw, path, "PRAGMA journal_mode");
    if (!mode_now.step("reading the journal mode") || mode_now.text(0) != "wal") fail(raw, path, wal, "switching to WAL");
  }
  return db;
}

HistoryDb::~HistoryDb() { sqlite3_close_v2(db_); }

AddResult HistoryDb::add(const RunRecord& rec) {
  Transaction t(db_, path_, true);
  {
    Stmt find(db_, path_, "SELECT id FROM runs WHERE key = ?");
    find.bind(1, rec.key);
    if (find.step("looking the run up")) return {find.integer(0), false};
  }
  Stmt ins(db_, path_, "INSERT INTO runs (key, kind, time, source, added_at) VALUES (?, ?, ?, ?, ?)");
  ins.bind(1, rec.key).bind(2, rec.kind).bind(3, rec.time).bind(4, rec.source).bind(5, utc_now_iso8601());
  ins.run("adding the run");
  const int64_t run_id = sqlite3_last_insert_rowid(db_);
  Stmt fact(db_, path_, "INSERT OR REPLACE INTO facts (run_id, node, test, name, value) VALUES (?, ?, ?, ?, ?)");
  for (const auto& [node, facts] : rec.node_facts)
    for (const auto& [k, v] : facts) fact.bind(1, run_id).bind(2, node).bind(3, std::string()).bind(4, k).bind(5, v).run("adding facts");
  for (const auto& tf : rec.test_facts)
    for (const auto& [k, v] : tf.facts) fact.bind(1, run_id).bind(2, tf.node).bind(3, tf.test).bind(4, k).bind(5, v).run("adding facts");
  Stmt series(db_, path_, "INSERT OR IGNORE INTO series (node, test, metric) VALUES (?, ?, ?)");
  Stmt series_id(db_, path_, "SELECT id FROM series WHERE node = ? AND test = ? AND metric = ?");
  Stmt point(db_, path_, "INSERT OR IGNORE INTO points (series_id, run_id, value) VALUES (?, ?, ?)");
  for (const auto& p : rec.points) {
    series.bind(1, p.node).bind(2, p.test).bind(3, p.metric).run("adding a series");
    series_id.bind(1, p.node).bind(2, p.test).bind(3, p.metric);
    if (!series_id.step("adding a series")) throw RuntimeError(path_ + ": database damaged: a series just added is missing");
    const int64_t sid = series_id.integer(0);
    series_id.reset();
    point.bind(1, sid).bind(2, run_id).bind(3, p.value).run("adding a point");
  }
  t.commit();
  return {run_id, true};
}

History HistoryDb::load() const {
  History h;
  h.path = path_;
  Transaction t(db_, path_, false);  // one snapshot, whatever writers do meanwhile
  {
    Stmt s(db_, path_, "SELECT id, key, kind, time, source FROM runs ORDER BY time, id");
    while (s.step("reading runs")) h.runs.push_back({s.integer(0), s.text(1), s.text(2), s.text(3), s.text(4)});
  }
  {
    Stmt s(db_, path_, "SELECT run_id, node, test, name, value FROM facts");
    while (s.step("reading facts")) {
      if (s.text(2).empty()) h.node_facts[s.integer(0)][s.text(1)][s.text(3)] = s.text(4);
      else h.test_facts[s.integer(0)][{s.text(1), s.text(2)}][s.text(3)] = s.text(4);
    }
  }
  Stmt s(db_, path_,
         "SELECT s.node, s.test, s.metric, p.run_id, p.value FROM points p "
         "JOIN series s ON s.id = p.series_id JOIN runs r ON r.id = p.run_id "
         "ORDER BY s.node, s.test, s.metric, r.time, r.id");
  while (s.step("reading series")) {
    if (h.series.empty() || h.series.back().node != s.text(0) || h.series.back().test != s.text(1) ||
        h.series.back().metric != s.text(2))
      h.series.push_back({s.text(0), s.text(1), s.text(2), {}});
    h.series.back().points.emplace_back(s.integer(3), s.real(4));
  }
  t.commit();
  return h;
}

}  // namespace gdsb::report::history
