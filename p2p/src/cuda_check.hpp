// CUDA runtime error checks for the files compiled only with the toolkit. The message is
// built only on failure and names the call, the error and the source line.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "gdsb/error.hpp"

namespace gdsb::p2p::detail {

[[noreturn]] inline void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
  throw RuntimeError(std::string(call) + " failed: " + cudaGetErrorName(err) + " (" +
                     cudaGetErrorString(err) + ") at " + file + ":" + std::to_string(line));
}

}  // namespace gdsb::p2p::detail

#define GDSB_CUDA_CHECK(call)                                                    \
  do {                                                                           \
    const cudaError_t gdsb_err_ = (call);                                        \
    if (gdsb_err_ != cudaSuccess) {                                              \
      ::gdsb::p2p::detail::cuda_fail(gdsb_err_, #call, __FILE__, __LINE__);      \
    }                                                                            \
  } while (0)
