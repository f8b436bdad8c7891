// Why a checkpoint load trailed the naive load (gdsb/naive_comparison.hpp), on runs whose
// phases are worked by hand. The first case is the shape measured on 4 x H100 with one
// virtual disk (2026-11-27): 16 MiB reads of 17.0 ms each, copies of 0.38 ms.
#include <gtest/gtest.h>

#include <cmath>

#include "gdsb/naive_comparison.hpp"

namespace gdsb {
namespace {

RunResult bounce(double storage_us, uint64_t storage_n, double copy_us, uint64_t copy_n,
                 const char* path = "posix") {
  RunResult r;
  r.status = RunStatus::Ok;
  r.path.path_used = path;
  IoPhases p;
  p.storage.count = storage_n;
  p.storage.us.mean_us = storage_us;
  p.copy.count = copy_n;
  p.copy.us.mean_us = copy_us;
  r.result.phases = p;
  return r;
}

// 128 reads of 17,028 us and 128 copies of 380.7 us: storage 2,179,584 us of 2,228,314 us
// = 97.8%; copies 2.2%.
TEST(NaiveComparison, DirectReadsSetTheTimeNotTheGpuPath) {
  const std::vector<RunResult> runs = {bounce(17028.0, 128, 380.7, 128)};
  const auto s = slower_than_naive(runs, 0.0, 0.86);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cause, "storage_direct_reads");
  ASSERT_TRUE(s->storage_share.has_value());
  EXPECT_NEAR(*s->storage_share, 2179584.0 / (2179584.0 + 48729.6), 1e-9);
  EXPECT_NE(s->why.find("98% of each I/O's time reading the storage (O_DIRECT) and 2% copying"),
            std::string::npos) << s->why;
  EXPECT_DOUBLE_EQ(s->naive_over_load, 0.86);
}

// Summed over GPUs, weighted by count: GPU 0 storage 100 x 1000 us, copy 100 x 500 us;
// GPU 1 storage 100 x 1000 us, copy 100 x 10 us. Storage 200,000 of 251,000 us = 79.7%:
// the copies (20.3%) are named.
TEST(NaiveComparison, CopiesAreNamedWhenTheyTakeAFifth) {
  const std::vector<RunResult> runs = {bounce(1000, 100, 500, 100), bounce(1000, 100, 10, 100)};
  const auto s = slower_than_naive(runs, std::nullopt, 0.9);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cause, "copies");
  EXPECT_NEAR(*s->storage_share, 200000.0 / 251000.0, 1e-12);
  EXPECT_NE(s->why.find("20% of each I/O's time"), std::string::npos) << s->why;
}

// Issue 43: a -x 3 load (copies already overlapped with reads) whose copies still take a
// fifth is pointed at threads and staging slots, never at -x 3 itself; -x 2 still is.
TEST(NaiveComparison, CopyAdviceNeverNamesTheModeThatRan) {
  std::vector<RunResult> runs = {bounce(1000, 100, 500, 100)};
  runs[0].workload.xfer = XferType::CpuAsyncGpu;
  const auto s = slower_than_naive(runs, std::nullopt, 0.9);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cause, "copies");
  EXPECT_EQ(s->why.find("-x 3"), std::string::npos) << s->why;
  EXPECT_NE(s->why.find("--iodepth"), std::string::npos) << s->why;
  runs[0].workload.xfer = XferType::CpuGpu;
  const auto x2 = slower_than_naive(runs, std::nullopt, 0.9);
  ASSERT_TRUE(x2.has_value());
  EXPECT_NE(x2->why.find("-x 3 (copies overlapped with reads)"), std::string::npos) << x2->why;
}

TEST(NaiveComparison, ACachedNaiveLoadIsSaidFirst) {
  const std::vector<RunResult> runs = {bounce(1000, 10, 1, 10)};
  const auto s = slower_than_naive(runs, 0.75, 0.5);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cause, "page_cache");
  EXPECT_FALSE(s->storage_share.has_value());
  EXPECT_NE(s->why.find("75% of the shards in the page cache"), std::string::npos) << s->why;
}

TEST(NaiveComparison, NoPhasesIsUnknownWithThePathNamed) {
  RunResult r;
  r.status = RunStatus::Ok;
  r.path.path_used = "compat";
  RunResult failed = bounce(1000, 10, 1, 10);
  failed.status = RunStatus::Failed;  // skipped: its phases do not count
  const std::vector<RunResult> runs = {r, failed};
  const auto s = slower_than_naive(runs, 0.0, 0.7);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cause, "unknown");
  EXPECT_NE(s->why.find("(compat)"), std::string::npos) << s->why;
}

TEST(NaiveComparison, BufferedLoadReadsAreNotCalledDirect) {
  const std::vector<RunResult> runs = {bounce(1000, 10, 1, 10, "page-cache")};
  const auto s = slower_than_naive(runs, 0.0, 0.8);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cause, "storage_reads");
  EXPECT_EQ(s->why.find("O_DIRECT"), std::string::npos) << s->why;
}

TEST(NaiveComparison, NothingToExplainWhenTheLoadWinsOrTies) {
  const std::vector<RunResult> runs = {bounce(1000, 10, 1, 10)};
  EXPECT_FALSE(slower_than_naive(runs, 0.0, 1.0).has_value());
  EXPECT_FALSE(slower_than_naive(runs, 0.0, 2.1).has_value());
  EXPECT_FALSE(slower_than_naive(runs, 0.0, std::nan("")).has_value());
}

}  // namespace
}  // namespace gdsb
