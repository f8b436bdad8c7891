// Golden tests of the text reporters: fixed inputs, exact expected output. The gdsio
// line must match gdsio byte for byte so that existing parsers keep working.
#include "gdsb/report/gdsio_line.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "gdsb/report/io_table.hpp"
#include "gdsb/report/job_stats.hpp"

namespace gdsb::report {
namespace {

// The numbers of the sample line in REFERENCE.md: 8 threads, 1 MiB I/Os, 4000 MiB file.
RunResult sample() {
  RunResult r;
  r.workload.xfer = XferType::GpuDirect;
  r.workload.pattern = IoPattern::Read;
  r.workload.threads = 8;
  r.workload.file = "/mnt/nvme/f";
  r.workload.file_size = 4000ULL << 20;
  r.workload.io_size = 1ULL << 20;
  r.result.bytes = 818796544ULL * 1024;
  r.result.ops = 799606;
  r.result.seconds = 119.679102;
  r.result.throughput_gib_s = 6.524658;
  r.result.latency.mean_us = 1197.370995;
  r.path.path_used = "gds-nvfs";
  return r;
}

TEST(GdsioLine, MatchesGdsioByteForByte) {
  EXPECT_EQ(gdsio_line(sample()),
            "IoType: READ XferType: GPUD Threads: 8 DataSetSize: 818796544/4096000(KiB) "
            "IOSize: 1024(KiB) Throughput: 6.524658 GiB/sec, Avg_Latency: 1197.370995 usecs "
            "ops: 799606 total_time 119.679102 secs");
}

TEST(GdsioLine, DirectoryModeCountsOneFilePerThread) {
  RunResult r = sample();
  r.workload.file.clear();
  r.workload.directory = "/mnt/nvme";
  r.workload.threads = 4;
  r.workload.file_size = 1ULL << 30;
  r.workload.xfer = XferType::CpuOnly;
  r.workload.pattern = IoPattern::Write;
  EXPECT_EQ(gdsio_line(r).substr(0, 84),
            "IoType: WRITE XferType: CPUONLY Threads: 4 DataSetSize: 818796544/4194304(KiB) IOSiz");
}

TEST(GdsioLine, BatchTypesInsertIoDepthAfterThreads) {
  RunResult r = sample();
  r.workload.xfer = XferType::GpuBatch;
  r.workload.batch_size = 32;
  r.workload.pattern = IoPattern::RandRead;
  EXPECT_EQ(gdsio_line(r).substr(0, 75),
            "IoType: RANDREAD XferType: GPU_BATCH Threads: 8 IoDepth: 32 DataSetSize: 81");
}

TEST(GdsioBlock, WarningsFollowTheLine) {
  RunResult r = sample();
  r.path.warnings = {"cuFile ran in compat mode", "second"};
  const std::string text = gdsio_block(r);
  EXPECT_EQ(text, gdsio_line(r) + "\nwarning: cuFile ran in compat mode\nwarning: second\n");
}

// A GDS run names its mode and the fact that decided it once, under the line; a compat
// run's warning already says both, so it gets no path line.
TEST(GdsioBlock, GdsModeAndItsFactFollowTheLine) {
  RunResult r = sample();
  r.path.path_used = "gds-p2pdma";
  r.path.decided_by = "cuFileDriverGetProperties: nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED set, "
                      "nvidia-fs not loaded";
  EXPECT_EQ(gdsio_block(r), gdsio_line(r) +
                                "\npath: gds-p2pdma (cuFileDriverGetProperties: nvfs.dstatusflags "
                                "CU_FILE_NVME_P2P_SUPPORTED set, nvidia-fs not loaded)\n");
  r.path.path_used = "compat";
  r.path.decided_by = "the nvidia-fs module is not loaded";
  r.path.warnings = {"cuFile ran in compat mode: the nvidia-fs module is not loaded"};
  EXPECT_EQ(gdsio_block(r),
            gdsio_line(r) + "\nwarning: cuFile ran in compat mode: the nvidia-fs module is not loaded\n");
}

TEST(GdsioBlock, RepetitionsFollowTheMedianLine) {
  RunResult r = sample();
  r.repetitions.resize(2);
  r.repetitions[0].throughput_gib_s = 1.5;
  r.repetitions[0].latency.mean_us = 10;
  r.repetitions[0].latency.p99_us = 20;
  r.repetitions[0].ops = 7;
  r.repetitions[0].seconds = 0.25;
  const std::string text = gdsio_block(r);
  EXPECT_EQ(text.substr(gdsio_line(r).size() + 1),
            "repetition 1/2: Throughput: 1.500000 GiB/sec, Avg_Latency: 10.000000 usecs p99: "
            "20.000000 usecs ops: 7 total_time 0.250000 secs\n"
            "repetition 2/2: Throughput: 0.000000 GiB/sec, Avg_Latency: 0.000000 usecs p99: "
            "0.000000 usecs ops: 0 total_time 0.000000 secs\n");
}

// -x 2 at one thread on the H200 (docs/PERFORMANCE.md, issue 11): 157 us storage, 19 us
// copy per 1 MiB I/O; storage rate 1 MiB / 157 us = 6.22 GiB/s, ceiling x 157 / 176 = 5.55.
IoPhases sample_phases() {
  IoPhases p;
  p.storage = {1000, {}};
  p.storage.us.mean_us = 157.0;
  p.copy = {1000, {}};
  p.copy.us.mean_us = 19.0;
  p.dma = {1000, {}};
  p.dma.us.mean_us = 18.25;
  p.storage_gib_s = 6.2206;
  p.sync_ceiling_gib_s = 5.5491;
  return p;
}

TEST(GdsioBlock, PhasesFollowTheLineOfABounceRun) {
  RunResult r = sample();
  r.workload.xfer = XferType::CpuGpu;
  r.result.phases = sample_phases();
  EXPECT_EQ(gdsio_block(r).substr(gdsio_line(r).size() + 1),
            "phases: storage 157.0 us, copy 19.0 us (DMA 18.2 us) per I/O (means of 1000 I/Os)\n"
            "synchronous ceiling: storage 157.0 / (157.0 + 19.0) us x storage rate 6.22 GiB/s = "
            "5.55 GiB/s\n");
}

TEST(GdsioBlock, AsyncPhasesShowTheWaitAndAnUntimedDma) {
  IoPhases p = sample_phases();
  p.dma = {};
  p.wait = {1000, {}};
  p.wait.us.mean_us = 3.04;
  p.storage_gib_s = p.sync_ceiling_gib_s = 0;
  EXPECT_EQ(phases_text(p),
            "phases: storage 157.0 us, copy 19.0 us (DMA not timed), wait 3.0 us per I/O (means "
            "of 1000 I/Os)\n");
}

TEST(GdsioBlock, WaivedSaysNotAvailable) {
  RunResult r = sample();
  r.status = RunStatus::Waived;
  r.reason = "libcufile.so.0 not found";
  EXPECT_EQ(gdsio_block(r), "not available: libcufile.so.0 not found\n");
}

// Measured, but the memory's figures: the line stays (parsers), the status follows it, and
// the table's row and note say "page cache".
TEST(GdsioBlock, PageCacheKeepsTheLineAndSaysWhy) {
  RunResult r = sample();
  r.status = RunStatus::PageCache;
  r.reason = "100% of the data read stayed in the page cache";
  EXPECT_EQ(gdsio_block(r), gdsio_line(r) + "\npage cache: 100% of the data read stayed in the page cache\n");
  const std::vector<RunResult> runs{r};
  const std::string t = io_table(runs);
  EXPECT_NE(t.find("6.525"), std::string::npos) << t;
  EXPECT_NE(t.find("1 gpu_direct: page cache: 100% of the data read stayed"), std::string::npos) << t;
}

TEST(IoTable, HasHeaderRowsAndReasons) {
  std::vector<RunResult> runs{sample(), sample()};
  runs[0].result.iops = 6681.2;
  runs[0].result.latency.p50_us = 1100.4;
  runs[0].result.latency.p99_us = 2500.0;
  runs[0].result.latency.p999_us = 9.25;
  runs[1].status = RunStatus::Waived;
  runs[1].reason = "no GPU";
  const std::string t = io_table(runs);
  EXPECT_NE(t.find("GiB/s"), std::string::npos);
  EXPECT_NE(t.find("6.525"), std::string::npos);
  EXPECT_NE(t.find("6681"), std::string::npos);
  EXPECT_NE(t.find("1100"), std::string::npos);
  EXPECT_NE(t.find("9.25"), std::string::npos);
  EXPECT_NE(t.find("gds-nvfs"), std::string::npos);
  EXPECT_NE(t.find("2 gpu_direct: not available: no GPU"), std::string::npos);
}

// Issue 35: the survey on a machine without a driver printed the driver's absence seven
// times, once per waived GPU type. Each -x (0..7) reads sequentially and randomly, as the
// survey does; only -x 1 (CPU only, rows 3 and 4) runs.
TEST(IoTable, AReasonEveryGpuTypeSharesIsOneNote) {
  const std::string why = "no NVIDIA driver (libcuda.so.1 not found: test)";
  std::vector<RunResult> runs;
  for (int x = 0; x < 8; ++x)
    for (IoPattern p : {IoPattern::Read, IoPattern::RandRead}) {
      RunResult r = sample();
      r.workload.xfer = static_cast<XferType>(x);
      r.workload.pattern = p;
      if (x != 1) {
        r.status = RunStatus::Waived;
        r.reason = why;
        r.result = {};
      }
      runs.push_back(r);
    }
  const std::string t = io_table(runs);
  EXPECT_NE(t.find("\n  1,2,5-16 not available: " + why + "\n"), std::string::npos) << t;
  EXPECT_EQ(t.find(why), t.rfind(why)) << t;  // once
}

TEST(FormatBytes, ExactAndFractional) {
  EXPECT_EQ(format_bytes(4096), "4 KiB");
  EXPECT_EQ(format_bytes(1 << 20), "1 MiB");
  EXPECT_EQ(format_bytes(1000), "1000 B");
  EXPECT_EQ(format_bytes(1536ULL << 20), "1.5 GiB");
}

TEST(JobStats, ListsPercentiles) {
  RunResult r = sample();
  r.result.latency.p99_us = 2500.5;
  const std::string s = job_stats(r);
  EXPECT_NE(s.find("p99 2500.50"), std::string::npos);
  EXPECT_NE(s.find("path: gds-nvfs"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::report
