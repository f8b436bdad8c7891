// A fake GPU with a fake cuFile on it, wired into GpuPathDeps as the cuFile paths take
// them, with no nvidia-fs (as on the GPU machines) and temporary files of its own.
#pragma once

#include <memory>
#include <string>

#include "drive.hpp"
#include "fake_cufile.hpp"
#include "gdsb/gpu/gpu_paths.hpp"

namespace gdsb::gpu::testing {

struct CufileFixture {
  explicit CufileFixture(FakeCufileOptions o = {}, FakeGpuOptions g = {})
      : gpu(std::make_shared<FakeGpuService>(g)), cufile(*gpu, std::move(o)) {
    deps.service = gpu;
    deps.staging = make_engine_staging_io;
    auto api = cufile.api();
    deps.load_cufile = [api](const Workload&) { return cufile::LoadResult{api, {}}; };
    deps.roots.nvfs_dir = std::string(GDSB_GPU_FIXTURES) + "/absent-nvfs";
    deps.roots.tmp_dir = dir.path();
  }
  TempDir dir;
  std::shared_ptr<FakeGpuService> gpu;
  FakeCufile cufile;
  GpuPathDeps deps;
};

}  // namespace gdsb::gpu::testing
