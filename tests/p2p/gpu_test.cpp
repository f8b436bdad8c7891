// On a machine with a GPU: the real CUDA/NVML layers and copy timer. Skipped, visibly,
// where the CUDA runtime finds no GPU.
#include <gtest/gtest.h>

#include <cstdio>

#include "gdsb/p2p/capabilities.hpp"
#include "gdsb/p2p/measure.hpp"

namespace gdsb::p2p {
namespace {

class P2pGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    cuda_ = make_cuda_layer();
    const Availability a = cuda_->probe();
    if (!a.ok || cuda_->device_count() == 0) GTEST_SKIP() << "no GPU: " << a.reason;
    nvml_ = make_nvml_layer();
  }
  std::unique_ptr<CudaLayer> cuda_;
  std::unique_ptr<NvmlLayer> nvml_;
};

TEST_F(P2pGpu, CudaAndNvmlAgreeOnTheGpus) {
  UnavailablePcieTopologySource pcie("not needed");
  const CapabilityReport r = collect_capabilities(*cuda_, *nvml_, pcie);
  ASSERT_EQ(static_cast<int>(r.gpus.size()), cuda_->device_count());
  for (const GpuInfo& g : r.gpus) {
    EXPECT_EQ(g.bdf.size(), 12u) << g.bdf;
    if (nvml_->probe().ok) {
      EXPECT_TRUE(g.nvml_index.has_value()) << g.bdf;
      EXPECT_TRUE(g.pcie.has_value());
    }
  }
  if (nvml_->probe().ok) {
    ASSERT_NE(r.matrix("topology"), nullptr);
  }
  for (const PairCaps& p : r.pairs) EXPECT_TRUE(p.direct.has_value());
}

TEST_F(P2pGpu, HostCopiesAgreeWithPlainCudaMemcpy) {
  UnavailablePcieTopologySource pcie("not needed");
  const CapabilityReport r = collect_capabilities(*cuda_, *nvml_, pcie);
  auto timer = make_cuda_copy_timer();
  MeasureOptions o;
  o.bytes = 256ull << 20;
  o.loops = 4;
  o.repetitions = 7;
  const Measurements m = run_measurements(*timer, r, o);
  ASSERT_FALSE(m.h2d.waived);
  for (const HostSeries* s : {&m.h2d, &m.d2h}) {
    for (const HostFigure& f : s->items) {
      std::printf("GPU%d %.2f GB/s, plain cudaMemcpy %.2f GB/s, ratio %.3f\n", f.gpu, f.gb_s,
                  *f.reference_gb_s, *f.reference_ratio);
      EXPECT_GT(f.gb_s, 0);
      // The acceptance criterion of issue 5: within 5% of a plain pinned cudaMemcpy.
      EXPECT_NEAR(*f.reference_ratio, 1.0, 0.05);
    }
  }
  if (r.gpus.size() >= 2) {
    EXPECT_TRUE(m.d2d_uni_no_p2p.cells[0][1].has_value());
    EXPECT_GT(*m.latency_us.cells[0][1], 0);
  }
}

}  // namespace
}  // namespace gdsb::p2p
