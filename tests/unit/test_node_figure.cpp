// The node's figure (gdsb/node_figure.hpp) on runs whose numbers are worked by hand.
#include <gtest/gtest.h>

#include "gdsb/node_figure.hpp"

namespace gdsb {
namespace {

RunResult run(int gpu, uint64_t bytes, double t0, double seconds, RunStatus status = RunStatus::Ok) {
  RunResult r;
  r.workload.gpu = gpu;
  r.status = status;
  if (status != RunStatus::Ok) r.reason = "not available: no NVIDIA driver";
  r.result.bytes = bytes;
  r.result.seconds = seconds;
  r.result.t0_unix_s = t0;
  r.result.end_unix_s = t0 + seconds;
  r.path.path_used = "posix";
  return r;
}

// Four GPUs: three read 6 GB in 2 s (3 GB/s), GPU 2 reads 2 GB in 2 s (1 GB/s), starting
// 0.1 s apart. Aggregate: 20 GB over 1000.0 .. 1002.3 = 2.3 s -> 8.6957 GB/s; the per-GPU
// rates add up to 10 GB/s. GPU 2 is at 1/3 of its peers' median 3 GB/s: odd.
TEST(NodeFigure, PerGpuAggregateAndTheOddGpu) {
  const std::vector<RunResult> runs = {run(3, 6'000'000'000, 1000.3, 2.0), run(0, 6'000'000'000, 1000.0, 2.0),
                                       run(1, 6'000'000'000, 1000.1, 2.0), run(2, 2'000'000'000, 1000.2, 2.0)};
  const NodeFigure f = node_figure(runs);
  ASSERT_EQ(f.per_gpu.size(), 4U);
  EXPECT_EQ(f.per_gpu[0].gpu, 0);  // in GPU order
  EXPECT_EQ(f.per_gpu[3].gpu, 3);
  EXPECT_DOUBLE_EQ(f.per_gpu[0].gb_s, 3.0);
  EXPECT_DOUBLE_EQ(f.per_gpu[2].gb_s, 1.0);
  EXPECT_EQ(f.bytes, 20'000'000'000U);
  ASSERT_TRUE(f.window_s && f.gb_s && f.sum_gb_s);
  EXPECT_NEAR(*f.window_s, 2.3, 1e-9);
  EXPECT_NEAR(*f.gb_s, 20.0 / 2.3, 1e-9);
  EXPECT_DOUBLE_EQ(*f.sum_gb_s, 10.0);
  ASSERT_EQ(f.odd.size(), 1U);
  EXPECT_EQ(f.odd[0].gpu, 2);
  EXPECT_DOUBLE_EQ(f.odd[0].peers_median_gb_s, 3.0);
  EXPECT_NEAR(f.odd[0].share, 1.0 / 3.0, 1e-12);
  EXPECT_TRUE(f.missing.empty());
}

// A GPU at exactly 75% of its peers is not odd; just below is.
TEST(NodeFigure, TheOddBarIsSeventyFivePercent) {
  EXPECT_TRUE(node_figure(std::vector<RunResult>{run(0, 4'000'000'000, 0, 1), run(1, 3'000'000'000, 0, 1)}).odd.empty());
  const NodeFigure f = node_figure(std::vector<RunResult>{run(0, 4'000'000'000, 0, 1), run(1, 2'999'000'000, 0, 1)});
  ASSERT_EQ(f.odd.size(), 1U);
  EXPECT_EQ(f.odd[0].gpu, 1);
}

// A run that did not measure is named, never counted; with none measured there is no figure.
TEST(NodeFigure, MissingRunsAreNamedNotCounted) {
  NodeFigure f = node_figure(std::vector<RunResult>{run(0, 1'000'000'000, 0, 1), run(1, 0, 0, 0, RunStatus::Waived)});
  EXPECT_EQ(f.per_gpu.size(), 1U);
  ASSERT_EQ(f.missing.size(), 1U);
  EXPECT_EQ(f.missing[0].gpu, 1);
  EXPECT_EQ(f.missing[0].reason, "not available: no NVIDIA driver");
  EXPECT_DOUBLE_EQ(*f.gb_s, 1.0);
  EXPECT_TRUE(f.odd.empty());
  f = node_figure(std::vector<RunResult>{run(0, 0, 0, 0, RunStatus::Failed)});
  EXPECT_FALSE(f.gb_s.has_value());
  EXPECT_FALSE(f.window_s.has_value());
}

}  // namespace
}  // namespace gdsb
