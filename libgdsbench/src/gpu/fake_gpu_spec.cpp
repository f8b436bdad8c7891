#include "gdsb/gpu/fake_gpu_spec.hpp"

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_service.hpp"

namespace gdsb::gpu {

FakeGpuSpec load_fake_gpu_spec(const std::string& path, const std::string& option) {
  std::ifstream in(path);
  if (!in) throw UsageError(option + " " + path + ": cannot open the file");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.value("devices", nlohmann::json()).is_number_integer())
    throw UsageError(option + " " + path +
                     ": expected a JSON object such as {\"devices\": 2, \"copy_delay_us\": 500}");
  FakeGpuSpec s;
  s.devices = j.at("devices").get<int>();
  s.copy_delay_us = j.value("copy_delay_us", 0);
  if (s.devices < 1 || s.devices > 64 || s.copy_delay_us < 0 || s.copy_delay_us > 10'000'000)
    throw UsageError(option + " " + path + ": devices must be 1..64 and copy_delay_us 0..1e7");
  return s;
}

GpuPathDeps fake_gpu_path_deps(const FakeGpuSpec& spec) {
  GpuPathDeps deps = default_gpu_path_deps();
  FakeGpuOptions fo;
  fo.devices = spec.devices;
  fo.copy_delay = std::chrono::microseconds(spec.copy_delay_us);
  deps.service = std::make_shared<FakeGpuService>(fo);
  deps.load_cufile = [](const Workload&) {
    return cufile::LoadResult{nullptr, "no cuFile with the fake GPU service (--fake-gpu)"};
  };
  return deps;
}

}  // namespace gdsb::gpu
