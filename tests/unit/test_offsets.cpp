#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "gdsb/error.hpp"
#include "gdsb/offsets.hpp"

namespace gdsb {
namespace {

std::vector<uint64_t> one_pass(OffsetGenerator& g) {
  std::vector<uint64_t> out;
  uint64_t off = 0;
  while (g.next(off)) out.push_back(off);
  return out;
}

TEST(BlockPermutation, IsABijectionForManySizes) {
  for (uint64_t n : {1ULL, 2ULL, 3ULL, 7ULL, 64ULL, 1000ULL, 4097ULL, 65536ULL, 100003ULL}) {
    BlockPermutation p(n, n * 31 + 5);
    std::vector<bool> seen(n, false);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = p(i);
      ASSERT_LT(v, n);
      ASSERT_FALSE(seen[v]) << "n=" << n << " repeats " << v;
      seen[v] = true;
    }
  }
}

TEST(BlockPermutation, HugeDomainNeedsNoMemory) {
  const uint64_t n = 1ULL << 40;  // 4 PiB of 4 KiB blocks
  BlockPermutation p(n, 1);
  std::set<uint64_t> sample;
  for (uint64_t i = 0; i < 10000; ++i) {
    const uint64_t v = p(i);
    ASSERT_LT(v, n);
    sample.insert(v);
  }
  EXPECT_EQ(sample.size(), 10000U);
}

OffsetPlan plan(uint64_t begin, uint64_t end, uint64_t io, bool random, uint64_t seed = 0) {
  OffsetPlan p;
  p.region = {0, begin, end};
  p.io_size = io;
  p.random = random;
  p.seed = seed;
  return p;
}

TEST(Offsets, SequentialCoversRegionInOrder) {
  OffsetGenerator g(plan(8192, 8192 + 10 * 4096, 4096, false));
  const auto v = one_pass(g);
  ASSERT_EQ(v.size(), 10U);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], 8192 + i * 4096);
}

TEST(Offsets, RandomCoversEveryBlockOnceAndIsShuffled) {
  const uint64_t blocks = 5000;
  OffsetGenerator g(plan(1 << 20, (1 << 20) + blocks * 4096, 4096, true, 99));
  const auto v = one_pass(g);
  ASSERT_EQ(v.size(), blocks);
  std::set<uint64_t> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), blocks);
  EXPECT_EQ(*s.begin(), 1U << 20);
  EXPECT_EQ(*s.rbegin(), (1U << 20) + (blocks - 1) * 4096);
  std::size_t in_order = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] == v[i - 1] + 4096) ++in_order;
  EXPECT_LT(in_order, blocks / 20) << "looks sequential";
}

TEST(Offsets, ReproducibleForSeedAndDifferentAcrossSeedsPassesThreads) {
  OffsetGenerator a(plan(0, 1 << 24, 4096, true, 1));
  OffsetGenerator b(plan(0, 1 << 24, 4096, true, 1));
  OffsetGenerator c(plan(0, 1 << 24, 4096, true, 2));
  auto pa = one_pass(a);
  EXPECT_EQ(pa, one_pass(b));
  EXPECT_NE(pa, one_pass(c));
  a.start_pass(1);
  auto pa1 = one_pass(a);
  EXPECT_NE(pa, pa1);
  EXPECT_EQ(std::set<uint64_t>(pa.begin(), pa.end()), std::set<uint64_t>(pa1.begin(), pa1.end()));
  a.start_pass(0);
  EXPECT_EQ(pa, one_pass(a));
  auto p2 = plan(0, 1 << 24, 4096, true, 1);
  p2.stream = 1;
  OffsetGenerator d(p2);
  EXPECT_NE(pa, one_pass(d));
}

TEST(Offsets, RandomRespectsAlignmentAndBounds) {
  auto p = plan(4096, 4096 + (1 << 20), 6144, true, 3);  // io not a multiple of -a
  p.alignment = 4096;
  OffsetGenerator g(p);
  EXPECT_EQ(g.step(), 8192U);
  const auto v = one_pass(g);
  ASSERT_EQ(v.size(), g.blocks_per_pass());
  EXPECT_EQ(v.size(), ((1U << 20) - 6144) / 8192 + 1);
  std::set<uint64_t> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), v.size());
  for (uint64_t off : v) {
    EXPECT_EQ((off - 4096) % 4096, 0U);
    EXPECT_GE(off, 4096U);
    EXPECT_LE(off + 6144, 4096U + (1 << 20));
  }
}

TEST(Offsets, UnalignedRandomLeavesTheGridButStaysInBounds) {
  auto p = plan(0, 1 << 20, 4096, true, 11);
  p.unaligned = true;
  OffsetGenerator g(p);
  const auto v = one_pass(g);
  ASSERT_FALSE(v.empty());
  std::set<uint64_t> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), v.size());
  for (uint64_t off : v) {
    EXPECT_NE(off % 4096, 0U);
    EXPECT_LE(off + 4096, 1U << 20);
  }
}

TEST(SplitRegions, SharedFileSplitsEvenlyAndDirectoryGivesEachThreadAFile) {
  Workload w;
  w.file = "f";
  w.threads = 3;
  w.io_size = 4096;
  w.start_offset = 8192;
  auto r = split_regions(w, 10 * 4096);
  ASSERT_EQ(r.size(), 3U);
  EXPECT_EQ(r[0].begin, 8192U);
  EXPECT_EQ(r[0].end, 8192U + 3 * 4096);
  EXPECT_EQ(r[2].end, 8192U + 9 * 4096);
  w.file.clear();
  w.directory.assign("dir");
  r = split_regions(w, 10 * 4096);
  ASSERT_EQ(r.size(), 3U);
  EXPECT_EQ(r[2].file, 2U);
  EXPECT_EQ(r[2].begin, 8192U);
  EXPECT_EQ(r[2].end, 8192U + 10 * 4096);
  w.directory.clear();
  w.file.assign("file");
  EXPECT_THROW(split_regions(w, 2 * 4096), UsageError);
}

}  // namespace
}  // namespace gdsb
