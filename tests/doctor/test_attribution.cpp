// Which GPU a run is charged to (issue 24): by the PCI bus id gdsb-io records with each
// run, never by taking the CUDA index -d for the PCI order. On the real 8x H100 HGX
// recording (fixtures/SOURCES.md), with CUDA_VISIBLE_DEVICES=3,1 as a user sets it to run
// on the fourth and second GPU.
#include "doctor_test_util.hpp"

namespace gdsb::doctor::testing {
namespace {

// The recording's GPUs in PCI order, read off hgx-h100-lspci-vvv.txt ("3D controller:
// NVIDIA Corporation Device 2330"): 19, 3b, 4c, 5d, 9b, bb, cb, db. CUDA_VISIBLE_DEVICES=3,1
// makes CUDA device 0 the fourth (0000:5d:00.0) and device 1 the second (0000:3b:00.0).
constexpr const char* kGpu3 = "0000:5d:00.0";
constexpr const char* kGpu1 = "0000:3b:00.0";

Platform hgx() {
  return platform_from_snapshot(
      topo::collect_lspci_text(GDSB_DOCTOR_FIXTURES "/hgx-h100-lspci-vvv.txt"), "hgx");
}

// GDS reads (gds-nvfs) on CUDA device d; bus_id as gdsb-io records it ("" for an old report).
RunResult gds_on(int d, double gib_s, const std::string& bus_id) {
  RunResult r = cufile_run(gib_s, nvfs_facts(true), 16);
  r.workload.gpu = d;
  r.path.gpu_pci_bus_id = bus_id;
  return r;
}

const GpuDiagnosis* gpu_at(const Diagnosis& d, const std::string& bdf) {
  for (const auto& g : d.gpus)
    if (g.bdf == bdf) return &g;
  return nullptr;
}

TEST(DoctorAttribution, VisibleDevicesChargeEachRunToTheGpuOfItsRecordedBusId) {
  Platform p = hgx();
  const Figures f = figures_of({run(XferType::CpuOnly, 7.3), gds_on(0, 7.2, kGpu3),
                                gds_on(1, 3.0, kGpu1)},
                               {{"CUDA_VISIBLE_DEVICES", "3,1"}});
  const Diagnosis d = diagnose(&p, f);
  ASSERT_EQ(d.gpus.size(), 8U);
  const GpuDiagnosis* g3 = gpu_at(d, kGpu3);
  const GpuDiagnosis* g1 = gpu_at(d, kGpu1);
  ASSERT_NE(g3, nullptr);
  ASSERT_NE(g1, nullptr);
  EXPECT_EQ(g3->label, "GPU3");
  // -d 0 read 7.2 GiB/s = 7.7 GB/s on 0000:5d:00.0, -d 1 3.0 GiB/s = 3.2 GB/s on 3b:00.0.
  ASSERT_TRUE(g3->measured_gb_s.has_value());
  EXPECT_NEAR(*g3->measured_gb_s, 7.2 * 1.073741824, 0.01);
  ASSERT_TRUE(g1->measured_gb_s.has_value());
  EXPECT_NEAR(*g1->measured_gb_s, 3.0 * 1.073741824, 0.01);
  // The first GPU by PCI order (0000:19:00.0) ran nothing.
  EXPECT_FALSE(gpu_at(d, "0000:19:00.0")->measured_gb_s.has_value());
  EXPECT_TRUE(contains(d.headline, "storage-bound: GPU3 reads at 7.7 GB/s")) << d.headline;
  EXPECT_FALSE(contains(d.headline, "GPU0")) << d.headline;
  EXPECT_FALSE(any_contains(d.notes, "charged to no GPU"));
}

// An older report (no bus id) under CUDA_VISIBLE_DEVICES and CUDA's default order: the
// doctor cannot tell the GPU, so it charges the run to none and says why.
TEST(DoctorAttribution, RunWithoutBusIdUnderVisibleDevicesIsPlacedNowhere) {
  Platform p = hgx();
  const Figures f = figures_of({run(XferType::CpuOnly, 7.3), gds_on(0, 7.2, "")},
                               {{"CUDA_VISIBLE_DEVICES", "3,1"}});
  const Diagnosis d = diagnose(&p, f);
  for (const auto& g : d.gpus) EXPECT_FALSE(g.measured_gb_s.has_value()) << g.label;
  EXPECT_TRUE(any_contains(d.notes, "-d 0 is charged to no GPU: it records no GPU PCI bus id"));
  EXPECT_TRUE(any_contains(d.notes, "CUDA_DEVICE_ORDER was not set"));
  EXPECT_FALSE(contains(d.nothing_wrong, "GPU0"));
}

// With CUDA_DEVICE_ORDER=PCI_BUS_ID the indices in CUDA_VISIBLE_DEVICES are PCI-order
// indices: an older report's -d maps through them.
TEST(DoctorAttribution, PciBusIdOrderMapsAnOldRunThroughVisibleDevices) {
  Platform p = hgx();
  const Figures f = figures_of(
      {gds_on(0, 7.2, ""), gds_on(1, 3.0, "")},
      {{"CUDA_VISIBLE_DEVICES", "3,1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
  const Diagnosis d = diagnose(&p, f);
  ASSERT_TRUE(gpu_at(d, kGpu3)->measured_gb_s.has_value());
  EXPECT_NEAR(*gpu_at(d, kGpu3)->measured_gb_s, 7.2 * 1.073741824, 0.01);
  ASSERT_TRUE(gpu_at(d, kGpu1)->measured_gb_s.has_value());
  EXPECT_NEAR(*gpu_at(d, kGpu1)->measured_gb_s, 3.0 * 1.073741824, 0.01);
  EXPECT_FALSE(gpu_at(d, "0000:19:00.0")->measured_gb_s.has_value());
  // Without CUDA_VISIBLE_DEVICES the index is the PCI order itself.
  const Diagnosis plain =
      diagnose(&p, figures_of({gds_on(1, 3.0, "")}, {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}));
  EXPECT_TRUE(gpu_at(plain, kGpu1)->measured_gb_s.has_value());
}

// CUDA_VISIBLE_DEVICES naming GPUs by UUID cannot be mapped from an index, even in PCI
// order: an older run is charged to none; a run with its bus id is placed all the same.
TEST(DoctorAttribution, VisibleDevicesByUuidNeedTheRecordedBusId) {
  Platform p = hgx();
  const std::map<std::string, std::string> env{
      {"CUDA_VISIBLE_DEVICES", "GPU-4964db7b-bd9e-ca3"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}};
  const Diagnosis old = diagnose(&p, figures_of({gds_on(0, 7.2, "")}, env));
  for (const auto& g : old.gpus) EXPECT_FALSE(g.measured_gb_s.has_value()) << g.label;
  EXPECT_TRUE(any_contains(old.notes, "names GPUs by something other than"));
  const Diagnosis now = diagnose(&p, figures_of({gds_on(0, 7.2, kGpu3)}, env));
  EXPECT_TRUE(gpu_at(now, kGpu3)->measured_gb_s.has_value());
}

// A finding about a run names the GPU the run used: a compat-mode run on -d 0 under
// CUDA_VISIBLE_DEVICES=3,1 is about 0000:5d:00.0.
TEST(DoctorAttribution, FindingsNameTheGpuOfTheRecordedBusId) {
  Platform p = hgx();
  RunResult compat = cufile_run(1.0, no_nvfs_facts(), 16);
  compat.path.gpu_pci_bus_id = kGpu3;
  const Diagnosis d = diagnose(&p, figures_of({compat}, {{"CUDA_VISIBLE_DEVICES", "3,1"}}));
  const Finding* f = find_rule(d, "compat-mode");
  ASSERT_NE(f, nullptr);
  ASSERT_FALSE(f->devices.empty());
  EXPECT_EQ(f->devices.front(), std::string("GPU3 ") + kGpu3);
}

}  // namespace
}  // namespace gdsb::doctor::testing
