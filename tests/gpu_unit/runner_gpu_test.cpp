// The engine's Runner driving the GPU paths end to end (threads, offsets, -V verification,
// statistics, the path report) on the host-memory fake GPU and the fake cuFile: what
// gdsb-io does on a GPU machine, minus the GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <algorithm>
#include <cstdlib>

#include "drive.hpp"
#include "fake_cufile.hpp"
#include "gdsb/cpu_paths.hpp"
#include "gdsb/error.hpp"
#include "gdsb/host_io.hpp"
#include "gdsb/io_phases.hpp"
#include "gdsb/gpu/fake_gpu_service.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/runner.hpp"

namespace gdsb::gpu {
namespace {

using testing::FakeCufile;
using testing::TempDir;

const std::string kFixtures = GDSB_GPU_FIXTURES;
constexpr uint64_t kFileSize = 2 << 20;
constexpr uint32_t kIoSize = 64 << 10;

struct RunnerFixture {
  explicit RunnerFixture(CopyTiming timing = CopyTiming::Events, int devices = 1,
                         testing::FakeCufileOptions cufile_options = {})
      : gpu(std::make_shared<FakeGpuService>(
            FakeGpuOptions{.devices = devices, .copy_delay = std::chrono::microseconds(20)})),
        cufile(*gpu, std::move(cufile_options)) {
    GpuPathDeps deps;
    deps.service = gpu;
    deps.staging = make_engine_staging_io;
    deps.copy_timing = timing;
    auto api = cufile.api();
    deps.load_cufile = [api](const Workload&) { return cufile::LoadResult{api, {}}; };
    deps.roots.nvfs_dir = kFixtures + "/absent-nvfs";  // no nvidia-fs: compat, as on the H100
    deps.roots.tmp_dir = dir.path();
    registry.add(make_cpu_only_path());
    add_gpu_paths(registry, deps);
  }

  Workload workload(XferType x, IoPattern p) const {
    Workload w;
    w.file = dir.file("data-" + std::to_string(static_cast<int>(x)));
    w.xfer = x;
    w.pattern = p;
    w.io_size = kIoSize;
    w.file_size = kFileSize;
    w.threads = 2;
    // -x 4 runs on the storage engine's depth (psync: 1); the others pipeline 2 deep.
    w.iodepth = x == XferType::CpuCachedGpu ? 1 : 2;
    w.verify = true;
    w.seed = 7;
    w.allow_overwrite = true;
    return w;
  }

  TempDir dir;
  std::shared_ptr<FakeGpuService> gpu;
  FakeCufile cufile;
  PathRegistry registry;
};

class RunnerGpu : public ::testing::TestWithParam<XferType> {};

std::string expected_path(XferType x) {
  switch (x) {
    case XferType::CpuGpu:
    case XferType::CpuAsyncGpu: return "posix";
    case XferType::CpuCachedGpu: return "page-cache";
    default: return "compat";
  }
}

TEST_P(RunnerGpu, WritesThenReadsWithVerification) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  Workload w = fx.workload(GetParam(), IoPattern::Write);
  const RunResult wr = runner.run(w);
  ASSERT_EQ(wr.status, RunStatus::Ok) << wr.reason;
  EXPECT_EQ(wr.result.bytes, kFileSize);
  EXPECT_EQ(wr.result.ops, kFileSize / kIoSize);
  EXPECT_EQ(wr.result.write_ops, kFileSize / kIoSize);
  EXPECT_EQ(wr.verify_errors, 0U);
  EXPECT_EQ(wr.path.path_used, expected_path(GetParam()));
  EXPECT_FALSE(wr.path.evidence.empty());
  EXPECT_EQ(std::filesystem::file_size(w.file), kFileSize);

