// The runner and the page cache, on real files of this machine's disk (the build tree) and
// of a tmpfs (/dev/shm): files gdsbench writes start their reads out of the cache, a
// buffered run's later passes read storage, and a file system that keeps data in memory
// whatever the advice turns the run's status into "page cache". Label: integration.
// Residency is counted here with mmap + mincore of the test's own, not the library's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <vector>

#include "gdsb/runner.hpp"
#include "test_support.hpp"

namespace gdsb {
namespace {

constexpr uint64_t kFile = 8 << 20;
constexpr long kTmpfsMagic = 0x01021994;

// Pages of [offset, offset + length) of path resident in the page cache.
uint64_t resident_pages(int fd, uint64_t offset, uint64_t length) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (map == MAP_FAILED) throw std::runtime_error("mmap failed");
  std::vector<unsigned char> vec((length + page - 1) / page);
  const int rc = ::mincore(map, length, vec.data());
  ::munmap(map, length);
  if (rc != 0) throw std::runtime_error("mincore failed");
  uint64_t n = 0;
  for (unsigned char v : vec) n += v & 1U;
  return n;
}

uint64_t resident_pages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  struct stat st {};
  ::fstat(fd, &st);
  const uint64_t n = resident_pages(fd, 0, static_cast<uint64_t>(st.st_size));
  ::close(fd);
  return n;
}

Workload job(const std::string& file, IoPattern p) {
  Workload w;
  w.file = file;
  w.file_size = kFile;
  w.io_size = 64 << 10;
  w.threads = 2;
  w.pattern = p;
  w.xfer = XferType::CpuOnly;
  return w;
}

class PageCacheRuns : public ::testing::Test {
 protected:
  test::TempDir dir;  // in the build tree: this machine's disk
  PathRegistry registry = make_default_registry();
  Runner runner{registry};
};

// The survey writes its file buffered (-O 1); the doctor and the cluster with O_DIRECT.
TEST_F(PageCacheRuns, FilesTheRunnerWroteStartTheirReadsOutOfTheCache) {
  for (const bool odirect : {false, true}) {
    const std::string f = dir.file(odirect ? "direct" : "buffered");
    Workload w = job(f, IoPattern::Write);
    w.odirect = odirect;
    ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
    EXPECT_EQ(resident_pages(f), 0U) << "written " << (odirect ? "with" : "without") << " O_DIRECT";
    for (const IoPattern p : {IoPattern::Read, IoPattern::RandRead}) {
      const RunResult r = runner.run(job(f, p));
      ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
      ASSERT_TRUE(r.page_cache_resident_at_start.has_value());
      EXPECT_EQ(*r.page_cache_resident_at_start, 0.0) << pattern_label(p);
    }
  }
}

// A file of the user's that sits in the cache is reported as it was found.
TEST_F(PageCacheRuns, ResidentShareOfAUsersCachedFileIsRecordedAsFound) {
  const std::string f = dir.file("users");
  test::write_plain_file(f, kFile);  // buffered, not synced: all of it in the cache
  ASSERT_EQ(resident_pages(f) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)), kFile);
  Workload w = job(f, IoPattern::Read);
  w.file_size = kFile / 2;  // only the range the run reads counts
  const RunResult r = runner.run(w);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
  ASSERT_TRUE(r.page_cache_resident_at_start.has_value());
  EXPECT_EQ(*r.page_cache_resident_at_start, 1.0);
  EXPECT_FALSE(runner.run(job(dir.file("new"), IoPattern::Write)).page_cache_resident_at_start.has_value())
      << "a run that only writes reads nothing";
}

// A buffered path (the stand-in for cuFile's compat batch API, -O 1 and -x 4): it reads
// with pread through the page cache and, before each read, counts the pages of the request
// that were already resident. Readahead is off (POSIX_FADV_RANDOM), so only a pass that
// finds the previous one in the cache has hits.
struct Hits {
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> resident_pages{0};
};

class BufferedWorker final : public PathWorker {
 public:
  BufferedWorker(const FileSet& files, Hits& hits, uint32_t io, uint32_t depth)
      : files_(files), hits_(hits), depth_(depth), buf_(io) {}
  uint32_t depth() const override { return depth_; }
  void submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const int fd = files_.fds.at(r.file);
      hits_.resident_pages += resident_pages(fd, r.offset, r.length);
      ++hits_.reads;
      const ssize_t n = ::pread(fd, buf_.data(), r.length, static_cast<off_t>(r.offset));
      done_.push_back({r.tag, n});
    }
  }
  std::size_t reap(std::span<IoCompletion> out, std::size_t) override {
    std::size_t n = 0;
    while (!done_.empty() && n < out.size()) {
      out[n++] = done_.back();
      done_.pop_back();
    }
    return n;
  }
  void load_slot(uint32_t, std::span<const std::byte>) override {}
  void read_slot(uint32_t, std::span<std::byte>) override {}

 private:
  const FileSet& files_;
  Hits& hits_;
  uint32_t depth_;
  std::vector<char> buf_;
  std::vector<IoCompletion> done_;
};

