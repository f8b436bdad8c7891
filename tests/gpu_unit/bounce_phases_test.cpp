// Per-phase timing of -x 2/3/4 (storage, copy, DMA, wait) on the fake GPU: that every I/O
// of the measured interval is recorded once per phase, that the phases fit inside the
// runner's latency, that the report carries them (JSON round trip), and that
// GDSB_COPY_TIMING switches the DMA timing. No assertion on how long anything took.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "drive.hpp"
#include "gdsb/cpu_paths.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_service.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/io_phases.hpp"
#include "gdsb/runner.hpp"

namespace gdsb::gpu {
namespace {

using testing::drive;
using testing::OpenFiles;
using testing::TempDir;

constexpr uint64_t kFileSize = 2 << 20;
constexpr uint32_t kIoSize = 128 << 10;
constexpr uint64_t kOps = kFileSize / kIoSize;

GpuPathDeps fake_deps(const std::shared_ptr<FakeGpuService>& gpu, CopyTiming timing) {
  GpuPathDeps d;
  d.service = gpu;
  d.staging = make_engine_staging_io;
  d.load_cufile = [](const Workload&) { return cufile::LoadResult{nullptr, "no cuFile here"}; };
  d.copy_timing = timing;
  return d;
}

std::unique_ptr<TransferPath> path_for(XferType x, GpuPathDeps d) {
  if (x == XferType::CpuGpu) return make_cpu_gpu_path(std::move(d));
  if (x == XferType::CpuCachedGpu) return make_cpu_cached_gpu_path(std::move(d));
  return make_cpu_async_gpu_path(std::move(d));
}

class BouncePhases : public ::testing::TestWithParam<XferType> {};

// The worker's recorder, driven as the runner does: one entry per I/O and phase.
TEST_P(BouncePhases, EveryIoIsRecordedOncePerPhase) {
  auto gpu = std::make_shared<FakeGpuService>(FakeGpuOptions{.copy_delay = std::chrono::microseconds(50)});
  TempDir dir;
  OpenFiles files({dir.file("f")}, kFileSize, false, false);
  Workload w;
  w.xfer = GetParam();
  w.io_size = kIoSize;
  w.odirect = false;
  auto path = path_for(GetParam(), fake_deps(gpu, CopyTiming::Events));
  auto run = path->start(w, files.set());
  for (IoDir dir_ : {IoDir::Write, IoDir::Read}) {
    auto worker = run->make_worker(0);
    PhaseRecorder* rec = worker->phases();
    ASSERT_NE(rec, nullptr) << "a bounce path times its phases";
    drive(*worker, dir_, kFileSize, kIoSize, false);
    Measurement m;
    m.ops = kOps;
    m.bytes = kFileSize;
    const IoPhases p = rec->summary(1, m);
    EXPECT_EQ(p.storage.count, kOps);
    EXPECT_EQ(p.copy.count, kOps);
    EXPECT_EQ(p.dma.count, kOps) << "timing events around every copy";
    const bool async = GetParam() == XferType::CpuAsyncGpu;
    EXPECT_EQ(p.wait.count, async ? kOps : 0U) << "only -x 3 waits for a busy slot";
    EXPECT_EQ(p.sync_ceiling_gib_s > 0, !async) << "the ceiling is -x 2/-x 4's (depth 1)";
    EXPECT_GE(p.storage_gib_s, p.sync_ceiling_gib_s);
    rec->reset();
    EXPECT_EQ(rec->summary(1, m).storage.count, 0U);
  }
  EXPECT_EQ(gpu->stats().timing_events_live, 0U);
}

// GDSB_COPY_TIMING=host: the same phases without timing events, and no DMA figure.
TEST_P(BouncePhases, HostTimingLeavesTheDmaOut) {
  auto gpu = std::make_shared<FakeGpuService>();
  TempDir dir;
  OpenFiles files({dir.file("f")}, kFileSize, false, false);
  Workload w;
  w.xfer = GetParam();
  w.io_size = kIoSize;
  w.odirect = false;
  auto path = path_for(GetParam(), fake_deps(gpu, CopyTiming::Host));
  auto run = path->start(w, files.set());
  auto worker = run->make_worker(0);
  EXPECT_EQ(gpu->stats().timing_events_live, 0U);
  drive(*worker, IoDir::Write, kFileSize, kIoSize, false);
  Measurement m;
  m.ops = kOps;
  m.bytes = kFileSize;
  const IoPhases p = worker->phases()->summary(1, m);
  EXPECT_EQ(p.storage.count, kOps);
  EXPECT_EQ(p.copy.count, kOps);
  EXPECT_EQ(p.dma.count, 0U);
  EXPECT_EQ(gpu->stats().elapsed_queries, 0U);
}

INSTANTIATE_TEST_SUITE_P(
    X, BouncePhases,
    ::testing::Values(XferType::CpuGpu, XferType::CpuAsyncGpu, XferType::CpuCachedGpu),
    [](const ::testing::TestParamInfo<XferType>& i) { return std::string(xfer_name(i.param)); });

// -x 3 with I/Os of several chunks: still one entry per request.
TEST(BouncePhasesChunks, LargeIosCountOncePerRequest) {
  auto gpu = std::make_shared<FakeGpuService>();
  TempDir dir;
  const uint64_t size = 8 << 20;
  OpenFiles files({dir.file("f")}, size, false, false);
  Workload w;
  w.xfer = XferType::CpuAsyncGpu;
  w.io_size = 2 * kAsyncChunkBytes + 4096;
  w.iodepth = 3;
  w.odirect = false;
  auto run = make_cpu_async_gpu_path(fake_deps(gpu, CopyTiming::Events))->start(w, files.set());
  for (IoDir d : {IoDir::Write, IoDir::Read}) {
    auto worker = run->make_worker(0);
    const auto r = drive(*worker, d, size, static_cast<uint32_t>(w.io_size), false);
    Measurement m;
    m.ops = r.ops;
    m.bytes = r.bytes;
    const IoPhases p = worker->phases()->summary(1, m);
    EXPECT_EQ(p.storage.count, r.ops);
    EXPECT_EQ(p.copy.count, r.ops);
    EXPECT_EQ(p.dma.count, r.ops);
    EXPECT_EQ(p.wait.count, r.ops);
  }
}

struct RunnerFixture {
  explicit RunnerFixture(CopyTiming timing = CopyTiming::Events)
      : gpu(std::make_shared<FakeGpuService>(FakeGpuOptions{.copy_delay = std::chrono::microseconds(20)})) {
    registry.add(make_cpu_only_path());
    add_gpu_paths(registry, fake_deps(gpu, timing));
  }
  Workload workload(XferType x, IoPattern p) const {
    Workload w;
    w.file = dir.file("data");
    w.xfer = x;
    w.pattern = p;
    w.io_size = kIoSize;
    w.file_size = kFileSize;
    w.threads = 2;
    w.iodepth = x == XferType::CpuAsyncGpu ? 2 : 1;
    w.warmup_s = x == XferType::CpuAsyncGpu ? 0.05 : 0.0;  // the warm-up is not counted
    w.verify = true;  // nor is -V's read-back after the writes
    w.odirect = false;
    w.allow_overwrite = true;
    return w;
  }
  TempDir dir;
  std::shared_ptr<FakeGpuService> gpu;
  PathRegistry registry;
};

// The runner reports the phases of the measured interval only, merged over the threads,
// and they add up inside the latency it measured (each phase is an interval inside the
// I/O's submit-to-reap time, on the same clock).
TEST(BouncePhasesRunner, PhasesCoverTheMeasuredIosAndFitInTheirLatency) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  for (XferType x : {XferType::CpuGpu, XferType::CpuAsyncGpu}) {
    for (IoPattern pat : {IoPattern::Write, IoPattern::Read}) {
      const RunResult r = runner.run(fx.workload(x, pat));
      ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
      ASSERT_TRUE(r.result.phases.has_value()) << xfer_name(x);
      const IoPhases& p = *r.result.phases;
      const Measurement& m = r.result;
      EXPECT_EQ(p.storage.count, m.ops) << xfer_name(x) << " " << pattern_label(pat);
      EXPECT_EQ(p.copy.count, m.ops);
      EXPECT_EQ(p.dma.count, m.ops);
      EXPECT_LE(p.storage.us.mean_us + p.copy.us.mean_us, m.latency.mean_us + 0.01);
      EXPECT_LE(p.storage.us.max_us, m.latency.max_us + 0.01);
      EXPECT_LE(p.wait.us.mean_us, p.copy.us.mean_us + p.storage.us.mean_us + 0.01);
      if (x == XferType::CpuGpu) {
        // -x 2: the DMA interval lies inside the host's copy interval.
        EXPECT_LE(p.dma.us.mean_us, p.copy.us.mean_us + 0.01);
        EXPECT_GT(p.sync_ceiling_gib_s, 0.0);
        EXPECT_LE(p.sync_ceiling_gib_s, p.storage_gib_s);
      } else {
        EXPECT_EQ(p.sync_ceiling_gib_s, 0.0) << "-x 3 is not synchronous";
      }
    }
  }
  // A CPU path has no phases.
  const RunResult cpu = runner.run(fx.workload(XferType::CpuOnly, IoPattern::Read));
  ASSERT_EQ(cpu.status, RunStatus::Ok) << cpu.reason;
  EXPECT_FALSE(cpu.result.phases.has_value());
}

TEST(BouncePhasesRunner, PhasesSurviveTheJsonRoundTripAndAreAbsentWithout) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  Workload w = fx.workload(XferType::CpuGpu, IoPattern::Write);
  w.repeat = 2;
  const RunResult r = runner.run(w);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
  ASSERT_EQ(r.repetitions.size(), 2U);
  for (const Measurement& rep : r.repetitions) {
    ASSERT_TRUE(rep.phases.has_value());
    EXPECT_EQ(rep.phases->storage.count, rep.ops) << "each repetition has its own phases";
  }
  const nlohmann::json j = r;
  ASSERT_TRUE(j.at("result").contains("phases"));
  const nlohmann::json& jp = j.at("result").at("phases");
  EXPECT_EQ(jp.at("storage").at("count").get<uint64_t>(), r.result.ops);
  EXPECT_TRUE(jp.contains("sync_ceiling_gib_s"));
  const RunResult back = j.get<RunResult>();
  ASSERT_TRUE(back.result.phases.has_value());
  EXPECT_EQ(back.result.phases->copy.count, r.result.phases->copy.count);
  EXPECT_DOUBLE_EQ(back.result.phases->storage.us.mean_us, r.result.phases->storage.us.mean_us);
  EXPECT_DOUBLE_EQ(back.result.phases->sync_ceiling_gib_s, r.result.phases->sync_ceiling_gib_s);

