// -x 0/5/6/7 against the fake cuFile on the fake GPU: the call sequence of each type,
// data round trips, waivers for missing symbols, failures explained, --require-gds.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "cufile_fixture.hpp"
#include "drive.hpp"
#include "fake_cufile.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/cufile_session.hpp"
#include "gdsb/gpu/gpu_paths.hpp"

namespace gdsb::gpu {
namespace {

using testing::drive;
using testing::FakeCufile;
using testing::FakeCufileOptions;
using testing::OpenFiles;
using testing::TempDir;
using Seq = std::vector<std::string>;

const std::string kFixtures = GDSB_GPU_FIXTURES;

FakeCufileOptions opts(void (*set)(FakeCufileOptions&)) {
  FakeCufileOptions o;
  set(o);
  return o;
}

using Fixture = testing::CufileFixture;

Workload workload(XferType x, uint32_t io_size, uint32_t iodepth = 1) {
  Workload w;
  w.xfer = x;
  w.io_size = io_size;
  w.iodepth = iodepth;
  w.odirect = false;
  return w;
}

std::unique_ptr<TransferPath> path_for(XferType x, const GpuPathDeps& d) {
  switch (x) {
    case XferType::GpuDirect: return make_gpu_direct_path(d);
    case XferType::GpuDirectAsync: return make_gpu_direct_async_path(d);
    case XferType::GpuBatch: return make_gpu_batch_path(d);
    default: return make_gpu_batch_stream_path(d);
  }
}

// Runs a write pass then a verified read pass; returns the condensed call sequence.
Seq round_trip(Fixture& fx, const Workload& w, uint64_t size) {
  OpenFiles files({fx.dir.file("data")}, size, false, false);
  auto path = path_for(w.xfer, fx.deps);
  EXPECT_TRUE(path->probe(w).ok) << path->probe(w).reason;
  auto run = path->start(w, files.set());
  {
    auto worker = run->make_worker(0);
    EXPECT_EQ(drive(*worker, IoDir::Write, size, static_cast<uint32_t>(w.io_size), false).bytes, size);
  }
  EXPECT_TRUE(testing::file_has_pattern(fx.dir.file("data"), size));
  {
    auto worker = run->make_worker(0);
    const auto r = drive(*worker, IoDir::Read, size, static_cast<uint32_t>(w.io_size), true);
    EXPECT_EQ(r.bytes, size);
    EXPECT_EQ(r.verify_errors, 0U);
  }
  const PathReport rep = run->finish();
  EXPECT_EQ(rep.path_used, "compat");
  EXPECT_FALSE(rep.warnings.empty());
  EXPECT_EQ(fx.cufile.live_handles(), 0);
  EXPECT_EQ(fx.cufile.live_buffers(), 0);
  EXPECT_EQ(fx.cufile.live_batches(), 0);
  EXPECT_EQ(fx.cufile.live_streams(), 0);
  EXPECT_FALSE(fx.cufile.driver_open());
  return fx.cufile.call_sequence();
}

TEST(GpuDirect, CallSequence) {
  Fixture fx;
  const Seq s = round_trip(fx, workload(XferType::GpuDirect, 64 << 10), 1 << 20);
  EXPECT_EQ(s, (Seq{"DriverOpen", "DriverGetProperties", "HandleRegister", "BufRegister", "Write",
                    "BufDeregister", "BufRegister", "Read", "BufDeregister", "HandleDeregister",
                    "DriverClose"}));
  EXPECT_EQ(fx.gpu->stats().device_syncs, 0U) << "cuFileRead is synchronous";
}

TEST(GpuDirect, DashBSkipsBufferRegistration) {
  Fixture fx;
  Workload w = workload(XferType::GpuDirect, 64 << 10);
  w.skip_buffer_register = true;
  const Seq s = round_trip(fx, w, 256 << 10);
  EXPECT_EQ(std::count(s.begin(), s.end(), "BufRegister"), 0);
}

TEST(GpuDirect, HostMemoryTypesAreAllowed) {
  for (MemType m : {MemType::CudaMallocHost, MemType::Malloc, MemType::Mmap, MemType::CuMem}) {
    Fixture fx;
    Workload w = workload(XferType::GpuDirect, 64 << 10);
    w.mem_type = m;
    round_trip(fx, w, 256 << 10);
  }
}

TEST(GpuDirect, NumaNodeBindsThreadAndHostBuffers) {
  if (!std::filesystem::exists("/sys/devices/system/node/node0/cpulist")) {
    GTEST_SKIP() << "no NUMA node 0 in sysfs";
  }
  Fixture fx;
  Workload w = workload(XferType::GpuDirect, 64 << 10);
  w.mem_type = MemType::Mmap;
  w.numa_node = 0;
  round_trip(fx, w, 256 << 10);
  w.numa_node = 4095;  // no such node: binding the -m 4 buffers names it
  OpenFiles files({fx.dir.file("other")}, 64 << 10, false, true);
  auto run = make_gpu_direct_path(fx.deps)->start(w, files.set());
  try {
    auto worker = run->make_worker(0);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("NUMA node 4095"), std::string::npos) << e.what();
  }
}

TEST(GpuDirectAsync, CallSequence) {
  Fixture fx({}, FakeGpuOptions{.copy_delay = std::chrono::microseconds(100)});
  fx.deps.completion = CompletionWait::Device;
  const Seq s = round_trip(fx, workload(XferType::GpuDirectAsync, 64 << 10, 4), 1 << 20);
  EXPECT_EQ(s, (Seq{"DriverOpen", "DriverGetProperties", "HandleRegister", "BufRegister",
                    "StreamRegister", "WriteAsync", "StreamDeregister", "BufDeregister",
                    "BufRegister", "StreamRegister", "ReadAsync", "StreamDeregister",
                    "BufDeregister", "HandleDeregister", "DriverClose"}));
  EXPECT_GT(fx.gpu->stats().device_syncs, 0U) << "GDSB_CUFILE_COMPLETION=device waits for the GPU";
}

TEST(GpuDirectAsync, EventCompletionWaitsOnlyOnTheRequestsOwnEventAndBlocks) {
  // reap takes what has finished without waiting: I/Os that take a while make it wait.
  Fixture fx(opts([](FakeCufileOptions& o) { o.async_delay = std::chrono::milliseconds(2); }));
  fx.deps.completion = CompletionWait::Event;
  round_trip(fx, workload(XferType::GpuDirectAsync, 64 << 10, 4), 1 << 20);
  EXPECT_EQ(fx.gpu->stats().device_syncs, 0U) << "a completion waited for the whole GPU";
  EXPECT_GT(fx.gpu->stats().blocking_waits, 0U) << "waits on storage I/O must sleep, not spin";
  EXPECT_EQ(fx.gpu->stats().spin_waits, 0U);
}

// -w 1 --iodepth 8 must keep 8 cuFileReadAsync in flight, as -x 0 does with 8 threads:
// one registered stream per slot (one stream per thread serialised them, issue 11).
TEST(GpuDirectAsync, EachSlotHasItsOwnRegisteredStreamSoTheDepthIsInFlight) {
  constexpr unsigned kDepth = 8;
  Fixture fx(opts([](FakeCufileOptions& o) { o.async_rendezvous = kDepth; }));
  OpenFiles files({fx.dir.file("data")}, 256 << 10, false, true);
  auto run = make_gpu_direct_async_path(fx.deps)->start(
      workload(XferType::GpuDirectAsync, 4096, kDepth), files.set());
  {
    auto worker = run->make_worker(0);
    const auto r = drive(*worker, IoDir::Read, 256 << 10, 4096, true);
    EXPECT_EQ(r.verify_errors, 0U);
  }
  run->finish();
  EXPECT_EQ(fx.cufile.async_streams_used(), static_cast<int>(kDepth));
  EXPECT_EQ(fx.cufile.async_peak_running(), kDepth) << "the slots' async I/Os did not overlap";
  const auto calls = fx.cufile.calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "StreamRegister"), kDepth);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "StreamDeregister"), kDepth);
  EXPECT_EQ(fx.cufile.live_streams(), 0);
  EXPECT_EQ(fx.gpu->stats().streams_live, 0U);
}

