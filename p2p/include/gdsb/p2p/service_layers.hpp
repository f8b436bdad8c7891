// gdsb-p2p's CudaLayer and CopyTimer over a gdsb::gpu::GpuService, so that gdsb-cluster's P2P
// phase and the doctor's host-link step measure through whichever service the tool uses; with
// the host-memory fake (--fake-gpu, tests) the copies really move bytes and take the fake's
// delays.
#pragma once

#include <memory>

#include "gdsb/gpu/gpu_service.hpp"
#include "gdsb/p2p/layers.hpp"
#include "gdsb/p2p/measure.hpp"

namespace gdsb::p2p {

// Peer access is never reported (a GpuService has no peer copies): D2D is measured staged
// through pinned host memory, as the driver does with peer access off.
std::unique_ptr<CudaLayer> make_service_cuda_layer(std::shared_ptr<gpu::GpuService> service);
std::unique_ptr<CopyTimer> make_service_copy_timer(std::shared_ptr<gpu::GpuService> service);

}  // namespace gdsb::p2p
