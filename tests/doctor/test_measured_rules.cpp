// Scenarios whose evidence is the measured figures: NUMA of the bounce buffers, page
// cache, the workload itself, one drive of several, and no topology at all.
#include "doctor_test_util.hpp"

namespace gdsb::doctor::testing {
namespace {

TEST(DoctorMeasured, BounceBuffersOnTheRemoteSocket) {
  RunResult x2 = run(XferType::CpuGpu, 4.0);
  x2.workload.numa_node = 1;  // GPU0 sits on node 0
  x2.path.gpu_pci_bus_id = "0000:03:00.0";  // gdsb-io records the GPU of each run
  const auto d = diagnose_with(fx::make_box(2, 1, 1, 2, 0), {run(XferType::CpuOnly, 13.0), x2},
                               p2p_doc(50.0, 49.0, "0000:03:00.0"));
  const Finding* f = find_rule(d, "numa-bounce");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Likely);
  EXPECT_TRUE(contains(f->fix, "gdsb-io -n 0"));
  EXPECT_TRUE(contains(f->fix, "numactl --cpunodebind=0 --membind=0"));
  EXPECT_TRUE(any_contains(f->evidence, "pinned H2D 50.0 GB/s"));
  ASSERT_TRUE(f->expected_gb_s.has_value());
  EXPECT_NEAR(*f->expected_gb_s, 13.0 * 1.073741824, 0.01);  // storage alone binds
  // Bound to the GPU's node: no finding.
  x2.workload.numa_node = 0;
  EXPECT_EQ(find_rule(diagnose_with(fx::make_box(2, 1, 1, 2, 0),
                                    {run(XferType::CpuOnly, 13.0), x2}),
                      "numa-bounce"),
            nullptr);
}

// A buffered -x 1 (-O 1: gdsb-io reports path "posix" without O_DIRECT) reads at page-cache
// speed; storage alone is the O_DIRECT run, for every rule and the summary alike (issue 24:
// best_read took the buffered figure, so -x 2 at 92% of storage looked like a NUMA fault).
TEST(DoctorMeasured, BufferedCpuReadIsNoStorageAloneFigure) {
  RunResult buffered = run(XferType::CpuOnly, 40.0);
  buffered.workload.odirect = false;
  const RunResult direct = run(XferType::CpuOnly, 13.0);
  RunResult x2 = run(XferType::CpuGpu, 12.0);  // no -n: unbound
  x2.path.gpu_pci_bus_id = "0000:03:00.0";     // GPU0, on node 0
  const auto d = diagnose_with(fx::make_box(2, 1, 1, 2, 0), {buffered, direct, x2},
                               p2p_doc(50.0, 49.0, "0000:03:00.0"));
  EXPECT_EQ(find_rule(d, "numa-bounce"), nullptr);
  // 13 GiB/s = 14.0 GB/s, the O_DIRECT run.
  EXPECT_TRUE(contains(d.storage, ": 14.0 GB/s")) << d.storage;
  ASSERT_FALSE(d.gpus.empty());
  ASSERT_TRUE(d.gpus[0].storage_gb_s.has_value());
  EXPECT_NEAR(*d.gpus[0].storage_gb_s, 13.0 * 1.073741824, 0.01);
  // The buffered figure is the page cache's, and said so.
  EXPECT_NE(find_rule(d, "page-cache"), nullptr);
}

TEST(DoctorMeasured, PageCacheFiguresAboveEveryDrive) {
  RunResult cached = run(XferType::CpuOnly, 40.0, "page-cache");
  cached.workload.odirect = false;
  const auto d = diagnose_with(fx::make_box(1, 1, 1, 2, 0), {cached});
  ASSERT_FALSE(d.findings.empty());
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.rule, "page-cache");
  EXPECT_EQ(f.confidence, Confidence::Certain);
  EXPECT_TRUE(any_contains(f.evidence, "exceeds every NVMe drive together (15.8 GB/s)"));
  EXPECT_TRUE(any_contains(f.evidence, "did not use O_DIRECT"));
  EXPECT_TRUE(contains(f.fix, "drop_caches"));
}