class BufferedRun final : public PathRun {
 public:
  BufferedRun(const FileSet& files, Hits& hits, uint32_t io, uint32_t depth)
      : files_(files), hits_(hits), io_(io), depth_(depth) {
    for (int fd : files.fds) (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
  }
  std::unique_ptr<PathWorker> make_worker(uint32_t) override {
    return std::make_unique<BufferedWorker>(files_, hits_, io_, depth_);
  }
  PathReport finish() override { return {"buffered stand-in", {}, {}, {}, {}}; }

 private:
  const FileSet& files_;
  Hits& hits_;
  uint32_t io_;
  uint32_t depth_;
};

class BufferedPath final : public TransferPath {
 public:
  explicit BufferedPath(Hits& hits) : hits_(hits) {}
  XferType type() const override { return XferType::GpuBatch; }  // compat's batch API
  Availability probe(const Workload&) const override { return Availability::yes(); }
  bool needs_odirect(const Workload&) const override { return false; }
  std::unique_ptr<PathRun> start(const Workload& w, const FileSet& files) override {
    return std::make_unique<BufferedRun>(files, hits_, static_cast<uint32_t>(w.io_size), w.iodepth);
  }

 private:
  Hits& hits_;
};

TEST_F(PageCacheRuns, LaterPassesOfABufferedRunAreNotServedFromTheCache) {
  const std::string f = dir.file("passes");
  ASSERT_EQ(runner.run(job(f, IoPattern::Write)).status, RunStatus::Ok);
  // Depth 3 over 64 blocks a thread: a pass ends with a read of it still in flight, issued
  // in the batch that starts the next pass (it reads after the pass's drop).
  for (const auto& [p, depth] : {std::pair{IoPattern::Read, 1U}, std::pair{IoPattern::RandRead, 1U},
                                 std::pair{IoPattern::Read, 3U}}) {
    Hits hits;
    PathRegistry buffered;
    buffered.add(std::make_unique<BufferedPath>(hits));
    Workload w = job(f, p);
    w.xfer = XferType::GpuBatch;
    w.iodepth = depth;
    w.runtime_s = 1.0;  // many passes over 8 MiB (at least 3 also on a loaded 2-core VM)
    w.warmup_s = 0.1;   // and a warm-up before them
    w.repeat = 2;       // and a second repetition
    const RunResult r = Runner(buffered).run(w);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
    const uint64_t passes = r.result.ops * w.io_size / kFile;
    ASSERT_GE(passes, 3U) << "the run must repeat its passes for the test to mean anything";
    EXPECT_EQ(hits.resident_pages.load(), 0U)
        << pattern_label(p) << " depth " << depth << ": " << hits.reads.load() << " reads over " << passes
        << " passes found pages of an earlier pass in the cache";
    EXPECT_EQ(resident_pages(f), 0U) << "the run leaves what it read out of the cache";
  }
}

// tmpfs keeps its files in memory whatever the advice: the figures are the memory's.
TEST_F(PageCacheRuns, OnTmpfsTheStatusSaysPageCache) {
  struct statfs fs {};
  if (::statfs("/dev/shm", &fs) != 0 || fs.f_type != kTmpfsMagic || ::access("/dev/shm", W_OK) != 0)
    GTEST_SKIP() << "no writable tmpfs at /dev/shm";
  char tmpl[] = "/dev/shm/gdsb-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string f = std::string(tmpl) + "/data";
  Workload w = job(f, IoPattern::Write);
  w.odirect = false;
  const RunResult written = runner.run(w);
  w.pattern = IoPattern::Read;
  const RunResult r = runner.run(w);
  std::filesystem::remove_all(tmpl);
  ASSERT_EQ(written.status, RunStatus::Ok) << written.reason;
  EXPECT_EQ(r.status, RunStatus::PageCache);
  EXPECT_EQ(run_status_name(r.status), "page cache");
  EXPECT_NE(r.reason.find("stayed in the page cache after posix_fadvise(DONTNEED)"), std::string::npos)
      << r.reason;
  EXPECT_GT(r.result.ops, 0U) << "measured, and shown";
  ASSERT_TRUE(r.page_cache_resident_at_start.has_value());
  EXPECT_EQ(*r.page_cache_resident_at_start, 1.0);
}

}  // namespace
}  // namespace gdsb
