#include "sm_copy.hpp"

namespace gdsb::p2p::detail {

namespace {

__global__ void copy_kernel(int4* __restrict__ dst, const int4* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    dst[i] = src[i];
  }
}

}  // namespace

cudaError_t launch_sm_copy(void* dst, const void* src, std::size_t bytes, cudaStream_t stream,
                           int blocks) {
  constexpr int kThreads = 512;
  copy_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<int4*>(dst),
                                               static_cast<const int4*>(src), bytes / sizeof(int4));
  return cudaGetLastError();
}

}  // namespace gdsb::p2p::detail