  const RunResult cpu = runner.run(fx.workload(XferType::CpuOnly, IoPattern::Read));
  const nlohmann::json jc = cpu;
  EXPECT_FALSE(jc.at("result").contains("phases")) << "documents of CPU runs stay as they were";
  EXPECT_FALSE(jc.get<RunResult>().result.phases.has_value());
}

TEST(BouncePhasesRunner, HostTimingReportsNoDma) {
  RunnerFixture fx(CopyTiming::Host);
  const Runner runner(fx.registry);
  const RunResult r = runner.run(fx.workload(XferType::CpuAsyncGpu, IoPattern::Write));
  ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
  ASSERT_TRUE(r.result.phases.has_value());
  EXPECT_EQ(r.result.phases->dma.count, 0U);
  EXPECT_EQ(r.result.phases->copy.count, r.result.ops);
}

TEST(CopyTimingVariable, UnsetMeansEventsAndABadValueIsAUsageErrorNamingIt) {
  EXPECT_EQ(parse_copy_timing(nullptr), CopyTiming::Events);
  EXPECT_EQ(parse_copy_timing(""), CopyTiming::Events);
  EXPECT_EQ(parse_copy_timing("events"), CopyTiming::Events);
  EXPECT_EQ(parse_copy_timing("host"), CopyTiming::Host);
  try {
    (void)parse_copy_timing("nvtx");
    FAIL() << "accepted a bad value";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GDSB_COPY_TIMING=nvtx"), std::string::npos) << what;
    EXPECT_NE(what.find("'host'"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace gdsb::gpu
