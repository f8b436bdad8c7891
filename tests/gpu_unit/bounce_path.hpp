// The bounce-buffer path of a transfer type (-x 2, 3 or 4) on the given dependencies.
#pragma once

#include <memory>

#include "gdsb/gpu/gpu_paths.hpp"

namespace gdsb::gpu::testing {

inline std::unique_ptr<TransferPath> bounce_path(XferType x, GpuPathDeps d) {
  if (x == XferType::CpuGpu) return make_cpu_gpu_path(std::move(d));
  if (x == XferType::CpuCachedGpu) return make_cpu_cached_gpu_path(std::move(d));
  return make_cpu_async_gpu_path(std::move(d));
}

}  // namespace gdsb::gpu::testing
