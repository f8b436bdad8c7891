// The GPU software stack a measurement depends on, recorded in its document's context so a
// history can tie a change to it (issue 37): the NVIDIA driver and the CUDA version it
// supports, nvidia-fs loaded or not and its version, the cufile.json in effect and its
// settings, each GPU's model, link capability and firmware, gdsbench's source revision.
// What cannot be read here (no driver, no NVML) is left out, never guessed: a reader then
// says it could not be compared.
#pragma once

#include <string>

#include "gdsb/run_context.hpp"

namespace gdsb {

struct StackRoots {
  std::string nvfs_dir = "/proc/driver/nvidia-fs";
  // cufile.json: CUFILE_ENV_PATH_JSON's value when set, else /etc/cufile.json.
  std::string cufile_json;  // "" = as cuFile chooses it
  std::string nvml_library;  // "" = libnvidia-ml.so.1
};

// Fills c.versions, c.cufile_json, c.cufile and c.gpus.
void add_stack_context(RunContext& c, const StackRoots& roots = {});

}  // namespace gdsb
