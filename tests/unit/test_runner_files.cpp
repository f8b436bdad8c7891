// The runner with the real CPU paths on temporary files: both engines, every pattern,
// verification, and the safety refusals. Label: integration.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>

#include "gdsb/error.hpp"
#include "gdsb/host_io.hpp"
#include "gdsb/runner.hpp"
#include "test_support.hpp"

namespace gdsb {
namespace {

Workload make(const std::string& file, IoPattern p, SubmitEngine e, uint32_t depth = 1) {
  Workload w;
  w.file = file;
  w.threads = 2;
  w.file_size = 8 << 20;
  w.io_size = 64 << 10;
  w.pattern = p;
  w.engine = e;
  w.iodepth = depth;
  w.verify = true;
  w.seed = 1234;
  return w;
}

class RunnerFiles : public ::testing::TestWithParam<SubmitEngine> {
 protected:
  void SetUp() override {
    if (GetParam() == SubmitEngine::IoUring) {
      const Availability a = probe_io_uring(8);
      if (!a.ok) GTEST_SKIP() << a.reason;
    }
  }
  uint32_t depth() const { return GetParam() == SubmitEngine::IoUring ? 8 : 1; }
  test::TempDir dir;
  PathRegistry registry = make_default_registry();
};

TEST_P(RunnerFiles, WriteReadRandWriteRandReadWithVerify) {
  const Runner runner(registry);
  const std::string f = dir.file("data");
  for (IoPattern p :
       {IoPattern::Write, IoPattern::Read, IoPattern::RandWrite, IoPattern::RandRead}) {
    const RunResult r = runner.run(make(f, p, GetParam(), depth()));
    ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
    EXPECT_EQ(r.result.ops, 128U) << pattern_label(p);
    EXPECT_EQ(r.result.bytes, 8U << 20);
    EXPECT_EQ(pattern_is_write(p) ? r.result.write_ops : r.result.read_ops, 128U);
    EXPECT_GT(r.result.throughput_gib_s, 0.0);
    EXPECT_GT(r.result.latency.p50_us, 0.0);
    EXPECT_EQ(r.path.path_used, "posix");
    EXPECT_NE(r.path.evidence.at(0).find("O_DIRECT"), std::string::npos);
    EXPECT_NE(r.path.evidence.at(1).find(engine_name(GetParam())), std::string::npos)
        << r.path.evidence.at(1);
  }
  char mark[4];
  EXPECT_GT(getxattr(f.c_str(), "user.gdsbench.created", mark, sizeof mark), 0);
}

TEST_P(RunnerFiles, PageCachePathSaysWhatItIs) {
  const Runner runner(registry);
  Workload w = make(dir.file("cached"), IoPattern::Write, GetParam(), depth());
  w.xfer = XferType::CpuCachedGpu;
  w.io_size = 6000;  // buffered: no alignment needed
  w.file_size = 6000 * 100;
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  w.pattern = IoPattern::RandRead;
  w.unaligned_random = true;
  const RunResult r = runner.run(w);
  EXPECT_EQ(r.path.path_used, "page-cache (host only)");
  ASSERT_FALSE(r.path.warnings.empty());
  EXPECT_NE(r.path.warnings[0].find("copy to the GPU was not done ("), std::string::npos)
      << r.path.warnings[0];
  EXPECT_GT(r.result.ops, 0U);
}

TEST_P(RunnerFiles, VerifyFindsCorruption) {
  const Runner runner(registry);
  const std::string f = dir.file("data");
  ASSERT_EQ(runner.run(make(f, IoPattern::Write, GetParam(), depth())).status, RunStatus::Ok);
  const int fd = ::open(f.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "!", 1, 3 * 65536 + 17), 1);
  ::close(fd);
  try {
    runner.run(make(f, IoPattern::RandRead, GetParam(), depth()));
    FAIL() << "corruption not found";
  } catch (const VerificationError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(f), std::string::npos) << msg;
    EXPECT_NE(msg.find("offset " + std::to_string(3 * 65536 + 17)), std::string::npos) << msg;
    EXPECT_NE(msg.find("found 21"), std::string::npos) << msg;  // '!' is 0x21
  }
}

