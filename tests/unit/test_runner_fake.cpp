// The runner against a fake transfer path: threads, depth, tags, errors, waivers, stop,
// repetitions, progress. Files are real but empty-ish (temp dir); the fake moves no bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "fake_path.hpp"
#include "gdsb/error.hpp"
#include "gdsb/runner.hpp"
#include "test_support.hpp"

namespace gdsb {
namespace {

using namespace std::chrono_literals;

Workload read_workload(const std::string& file, uint32_t threads, uint64_t size = 1 << 20) {
  Workload w;
  w.file = file;
  w.threads = threads;
  w.file_size = size;
  w.io_size = 4096;
  w.pattern = IoPattern::RandRead;
  w.odirect = false;
  return w;
}

std::string make_file(const test::TempDir& d, uint64_t bytes) {
  const std::string f = d.file("data");
  test::write_plain_file(f, 0);
  std::filesystem::resize_file(f, bytes);
  return f;
}

class RunnerFake : public ::testing::Test {
 protected:
  test::TempDir dir;
  test::FakeRecord rec;
  PathRegistry registry;
  std::string file;

  void SetUp() override { file = make_file(dir, 1 << 20); }
  Runner runner(test::FakeConfig c) {
    registry.add(std::make_unique<test::FakePath>(XferType::CpuOnly, std::move(c), rec));
    return Runner(registry);
  }
};

TEST_F(RunnerFake, OnePassCoversEveryBlockOnceWithFullDepth) {
  test::FakeConfig c;
  c.depth = 8;
  const Runner r = runner(c);
  const RunResult res = r.run(read_workload(file, 2));
  ASSERT_EQ(res.status, RunStatus::Ok) << res.reason;
  EXPECT_EQ(res.result.ops, 256U);
  EXPECT_EQ(res.result.read_ops, 256U);
  EXPECT_EQ(res.result.bytes, 256U * 4096);
  EXPECT_EQ(rec.max_in_flight.load(), 8U);
  std::set<uint64_t> offsets;
  for (const auto& [f, off] : rec.ops) offsets.insert(off);
  EXPECT_EQ(offsets.size(), 256U);
  EXPECT_EQ(*offsets.rbegin(), (1U << 20) - 4096);
  uint64_t hist = 0;
  for (const auto& b : res.result.histogram) hist += b.count;
  EXPECT_EQ(hist, 256U);
  EXPECT_EQ(res.path.path_used, "fake");
  EXPECT_EQ(rec.finishes.load(), 1U);
  EXPECT_FALSE(res.interrupted);
  EXPECT_FALSE(res.started_at.empty());
}

TEST_F(RunnerFake, WrongTagIsAnError) {
  test::FakeConfig c;
  c.depth = 4;
  c.corrupt_tag = true;
  const Runner r = runner(c);
  try {
    r.run(read_workload(file, 1));
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("not in flight"), std::string::npos) << e.what();
  }
}

TEST_F(RunnerFake, IoErrorNamesPathOffsetAndErrno) {
  test::FakeConfig c;
  c.fail_at_op = 3;
  const Runner r = runner(c);
  try {
    r.run(read_workload(file, 1));
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file), std::string::npos) << msg;
    EXPECT_NE(msg.find("Input/output error"), std::string::npos) << msg;
    EXPECT_NE(msg.find("offset"), std::string::npos) << msg;
  }
}

TEST_F(RunnerFake, ShortTransferIsAnError) {
  test::FakeConfig c;
  c.fail_at_op = 0;
  c.fail_result = 100;
  const Runner r = runner(c);
  EXPECT_THROW(r.run(read_workload(file, 1)), RuntimeError);
}

TEST_F(RunnerFake, FailedProbeIsWaivedAndTouchesNoFile) {
  test::FakeConfig c;
  c.availability = Availability::no("the fake is switched off");
  const Runner r = runner(c);
  Workload w = read_workload(dir.file("never"), 1);
  w.pattern = IoPattern::Write;
  const RunResult res = r.run(w);
  EXPECT_EQ(res.status, RunStatus::Waived);
  EXPECT_EQ(res.reason, "the fake is switched off");
  EXPECT_FALSE(std::filesystem::exists(dir.file("never")));
  EXPECT_EQ(r.probe(w).reason, "the fake is switched off");
}