TEST(GpuDirectAsync, AFailedStreamRegistrationReleasesTheStreamsBeforeIt) {
  Fixture fx(opts([](FakeCufileOptions& o) { o.stream_register_fail_at = 2; }));
  OpenFiles files({fx.dir.file("data")}, 64 << 10, false, true);
  auto run = make_gpu_direct_async_path(fx.deps)->start(
      workload(XferType::GpuDirectAsync, 4096, 4), files.set());
  try {
    run->make_worker(0);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("cuFileStreamRegister"), std::string::npos) << e.what();
  }
  const auto calls = fx.cufile.calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "StreamDeregister"), 2);
  EXPECT_EQ(fx.cufile.live_streams(), 0);
  EXPECT_EQ(fx.cufile.live_buffers(), 0);
  EXPECT_EQ(fx.gpu->stats().streams_live, 0U);
}

TEST(GpuBatch, EventCompletionNeverSynchronisesTheDevice) {
  Fixture fx;
  fx.deps.completion = CompletionWait::Event;
  Workload w = workload(XferType::GpuBatch, 64 << 10);
  w.batch_size = 4;
  round_trip(fx, w, 1 << 20);
  EXPECT_EQ(fx.gpu->stats().device_syncs, 0U);
}

TEST(PageCache, ResidentBytesOfAFileAndTheWarningForAnODirectRun) {
  TempDir dir;
  const std::string p = dir.file("cached");
  {
    OpenFiles files({p}, 8 << 20, false, true);  // written and fsynced
    const int fd = files.set().fds[0];
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    const auto before = page_cache_bytes(fd);
    ASSERT_TRUE(before.has_value());
    std::vector<char> buf(8 << 20);
    ASSERT_EQ(::pread(fd, buf.data(), buf.size(), 0), static_cast<ssize_t>(buf.size()));
    const auto after = page_cache_bytes(fd);
    ASSERT_TRUE(after.has_value());
    EXPECT_GE(*after, uint64_t{8} << 20) << "a buffered read leaves the file in the page cache";
    struct statfs fs {};
    // tmpfs pages are the file itself: they cannot be dropped, so there is nothing to compare.
    if (::fstatfs(fd, &fs) == 0 && fs.f_type != TMPFS_MAGIC) {
      EXPECT_LT(*before, *after);
    }
  }
  // 2 GiB file: 1.5 GiB appeared -> warned, naming the file; 8 MiB -> not.
  const auto w = page_cache_warning("/d/f", 2ULL << 30, 0, 3ULL << 29, false);
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("/d/f"), std::string::npos) << *w;
  EXPECT_NE(w->find("not the storage's"), std::string::npos) << *w;
  EXPECT_FALSE(page_cache_warning("/d/f", 2ULL << 30, 0, 8 << 20, true).has_value());
  // Already cached: a possible source only where cuFile may do buffered I/O (compat).
  EXPECT_FALSE(page_cache_warning("/d/f", 2ULL << 30, 1ULL << 30, 1ULL << 30, false).has_value());
  const auto c = page_cache_warning("/d/f", 2ULL << 30, 1ULL << 30, 1ULL << 30, true);
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->find("drop the cache"), std::string::npos) << *c;
}