  for (IoPattern p : {IoPattern::Read, IoPattern::RandRead}) {
    w.pattern = p;
    const RunResult rd = runner.run(w);
    ASSERT_EQ(rd.status, RunStatus::Ok) << rd.reason;
    EXPECT_EQ(rd.result.bytes, kFileSize) << pattern_label(p);
    EXPECT_EQ(rd.result.read_ops, kFileSize / kIoSize);
    EXPECT_EQ(rd.verify_errors, 0U);
    EXPECT_EQ(rd.path.path_used, expected_path(GetParam()));
    EXPECT_GT(rd.result.latency.max_us, 0.0);
    if (expected_path(GetParam()) == "compat") {
      ASSERT_FALSE(rd.path.warnings.empty()) << "compat mode must be a warning";
    }
  }
}

// Every GPU type names the GPU it ran on by PCI bus id (issue 24): -d 1 of a two-GPU
// fake is the fake's 0000:00:01.0, whatever CUDA index the run was given.
TEST_P(RunnerGpu, RecordsThePciBusIdOfTheGpuItRanOn) {
  RunnerFixture fx(CopyTiming::Events, 2);
  const Runner runner(fx.registry);
  Workload w = fx.workload(GetParam(), IoPattern::Write);
  w.gpu = 1;
  const RunResult r = runner.run(w);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
  EXPECT_EQ(r.path.gpu_pci_bus_id, "0000:00:01.0");
}

// Issue 35: gdsb-io's jobs on 4 GPUs crashed inside libcufile (cuFileDriverGetProperties)
// while the other jobs opened and closed the same driver. Eight jobs, one a fake GPU, run
// at once through one Runner as gdsb-io's job groups do; every run's files stay registered
// until all eight have registered theirs, so the runs overlap in the driver. The driver
// is opened once, queried once, closed once after the last run, and never misused.
class CufileJobs : public ::testing::TestWithParam<XferType> {};

TEST_P(CufileJobs, JobsOnEightGpusAtOnceShareOneCufileDriver) {
  constexpr int kGpus = 8;
  testing::FakeCufileOptions rendezvous;
  rendezvous.handle_rendezvous = kGpus;
  RunnerFixture fx(CopyTiming::Events, kGpus, rendezvous);
  const Runner runner(fx.registry);
  std::vector<Workload> jobs;
  for (int g = 0; g < kGpus; ++g) {
    Workload w = fx.workload(GetParam(), IoPattern::Write);
    w.file = fx.dir.file("gpu" + std::to_string(g));
    w.gpu = g;
    w.threads = 1;
    jobs.push_back(w);
  }
  std::vector<RunResult> results(kGpus);
  {
    std::vector<std::jthread> threads;
    for (std::size_t g = 0; g < kGpus; ++g)
      threads.emplace_back([&, g] { results[g] = runner.run(jobs[g]); });
  }
  for (std::size_t g = 0; g < kGpus; ++g) {
    ASSERT_EQ(results[g].status, RunStatus::Ok) << "GPU " << g << ": " << results[g].reason;
    EXPECT_EQ(results[g].result.bytes, kFileSize) << "GPU " << g;
    EXPECT_EQ(results[g].path.gpu_pci_bus_id, "0000:00:0" + std::to_string(g) + ".0");
  }
  EXPECT_EQ(fx.cufile.misuse(), std::vector<std::string>{});
  EXPECT_EQ(fx.cufile.driver_opens(), 1);
  const auto calls = fx.cufile.calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "DriverGetProperties"), 1);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "DriverClose"), 1);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "HandleRegister"), kGpus);
  EXPECT_FALSE(fx.cufile.driver_open());
  // The private log and configuration are gone with the driver; the variable is restored.
  EXPECT_EQ(std::getenv("CUFILE_ENV_PATH_JSON"), nullptr);
  for (const auto& e : std::filesystem::directory_iterator(fx.dir.path()))
    EXPECT_EQ(e.path().filename().string().rfind("gdsb-cufile-", 0), std::string::npos) << e.path();
}

INSTANTIATE_TEST_SUITE_P(EveryCufileType, CufileJobs,
                         ::testing::Values(XferType::GpuDirect, XferType::GpuDirectAsync, XferType::GpuBatch,
                                           XferType::GpuBatchStream),
                         [](const ::testing::TestParamInfo<XferType>& i) { return std::string(xfer_name(i.param)); });

// Verification is not vacuous on the GPU paths: a byte changed in the file is found.
TEST_P(RunnerGpu, VerificationFindsACorruptedByte) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  Workload w = fx.workload(GetParam(), IoPattern::Write);
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  {
    std::fstream f(w.file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(kIoSize * 5 + 123));
    f.put('\x5a');
  }
  w.pattern = IoPattern::Read;
  EXPECT_THROW((void)runner.run(w), VerificationError);
}