// A run on a file system that kept the data in memory (gdsb-io's status "page cache",
// e.g. the survey on a tmpfs) is no storage figure: no ceiling, comparison or verdict.
TEST(DoctorMeasured, PageCacheStatusRunsAreLeftOutAndSaidSo) {
  RunResult tmpfs = run(XferType::CpuOnly, 40.0);
  tmpfs.status = RunStatus::PageCache;
  tmpfs.reason = "100% of the data read stayed in the page cache after posix_fadvise(DONTNEED)";
  const auto d = diagnose_with(fx::make_box(1, 1, 1, 2, 0), {tmpfs, run(XferType::CpuOnly, 1.1)});
  EXPECT_EQ(find_rule(d, "page-cache"), nullptr) << "40 GB/s is not the storage's, nor a finding";
  EXPECT_TRUE(contains(d.storage, ": 1.2 GB/s")) << d.storage;  // 1.1 GiB/s, the disk's
  EXPECT_TRUE(any_contains(d.notes, "page cache: 100% of the data read stayed"));
  const auto alone = diagnose_with(fx::make_box(1, 1, 1, 2, 0), {tmpfs});
  EXPECT_TRUE(alone.storage.empty()) << alone.storage;
  EXPECT_TRUE(alone.findings.empty());
}

TEST(DoctorMeasured, TooFewThreadsProvenByTheLargerRetry) {
  RunResult small = cufile_run(2.0, nvfs_facts(true), 1);
  RunResult big = cufile_run(13.5, nvfs_facts(true), 16);
  big.workload.io_size = 4ULL << 20;
  const auto d = diagnose_with(fx::make_box(1, 1, 1, 2, 0), {small, big});
  const Finding* f = find_rule(d, "workload-limit");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(contains(f->title, "1 thread x 1M"));
  EXPECT_TRUE(any_contains(f->evidence, "16 threads x 4M"));
  EXPECT_TRUE(contains(f->fix, "-w 16"));
  EXPECT_NEAR(*f->expected_gb_s, 13.5 * 1.073741824, 0.01);
}

TEST(DoctorMeasured, OneDriveWhereFourWereExpected) {
  const auto d = diagnose_with(fx::make_box(1, 1, 1, 4, 0),
                               {run(XferType::CpuOnly, 7.0), cufile_run(6.9, nvfs_facts(true), 16)});
  const Finding* f = find_rule(d, "single-drive");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Likely);
  EXPECT_TRUE(contains(f->title, "where 4 drives are near GPU0"));
  EXPECT_TRUE(contains(f->fix, "mdadm --create /dev/md0 --level=0 --raid-devices=4"));
  EXPECT_NEAR(*f->expected_gb_s, 4 * 7.876, 0.01);
}

TEST(DoctorMeasured, NoTopologyStillDiagnosesTheStorageSide) {
  const RunResult x0 = not_run(XferType::GpuDirect, RunStatus::Waived,
                               "no NVIDIA driver (libcuda.so.1 not found)");
  RunResult cached = run(XferType::CpuCachedGpu, 9.0, "page-cache (host only)");
  cached.workload.odirect = true;
  Figures f = figures_of({run(XferType::CpuOnly, 1.1), cached, x0});
  const auto d = diagnose(nullptr, f);
  EXPECT_TRUE(any_contains(d.notes, "no topology input"));
  const Finding* p = find_rule(d, "page-cache");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->confidence, Confidence::Likely);
  EXPECT_TRUE(any_contains(p->evidence, "of storage alone with O_DIRECT"));
  EXPECT_EQ(find_rule(d, "cufile-missing"), nullptr);  // no driver is not a missing cuFile
}

TEST(DoctorMeasured, P2pDocumentWithoutMeasurementsSaysSo) {
  Figures f;
  add_p2p_document(f, {{"schema", "gdsbench.p2p/1"}, {"gpus", nlohmann::json::array()}}, "p.json");
  EXPECT_TRUE(contains(f.host_link_waived, "without --measure"));
  Figures w;
  add_p2p_document(w, {{"measurements", {{"h2d", {{"waived", "no GPU"}}}}}}, "p.json");
  EXPECT_TRUE(contains(w.host_link_waived, "no GPU"));
  EXPECT_THROW(add_p2p_document(w, {{"measurements", {{"h2d", 3}}}}, "p.json"), RuntimeError);
}

}  // namespace
}  // namespace gdsb::doctor::testing