TEST_F(RunnerFake, PathNotInRegistryIsWaived) {
  const Runner r = runner({});
  Workload w = read_workload(file, 1);
  w.xfer = XferType::GpuDirect;
  const RunResult res = r.run(w);
  EXPECT_EQ(res.status, RunStatus::Waived);
  EXPECT_NE(res.reason.find("GPUD"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("not part of this build"), std::string::npos) << res.reason;
}

TEST_F(RunnerFake, StopFlagEndsATimedRunWithPartialResults) {
  test::FakeConfig c;
  c.delay_per_op = 500us;
  const Runner r = runner(c);
  Workload w = read_workload(file, 2);
  w.runtime_s = 30;
  std::atomic<bool> stop{false};
  RunOptions o;
  o.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult res = r.run(w, o);
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(res.interrupted);
  EXPECT_EQ(res.status, RunStatus::Ok);
  EXPECT_GT(res.result.ops, 0U);
  EXPECT_LT(res.result.seconds, 10.0);
}

TEST_F(RunnerFake, TimedRunLoopsPassesAndFillsTimeSeries) {
  test::FakeConfig c;
  c.delay_per_op = 100us;
  const Runner r = runner(c);
  Workload w = read_workload(file, 1, 64 * 4096);
  w.runtime_s = 1.2;
  const RunResult res = r.run(w);
  EXPECT_GT(res.result.ops, 64U);  // more than one pass
  EXPECT_GE(res.result.seconds, 1.2);
  ASSERT_EQ(res.result.timeseries.size(), 2U);
  EXPECT_DOUBLE_EQ(res.result.timeseries[0].t_end_s, 1.0);
  uint64_t sum = 0;
  for (const auto& p : res.result.timeseries) sum += p.ops;
  EXPECT_EQ(sum, res.result.ops);
}

TEST_F(RunnerFake, RepeatReportsEveryRepetitionAndTheMedian) {
  test::FakeConfig c;
  // slow, fast, middle: 16 ops take ~160, ~0 and ~48 ms, so only a stall of more than
  // ~48 ms on a loaded machine could swap fast and middle (it swapped at 50/500 us x 64).
  c.delay_per_generation = {10000us, 0us, 3000us};
  const Runner r = runner(c);
  Workload w = read_workload(file, 1, 16 * 4096);
  w.repeat = 3;
  const RunResult res = r.run(w);
  ASSERT_EQ(res.repetitions.size(), 3U);
  EXPECT_LT(res.repetitions[0].throughput_gib_s, res.repetitions[2].throughput_gib_s);
  EXPECT_LT(res.repetitions[2].throughput_gib_s, res.repetitions[1].throughput_gib_s);
  EXPECT_EQ(res.result.throughput_gib_s, res.repetitions[2].throughput_gib_s);
  EXPECT_EQ(rec.finishes.load(), 1U);
}

TEST_F(RunnerFake, ProgressReportsWarmupThenMeasurement) {
  test::FakeConfig c;
  c.delay_per_op = 200us;
  const Runner r = runner(c);
  Workload w = read_workload(file, 1);
  w.runtime_s = 0.5;
  w.warmup_s = 0.3;
  RunOptions o;
  o.progress_interval = 50ms;
  std::vector<Progress> seen;
  o.on_progress = [&](const Progress& p) { seen.push_back(p); };
  const RunResult res = r.run(w, o);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(seen.front().warming_up);
  EXPECT_FALSE(seen.back().warming_up);
  EXPECT_DOUBLE_EQ(seen.back().planned_s, 0.5);
  EXPECT_GT(seen.back().ops, 0U);
  EXPECT_LT(res.result.seconds, 0.8);  // warm-up is not measured
}

TEST_F(RunnerFake, ConcurrentRunsAreIndependent) {
  const Runner r = runner({});
  const std::string other = dir.file("other");
  test::write_plain_file(other, 0);
  std::filesystem::resize_file(other, 1 << 19);
  RunResult a, b;
  std::thread ta([&] { a = r.run(read_workload(file, 2)); });
  std::thread tb([&] { b = r.run(read_workload(other, 3, 1 << 19)); });
  ta.join();
  tb.join();
  EXPECT_EQ(a.result.ops, 256U);
  EXPECT_EQ(b.result.ops, 126U);  // 128 blocks split over 3 threads: 42 each
}

TEST_F(RunnerFake, BadWorkloadsAreUsageErrors) {
  const Runner r = runner({});
  Workload w = read_workload(file, 1);
  w.directory = dir.path().string();
  EXPECT_THROW(r.run(w), UsageError);  // -f and -D
  w = read_workload(file, 1);
  w.iodepth = 4;  // psync
  EXPECT_THROW(r.run(w), UsageError);
  w = read_workload(file, 1);
  w.io_size = 2 << 20;
  EXPECT_THROW(r.run(w), UsageError);
  w = read_workload(file, 1);
  w.mixed_read_percent = 101;
  EXPECT_THROW(r.run(w), UsageError);
  w = read_workload(file, 300);  // 1 MiB over 300 threads: less than one 4K I/O each
  EXPECT_THROW(r.run(w), UsageError);
  w = read_workload(file, 256);  // one 4K I/O per thread leaves no room for -U's shift
  w.unaligned_random = true;
  EXPECT_THROW(r.run(w), UsageError);
  w.unaligned_random = false;
  EXPECT_EQ(r.run(w).result.ops, 256U);
}

}  // namespace
}  // namespace gdsb
