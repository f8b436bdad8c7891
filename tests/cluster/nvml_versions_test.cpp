// The CUDA driver version and GPU firmware (VBIOS) in the node fingerprint: read through the
// one NVML shim from the stand-in libnvidia-ml.so.1 (tests/p2p/fake_nvml), left out where
// NVML does not answer (with why), and a node that differs named by the fingerprint diff.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gdsb/cluster/fingerprint.hpp"
#include "gdsb/cluster/node_report.hpp"
#include "gdsb/topo/fingerprint.hpp"
#include "gdsb/topo/fingerprint_file.hpp"
#include "gdsb/nvml.hpp"

namespace gdsb::cluster {
namespace {

constexpr const char* kGpu0 = "0000:00:06.0";  // the stand-in's two H200
constexpr const char* kGpu1 = "0000:00:07.0";

TEST(NvmlVersions, CudaVersionNumberAsNvidiaSmiPrintsIt) {
  EXPECT_EQ(nvml::cuda_version_text(13000), "13.0");
  EXPECT_EQ(nvml::cuda_version_text(12040), "12.4");
  EXPECT_EQ(nvml::cuda_version_text(11080), "11.8");
}

TEST(NvmlVersions, ReadThroughTheShimAndNothingMadeUpWhenNvmlDoesNotAnswer) {
  ::unsetenv("GDSB_FAKE_NVML_CUDA");
  ::unsetenv("GDSB_FAKE_NVML_VBIOS");
  const topo::GpuSoftware silent = topo::read_gpu_software(GDSB_FAKE_NVML);
  EXPECT_EQ(silent.driver, "580.159.04");
  EXPECT_EQ(silent.cuda_driver, "");
  ASSERT_EQ(silent.gpus.size(), 2u);
  EXPECT_EQ(silent.gpus.at(kGpu0).vbios, "");
  // One session gives the fingerprint's other NVML facts too: BAR1 256 GiB, 18 NVLinks.
  EXPECT_EQ(silent.gpus.at(kGpu0).bar1_bytes, 262144ull << 20);
  EXPECT_EQ(silent.gpus.at(kGpu1).nvlinks, 18);
  EXPECT_FALSE(silent.unavailable);

  ::setenv("GDSB_FAKE_NVML_CUDA", "13000", 1);
  ::setenv("GDSB_FAKE_NVML_VBIOS", "96.00.74.00.01", 1);
  const topo::GpuSoftware answered = topo::read_gpu_software(GDSB_FAKE_NVML);
  ::unsetenv("GDSB_FAKE_NVML_CUDA");
  ::unsetenv("GDSB_FAKE_NVML_VBIOS");
  EXPECT_EQ(answered.cuda_driver, "13.0");
  EXPECT_EQ(answered.gpus.at(kGpu0).vbios, "96.00.74.00.01");
  EXPECT_EQ(answered.gpus.at(kGpu1).vbios, "96.00.74.00.01");

  const topo::GpuSoftware none = topo::read_gpu_software("/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(none.driver, "");
  EXPECT_EQ(none.cuda_driver, "");
  EXPECT_TRUE(none.gpus.empty());
  ASSERT_TRUE(none.unavailable);
  EXPECT_NE(none.unavailable->why.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << none.unavailable->why;
}

topo::Snapshot two_gpus() {
  topo::Snapshot s;
  for (const char* bdf : {kGpu0, kGpu1}) {
    topo::Device d;
    d.bdf = bdf;
    d.role = topo::Role::Gpu;
    s.devices.push_back(d);
  }
  return s;
}

// Issue 24: a fact NVML did not give is absent, never the value "not available" (which a
// check without NVML then flagged on every GPU); why it is absent is kept for the check.
TEST(NvmlVersions, FingerprintLeavesOutWhatNvmlDidNotSay) {
  topo::GpuSoftware off;
  off.unavailable = topo::Unreadable{"--no-nvml", true};
  const topo::Fingerprint f = topo::make_fingerprint(two_gpus(), off);
  const auto texts = topo::fact_texts(f.facts);
  EXPECT_EQ(texts.count("CUDA driver"), 0u);
  EXPECT_EQ(texts.count("GPU 0000:00:06.0 VBIOS"), 0u);
  EXPECT_EQ(texts.count("NVIDIA driver"), 0u);
  EXPECT_EQ(texts.at("GPU 0000:00:07.0"), "present");
  const topo::FactKey vbios{topo::FactKind::Gpu, *topo::PciAddress::parse(kGpu1), topo::Fact::Vbios};
  ASSERT_EQ(f.unreadable.count(vbios), 1u);
  EXPECT_EQ(f.unreadable.at(vbios).why, "--no-nvml");
}

TEST(NvmlVersions, ANodeWithOtherFirmwareOrCudaDriverIsNamed) {
  topo::GpuSoftware same;
  same.driver = "580.159.04";
  same.cuda_driver = "13.0";
  same.gpus[kGpu0].vbios = "96.00.74.00.01";
  same.gpus[kGpu1].vbios = "96.00.74.00.01";
  topo::GpuSoftware odd = same;
  odd.cuda_driver = "12.8";
  odd.gpus[kGpu1].vbios = "96.00.61.00.01";
  const Fingerprint a = topo::fact_texts(topo::make_fingerprint(two_gpus(), same).facts);
  const Fingerprint b = topo::fact_texts(topo::make_fingerprint(two_gpus(), odd).facts);
  const auto d = diff_against_majority({{"node01", &a}, {"node02", &a}, {"node03", &b}});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].words, "node03: CUDA driver 12.8 (2 others: 13.0)");
  EXPECT_EQ(d[1].words, "node03: GPU 0000:00:07.0 VBIOS 96.00.61.00.01 (2 others: 96.00.74.00.01)");
}

}  // namespace
}  // namespace gdsb::cluster
