// -x 2, -x 3 and -x 4 on the fake GPU: data round trips, pipelining, ordering, buffer
// reuse and error paths.
#include <gtest/gtest.h>

#include "bounce_path.hpp"
#include "checking_staging.hpp"
#include "drive.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_service.hpp"
#include "gdsb/gpu/gpu_paths.hpp"

namespace gdsb::gpu {
namespace {

using testing::CheckingStaging;
using testing::drive;
using testing::OpenFiles;
using testing::StagingProbe;
using testing::TempDir;

struct Fixture {
  explicit Fixture(FakeGpuOptions o = {}) : gpu(std::make_shared<FakeGpuService>(o)) {
    deps.service = gpu;
    deps.staging = [this](const FileSet& f, const StagingSpec& s) {
      return std::make_unique<CheckingStaging>(make_engine_staging_io(f, s), *gpu, probe);
    };
    deps.load_cufile = [](const Workload&) { return cufile::LoadResult{nullptr, "no cuFile in this test"}; };
  }
  std::shared_ptr<FakeGpuService> gpu;
  StagingProbe probe;
  GpuPathDeps deps;
};

Workload workload(XferType x, uint64_t io_size, uint32_t iodepth = 1) {
  Workload w;
  w.xfer = x;
  w.io_size = io_size;
  w.iodepth = iodepth;
  w.odirect = false;  // unit tests may run on tmpfs
  return w;
}

class BouncePaths : public ::testing::TestWithParam<XferType> {};

TEST_P(BouncePaths, WriteThenReadRoundTripsThroughGpuMemory) {
  Fixture fx(FakeGpuOptions{.copy_delay = std::chrono::microseconds(200)});
  TempDir dir;
  const uint64_t size = 3 * 1024 * 1024 + 64 * 1024;  // not a multiple of io_size
  OpenFiles files({dir.file("f")}, size, false, false);
  const Workload w = workload(GetParam(), 1024 * 1024, 3);
  auto path = testing::bounce_path(GetParam(), fx.deps);
  ASSERT_TRUE(path->probe(w).ok) << path->probe(w).reason;
  auto run = path->start(w, files.set());
  {
    auto worker = run->make_worker(0);
    const auto wr = drive(*worker, IoDir::Write, size, 1024 * 1024, false);
    EXPECT_EQ(wr.bytes, size);
  }
  EXPECT_TRUE(testing::file_has_pattern(dir.file("f"), size));
  {
    auto worker = run->make_worker(0);
    const auto rd = drive(*worker, IoDir::Read, size, 1024 * 1024, true);
    EXPECT_EQ(rd.bytes, size);
    EXPECT_EQ(rd.verify_errors, 0U);
  }
  EXPECT_EQ(fx.probe.hazards, 0U) << "a staging buffer was reused while a copy used it";
  const PathReport rep = run->finish();
  EXPECT_EQ(rep.path_used, GetParam() == XferType::CpuCachedGpu ? "page-cache" : "posix");
  const auto st = fx.gpu->stats();
  EXPECT_EQ(st.bytes_h2d, size + size /* load_slot copies */);
  EXPECT_EQ(st.registered_live, 0U);
  EXPECT_EQ(st.allocations_live, 0U);
}

INSTANTIATE_TEST_SUITE_P(X, BouncePaths,
                         ::testing::Values(XferType::CpuGpu, XferType::CpuAsyncGpu,
                                           XferType::CpuCachedGpu));

TEST(CpuAsyncGpu, StorageIoOverlapsCopiesAndNeverReusesBusyStaging) {
  Fixture fx(FakeGpuOptions{.copy_delay = std::chrono::milliseconds(2)});
  TempDir dir;
  const uint64_t size = 8 * 1024 * 1024;
  OpenFiles files({dir.file("f")}, size, false, true);
  const Workload w = workload(XferType::CpuAsyncGpu, 1024 * 1024, 2);
  auto run = make_cpu_async_gpu_path(fx.deps)->start(w, files.set());
  auto worker = run->make_worker(0);
  EXPECT_GE(worker->depth(), 2U);
  const auto rd = drive(*worker, IoDir::Read, size, 1024 * 1024, true);
  EXPECT_EQ(rd.verify_errors, 0U);
  EXPECT_GT(fx.probe.submits_while_copy_pending, 0U) << "no storage I/O ran while a copy was pending";
  EXPECT_EQ(fx.probe.hazards, 0U);
  EXPECT_EQ(fx.gpu->stats().sync_copies, 8U);  // only the read_slot checks are synchronous
}

TEST(CpuAsyncGpu, LargeIosAreSplitIntoChunksWhoseCopiesOverlapTheNextChunk) {
  Fixture fx(FakeGpuOptions{.copy_delay = std::chrono::milliseconds(2)});
  TempDir dir;
  const uint64_t size = 12 * 1024 * 1024 + 4096;
  OpenFiles files({dir.file("f")}, size, false, true);
  auto run = make_cpu_async_gpu_path(fx.deps)->start(workload(XferType::CpuAsyncGpu, 4 << 20, 2),
                                                     files.set());
  auto worker = run->make_worker(0);
  const auto rd = drive(*worker, IoDir::Read, size, 4 << 20, true);
  EXPECT_EQ(rd.verify_errors, 0U);
  EXPECT_EQ(rd.ops, 4U);
  EXPECT_EQ(fx.probe.submits, 13U);  // 3 x 4 chunks of 1 MiB + one of 4 KiB
  EXPECT_GT(fx.probe.submits_while_copy_pending, 0U);
  EXPECT_EQ(fx.probe.hazards, 0U);
  EXPECT_EQ(fx.gpu->stats().async_copies, 13U);
  drive(*worker, IoDir::Write, size, 4 << 20, false);
  EXPECT_EQ(fx.probe.hazards, 0U);
  EXPECT_TRUE(testing::file_has_pattern(dir.file("f"), size));
}

TEST(CpuAsyncGpu, WritesWaitForTheirCopyBeforeStorageIo) {
  Fixture fx(FakeGpuOptions{.copy_delay = std::chrono::milliseconds(1)});
  TempDir dir;
  const uint64_t size = 4 * 1024 * 1024;
  OpenFiles files({dir.file("f")}, size, false, false);
  auto run = make_cpu_async_gpu_path(fx.deps)->start(workload(XferType::CpuAsyncGpu, 1 << 20, 4),
                                                     files.set());
  auto worker = run->make_worker(0);
  drive(*worker, IoDir::Write, size, 1 << 20, false);
  EXPECT_EQ(fx.probe.hazards, 0U) << "storage wrote staging bytes a D2H copy was still filling";
  EXPECT_TRUE(testing::file_has_pattern(dir.file("f"), size));
}

TEST(CpuGpu, CopiesGoOnTheWorkersOwnStreamAndAreWaitedForSoNothingOverlaps) {
  Fixture fx(FakeGpuOptions{.copy_delay = std::chrono::milliseconds(1)});
  TempDir dir;
  OpenFiles files({dir.file("f")}, 2 << 20, false, true);
  auto run = make_cpu_gpu_path(fx.deps)->start(workload(XferType::CpuGpu, 256 << 10), files.set());
  auto worker = run->make_worker(0);
  EXPECT_EQ(worker->depth(), 1U);
  drive(*worker, IoDir::Read, 2 << 20, 256 << 10, true);
  EXPECT_EQ(fx.probe.submits_while_copy_pending, 0U);
  // 8 reads of 256 KiB: each copy on the worker's stream (never the process-wide legacy
  // stream of a synchronous copy), waited for on the worker's own event.
  EXPECT_EQ(fx.gpu->stats().async_copies, 8U);
  EXPECT_EQ(fx.gpu->stats().spin_waits, 8U);
  EXPECT_EQ(fx.gpu->stats().sync_copies, 8U);  // only the read_slot checks (-V)
  EXPECT_EQ(fx.probe.hazards, 0U);
}

TEST(CpuAsyncGpu, CompletionsComeOldestFirstAndCarryTheRunnersTags) {
  Fixture fx(FakeGpuOptions{.copy_delay = std::chrono::microseconds(300)});
  TempDir dir;
  OpenFiles files({dir.file("f")}, 1 << 20, false, true);
  auto run = make_cpu_async_gpu_path(fx.deps)->start(workload(XferType::CpuAsyncGpu, 64 << 10, 4),
                                                     files.set());
  auto worker = run->make_worker(0);
  std::vector<IoRequest> reqs;
  for (uint32_t i = 0; i < 4; ++i) {
    reqs.push_back(IoRequest{1000 + i, 0, uint64_t{i} * (64 << 10), 64 << 10, IoDir::Read, 3 - i});
  }
  worker->submit(reqs);
  std::vector<IoCompletion> out(4);
  std::size_t n = 0;
  while (n < 4) n += worker->reap(std::span(out).subspan(n), 1);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out[i].tag, 1000 + i);
    EXPECT_EQ(out[i].result, 64 << 10);
  }
  std::vector<std::byte> got(64 << 10);
  worker->read_slot(0, got);  // slot 0 held the last request (offset 192 KiB)
  EXPECT_EQ(got, testing::pattern(192 << 10, 64 << 10, 7));
}

