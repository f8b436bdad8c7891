// Real-GPU tests of every GPU transfer type: write a pattern, read it back with
// verification, through the same PathWorker interface the runner drives. Skipped with the
// probe's reason where there is no GPU, driver or libcufile. Files go to $GDSB_TEST_DIR
// (default: the system temp directory), which must accept O_DIRECT for -x 0/2/3/5/6/7.
//
// GDSB_EXPECT_UDEV_FAILURE=1 (set by ci/gpu-test.sh before it creates a udev record)
// turns the cuFile tests into a check that the missing udev database is explained.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "drive.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/cuda_service.hpp"
#include "gdsb/gpu/gpu_paths.hpp"

namespace gdsb::gpu {
namespace {

using testing::drive;
using testing::OpenFiles;
using testing::TempDir;

constexpr uint32_t kIoSize = 1U << 20;

// GDSB_GPU_TEST_SIZE_MIB (default 64) sizes the test file; GDSB_GPU_TEST_DROP_CACHES=1
// drops the page cache between the write and the read pass (root only), so the printed
// read figure is a cold one.
uint64_t file_size() {
  const char* v = std::getenv("GDSB_GPU_TEST_SIZE_MIB");
  return (v != nullptr ? std::stoull(v) : 64ULL) << 20;
}

// Sectors read and written by the block device holding `path` (/proc/diskstats), and the
// share of the file resident in the page cache (mincore): printed around each pass so a
// figure can be traced to the disk or to the page cache.
struct DiskCounters {
  uint64_t read_bytes = 0, write_bytes = 0;
};
DiskCounters disk_counters(const std::string& path) {
  struct stat st {};
  DiskCounters c;
  if (::stat(path.c_str(), &st) != 0) return c;
  std::ifstream in("/proc/diskstats");
  unsigned maj = 0, min = 0;
  std::string name;
  uint64_t f[11] = {};
  while (in >> maj >> min >> name) {
    for (auto& v : f) in >> v;
    std::string rest;
    std::getline(in, rest);
    if (maj == major(st.st_dev) && min == minor(st.st_dev)) return {f[2] * 512, f[6] * 512};
  }
  return c;
}
double resident_fraction(const std::string& path, uint64_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return -1;
  const uint64_t pages = (size + 4095) / 4096;
  std::vector<unsigned char> v(pages);
  double frac = -1;
  if (::mincore(m, size, v.data()) == 0) {
    frac = static_cast<double>(std::count_if(v.begin(), v.end(), [](unsigned char b) { return b & 1; })) /
           static_cast<double>(pages);
  }
  ::munmap(m, size);
  return frac;
}

void maybe_drop_caches() {
  const char* v = std::getenv("GDSB_GPU_TEST_DROP_CACHES");
  if (v == nullptr || std::string(v) != "1") return;
  ::sync();
  std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
}

bool expect_udev_failure() {
  const char* v = std::getenv("GDSB_EXPECT_UDEV_FAILURE");
  return v != nullptr && std::string(v) == "1";
}

class RealGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    deps_ = default_gpu_path_deps();
    const Availability a = deps_.service->probe();
    if (!a.ok) GTEST_SKIP() << a.reason;
  }
  GpuPathDeps deps_;
};

TEST_F(RealGpu, ServiceCopiesEveryMemoryType) {
  deps_.service->use_device(0);
  const DeviceProperties p = deps_.service->properties(0);
  std::cout << "[ info ] GPU 0: " << p.name << " at " << p.pci_bus_id << "\n";
  for (MemType m : {MemType::CudaMalloc, MemType::CuMem, MemType::CudaMallocHost, MemType::Malloc,
                    MemType::Mmap}) {
    DeviceBuffer b(*deps_.service, m, 1 << 20);
    const auto want = testing::pattern(0, 1 << 20, 3);
    std::vector<std::byte> got(1 << 20);
    if (b.allocation().on_device) {
      deps_.service->copy(b.data(), want.data(), want.size(), CopyDir::HostToDevice);
      deps_.service->copy(got.data(), b.data(), got.size(), CopyDir::DeviceToHost);
    } else {
      std::memcpy(b.data(), want.data(), want.size());
      std::memcpy(got.data(), b.data(), got.size());
    }
    EXPECT_EQ(got, want) << mem_type_name(m);
  }
}

std::unique_ptr<TransferPath> path_for(XferType x, const GpuPathDeps& d) {
  switch (x) {
    case XferType::CpuGpu: return make_cpu_gpu_path(d);
    case XferType::CpuAsyncGpu: return make_cpu_async_gpu_path(d);
    case XferType::CpuCachedGpu: return make_cpu_cached_gpu_path(d);
    case XferType::GpuDirect: return make_gpu_direct_path(d);
    case XferType::GpuDirectAsync: return make_gpu_direct_async_path(d);
    case XferType::GpuBatch: return make_gpu_batch_path(d);
    default: return make_gpu_batch_stream_path(d);
  }
}

class EveryType : public RealGpu, public ::testing::WithParamInterface<XferType> {};