TEST(CompletionWait, ParsesTheEnvironmentValueAndNamesABadOne) {
  EXPECT_EQ(parse_completion_wait(nullptr), CompletionWait::Event);
  EXPECT_EQ(parse_completion_wait(""), CompletionWait::Event);
  EXPECT_EQ(parse_completion_wait("device"), CompletionWait::Device);
  EXPECT_EQ(parse_completion_wait("event"), CompletionWait::Event);
  try {
    parse_completion_wait("events");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("GDSB_CUFILE_COMPLETION=events"), std::string::npos) << m;
    EXPECT_NE(m.find("'event'"), std::string::npos) << m;
  }
}

TEST(GpuBatch, CallSequenceAndBatchesOfTheDepth) {
  Fixture fx;
  fx.deps.completion = CompletionWait::Device;
  Workload w = workload(XferType::GpuBatch, 64 << 10);
  w.batch_size = 4;
  const Seq s = round_trip(fx, w, 1 << 20);
  EXPECT_EQ(s.front(), "DriverOpen");
  EXPECT_NE(std::find(s.begin(), s.end(), "BatchIOSetUp"), s.end());
  EXPECT_NE(std::find(s.begin(), s.end(), "BatchIOSubmit"), s.end());
  EXPECT_NE(std::find(s.begin(), s.end(), "BatchIOGetStatus"), s.end());
  EXPECT_NE(std::find(s.begin(), s.end(), "BatchIODestroy"), s.end());
  EXPECT_EQ(std::find(s.begin(), s.end(), "StreamRegister"), s.end());
  const auto calls = fx.cufile.calls();
  // 16 writes + 16 reads in batches of 4: 8 submissions.
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "BatchIOSubmit"), 8);
  EXPECT_EQ(std::count(calls.begin(), calls.end(), "BatchIOSetUp"), 2);
  EXPECT_GE(fx.gpu->stats().device_syncs, 8U) << "GDSB_CUFILE_COMPLETION=device waits for the GPU";
}

