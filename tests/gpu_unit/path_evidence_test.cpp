// Compat detection from fixture files: nvidia-fs stats, cufile.json, cuFile's log,
// mountinfo and the udev database.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "drive.hpp"
#include "gdsb/gpu/cufile_errors.hpp"
#include "gdsb/gpu/path_evidence.hpp"

namespace gdsb::gpu {
namespace {

const std::string kFixtures = GDSB_GPU_FIXTURES;

TEST(NvfsStats, ParsesCountersAndVersion) {
  const NvfsSnapshot s = read_nvfs(kFixtures + "/nvfs-before");
  EXPECT_TRUE(s.loaded);
  EXPECT_TRUE(s.stats_readable);
  EXPECT_EQ(s.version, "2.17.5");
  EXPECT_EQ(s.reads, 100U);
  EXPECT_EQ(s.read_mib, 100U);
  EXPECT_EQ(s.writes, 7U);
  EXPECT_FALSE(read_nvfs(kFixtures + "/absent").loaded);
}

TEST(CufileJson, CommentsAreStrippedButNotInsideStrings) {
  EXPECT_EQ(strip_json_comments("{\"a\": \"x//y\" // c\n}"), "{\"a\": \"x//y\" \n}");
  EXPECT_EQ(strip_json_comments("{/* c */\"a\":1}"), "{\"a\":1}");
  const CufileConfig c = read_cufile_config(kFixtures + "/cufile.json");
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.allow_compat_mode, std::optional<bool>(true));
  EXPECT_EQ(c.use_pci_p2pdma, std::optional<bool>(false));
  EXPECT_FALSE(c.force_compat_mode.has_value());
  EXPECT_EQ(c.log_level, "ERROR");
  EXPECT_EQ(c.max_direct_io_size_kb, std::optional<long long>(16384));  // the live line, not the commented one
  EXPECT_FALSE(c.per_buffer_cache_size_kb.has_value());
  EXPECT_FALSE(read_cufile_config(kFixtures + "/none.json").found);
  EXPECT_EQ(cufile_config_path(nullptr), "/etc/cufile.json");
  EXPECT_EQ(cufile_config_path("/x/c.json"), "/x/c.json");
}

TEST(CufileJson, PrivateCopyKeepsSettingsAndPointsTheLogAtOurDirectory) {
  const CufileConfig c = read_cufile_config(kFixtures + "/cufile.json");
  const auto j = nlohmann::json::parse(private_cufile_config(c, "/tmp/priv", "INFO"));
  EXPECT_EQ(j["logging"]["dir"], "/tmp/priv");
  EXPECT_EQ(j["logging"]["level"], "ERROR");  // the user's level wins
  EXPECT_EQ(j["properties"]["allow_compat_mode"], true);
  const auto k = nlohmann::json::parse(private_cufile_config(CufileConfig{}, "/tmp/p", "INFO"));
  EXPECT_EQ(k["logging"]["level"], "INFO");
}

TEST(CufileLog, KeepsTheLinesThatExplain) {
  testing::TempDir d;
  std::ifstream in(kFixtures + "/cufile.log");
  std::ofstream(d.file("cufile_4242.log")) << in.rdbuf();
  const auto lines = relevant_log_lines(d.path());
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_NE(lines[0].find("running in compatible mode"), std::string::npos);
  EXPECT_NE(lines[1].find("udev property not found"), std::string::npos);
  EXPECT_EQ(filter_log_lines({"1 ERROR a error", "2 INFO b", "3 WARN c", "4 NOTICE d compat",
                              "\"allow_compat_mode\": true,", "\"level\": \"ERROR\""},
                             2),
            (std::vector<std::string>{"3 WARN c", "4 NOTICE d compat"}));
}

// A cuFile record split into level, source and message, wherever it stands in a line
// (a report quotes it behind "cuFile log: "); the record is real (LMCache/LMCache#795,
// tests/doctor/fixtures/cufile-log). Configuration dumps and prose are no records.
TEST(CufileLog, ParsesARecordByItsParts) {
  const std::string line =
      " 09-06-2025 07:01:23:837 [pid=276 tid=454] ERROR  cufio-udev:67 udev property not "
      "found: ID_FS_USAGE dm-0";
  for (const std::string& l : {line, "cuFile log: " + line}) {
    const auto r = parse_log_record(l);
    ASSERT_TRUE(r.has_value()) << l;
    EXPECT_EQ(r->level, "ERROR");
    EXPECT_EQ(r->source, "cufio-udev:67");
    EXPECT_EQ(r->message, "udev property not found: ID_FS_USAGE dm-0");
  }
  EXPECT_FALSE(parse_log_record("    \"allow_compat_mode\": true,").has_value());
  EXPECT_FALSE(parse_log_record("the udev record /run/udev/data/b259:0 is missing").has_value());
  EXPECT_FALSE(parse_log_record("x [pid=1 tid=1] HELLO  mod:1 text").has_value());
}

TEST(FileFacts, FindsFileSystemAndUdevRecord) {
  testing::TempDir d;
  const std::string f = d.file("x");
  std::ofstream(f) << "x";
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  const std::string dev = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  std::ofstream(d.file("mountinfo")) << "22 1 " << dev << " / / rw,relatime - xfs /dev/nvme0n1 rw\n";
  std::filesystem::create_directories(d.file("udev/data"));
  FileFacts ff = file_facts(f, d.file("mountinfo"), d.file("udev"));
  EXPECT_EQ(ff.fs_type, "xfs");
  EXPECT_TRUE(ff.udev_database_present);
  EXPECT_FALSE(ff.udev_record_present);
  EXPECT_EQ(ff.udev_record, d.file("udev") + "/data/b" + dev);
  std::ofstream(ff.udev_record) << "E:ID_FS_USAGE=filesystem\n";
  EXPECT_TRUE(file_facts(f, d.file("mountinfo"), d.file("udev")).udev_record_present);
  EXPECT_FALSE(file_facts(f, d.file("mountinfo"), d.file("none")).udev_database_present);
}

// What the hints say about O_DIRECT comes from an O_DIRECT open of the file itself. Both
// outcomes on this machine: files of the temp directory and of /dev/shm (a tmpfs, which
// accepts O_DIRECT on newer kernels), and a /proc file (procfs refuses it with EINVAL).
TEST(FileFacts, ODirectClaimsComeFromAnOpenOfTheFile) {
  testing::TempDir d;
  std::vector<std::string> paths = {d.file("data"), "/proc/self/status"};
  std::ofstream(paths[0]) << std::string(4096, 'x');
  std::string shm_dir = "/dev/shm/gdsb-odirect-XXXXXX";
  const bool have_shm = ::mkdtemp(shm_dir.data()) != nullptr;
  if (have_shm) {
    paths.push_back(shm_dir + "/f");
    std::ofstream(paths.back()) << std::string(4096, 'x');
  }
  int accepted = 0, refused = 0;
  for (const auto& p : paths) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);  // the oracle
    const int err = fd < 0 ? errno : 0;
    if (fd >= 0) ::close(fd);
    const FileFacts ff = file_facts(p);
    ASSERT_TRUE(ff.odirect_open_errno.has_value()) << p;
    EXPECT_EQ(*ff.odirect_open_errno, err) << p;
    cufile::FailureContext c;
    c.call = "cuFileHandleRegister";
    c.code = 5027;
    c.file = p;
    c.fs_type = ff.fs_type;
    c.device = ff.device;
    c.block_device = ff.block_device;
    c.odirect_open_errno = ff.odirect_open_errno;
    const std::string msg = cufile::describe_failure(c);
    EXPECT_EQ(msg.find("refuses O_DIRECT") != std::string::npos, err == EINVAL) << p << ": " << msg;
    if (ff.fs_type == "tmpfs") {
      EXPECT_EQ(ff.block_device, std::optional<bool>(false)) << p;
      EXPECT_NE(msg.find("which is no block device"), std::string::npos) << msg;
    }
    (err == 0 ? accepted : refused) += 1;
  }
  if (have_shm) {
    std::error_code ec;
    std::filesystem::remove_all(shm_dir, ec);
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

PathFacts base_facts() {
  PathFacts f;
  f.library = "libcufile.so.0";
  f.config = read_cufile_config(kFixtures + "/cufile.json");
  f.handles_registered = true;
  f.reads = 64;
  return f;
}

TEST(DecidePath, NvidiaFsCountersMovingMeansGdsNvfs) {
  PathFacts f = base_facts();
  f.before = read_nvfs(kFixtures + "/nvfs-before");
  f.after = read_nvfs(kFixtures + "/nvfs-after");
  const PathReport r = decide_path(f);
  EXPECT_EQ(r.path_used, "gds-nvfs");
  EXPECT_TRUE(r.warnings.empty());
  bool counted = false;
  for (const auto& e : r.evidence) counted |= e.find("reads +64") != std::string::npos;
  EXPECT_TRUE(counted);
}

TEST(DecidePath, LoadedButStillCountersMeansCompat) {
  PathFacts f = base_facts();
  f.before = f.after = read_nvfs(kFixtures + "/nvfs-before");
  const PathReport r = decide_path(f);
  EXPECT_EQ(r.path_used, "compat");
  ASSERT_EQ(r.warnings.size(), 1U);
  EXPECT_NE(r.warnings[0].find("counters did not move"), std::string::npos);
}

TEST(DecidePath, NoNvidiaFsMeansCompatUnlessP2pdma) {
  PathFacts f = base_facts();
  EXPECT_EQ(decide_path(f).path_used, "compat");
  EXPECT_FALSE(compat_certain_before_run(f) == std::nullopt);
  f.config.use_pci_p2pdma = true;
  f.props.known = true;
  f.props.p2p_supported = true;
  EXPECT_EQ(decide_path(f).path_used, "gds-p2pdma");
  EXPECT_EQ(compat_certain_before_run(f), std::nullopt);
  f.log_lines = {"NOTICE cufio-drv:720 running in compatible mode"};
  EXPECT_EQ(decide_path(f).path_used, "compat");
}

TEST(DecidePath, ForcedCompatWinsOverEverything) {
  PathFacts f = base_facts();
  f.before = read_nvfs(kFixtures + "/nvfs-before");
  f.after = read_nvfs(kFixtures + "/nvfs-after");
  f.config.force_compat_mode = true;
  const PathReport r = decide_path(f);
  EXPECT_EQ(r.path_used, "compat");
  EXPECT_NE(r.warnings[0].find("force_compat_mode"), std::string::npos);
  PathFacts g = base_facts();
  g.env_force_compat = parse_bool_env("true");
  EXPECT_NE(compat_certain_before_run(g)->find("CUFILE_FORCE_COMPAT_MODE"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::gpu
