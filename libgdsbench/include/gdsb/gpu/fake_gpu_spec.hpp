// The fake GPU service as the tools' test option --fake-gpu FILE describes it: a JSON
// object {"devices": 8, "copy_delay_us": 500}. CI drives gdsb-io's node mode and
// gdsb-cluster on 4 and 8 fake GPUs with it; no cuFile runs on the fake (its modes are
// waived with that reason).
#pragma once

#include <string>

#include "gdsb/gpu/gpu_paths.hpp"

namespace gdsb::gpu {

struct FakeGpuSpec {
  int devices = 1;
  int copy_delay_us = 0;
};

// UsageError naming `option` and the file when it cannot be read or is out of range.
FakeGpuSpec load_fake_gpu_spec(const std::string& path, const std::string& option = "--fake-gpu");

// default_gpu_path_deps() with the fake service of `spec` and no cuFile.
GpuPathDeps fake_gpu_path_deps(const FakeGpuSpec& spec);

}  // namespace gdsb::gpu
