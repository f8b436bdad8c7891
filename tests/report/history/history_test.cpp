// History (issue 37): what documents add, the SQLite store (idempotence, named errors that
// leave the file as it was, a newer schema refused), and SHA-256 against FIPS 180-4's examples.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "doc_builders.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/history.hpp"
#include "gdsb/report/history_db.hpp"
#include "sha256.hpp"

namespace gdsb::report::history {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Document doc_of(const json& j, const std::string& name = "run.json") {
  return parse_document(j.dump(), name);
}

// stack: context keys of the software (versions, cufile_json, cufile, gpus).
json io_with(double gib_s, const std::string& started, uint32_t threads = 8, const json& stack = nullptr) {
  auto r = test::run(XferType::CpuOnly, gib_s);
  r.workload.threads = threads;
  json d = test::io_doc({r});
  d["context"]["started_at"] = started;
  if (!stack.is_null())
    for (const auto& [k, v] : stack.items()) d["context"][k] = v;
  return d;
}

// A gdsbench.cluster/1 document of node rows and a shared_storage section.
json cluster_doc(const json& nodes, const json& shared_storage) {
  return {{"schema", "gdsbench.cluster/1"},
          {"tool", {{"name", "gdsb-cluster"}, {"version", "0.1.0"}}},
          {"context", {{"host", "h0"}, {"started_at", "2026-11-20T00:00:00Z"}}},
          {"classes", json::array()},
          {"findings", json::array()},
          {"odd_nodes", json::array()},
          {"nodes", nodes},
          {"shared_storage", shared_storage}};
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class HistoryDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gdsb-history-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST(Sha256, MatchesTheFipsExamples) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Extract, AnIoDocumentGivesThreeMetricsPerRunAndItsFacts) {
  const auto rec = extract_run(doc_of(io_with(2.5, "2026-11-20T00:00:00Z")));
  EXPECT_EQ(rec.kind, "io");
  EXPECT_EQ(rec.time, "2026-11-20T00:00:00Z");
  ASSERT_EQ(rec.points.size(), 3U);
  EXPECT_EQ(rec.points[0].node, "node1");
  EXPECT_EQ(rec.points[0].test, "CPUONLY READ 1 MiB in /mnt/nvme");  // threads are a fact, not the test; the data directory is part of it
  EXPECT_EQ(rec.points[0].metric, "throughput");
  EXPECT_DOUBLE_EQ(rec.points[0].value, 2.5);
  EXPECT_EQ(rec.points[2].metric, "p99");
  EXPECT_EQ(rec.node_facts.at("node1").at("kernel"), "6.1.0");
  EXPECT_EQ(rec.node_facts.at("node1").at("gdsbench"), "0.1.0");
  ASSERT_EQ(rec.test_facts.size(), 1U);
  EXPECT_EQ(rec.test_facts[0].facts.at("threads"), "8");
  EXPECT_EQ(rec.test_facts[0].facts.at("path"), "posix");
  EXPECT_EQ(rec.test_facts[0].facts.at("engine"), "psync");
}

TEST(Extract, ARunWithoutAFigureIsRecordedWithWhyAndNoPoint) {
  auto ok = test::run(XferType::CpuOnly, 2.0);
  auto failed = test::run(XferType::GpuDirect, 0);
  failed.status = RunStatus::Failed;
  failed.reason = "cuFileDriverOpen failed: EINVAL (-22)";
  auto waived = test::run(XferType::CpuGpu, 0);
  waived.status = RunStatus::Waived;
  waived.reason = "no NVIDIA driver";
  const auto rec = extract_run(doc_of(test::io_doc({ok, failed, waived})));
  ASSERT_EQ(rec.points.size(), 3U);  // the ok run's three metrics only
  for (const auto& p : rec.points) EXPECT_EQ(p.test, "CPUONLY READ 1 MiB in /mnt/nvme");
  ASSERT_EQ(rec.test_facts.size(), 3U);
  EXPECT_EQ(rec.test_facts[0].facts.count(std::string(kNoFigureStatus)), 0U);
  EXPECT_EQ(rec.test_facts[1].test, "GPUD READ 1 MiB in /mnt/nvme");
  EXPECT_EQ(rec.test_facts[1].facts.at(std::string(kNoFigureStatus)), "failed");
  EXPECT_EQ(rec.test_facts[1].facts.at(std::string(kNoFigureReason)), "cuFileDriverOpen failed: EINVAL (-22)");
  EXPECT_EQ(rec.test_facts[2].facts.at(std::string(kNoFigureStatus)), "waived");
}

TEST(Extract, TheSameDocumentIndentedOtherwiseHasTheSameKey) {
  const auto j = io_with(2.5, "2026-11-20T00:00:00Z");
  EXPECT_EQ(extract_run(parse_document(j.dump(2), "a.json")).key, extract_run(parse_document(j.dump(), "b.json")).key);
  EXPECT_NE(extract_run(doc_of(j)).key, extract_run(doc_of(io_with(2.6, "2026-11-20T00:00:00Z"))).key);
}

TEST(Extract, ASweepOfOneTestKeepsItsRunsApart) {
  auto a = test::run(XferType::CpuOnly, 1.0);
  auto b = test::run(XferType::CpuOnly, 2.0);
  b.workload.threads = 16;
  const auto rec = extract_run(doc_of(test::io_doc({a, b})));
  ASSERT_EQ(rec.points.size(), 6U);
  EXPECT_NE(rec.points[0].test, rec.points[3].test);
}

TEST(Extract, StackFactsAndTheNodeFigure) {
  const json stack = {{"versions", {{"nvidia_driver", "570.86.15"}, {"nvidia_fs", "2.20.5"}}},
                      {"cufile_json", "/etc/cufile.json"},
                      {"cufile", {{"properties.max_direct_io_size_kb", "16384"}}},
                      {"gpus", {{{"pci_bus_id", "0000:19:00.0"}, {"name", "H100"}, {"max_link", "Gen5 x16"}}}}};
  auto d = io_with(2.5, "2026-11-20T00:00:00Z", 8, stack);
  d["node"] = {{"threads_per_gpu", 4},
               {"modes", {{{"xfer_type", 0}, {"aggregate_gb_s", 40.5}, {"per_gpu", json::array({1, 2})}},
                          {{"xfer_type", 2}, {"waived", "no GPU"}}}}};
  const auto rec = extract_run(doc_of(d));
  const auto& f = rec.node_facts.at("node1");
  EXPECT_EQ(f.at("driver"), "570.86.15");
  EXPECT_EQ(f.at("nvidia_fs"), "2.20.5");
  EXPECT_EQ(f.at("cufile.properties.max_direct_io_size_kb"), "16384");
  EXPECT_EQ(f.at("gpu 0000:19:00.0 link"), "Gen5 x16");
  ASSERT_EQ(rec.points.size(), 4U);
  EXPECT_EQ(rec.points[3].test, "node GPUD");
  EXPECT_EQ(rec.points[3].metric, "aggregate");
  EXPECT_DOUBLE_EQ(rec.points[3].value, 40.5);
}

TEST(Extract, AClusterDocumentAddsOneSeriesPerNodeAndTheSharedStorage) {
  const json d = cluster_doc(
             {{{"node", "h0"}, {"status", "ok"}, {"driver", "570"}, {"kernel", "6.8"},
               {"node_metrics", {{"io_x1_read_gb_s", 6.1}}}, {"gpu_metrics", {{"h2d_gb_s", {52.1, 52.3}}}}},
              {{"node", "h1"}, {"status", "ok"}, {"driver", "580"}, {"kernel", "6.8"},
               {"node_metrics", {{"io_x1_read_gb_s", 3.0}}}},
              {{"node", "h2"}, {"status", "missing"}}},
             {{"points", {{{"nodes", 2}, {"mode", 1}, {"op", "read"}, {"status", "ok"}, {"aggregate_gb_s", 20.0}},
                          {{"nodes", 4}, {"mode", 1}, {"op", "read"}, {"status", "waived"}}}}});
  const auto rec = extract_run(doc_of(d, "cluster.json"));
  EXPECT_EQ(rec.node_facts.at("h1").at("driver"), "580");
  EXPECT_EQ(rec.node_facts.count("h2"), 0U);
  std::vector<std::string> keys;
  for (const auto& p : rec.points) keys.push_back(p.node + "|" + p.test + "|" + p.metric);
  EXPECT_EQ(keys, (std::vector<std::string>{"h0|io_x1_read_gb_s|gb_s", "h0|GPU0 h2d_gb_s|gb_s",
                                            "h0|GPU1 h2d_gb_s|gb_s", "h1|io_x1_read_gb_s|gb_s",
                                            "(shared storage)|2 nodes CPUONLY read|aggregate"}));
}

// Issue 41: a series means one storage. The same test on another directory (another file
// system) is another series; shared-storage points carry what makes them comparable.
TEST(Extract, TheSeriesKeyNamesWhereTheDataLay) {
  auto a = test::run(XferType::CpuOnly, 1.0);
  a.workload.file = "/mnt/lustre/gdsb/gdsb-survey.4242.tmp";
  auto b = test::run(XferType::CpuOnly, 1.0);
  b.workload.file = "";
  b.workload.directory = "/scratch";
  EXPECT_EQ(extract_run(doc_of(test::io_doc({a}))).points[0].test, "CPUONLY READ 1 MiB in /mnt/lustre/gdsb");
  EXPECT_EQ(extract_run(doc_of(test::io_doc({b}))).points[0].test, "CPUONLY READ 1 MiB in /scratch");
  const json d = cluster_doc(json::array(),
                            {{"dir", "/shared/gdsb"},
              {"layout", "file-per-process"},
              {"block_bytes", 1048576},
              {"limit_bytes_per_rank", 268435456},
              {"points", {{{"nodes", 2}, {"mode", 1}, {"op", "read"}, {"ranks", 4}, {"status", "ok"}, {"aggregate_gb_s", 20.0}},
                          {{"nodes", 2}, {"mode", 1}, {"op", "write"}, {"ranks", 2}, {"status", "ok"}, {"aggregate_gb_s", 9.0}}}},
              {"checkpoint",
               {{"model_bytes", 4294967296}, {"ranks", 4}, {"mode", 1},
                {"save", {{"status", "ok"}, {"aggregate_gb_s", 2.1}}}}}});
  const auto rec = extract_run(doc_of(d, "cluster.json"));
  ASSERT_EQ(rec.points.size(), 3U);
  EXPECT_EQ(rec.points[0].test,
            "2 nodes CPUONLY read, 2 ranks a node, file-per-process, 1 MiB blocks, 256 MiB a rank in /shared/gdsb");
  EXPECT_EQ(rec.points[1].test,
            "2 nodes CPUONLY write, 1 rank a node, file-per-process, 1 MiB blocks, 256 MiB a rank in /shared/gdsb");
  EXPECT_EQ(rec.points[2].test, "checkpoint save of 4 GiB over 4 ranks CPUONLY in /shared/gdsb");
}

// Issue 41: where gdsb-io recorded the run's storage, the series is keyed by it, by file
// system and source, not by directory: an NVMe ext4 replaced by an NFS mount at the same
// /mnt/data is two series; a scratch directory of another name on the same mount is one.
RunResult on(const std::string& file, const std::optional<RunStorage>& storage) {
  auto r = test::run(XferType::CpuOnly, 1.0);
  r.workload.file = file;
  r.storage = storage;
  return r;
}

TEST(Extract, AnIoSeriesIsKeyedByTheStorageTheDocumentRecords) {
  const RunStorage nvme{"ext4", "/dev/nvme0n1p1", "/mnt/data", "259:1"};
  const RunStorage nfs{"nfs4", "10.0.0.5:/export", "/mnt/data", "0:53"};
  const auto key = [](const RunResult& r) { return extract_run(doc_of(test::io_doc({r}))).points.at(0).test; };
  EXPECT_EQ(key(on("/mnt/data/gdsb/testfile", nvme)), "CPUONLY READ 1 MiB on ext4 /dev/nvme0n1p1");
  EXPECT_EQ(key(on("/mnt/data/gdsb/testfile", nfs)), "CPUONLY READ 1 MiB on nfs4 10.0.0.5:/export");
  EXPECT_EQ(key(on("/mnt/data/tmp.Xk3/gdsb-survey.77.tmp", nvme)), "CPUONLY READ 1 MiB on ext4 /dev/nvme0n1p1");
  // A source that only repeats the type is said once; a raw block device is its path.
  EXPECT_EQ(key(on("/dev/shm/f", RunStorage{"tmpfs", "tmpfs", "/dev/shm", "0:25"})), "CPUONLY READ 1 MiB on tmpfs");
  EXPECT_EQ(key(on("/dev/nvme1n1", RunStorage{"", "/dev/nvme1n1", "", "259:4"})), "CPUONLY READ 1 MiB on /dev/nvme1n1");
  // An older document without storage keeps the directory; one whose storage names neither
  // file system nor source too.
  EXPECT_EQ(key(on("/mnt/data/gdsb/testfile", std::nullopt)), "CPUONLY READ 1 MiB in /mnt/data/gdsb");
  EXPECT_EQ(key(on("/mnt/data/gdsb/testfile", RunStorage{"", "", "", "259:1"})), "CPUONLY READ 1 MiB in /mnt/data/gdsb");
  // The rest of the storage is the run's facts; a run with no figure goes to the same series.
  const auto rec = extract_run(doc_of(test::io_doc({on("/mnt/data/gdsb/testfile", nfs)})));
  ASSERT_EQ(rec.test_facts.size(), 1U);
  EXPECT_EQ(rec.test_facts[0].facts.at("mount_point"), "/mnt/data");
  EXPECT_EQ(rec.test_facts[0].facts.at("dev"), "0:53");
  auto failed = on("/mnt/data/gdsb/testfile", nfs);
  failed.status = RunStatus::Failed;
  failed.reason = "open: Stale file handle";
  const auto no_figure = extract_run(doc_of(test::io_doc({failed})));
  ASSERT_EQ(no_figure.test_facts.size(), 1U);
  EXPECT_EQ(no_figure.test_facts[0].test, "CPUONLY READ 1 MiB on nfs4 10.0.0.5:/export");
}

TEST_F(HistoryDir, TwoDocumentsDifferingOnlyInStorageAreTwoSeries) {
  const auto db = HistoryDb::open(path("h.db"), HistoryDb::Mode::Create);
  const auto add = [&](const std::string& file, const RunStorage& st, const std::string& started) {
    json d = test::io_doc({on(file, st)});
    d["context"]["started_at"] = started;
    db->add(extract_run(doc_of(d)));
  };
  const RunStorage nvme{"ext4", "/dev/nvme0n1p1", "/mnt/data", "259:1"};
  add("/mnt/data/gdsb/testfile", nvme, "2026-11-18T00:00:00Z");
  add("/mnt/data/other/testfile", nvme, "2026-11-19T00:00:00Z");  // the same storage
  add("/mnt/data/gdsb/testfile", {"nfs4", "10.0.0.5:/export", "/mnt/data", "0:53"}, "2026-11-20T00:00:00Z");
  std::map<std::string, std::size_t> points;
  for (const auto& s : db->load().series)
    if (s.metric == "throughput") points[s.test] = s.points.size();
  EXPECT_EQ(points, (std::map<std::string, std::size_t>{{"CPUONLY READ 1 MiB on ext4 /dev/nvme0n1p1", 2},
                                                         {"CPUONLY READ 1 MiB on nfs4 10.0.0.5:/export", 1}}));
}

// Issue 41: a shared-storage point is keyed by the storage rank 0 saw holding the directory,
// beside the directory: the same /shared/gdsb on an NFS export and later on a Lustre file
// system is two series; an older document (no storage) keeps "in DIR".
json shared_on(const json& storage, double gb_s) {
  json ss = {{"dir", "/shared/gdsb"},
             {"layout", "file-per-process"},
             {"block_bytes", 1048576},
             {"limit_bytes_per_rank", 268435456},
             {"points", {{{"nodes", 2}, {"mode", 1}, {"op", "read"}, {"ranks", 2}, {"status", "ok"}, {"aggregate_gb_s", gb_s}}}}};
  if (!storage.is_null()) ss["storage"] = storage;
  return cluster_doc(json::array(), ss);
}

TEST_F(HistoryDir, OneDirectoryOnTwoFileSystemsIsTwoSharedStorageSeries) {
  const json nfs = {{"fs_type", "nfs4"}, {"source", "10.0.0.5:/export"}, {"mount_point", "/shared"}};
  const json lustre = {{"fs_type", "lustre"}, {"source", "10.0.0.9@o2ib:/scratch"}, {"mount_point", "/shared"}};
  const std::string point = "2 nodes CPUONLY read, 1 rank a node, file-per-process, 1 MiB blocks, 256 MiB a rank in /shared/gdsb";
  const auto rec = extract_run(doc_of(shared_on(nfs, 20.0), "cluster.json"));
  ASSERT_EQ(rec.points.size(), 1U);
  EXPECT_EQ(rec.points[0].test, point + " on nfs4 10.0.0.5:/export");
  EXPECT_EQ(rec.node_facts.at("(shared storage)").at("mount_point"), "/shared");
  EXPECT_EQ(extract_run(doc_of(shared_on(nullptr, 20.0), "cluster.json")).points.at(0).test, point);

  const auto db = HistoryDb::open(path("h.db"), HistoryDb::Mode::Create);
  const auto add = [&](const json& storage, double gb_s, int day) {
    json d = shared_on(storage, gb_s);
    d["context"]["started_at"] = "2026-11-" + std::to_string(10 + day) + "T00:00:00Z";
    db->add(extract_run(doc_of(d, "cluster.json")));
  };
  add(nfs, 20.0, 0);
  add(nfs, 20.2, 1);
  add(lustre, 2.0, 2);  // a tenth of the NFS figure: no baseline for it
  std::map<std::string, std::size_t> points;
  for (const auto& s : db->load().series) points[s.test] = s.points.size();
  EXPECT_EQ(points, (std::map<std::string, std::size_t>{{point + " on nfs4 10.0.0.5:/export", 2},
                                                         {point + " on lustre 10.0.0.9@o2ib:/scratch", 1}}));
}

TEST(Extract, ATopologyDocumentHasNoFigures) {
  EXPECT_THROW(extract_run(doc_of(test::topo_doc("pass"))), UsageError);
}

TEST_F(HistoryDir, AddTwiceIsOneRunAndLoadReadsItBack) {
  const auto db = HistoryDb::open(path("h.db"), HistoryDb::Mode::Create);
  const auto rec = extract_run(doc_of(io_with(2.5, "2026-11-20T00:00:00Z")));
  const auto first = db->add(rec);
  const auto again = db->add(rec);
  EXPECT_TRUE(first.added);
  EXPECT_FALSE(again.added);
  EXPECT_EQ(first.run_id, again.run_id);
  db->add(extract_run(doc_of(io_with(2.0, "2026-11-19T00:00:00Z"))));
  const auto h = db->load();
  ASSERT_EQ(h.runs.size(), 2U);
  EXPECT_EQ(h.runs[0].time, "2026-11-19T00:00:00Z");  // ordered by time, not by adding
  ASSERT_EQ(h.series.size(), 3U);
  EXPECT_EQ(h.series[2].metric, "throughput");
  ASSERT_EQ(h.series[2].points.size(), 2U);
  EXPECT_DOUBLE_EQ(h.series[2].points[0].second, 2.0);
  EXPECT_EQ(h.facts_of(h.runs[1].id, "node1", "CPUONLY READ 1 MiB in /mnt/nvme").at("threads"), "8");
}

TEST_F(HistoryDir, ATruncatedFileIsNamedDamagedAndLeftAsItWas) {
  {
    const auto db = HistoryDb::open(path("h.db"), HistoryDb::Mode::Create);
    for (int i = 0; i < 200; ++i)
      db->add(extract_run(doc_of(io_with(1.0 + i * 0.01, "2026-11-20T00:00:" + std::to_string(10 + i % 50) + "Z"))));
  }
  fs::resize_file(path("h.db"), fs::file_size(path("h.db")) / 2);
  const std::string before = slurp(path("h.db"));
  try {
    HistoryDb::open(path("h.db"), HistoryDb::Mode::Create)->add(extract_run(doc_of(io_with(9, "2026-12-01T00:00:00Z"))));
    FAIL() << "a truncated history was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("database damaged"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(path("h.db")), before);
}

TEST_F(HistoryDir, AFileOfAnotherKindIsRefusedByName) {
  std::ofstream(path("notes.txt")) << "not a database, just a note that is longer than a header";
  try {
    HistoryDb::open(path("notes.txt"), HistoryDb::Mode::Create);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("not a gdsbench history"), std::string::npos) << e.what();
  }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path("other.db").c_str(), &other), SQLITE_OK);
  sqlite3_exec(other, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  const std::string before = slurp(path("other.db"));
  try {
    HistoryDb::open(path("other.db"), HistoryDb::Mode::Create);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("not a gdsbench history"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(path("other.db")), before);
}

// An SQLite file with no tables and no application id was taken over silently: it is
// someone's (`sqlite3 x.db VACUUM` makes one), refused by name and left as it was.
TEST_F(HistoryDir, AnEmptySqliteFileOfAnotherApplicationIsRefused) {
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path("empty.db").c_str(), &other), SQLITE_OK);
  sqlite3_exec(other, "CREATE TABLE t (x INTEGER); DROP TABLE t", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  ASSERT_GT(fs::file_size(path("empty.db")), 0U);
  const std::string before = slurp(path("empty.db"));
  try {
    HistoryDb::open(path("empty.db"), HistoryDb::Mode::Create);
    FAIL() << "an empty SQLite file of another application was taken over";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.db: not a gdsbench history: an empty SQLite database of another "
                                         "application (no tables, application_id 0)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(slurp(path("empty.db")), before);
  // A 0-byte file is what a writer creating the history leaves for a moment: taken.
  std::ofstream(path("zero.db")).close();
  EXPECT_NO_THROW(HistoryDb::open(path("zero.db"), HistoryDb::Mode::Create));
}

TEST_F(HistoryDir, OurOwnExportedCsvFilesAreKnownByTheYaml) {
  const auto db = HistoryDb::open(path("h.db"), HistoryDb::Mode::Create);
  db->add(extract_run(doc_of(io_with(2.5, "2026-11-20T01:02:03Z"))));
  const auto ex = otava_csv(db->load());
  for (const auto& f : ex.files) std::ofstream(path(f.name)) << f.text;
  EXPECT_TRUE(exported_csv(dir_.string(), ex.files[0].name));
  EXPECT_FALSE(exported_csv(dir_.string(), "someone.csv"));
  std::ofstream(path("otava.yaml")) << "tests:\n  x:\n    file: \"" << ex.files[0].name << "\"\n";  // not ours
  EXPECT_FALSE(exported_csv(dir_.string(), ex.files[0].name));
}

TEST_F(HistoryDir, ANewerSchemaIsRefused) {
  HistoryDb::open(path("h.db"), HistoryDb::Mode::Create);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path("h.db").c_str(), &raw), SQLITE_OK);
  sqlite3_exec(raw, "UPDATE gdsb_history SET value = '2' WHERE key = 'schema_version'", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  try {
    HistoryDb::open(path("h.db"), HistoryDb::Mode::ReadOnly);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("newer schema"), std::string::npos) << e.what();
  }
}

