#include "gdsb/stack_context.hpp"

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "gdsb/gpu/path_evidence.hpp"
#include "gdsb/nvml.hpp"
#include "gdsb/version.hpp"

namespace gdsb {
namespace {

// Scalar leaves as "section.key"; arrays as their JSON text. logging.* is left out: where
// cuFile logs does not change a figure (and gdsb-io points it at a private directory).
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string name = prefix.empty() ? k : prefix + "." + k;
    if (name == "logging") continue;
    if (v.is_object()) flatten(v, name, out);
    else out[name] = v.is_string() ? v.get<std::string>() : v.dump();
  }
}

void add_gpus(RunContext& c, const std::string& library) {
  std::unique_ptr<nvml::Library> lib;
  try {
    lib = nvml::Library::open(library);
  } catch (const std::exception&) {
    return;  // no driver here: nothing to record
  }
  if (const auto v = lib->driver_version(); v.ok()) c.versions["nvidia_driver"] = v.value;
  if (const auto v = lib->cuda_driver_version(); v.ok()) c.versions["cuda_driver"] = nvml::cuda_version_text(v.value);
  const auto count = lib->device_count();
  for (unsigned i = 0; count.ok() && i < count.value; ++i) {
    const auto d = lib->device_by_index(i);
    if (!d.ok()) continue;
    GpuContext g;
    if (const auto bus = lib->bus_id(d.value); bus.ok()) g.pci_bus_id = bus.value;
    if (g.pci_bus_id.empty()) continue;
    if (const auto n = lib->name(d.value); n.ok()) g.name = n.value;
    if (const auto v = lib->vbios_version(d.value); v.ok()) g.vbios = v.value;
    const auto gen = lib->max_pcie_link_generation(d.value);
    const auto width = lib->max_pcie_link_width(d.value);
    if (gen.ok() && width.ok()) g.max_link = "Gen" + std::to_string(gen.value) + " x" + std::to_string(width.value);
    c.gpus.push_back(std::move(g));
  }
}

}  // namespace

void add_stack_context(RunContext& c, const StackRoots& roots) {
  if (!source_revision().empty()) c.versions["gdsbench_revision"] = std::string(source_revision());
  const auto nvfs = gpu::read_nvfs(roots.nvfs_dir);
  c.versions["nvidia_fs"] = !nvfs.loaded ? "not loaded" : nvfs.version.empty() ? "loaded" : nvfs.version;
  const std::string path =
      roots.cufile_json.empty() ? gpu::cufile_config_path(std::getenv("CUFILE_ENV_PATH_JSON")) : roots.cufile_json;
  const auto config = gpu::read_cufile_config(path);
  if (config.found) {
    c.cufile_json = path;
    if (config.error.empty()) flatten(nlohmann::json::parse(config.text), "", c.cufile);
    else c.cufile["error"] = config.error;
  }
  add_gpus(c, roots.nvml_library);
}

}  // namespace gdsb
