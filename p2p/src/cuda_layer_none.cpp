// Built without the CUDA toolkit: the CUDA layer and the copy timer are waived.
#include "gdsb/p2p/layers.hpp"
#include "gdsb/p2p/measure.hpp"

namespace gdsb::p2p {

namespace {
constexpr const char* kNoToolkit =
    "gdsb-p2p was built without the CUDA toolkit (configure with CUDAToolkit found)";
}

std::unique_ptr<CudaLayer> make_cuda_layer() { return make_unavailable_cuda_layer(kNoToolkit); }

std::unique_ptr<CopyTimer> make_cuda_copy_timer() { return make_unavailable_copy_timer(kNoToolkit); }

}  // namespace gdsb::p2p