// Issue 43: open_per_file (the dataset preset) through every GPU type: each of 12 files
// opened, registered (cuFile types: one cuFileHandleRegister and one deregistration per
// file, none left), read with -V and closed by its thread, the costs one sample per file.
TEST_P(RunnerGpu, OpensRegistersReadsAndClosesEachFileInTurn) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  constexpr int kFiles = 12;
  constexpr uint64_t kBytes = 4 * kIoSize;
  {
    std::ofstream list(fx.dir.file("files.list"));
    for (int i = 0; i < kFiles; ++i) list << "f" << i << "\n";
  }
  Workload w = fx.workload(GetParam(), IoPattern::Write);
  w.file.clear();
  w.file_list = fx.dir.file("files.list");
  w.file_size = kBytes;
  w.threads = 3;
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  w.pattern = IoPattern::Read;
  w.open_per_file = true;
  const auto registrations = [&](const char* call) {
    const auto c = fx.cufile.calls();
    return std::count(c.begin(), c.end(), std::string(call));
  };
  const auto registered_before = registrations("HandleRegister");
  const RunResult r = runner.run(w);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
  EXPECT_EQ(r.verify_errors, 0U);
  EXPECT_EQ(r.result.bytes, kFiles * kBytes);
  EXPECT_EQ(r.setup.files, 0U) << "the opens are inside the measured time";
  ASSERT_TRUE(r.result.per_file.has_value());
  EXPECT_EQ(r.result.per_file->files, static_cast<uint64_t>(kFiles));
  EXPECT_GT(r.result.per_file->open.max_us, 0.0);
  EXPECT_GT(r.result.per_file->read.max_us, 0.0);
  const bool cufile = xfer_uses_cufile(GetParam());
  EXPECT_EQ(registrations("HandleRegister") - registered_before, cufile ? kFiles : 0);
  EXPECT_EQ(registrations("HandleDeregister"), registrations("HandleRegister"));
  EXPECT_EQ(fx.cufile.live_handles(), 0);
  EXPECT_TRUE(fx.cufile.misuse().empty());
  // A write is refused: per-file open models a loader's reads.
  w.pattern = IoPattern::Write;
  EXPECT_THROW((void)runner.run(w), UsageError);
}

INSTANTIATE_TEST_SUITE_P(
    EveryGpuType, RunnerGpu,
    ::testing::Values(XferType::GpuDirect, XferType::CpuGpu, XferType::CpuAsyncGpu,
                      XferType::CpuCachedGpu, XferType::GpuDirectAsync, XferType::GpuBatch,
                      XferType::GpuBatchStream),
    [](const ::testing::TestParamInfo<XferType>& i) { return std::string(xfer_name(i.param)); });

TEST(RunnerGpu, BounceTypesUseTheEngineWorker) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  for (SubmitEngine e : {SubmitEngine::Psync, SubmitEngine::IoUring}) {
    if (e == SubmitEngine::IoUring && !probe_io_uring(8).ok) continue;
    for (XferType x : {XferType::CpuGpu, XferType::CpuAsyncGpu}) {
      Workload w = fx.workload(x, IoPattern::Write);
      w.engine = e;
      w.iodepth = e == SubmitEngine::IoUring ? 4 : 1;
      for (IoPattern p : {IoPattern::Write, IoPattern::RandRead}) {
        w.pattern = p;
        const RunResult r = runner.run(w);
        ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
        EXPECT_EQ(r.result.bytes, kFileSize) << engine_name(e) << " " << xfer_name(x);
        if (x != XferType::CpuGpu) continue;
        bool named = false;
        for (const auto& ev : r.path.evidence) {
          named = named || ev.find("storage I/O by " + std::string(engine_name(e))) == 0;
        }
        EXPECT_TRUE(named) << "evidence should name the engine " << engine_name(e);
      }
    }
  }
}

TEST(RunnerGpu, RequireGdsInCompatModeIsAVerificationFailure) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  Workload w = fx.workload(XferType::GpuDirect, IoPattern::Write);
  w.require_gds = true;
  try {
    (void)runner.run(w);
    FAIL() << "compat mode passed --require-gds";
  } catch (const VerificationError& e) {
    EXPECT_NE(std::string(e.what()).find("--require-gds"), std::string::npos) << e.what();
  }
}

