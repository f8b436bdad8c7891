// The SM copy kernel of --sm-copy (sm_copy.cu, compiled by nvcc).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gdsb::p2p::detail {

// Copies bytes (a multiple of 16) from src to dst with a grid-stride loop of 16-byte
// loads and stores, on the current device's stream. Returns the launch error.
cudaError_t launch_sm_copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream,
                           int blocks);

}  // namespace gdsb::p2p::detail