TEST(GpuBatchStream, RegistersAStreamAroundTheBatch) {
  Fixture fx;
  Workload w = workload(XferType::GpuBatchStream, 64 << 10);
  w.batch_size = 8;
  const Seq s = round_trip(fx, w, 1 << 20);
  const auto at = [&](const char* c) { return std::find(s.begin(), s.end(), c) - s.begin(); };
  EXPECT_LT(at("BatchIOSetUp"), at("StreamRegister"));
  EXPECT_LT(at("StreamRegister"), at("BatchIOSubmit"));
  EXPECT_NE(std::find(s.begin(), s.end(), "StreamDeregister"), s.end());
}

TEST(CufileWaivers, MissingBatchSymbolsWaiveOnlyTheBatchTypes) {
  Fixture fx(opts([](FakeCufileOptions& o) { o.batch_api = false; }));
  const Availability a = make_gpu_batch_path(fx.deps)->probe(workload(XferType::GpuBatch, 4096));
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("lacks cuFileBatchIOSetUp"), std::string::npos) << a.reason;
  EXPECT_FALSE(make_gpu_batch_stream_path(fx.deps)->probe(workload(XferType::GpuBatchStream, 4096)).ok);
  EXPECT_TRUE(make_gpu_direct_path(fx.deps)->probe(workload(XferType::GpuDirect, 4096)).ok);
  EXPECT_TRUE(make_gpu_direct_async_path(fx.deps)->probe(workload(XferType::GpuDirectAsync, 4096)).ok);
}

TEST(CufileWaivers, MissingStreamSymbolsWaiveTheAsyncType) {
  Fixture fx(opts([](FakeCufileOptions& o) { o.stream_api = false; }));
  const Availability a =
      make_gpu_direct_async_path(fx.deps)->probe(workload(XferType::GpuDirectAsync, 4096));
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("cuFileReadAsync"), std::string::npos) << a.reason;
}

TEST(CufileWaivers, NoLibcufileNamesTheLibraryAndTheRemedy) {
  Fixture fx;
  fx.deps.load_cufile = [](const Workload&) { return cufile::load_cufile("/nonexistent/libcufile.so.0"); };
  const Availability a = make_gpu_direct_path(fx.deps)->probe(workload(XferType::GpuDirect, 4096));
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("/nonexistent/libcufile.so.0 could not be loaded"), std::string::npos);
  EXPECT_NE(a.reason.find("GDSB_CUFILE_LIB"), std::string::npos);
}

TEST(CufileFailures, HandleRegistrationWithoutUdevIsExplained) {
  FakeCufileOptions o;
  o.handle_register_error = 5027;
  o.log_dir_line = "ERROR cufio-udev:132 udev property not found: ID_FS_USAGE vda";
  Fixture fx(o);
  fx.deps.roots.udev_root = kFixtures + "/udev-missing";
  OpenFiles files({fx.dir.file("data")}, 1 << 20, false, true);
  try {
    make_gpu_direct_path(fx.deps)->start(workload(XferType::GpuDirect, 4096), files.set());
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cuFileHandleRegister on " + fx.dir.file("data")), std::string::npos) << m;
    EXPECT_NE(m.find("CU_FILE_HANDLE_NOT_REGISTERED (5027)"), std::string::npos) << m;
    EXPECT_NE(m.find("Expose the host's /run/udev"), std::string::npos) << m;
    EXPECT_NE(m.find("udev property not found: ID_FS_USAGE vda"), std::string::npos) << m;
  }
  EXPECT_FALSE(fx.cufile.driver_open()) << "the driver must be closed after a failed start";
  EXPECT_EQ(std::getenv("CUFILE_ENV_PATH_JSON"), nullptr) << "environment not restored";
}