TEST(CpuAsyncGpu, StorageErrorIsReportedAsTheRequestsResult) {
  Fixture fx;
  fx.probe.fail_at = 2;  // the 3rd storage I/O
  TempDir dir;
  OpenFiles files({dir.file("f")}, 4 << 20, false, true);
  auto run = make_cpu_async_gpu_path(fx.deps)->start(workload(XferType::CpuAsyncGpu, 1 << 20, 2),
                                                     files.set());
  auto worker = run->make_worker(0);
  EXPECT_THROW(drive(*worker, IoDir::Read, 4 << 20, 1 << 20, false), std::runtime_error);
}

TEST(CpuGpu, StorageErrorIsReportedAsTheRequestsResult) {
  Fixture fx;
  fx.probe.fail_at = 0;
  TempDir dir;
  OpenFiles files({dir.file("f")}, 1 << 20, false, true);
  auto run = make_cpu_gpu_path(fx.deps)->start(workload(XferType::CpuGpu, 1 << 20), files.set());
  auto worker = run->make_worker(0);
  worker->submit(std::vector<IoRequest>{{9, 0, 0, 1 << 20, IoDir::Read, 0}});
  std::vector<IoCompletion> out(1);
  ASSERT_EQ(worker->reap(out, 1), 1U);
  EXPECT_EQ(out[0].tag, 9U);
  EXPECT_EQ(out[0].result, -EIO);
  EXPECT_EQ(fx.gpu->stats().sync_copies + fx.gpu->stats().async_copies, 0U)
      << "a failed read must not be copied to the GPU";
}