TEST_P(RunnerFiles, DirectoryModeAndTimedRun) {
  const Runner runner(registry);
  Workload w = make("", IoPattern::Write, GetParam(), depth());
  w.file.clear();
  w.directory = dir.path().string();
  w.file_size = 1 << 20;
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  EXPECT_TRUE(std::filesystem::exists(dir.file("gdsio.1")));
  w.pattern = IoPattern::RandRead;
  w.runtime_s = 0.5;
  const RunResult r = runner.run(w);
  EXPECT_GE(r.result.seconds, 0.5);
  EXPECT_GT(r.result.ops, 32U);
  EXPECT_FALSE(r.result.timeseries.empty());
}

INSTANTIATE_TEST_SUITE_P(Engines, RunnerFiles,
                         ::testing::Values(SubmitEngine::Psync, SubmitEngine::IoUring),
                         [](const auto& param_info) {
                           return std::string(engine_name(param_info.param));
                         });

class RunnerSafety : public ::testing::Test {
 protected:
  test::TempDir dir;
  PathRegistry registry = make_default_registry();
  Runner runner{registry};
};

TEST_F(RunnerSafety, RefusesToOverwriteAFileItDidNotCreate) {
  const std::string f = dir.file("users-file");
  test::write_plain_file(f, 1 << 20, 'u');
  Workload w = make(f, IoPattern::Write, SubmitEngine::Psync);
  w.file_size = 1 << 20;
  try {
    runner.run(w);
    FAIL() << "overwrote";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("refusing to overwrite " + f), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--allow-overwrite"), std::string::npos) << e.what();
  }
  const int fd = ::open(f.c_str(), O_RDONLY);
  char c = 0;
  ASSERT_EQ(::pread(fd, &c, 1, 0), 1);
  ::close(fd);
  EXPECT_EQ(c, 'u');
  w.allow_overwrite = true;
  EXPECT_EQ(runner.run(w).status, RunStatus::Ok);
}

// Where the file system keeps no user xattrs (NFSv3, VAST, default BeeGFS) the mark is
// missing: the files this job created (RunOptions::job_files, named any way) are still its
// own, and nothing else is (issue 34).
TEST_F(RunnerSafety, TheJobsOwnFilesAreWrittenWithoutTheMark) {
  const std::string f = dir.file("filled");
  Workload w = make(f, IoPattern::Write, SubmitEngine::Psync);
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  ASSERT_EQ(::removexattr(f.c_str(), "user.gdsbench.created"), 0);  // as NFSv3 keeps it
  EXPECT_THROW(runner.run(w), UsageError);
  RunOptions mine;
  mine.job_files = {f};
  EXPECT_EQ(runner.run(w, mine).status, RunStatus::Ok);
  const std::string link = dir.file("link");
  ASSERT_EQ(::symlink(f.c_str(), link.c_str()), 0);
  mine.job_files = {link};  // the same file by another name
  EXPECT_EQ(runner.run(w, mine).status, RunStatus::Ok);
  const std::string theirs = dir.file("users-file");
  test::write_plain_file(theirs, 8 << 20, 'u');
  Workload other = make(theirs, IoPattern::Write, SubmitEngine::Psync);
  EXPECT_THROW(runner.run(other, mine), UsageError);  // another file stays theirs
}

TEST_F(RunnerSafety, NeverWritesToABlockDevice) {
  std::string dev;
  for (const auto& e : std::filesystem::directory_iterator("/dev")) {
    struct stat st {};
    if (::stat(e.path().c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
      dev = e.path().string();
      break;
    }
  }
  if (dev.empty()) GTEST_SKIP() << "no block device in /dev";
  Workload w = make(dev, IoPattern::Write, SubmitEngine::Psync);
  w.allow_overwrite = true;  // even then
  try {
    runner.run(w);
    FAIL() << "accepted a write to " << dev;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("block device " + dev), std::string::npos) << e.what();
  }
}