// -x 4 without a usable GPU: the host part runs, and the report says so and why.
TEST(RunnerGpu, CachedGpuWithoutAGpuRunsTheHostPartAndSaysWhy) {
  TempDir dir;
  GpuPathDeps deps;
  deps.service = std::make_shared<FakeGpuService>(
      FakeGpuOptions{.devices = 0});
  deps.staging = make_engine_staging_io;
  PathRegistry reg;
  add_gpu_paths(reg, deps);
  const Runner runner(reg);
  Workload w;
  w.file = dir.file("cached");
  w.xfer = XferType::CpuCachedGpu;
  w.pattern = IoPattern::Write;
  w.io_size = kIoSize;
  w.file_size = kFileSize;
  w.verify = true;
  ASSERT_TRUE(runner.probe(w).ok) << runner.probe(w).reason;
  const RunResult wr = runner.run(w);
  ASSERT_EQ(wr.status, RunStatus::Ok) << wr.reason;
  EXPECT_EQ(wr.path.path_used, "page-cache (host only)");
  ASSERT_FALSE(wr.path.warnings.empty());
  EXPECT_NE(wr.path.warnings[0].find("no GPU (fake service configured with 0 devices)"), std::string::npos)
      << wr.path.warnings[0];
  // -x 2 on the same service is waived with that reason.
  w.xfer = XferType::CpuGpu;
  const RunResult waived = runner.run(w);
  EXPECT_EQ(waived.status, RunStatus::Waived);
  EXPECT_EQ(waived.reason, "no GPU (fake service configured with 0 devices)");
  // -x 4 with a memory type gdsio refuses for it is still a usage problem.
  w.xfer = XferType::CpuCachedGpu;
  w.mem_type = MemType::Malloc;
  EXPECT_FALSE(runner.probe(w).ok);
}

// A read without -s reports the size it covered (gdsio's DataSetSize), not 0.
TEST(RunnerGpu, ReadWithoutSizeReportsTheSizeUsed) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  Workload w = fx.workload(XferType::CpuGpu, IoPattern::Write);
  ASSERT_EQ(runner.run(w).status, RunStatus::Ok);
  w.pattern = IoPattern::Read;
  w.file_size = 0;
  const RunResult r = runner.run(w);
  ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
  EXPECT_EQ(r.workload.file_size, kFileSize);
  EXPECT_EQ(r.result.bytes, kFileSize);
}

// Phases of -x 2/3/4 through the runner (bounce_phases_test.cpp has the worker's side):
// one write pass then one read pass on one file, -x 3 after a warm-up that must not count.
Workload phase_workload(const RunnerFixture& fx, XferType x, IoPattern p) {
  Workload w = fx.workload(x, p);
  w.file = fx.dir.file("phases");
  w.iodepth = x == XferType::CpuAsyncGpu ? 2 : 1;  // -x 2 at depth 1 has the sync ceiling
  w.warmup_s = x == XferType::CpuAsyncGpu ? 0.05 : 0.0;
  return w;
}

// The runner reports the phases of the measured interval only, merged over the threads,
// and they add up inside the latency it measured (each phase is an interval inside the
// I/O's submit-to-reap time, on the same clock).
TEST(BouncePhasesRunner, PhasesCoverTheMeasuredIosAndFitInTheirLatency) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  for (XferType x : {XferType::CpuGpu, XferType::CpuAsyncGpu}) {
    for (IoPattern pat : {IoPattern::Write, IoPattern::Read}) {
      const RunResult r = runner.run(phase_workload(fx, x, pat));
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
  const RunResult cpu = runner.run(phase_workload(fx, XferType::CpuOnly, IoPattern::Read));
  ASSERT_EQ(cpu.status, RunStatus::Ok) << cpu.reason;
  EXPECT_FALSE(cpu.result.phases.has_value());
}

TEST(BouncePhasesRunner, PhasesSurviveTheJsonRoundTripAndAreAbsentWithout) {
  RunnerFixture fx;
  const Runner runner(fx.registry);
  Workload w = phase_workload(fx, XferType::CpuGpu, IoPattern::Write);
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

  const RunResult cpu = runner.run(phase_workload(fx, XferType::CpuOnly, IoPattern::Read));
  const nlohmann::json jc = cpu;
  EXPECT_FALSE(jc.at("result").contains("phases")) << "documents of CPU runs stay as they were";
  EXPECT_FALSE(jc.get<RunResult>().result.phases.has_value());
}

TEST(BouncePhasesRunner, HostTimingReportsNoDma) {
  RunnerFixture fx(CopyTiming::Host);
  const Runner runner(fx.registry);
  const RunResult r = runner.run(phase_workload(fx, XferType::CpuAsyncGpu, IoPattern::Write));
  ASSERT_EQ(r.status, RunStatus::Ok) << r.reason;
  ASSERT_TRUE(r.result.phases.has_value());
  EXPECT_EQ(r.result.phases->dma.count, 0U);
  EXPECT_EQ(r.result.phases->copy.count, r.result.ops);
}

}  // namespace
}  // namespace gdsb::gpu