TEST_P(EveryType, WritesAndReadsWithVerification) {
  Workload w;
  w.xfer = GetParam();
  w.io_size = kIoSize;
  w.iodepth = 4;
  w.odirect = GetParam() != XferType::CpuCachedGpu;
  auto path = path_for(w.xfer, deps_);
  const Availability a = path->probe(w);
  if (!a.ok) GTEST_SKIP() << "waived: " << a.reason;
  const uint64_t kFileSize = file_size();
  TempDir dir;
  OpenFiles files({dir.file("data")}, kFileSize, path->needs_odirect(w), false);
  std::unique_ptr<PathRun> run;
  try {
    run = path->start(w, files.set());
  } catch (const RuntimeError& e) {
    if (xfer_uses_cufile(w.xfer) && expect_udev_failure()) {
      const std::string m = e.what();
      std::cout << "[ info ] expected failure, explained as:\n" << m << "\n";
      EXPECT_NE(m.find("CU_FILE_HANDLE_NOT_REGISTERED (5027)"), std::string::npos) << m;
      EXPECT_NE(m.find("udev database"), std::string::npos) << m;
      return;
    }
    FAIL() << e.what();
  }
  ASSERT_FALSE(xfer_uses_cufile(w.xfer) && expect_udev_failure())
      << "registration succeeded although no udev record exists";
  testing::DriveResult wr, rd;
  const std::string data = dir.file("data");
  const DiskCounters d0 = disk_counters(data);
  const auto w0 = std::chrono::steady_clock::now();
  {
    auto worker = run->make_worker(0);
    wr = drive(*worker, IoDir::Write, kFileSize, kIoSize, false);
  }  // the worker's destructor waits for anything still in flight
  const double write_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const DiskCounters d1 = disk_counters(data);
  const double resident_after_write = resident_fraction(data, kFileSize);
  EXPECT_TRUE(testing::file_has_pattern(data, kFileSize));
  maybe_drop_caches();
  const double resident_before_read = resident_fraction(data, kFileSize);
  const DiskCounters d2 = disk_counters(data);
  const auto r0 = std::chrono::steady_clock::now();
  {
    auto worker = run->make_worker(0);
    rd = drive(*worker, IoDir::Read, kFileSize, kIoSize, true);
  }
  const double read_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
  const DiskCounters d3 = disk_counters(data);
  std::cout << "[ info ] -x " << static_cast<int>(w.xfer) << " disk during write pass: "
            << ((d1.write_bytes - d0.write_bytes) >> 20) << " MiB written; page cache after write: "
            << resident_after_write * 100 << "%; before read: " << resident_before_read * 100
            << "%; disk during read pass: " << ((d3.read_bytes - d2.read_bytes) >> 20)
            << " MiB read; wall-clock incl. worker setup/teardown and -V: write "
            << static_cast<double>(kFileSize) / write_wall / (1 << 30) << " GiB/s, read "
            << static_cast<double>(kFileSize) / read_wall / (1 << 30) << " GiB/s\n";
  EXPECT_EQ(rd.bytes, kFileSize);
  EXPECT_EQ(rd.verify_errors, 0U);
  const PathReport rep = run->finish();
  std::cout << "[ info ] -x " << static_cast<int>(w.xfer) << " (" << xfer_label(w.xfer)
            << ") path_used=" << rep.path_used << " write "
            << static_cast<double>(wr.bytes) / wr.seconds / (1 << 30) << " GiB/s, read "
            << static_cast<double>(rd.bytes) / rd.seconds / (1 << 30)
            << " GiB/s (one thread, " << (kFileSize >> 20) << " MiB, --iodepth 4; not a benchmark)\n";
  for (const auto& e : rep.evidence) std::cout << "[ info ]   evidence: " << e << "\n";
  for (const auto& e : rep.warnings) std::cout << "[ info ]   warning: " << e << "\n";
  EXPECT_FALSE(rep.path_used.empty());
  if (xfer_uses_cufile(w.xfer)) {
    EXPECT_TRUE(rep.path_used == "compat" || rep.path_used == "gds-nvfs" ||
                rep.path_used == "gds-p2pdma")
        << rep.path_used;
  }
}

INSTANTIATE_TEST_SUITE_P(X, EveryType,
                         ::testing::Values(XferType::GpuDirect, XferType::CpuGpu,
                                           XferType::CpuAsyncGpu, XferType::CpuCachedGpu,
                                           XferType::GpuDirectAsync, XferType::GpuBatch,
                                           XferType::GpuBatchStream),
                         [](const ::testing::TestParamInfo<XferType>& p) {
                           return std::string(xfer_name(p.param));
                         });

TEST(NoGpu, ProbeNamesWhatIsMissing) {
  auto svc = make_cuda_service();
  const Availability a = svc->probe();
  if (a.ok) GTEST_SKIP() << "a GPU is present";
  // One of the documented reasons, never a bare error number.
  EXPECT_TRUE(a.reason.rfind("no NVIDIA driver", 0) == 0 || a.reason.rfind("no GPU", 0) == 0 ||
              a.reason.rfind("CUDA driver too old", 0) == 0 ||
              a.reason.find("built without the CUDA toolkit") != std::string::npos)
      << a.reason;
}

}  // namespace
}  // namespace gdsb::gpu
