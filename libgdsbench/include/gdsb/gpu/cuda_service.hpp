// The CUDA implementation of GpuService (cudart_static; libcuda is loaded by the runtime
// at run time, so the binary starts on a machine without a driver and probe() says so).
// In a build without the CUDA toolkit, make_cuda_service() returns a service whose probe
// explains that and whose other methods throw.
#pragma once

#include <memory>

#include "gdsb/gpu/gpu_service.hpp"

namespace gdsb::gpu {

bool built_with_cuda();
std::unique_ptr<GpuService> make_cuda_service();

}  // namespace gdsb::gpu
