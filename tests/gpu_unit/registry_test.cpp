// add_gpu_paths lists every GPU type of gdsio; without a usable GPU each one is waived with
// the reason the service gives (no driver here, or a build without the CUDA toolkit).
#include <gtest/gtest.h>

#include "gdsb/gpu/cuda_service.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/runner.hpp"

namespace gdsb::gpu {
namespace {

TEST(GpuRegistry, ListsEveryGpuType) {
  PathRegistry reg;
  add_gpu_paths(reg);
  for (XferType x : {XferType::GpuDirect, XferType::CpuGpu, XferType::CpuAsyncGpu,
                     XferType::CpuCachedGpu, XferType::GpuDirectAsync, XferType::GpuBatch,
                     XferType::GpuBatchStream}) {
    ASSERT_NE(reg.find(x), nullptr) << xfer_name(x);
    EXPECT_EQ(reg.find(x)->type(), x);
  }
  EXPECT_EQ(reg.find(XferType::CpuOnly), nullptr);
  EXPECT_EQ(reg.all().size(), 7U);
}

TEST(GpuRegistry, DefaultRegistryHasOnePathPerType) {
  const PathRegistry reg = make_default_registry();
  EXPECT_EQ(reg.all().size(), 8U);
  for (int x = 0; x <= 7; ++x) {
    const auto t = static_cast<XferType>(x);
    int n = 0;
    for (const auto& p : reg.all()) n += p->type() == t ? 1 : 0;
    EXPECT_EQ(n, 1) << xfer_name(t);
  }
}

TEST(GpuRegistry, WithoutAGpuEveryTypeIsWaivedWithTheReason) {
  if (make_cuda_service()->probe().ok) GTEST_SKIP() << "a GPU is usable here";
  PathRegistry reg;
  add_gpu_paths(reg);
  for (const auto& p : reg.all()) {
    Workload w;
    w.xfer = p->type();
    w.io_size = 1 << 20;
    const Availability a = p->probe(w);
    if (p->type() == XferType::CpuCachedGpu) {  // runs its host part without a GPU
      EXPECT_TRUE(a.ok) << a.reason;
      continue;
    }
    EXPECT_FALSE(a.ok) << xfer_name(p->type());
    EXPECT_TRUE(a.reason.rfind("no NVIDIA driver (libcuda.so.1 not found", 0) == 0 ||
                a.reason.rfind("no GPU (", 0) == 0 ||
                a.reason.rfind("CUDA driver too old", 0) == 0 ||
                a.reason.rfind("this gdsbench was built without the CUDA toolkit", 0) == 0)
        << a.reason;
  }
}

}  // namespace
}  // namespace gdsb::gpu
