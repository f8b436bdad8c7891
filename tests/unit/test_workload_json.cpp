#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gdsb/result.hpp"
#include "gdsb/workload.hpp"

namespace gdsb {
namespace {

Workload sample_workload() {
  Workload w;
  w.name = "job1";
  w.file = "/data/f";
  w.numa_node = 1;
  w.threads = 4;
  w.file_size = 1ULL << 30;
  w.start_offset = 4096;
  w.io_size = 1 << 20;
  w.xfer = XferType::CpuCachedGpu;
  w.pattern = IoPattern::RandWrite;
  w.mixed_read_percent = 70;
  w.runtime_s = 2.5;
  w.seed = 77;
  w.unaligned_random = true;
  w.random_alignment = 512;
  w.fill_random = true;
  w.verify = true;
  w.odirect = false;
  w.engine = SubmitEngine::IoUring;
  w.iodepth = 32;
  w.warmup_s = 1;
  w.repeat = 3;
  w.allow_overwrite = true;
  return w;
}

TEST(WorkloadJson, RoundTrips) {
  const Workload w = sample_workload();
  const nlohmann::json j = w;
  const Workload back = j.get<Workload>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.numa_node, 1);
  EXPECT_EQ(back.mixed_read_percent, 70U);
  EXPECT_EQ(back.engine, SubmitEngine::IoUring);
  EXPECT_EQ(back.xfer, XferType::CpuCachedGpu);
  EXPECT_EQ(j.at("xfer_name"), "cpu_cached_gpu");
}

TEST(WorkloadJson, RejectsOutOfRangeEnums) {
  nlohmann::json j = sample_workload();
  j["xfer_type"] = 9;
  EXPECT_THROW(j.get<Workload>(), nlohmann::json::exception);
}

TEST(ResultJson, RoundTripsWithRepetitions) {
  RunResult r;
  r.workload = sample_workload();
  r.status = RunStatus::Ok;
  r.path.path_used = "posix";
  r.path.evidence = {"O_DIRECT"};
  r.path.warnings = {"w"};
  Measurement m;
  m.bytes = 1 << 30;
  m.ops = 1024;
  m.read_ops = 700;
  m.write_ops = 324;
  m.seconds = 1.5;
  m.throughput_gib_s = 1.0 / 1.5;
  m.iops = 1024 / 1.5;
  m.latency = {10, 1, 9, 12, 30, 40, 50, 60};
  m.cpu = {12.5, 3.25};
  m.timeseries = {{1.0, 100, 10}, {1.5, 50, 5}};
  m.histogram = {{1.0, 1.5, 3}};
  r.result = m;
  r.repetitions = {m, m, m};
  r.verify_errors = 0;
  r.interrupted = true;
  r.started_at = "2026-01-01T00:00:00Z";
  r.ended_at = "2026-01-01T00:00:02Z";
  const nlohmann::json j = r;
  const RunResult back = j.get<RunResult>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.repetitions.size(), 3U);
  EXPECT_TRUE(j.contains("result"));

  RunResult waived;
  waived.status = RunStatus::Waived;
  waived.reason = "no GPU";
  const nlohmann::json jw = waived;
  EXPECT_FALSE(jw.contains("result"));
  EXPECT_EQ(jw.get<RunResult>().reason, "no GPU");
}

// The GPU's PCI bus id travels with each run (issue 24: a reader maps -d through it); a
// CPU-only run and an older file have none, and the field is then absent, not "".
TEST(ResultJson, GpuPciBusIdRoundTripsAndIsAbsentWhenUnknown) {
  RunResult r;
  r.workload = sample_workload();
  r.path.path_used = "gds-nvfs";
  r.path.gpu_pci_bus_id = "0000:5d:00.0";
  const nlohmann::json j = r;
  EXPECT_EQ(j.at("gpu_pci_bus_id"), "0000:5d:00.0");
  EXPECT_EQ(j.get<RunResult>().path.gpu_pci_bus_id, "0000:5d:00.0");
  r.path.gpu_pci_bus_id.clear();
  const nlohmann::json none = r;
  EXPECT_FALSE(none.contains("gpu_pci_bus_id"));
  EXPECT_TRUE(none.get<RunResult>().path.gpu_pci_bus_id.empty());
}

// The fact that decided a cuFile run's mode (issue 43) travels with the run; other paths
// and older files have none, and the field is then absent.
TEST(ResultJson, PathDecidedByRoundTripsAndIsAbsentWhenUnknown) {
  RunResult r;
  r.workload = sample_workload();
  r.path.path_used = "gds-p2pdma";
  r.path.decided_by = "cuFileDriverGetProperties: nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED set, "
                      "nvidia-fs not loaded";
  const nlohmann::json j = r;
  EXPECT_EQ(j.at("path_decided_by").get<std::string>(), r.path.decided_by);
  EXPECT_EQ(j.get<RunResult>().path.decided_by, r.path.decided_by);
  r.path.decided_by.clear();
  const nlohmann::json none = r;
  EXPECT_FALSE(none.contains("path_decided_by"));
  EXPECT_TRUE(none.get<RunResult>().path.decided_by.empty());
}

// path_used's names and the enum readers compare: one table, both ways.
TEST(ResultJson, PathUsedNamesRoundTrip) {
  for (PathUsed p : {PathUsed::Posix, PathUsed::PageCache, PathUsed::PageCacheHostOnly,
                     PathUsed::PageCachePageable, PathUsed::PageCachePageableHostOnly,
                     PathUsed::GdsNvfs, PathUsed::GdsP2pdma, PathUsed::Compat})
    EXPECT_EQ(path_used_of(path_used_name(p)), p) << path_used_name(p);
  EXPECT_EQ(path_used_of("compat"), PathUsed::Compat);
  EXPECT_EQ(path_used_of("a compat path"), PathUsed::Unknown);
  EXPECT_EQ(path_used_of(""), PathUsed::Unknown);
  EXPECT_TRUE(path_is_gds(path_used_of("gds-p2pdma")));
  EXPECT_FALSE(path_is_gds(path_used_of("compat")));
  EXPECT_TRUE(path_through_page_cache(path_used_of("page-cache (host only)")));
}

}  // namespace
}  // namespace gdsb