TEST(CpuAsyncGpu, FailedAsyncCopySurfacesAsRuntimeError) {
  Fixture fx(FakeGpuOptions{.fail_async_copy_at = 1});
  TempDir dir;
  OpenFiles files({dir.file("f")}, 2 << 20, false, true);
  auto run = make_cpu_async_gpu_path(fx.deps)->start(workload(XferType::CpuAsyncGpu, 1 << 20, 2),
                                                     files.set());
  auto worker = run->make_worker(0);
  try {
    drive(*worker, IoDir::Read, 2 << 20, 1 << 20, false);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("injected async copy failure"), std::string::npos);
  }
}

TEST(BouncePathsErrors, GpuOutOfMemoryNamesTheCause) {
  Fixture fx(FakeGpuOptions{.fail_allocation_at = 1});
  TempDir dir;
  OpenFiles files({dir.file("f")}, 1 << 20, false, true);
  auto run = make_cpu_async_gpu_path(fx.deps)->start(workload(XferType::CpuAsyncGpu, 1 << 20, 2),
                                                     files.set());
  try {
    run->make_worker(0);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fx.gpu->stats().allocations_live, 0U) << "a failed worker leaked GPU memory";
}

TEST(BouncePathsErrors, HostMemoryTypesAreRefusedAsGdsioDoes) {
  Fixture fx;
  Workload w = workload(XferType::CpuGpu, 1 << 20);
  w.mem_type = MemType::Malloc;
  auto path = make_cpu_gpu_path(fx.deps);
  const Availability a = path->probe(w);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("-m 3 (malloc)"), std::string::npos) << a.reason;
  TempDir dir;
  OpenFiles files({dir.file("f")}, 1 << 20, false, true);
  EXPECT_THROW(path->start(w, files.set()), UsageError);
}

TEST(BouncePathsErrors, MissingGpuIndexIsWaivedWithTheCount) {
  Fixture fx;
  Workload w = workload(XferType::CpuAsyncGpu, 1 << 20);
  w.gpu = 3;
  const Availability a = make_cpu_async_gpu_path(fx.deps)->probe(w);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.reason, "-d 3: no such GPU (this machine has 1, indices 0..0)");
}

TEST(BouncePathsErrors, NoGpuIsWaivedWithTheServicesReason) {
  Fixture fx(FakeGpuOptions{.devices = 0});
  const Availability a = make_cpu_gpu_path(fx.deps)->probe(workload(XferType::CpuGpu, 4096));
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("no GPU"), std::string::npos);
}

TEST(BouncePaths, OdirectFollowsTheTypeAndDashO) {
  Fixture fx;
  Workload w = workload(XferType::CpuGpu, 4096);
  w.odirect = true;
  EXPECT_TRUE(make_cpu_gpu_path(fx.deps)->needs_odirect(w));
  EXPECT_TRUE(make_cpu_async_gpu_path(fx.deps)->needs_odirect(w));
  EXPECT_FALSE(make_cpu_cached_gpu_path(fx.deps)->needs_odirect(w));
  w.odirect = false;
  EXPECT_FALSE(make_cpu_gpu_path(fx.deps)->needs_odirect(w));
}

}  // namespace
}  // namespace gdsb::gpu
