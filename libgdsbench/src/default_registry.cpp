// The transfer paths compiled into this build, listed explicitly (no self-registration).
// -x 1 is the engine's; -x 0, 2, 3, 4, 5, 6, 7 are gdsb::gpu's. They are registered in
// every build: without CUDA (or without a GPU, driver or libcufile at run time) the GPU
// types are waived with the GPU service's reason, and -x 4 runs its host part only and
// says why. Nothing here initialises CUDA: the service probes on first use.
#include "gdsb/cpu_paths.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/runner.hpp"

namespace gdsb {

PathRegistry make_default_registry() {
  PathRegistry r;
  r.add(make_cpu_only_path());
  gpu::add_gpu_paths(r);
  return r;
}

}  // namespace gdsb