TEST_F(HistoryDir, AMissingHistoryIsNotCreatedByReaders) {
  EXPECT_THROW(HistoryDb::open(path("none.db"), HistoryDb::Mode::ReadOnly), RuntimeError);
  EXPECT_FALSE(fs::exists(path("none.db")));
}

TEST_F(HistoryDir, OtavaCsvHasTimeAttributesAndMetrics) {
  const auto db = HistoryDb::open(path("h.db"), HistoryDb::Mode::Create);
  db->add(extract_run(doc_of(io_with(2.5, "2026-11-20T01:02:03Z"))));
  db->add(extract_run(doc_of(io_with(2.4, "2026-11-21T01:02:03Z", 4))));
  const auto ex = otava_csv(db->load());
  ASSERT_EQ(ex.files.size(), 2U);
  EXPECT_EQ(ex.files[0].name, "node1.CPUONLY_READ_1_MiB_in__mnt_nvme.csv");
  std::istringstream csv(ex.files[0].text);
  std::string header, row1, row2;
  std::getline(csv, header);
  std::getline(csv, row1);
  std::getline(csv, row2);
  EXPECT_EQ(header.rfind("time,run,document,", 0), 0U) << header;
  EXPECT_NE(header.find(",threads,"), std::string::npos) << header;
  EXPECT_NE(header.find(",iops,p99,throughput"), std::string::npos) << header;
  EXPECT_EQ(row1.rfind("2026-11-20 01:02:03 +0000,1,run.json,", 0), 0U) << row1;
  EXPECT_NE(row2.find(",4,"), std::string::npos) << row2;
  EXPECT_EQ(ex.files[1].name, "otava.yaml");
  EXPECT_NE(ex.files[1].text.find("\"p99\": {direction: -1}"), std::string::npos) << ex.files[1].text;
  EXPECT_NE(ex.files[1].text.find("time_column: time"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::report::history