TEST(CufileFailures, IoErrorIsExplainedByName) {
  Fixture fx(opts([](FakeCufileOptions& o) { o.fail_io_at = 3; o.fail_io_result = -5044; }));
  OpenFiles files({fx.dir.file("data")}, 1 << 20, false, true);
  auto run = make_gpu_direct_path(fx.deps)->start(workload(XferType::GpuDirect, 64 << 10), files.set());
  auto worker = run->make_worker(0);
  try {
    drive(*worker, IoDir::Read, 1 << 20, 64 << 10, false);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("cuFileRead on"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CU_FILE_IO_ERROR (5044)"), std::string::npos) << e.what();
  }
}

TEST(CufileFailures, BatchEntryFailureIsExplained) {
  Fixture fx(opts([](FakeCufileOptions& o) { o.fail_io_at = 2; o.fail_io_result = -EIO; }));
  OpenFiles files({fx.dir.file("data")}, 1 << 20, false, true);
  auto run = make_gpu_batch_path(fx.deps)->start(workload(XferType::GpuBatch, 64 << 10, 4), files.set());
  auto worker = run->make_worker(0);
  try {
    drive(*worker, IoDir::Read, 1 << 20, 64 << 10, false);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("EIO"), std::string::npos) << e.what();
  }
}

TEST(CufileFailures, DriverOpenFailureIsExplained) {
  Fixture fx(opts([](FakeCufileOptions& o) { o.driver_open_error = 5011; }));
  OpenFiles files({fx.dir.file("data")}, 1 << 20, false, true);
  try {
    make_gpu_direct_path(fx.deps)->start(workload(XferType::GpuDirect, 4096), files.set());
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("cuFileDriverOpen failed: CU_FILE_CUDA_DRIVER_ERROR (5011)"),
              std::string::npos) << e.what();
  }
}

TEST(RequireGds, CompatCertainBeforeTheRunFailsAtStartAsVerification) {
  Fixture fx;
  Workload w = workload(XferType::GpuDirect, 4096);
  w.require_gds = true;
  OpenFiles files({fx.dir.file("data")}, 1 << 20, false, true);
  try {
    make_gpu_direct_path(fx.deps)->start(w, files.set());
    FAIL();
  } catch (const VerificationError& e) {
    EXPECT_NE(std::string(e.what()).find("nvidia-fs module is not loaded"), std::string::npos);
  }
  EXPECT_TRUE(fx.cufile.calls().empty()) << "nothing should be opened when the answer is known";
}

TEST(RequireGds, CountersThatDoNotMoveFailAtFinish) {
  Fixture fx;
  fx.deps.roots.nvfs_dir = kFixtures + "/nvfs-before";  // loaded, but the fake never moves it
  Workload w = workload(XferType::GpuDirect, 64 << 10);
  w.require_gds = true;
  OpenFiles files({fx.dir.file("data")}, 1 << 20, false, true);
  auto run = make_gpu_direct_path(fx.deps)->start(w, files.set());
  {
    auto worker = run->make_worker(0);
    drive(*worker, IoDir::Read, 1 << 20, 64 << 10, true);
  }
  EXPECT_THROW(run->finish(), VerificationError);
}

TEST(CompatReport, EvidenceNamesEverySource) {
  Fixture fx;
  OpenFiles files({fx.dir.file("data")}, 256 << 10, false, true);
  auto run = make_gpu_direct_path(fx.deps)->start(workload(XferType::GpuDirect, 64 << 10), files.set());
  {
    auto worker = run->make_worker(0);
    drive(*worker, IoDir::Read, 256 << 10, 64 << 10, true);
  }
  const PathReport r = run->finish();
  EXPECT_EQ(r.path_used, "compat");
  std::string all;
  for (const auto& e : r.evidence) all += e + "\n";
  EXPECT_NE(all.find("libcufile: fake-libcufile"), std::string::npos) << all;
  EXPECT_NE(all.find("nvidia-fs not loaded"), std::string::npos) << all;
  EXPECT_NE(all.find("cuFileDriverGetProperties"), std::string::npos) << all;
  EXPECT_NE(all.find("file handle registration: ok"), std::string::npos) << all;
  ASSERT_EQ(r.warnings.size(), 1U);
  EXPECT_NE(r.warnings[0].find("compat mode"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::gpu