TEST_F(RunnerSafety, ReadOfMissingOrShortFileNamesPathAndSize) {
  Workload w = make(dir.file("missing"), IoPattern::Read, SubmitEngine::Psync);
  try {
    runner.run(w);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("missing")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  const std::string f = dir.file("short");
  test::write_plain_file(f, 1 << 20);
  w.file = f;
  try {
    runner.run(w);
    FAIL();
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(f), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(1 << 20) + " bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(8 << 20)), std::string::npos) << msg;
  }
}

TEST_F(RunnerSafety, UnalignedDirectIoIsAUsageErrorNamingTheOption) {
  Workload w = make(dir.file("new"), IoPattern::Write, SubmitEngine::Psync);
  w.io_size = 1000;
  try {
    runner.run(w);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("-i 1000", 0), 0U) << e.what();
  }
  w.io_size = 4096;
  w.start_offset = 512;
  EXPECT_THROW(runner.run(w), UsageError);
  w.start_offset = 0;
  w.pattern = IoPattern::RandWrite;
  w.unaligned_random = true;
  EXPECT_THROW(runner.run(w), UsageError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("new")));  // nothing created
}

TEST_F(RunnerSafety, WriteErrorNamesPathAndSystemError) {
  // A file size limit makes pwrite fail (EFBIG) like a full disk would (ENOSPC).
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &old);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit small = saved;
  small.rlim_cur = 1 << 20;
  setrlimit(RLIMIT_FSIZE, &small);
  Workload w = make(dir.file("big"), IoPattern::Write, SubmitEngine::Psync);
  w.threads = 1;
  std::string msg;
  try {
    runner.run(w);
  } catch (const RuntimeError& e) {
    msg = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  sigaction(SIGXFSZ, &old, nullptr);
  EXPECT_NE(msg.find(dir.file("big")), std::string::npos) << msg;
  EXPECT_NE(msg.find("File too large"), std::string::npos) << msg;
}

}  // namespace
}  // namespace gdsb

namespace gdsb {
namespace {

TEST_F(RunnerSafety, MixedReadWriteAndFillModes) {
  const std::string f = dir.file("mixed");
  Workload w = make(f, IoPattern::Write, SubmitEngine::Psync);
  w.verify = false;
  w.fill_random = true;
  w.refill_every_write = true;
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  w.pattern = IoPattern::RandRead;
  w.mixed_read_percent = 50;
  w.fill_random = false;
  const RunResult r = runner.run(w);
  EXPECT_EQ(r.result.ops, 128U);
  EXPECT_EQ(r.result.read_ops + r.result.write_ops, 128U);
  EXPECT_GT(r.result.read_ops, 20U);
  EXPECT_GT(r.result.write_ops, 20U);
}

TEST_F(RunnerSafety, NumaNodeBindsOrIsAUsageError) {
  const std::string f = dir.file("numa");
  Workload w = make(f, IoPattern::Write, SubmitEngine::Psync);
  w.numa_node = 0;
  const RunResult r = runner.run(w);
  EXPECT_EQ(r.status, RunStatus::Ok);
  bool mentions = false;
  for (const auto& e : r.path.evidence) mentions |= e.find("NUMA node 0") != std::string::npos;
  EXPECT_TRUE(mentions);
  w.numa_node = 999;
  try {
    runner.run(w);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-n 999"), std::string::npos) << e.what();
  }
}

TEST_F(RunnerSafety, WarmupIsNotMeasuredAndRepeatKeepsEveryRun) {
  const std::string f = dir.file("warm");
  Workload w = make(f, IoPattern::Write, SubmitEngine::Psync);
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  w.pattern = IoPattern::Read;
  w.warmup_s = 0.2;
  w.repeat = 3;
  const RunResult r = runner.run(w);
  ASSERT_EQ(r.repetitions.size(), 3U);
  for (const auto& m : r.repetitions) EXPECT_EQ(m.ops, 128U);  // one pass each, warm-up excluded
  EXPECT_EQ(r.result.ops, 128U);
}

}  // namespace
}  // namespace gdsb
