#include "gdsb/report/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "doc_builders.hpp"
#include "gdsb/error.hpp"

namespace gdsb::report {
namespace {

using test::run;

const MetricDelta& metric(const RunMatch& m, Metric which) {
  for (const auto& d : m.metrics) {
    if (d.metric == which) return d;
  }
  throw std::logic_error("metric missing");
}

TEST(Compare, ImprovementWithoutRepetitions) {
  const auto c = compare_runs({run(XferType::GpuDirect, 10)}, {run(XferType::GpuDirect, 12)}, {});
  ASSERT_EQ(c.matches.size(), 1u);
  const auto& t = metric(c.matches[0], Metric::Throughput);
  EXPECT_DOUBLE_EQ(t.before, 10);
  EXPECT_DOUBLE_EQ(t.after, 12);
  EXPECT_NEAR(t.delta_percent, 20.0, 1e-9);
  EXPECT_EQ(t.change, Change::Better);
  EXPECT_FALSE(t.u_test.has_value());
  // Latency fell with the higher throughput: better as well.
  EXPECT_EQ(metric(c.matches[0], Metric::P99).change, Change::Better);
}

TEST(Compare, SignificantRegressionWithRepetitions) {
  const auto before = run(XferType::GpuDirect, 10, {10.0, 10.1, 9.9, 10.05, 9.95});
  const auto after = run(XferType::GpuDirect, 8, {8.0, 8.1, 7.9, 8.05, 7.95});
  const auto c = compare_runs({before}, {after}, {});
  const auto& t = metric(c.matches.at(0), Metric::Throughput);
  ASSERT_TRUE(t.u_test.has_value());
  EXPECT_TRUE(t.test_has_power);
  EXPECT_LT(t.u_test->p_value, 0.05);
  EXPECT_EQ(t.change, Change::Worse);
  EXPECT_GT(t.worse_percent, 19.0);
}

TEST(Compare, OverlappingRepetitionsAreNoise) {
  const auto before = run(XferType::GpuDirect, 10, {10.0, 9.0, 11.0, 9.5, 10.5});
  const auto after = run(XferType::GpuDirect, 9.6, {9.6, 10.8, 8.9, 10.2, 9.4});
  const auto c = compare_runs({before}, {after}, {});
  const auto& t = metric(c.matches.at(0), Metric::Throughput);
  ASSERT_TRUE(t.u_test.has_value());
  EXPECT_GE(t.u_test->p_value, 0.05);
  EXPECT_EQ(t.change, Change::NotSignificant);
}

TEST(Compare, TooFewRepetitionsLeaveTheDecisionToTheSign) {
  // 3 vs 3 repetitions: the smallest achievable p is 0.1, the test can never reject.
  const auto c = compare_runs({run(XferType::GpuDirect, 10, {10, 10.1, 9.9})},
                              {run(XferType::GpuDirect, 8, {8, 8.1, 7.9})}, {});
  const auto& t = metric(c.matches.at(0), Metric::Throughput);
  ASSERT_TRUE(t.u_test.has_value());
  EXPECT_FALSE(t.test_has_power);
  EXPECT_EQ(t.change, Change::Worse);
}

TEST(Compare, UnmatchedRunsAreListedOnBothSides) {
  auto b2 = run(XferType::CpuOnly, 5);
  b2.workload.io_size = 4096;
  auto a2 = run(XferType::CpuOnly, 5);
  a2.workload.threads = 16;
  const auto c =
      compare_runs({run(XferType::GpuDirect, 10), b2}, {run(XferType::GpuDirect, 10), a2}, {});
  EXPECT_EQ(c.matches.size(), 1u);
  ASSERT_EQ(c.unmatched.size(), 2u);
  EXPECT_EQ(c.unmatched[0].side, "before");
  EXPECT_EQ(c.unmatched[1].side, "after");
}

TEST(Compare, IdentityIgnoresFileNamesAndSeeds) {
  auto a = run(XferType::GpuDirect, 10);
  a.workload.file = "/other/file";
  a.workload.seed = 99;
  a.workload.runtime_s = 60;
  EXPECT_EQ(compare_runs({run(XferType::GpuDirect, 10)}, {a}, {}).matches.size(), 1u);
}

TEST(Compare, WaivedRunIsNotComparable) {
  auto a = run(XferType::GpuDirect, 0);
  a.status = RunStatus::Waived;
  a.reason = "no GPU";
  const auto c = compare_runs({run(XferType::GpuDirect, 10)}, {a}, {});
  EXPECT_TRUE(c.matches.empty());
  ASSERT_EQ(c.not_comparable.size(), 1u);
  EXPECT_NE(c.not_comparable[0].why.find("no GPU"), std::string::npos);
}

// A run on a file system that kept the data in memory (tmpfs) measured the memory: shown,
// never compared with a storage figure, on either side.
TEST(Compare, PageCacheRunIsNotComparable) {
  auto cached = run(XferType::CpuOnly, 40);
  cached.status = RunStatus::PageCache;
  cached.reason = "100% of the data read stayed in the page cache after posix_fadvise(DONTNEED)";
  for (const bool after : {true, false}) {
    const auto c = after ? compare_runs({run(XferType::CpuOnly, 1)}, {cached}, {})
                         : compare_runs({cached}, {run(XferType::CpuOnly, 1)}, {});
    EXPECT_TRUE(c.matches.empty());
    ASSERT_EQ(c.not_comparable.size(), 1u);
    EXPECT_EQ(c.not_comparable[0].side, after ? "after" : "before");
    EXPECT_NE(c.not_comparable[0].why.find("page cache: 100% of the data read stayed"), std::string::npos)
        << c.not_comparable[0].why;
  }
}

TEST(Compare, GdsVersusCpuPathInOneDocument) {
  const std::vector<RunResult> runs{run(XferType::CpuGpu, 13, {}, "posix"),
                                    run(XferType::GpuDirect, 24, {}, "gds-nvfs"),
                                    run(XferType::CpuOnly, 18)};
  CompareOptions opt;
  opt.baseline_xfer = XferType::CpuGpu;
  opt.current_xfer = XferType::GpuDirect;
  const auto c = compare_runs(runs, runs, opt);
  ASSERT_EQ(c.matches.size(), 1u);
  EXPECT_EQ(c.matches[0].before_index, 0u);
  EXPECT_EQ(c.matches[0].after_index, 1u);
  EXPECT_EQ(c.matches[0].after_path, "gds-nvfs");
  EXPECT_NEAR(metric(c.matches[0], Metric::Throughput).delta_percent, (24.0 - 13.0) / 13.0 * 100,
              1e-9);
  EXPECT_TRUE(c.unmatched.empty());  // runs of other types take no part
}

TEST(Compare, ZeroBaselineGivesNoPercentage) {
  auto b = run(XferType::GpuDirect, 10);
  b.result.cpu = {0, 0};
  const auto c = compare_runs({b}, {run(XferType::GpuDirect, 10)}, {});
  EXPECT_TRUE(std::isnan(metric(c.matches.at(0), Metric::Cpu).delta_percent));
}

TEST(Compare, DocumentsOfOtherKindsAreAUsageError) {
  const auto io = parse_document(test::io_doc({run(XferType::GpuDirect, 1)}).dump(), "a.json");
  const auto topo = parse_document(test::topo_doc("pass").dump(), "t.json");
  EXPECT_THROW(compare_documents(io, topo, {}), UsageError);
  EXPECT_THROW(compare_documents(topo, topo, {}), UsageError);
}

TEST(Compare, JsonDocumentCarriesSchemaAndTest) {
  const auto before = run(XferType::GpuDirect, 10, {10.0, 10.1, 9.9, 10.05, 9.95});
  const auto after = run(XferType::GpuDirect, 8, {8.0, 8.1, 7.9, 8.05, 7.95});
  auto c = compare_runs({before}, {after}, {});
  c.before_name = "b.json";
  c.after_name = "a.json";
  const auto j = comparison_to_json(c, {{"tool", {{"name", "gdsb-report"}}}});
  EXPECT_EQ(j.at("schema"), "gdsbench.compare/1");
  const auto& m = j.at("matches").at(0).at("metrics").at(0);
  EXPECT_EQ(m.at("metric"), "throughput");
  EXPECT_EQ(m.at("change"), "worse");
  EXPECT_TRUE(m.at("u_test").at("significant").get<bool>());
  // The compare document is itself a valid, renderable document.
  EXPECT_NO_THROW(parse_document(j.dump(), "c.json"));
}

}  // namespace
}  // namespace gdsb::report
