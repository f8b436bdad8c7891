// Where and when a report was produced: the "context" object every gdsbench document
// carries (CONTRACTS.md), collected in this one place for every tool. Only an allowlist of
// environment variables is recorded (CUFILE_*, CUDA_*), never the whole environment.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gdsb {

// A GPU as a run saw it (issue 37: a history attributes a change to a GPU swapped, a link
// trained narrower, new firmware).
struct GpuContext {
  std::string pci_bus_id;  // "0000:19:00.0"
  std::string name;        // NVML's "NVIDIA H100 80GB HBM3"
  std::string max_link;    // what the link can train to: "Gen5 x16" (idle GPUs run slower)
  std::string vbios;
};

struct RunContext {
  std::string host;
  std::string kernel;      // uname -r
  std::string os;          // PRETTY_NAME from /etc/os-release
  std::string cpu_model;   // /proc/cpuinfo "model name" (arm64: "Model")
  int cpus = 0;            // online CPUs
  std::string started_at;  // ISO 8601 UTC
  std::string ended_at;
  std::map<std::string, std::string> env;  // CUFILE_* and CUDA_* that are set
  // What a run depends on beyond the host (gdsb/stack_context.hpp fills these for gdsb-io's
  // documents; other tools leave them empty and their keys are not written):
  // versions: nvidia_driver, cuda_driver (the CUDA version the driver supports), nvidia_fs
  // (its version, or "not loaded"), gdsbench_revision.
  std::map<std::string, std::string> versions;
  std::string cufile_json;                    // the cufile.json in effect ("" when none)
  std::map<std::string, std::string> cufile;  // its settings, "properties.max_direct_io_size_kb": "16384"
  std::vector<GpuContext> gpus;
};

// Reads host facts and the allowlisted environment; started_at is set to now.
RunContext collect_context();

// Whether an environment variable name may be recorded in a report.
bool env_name_allowed(std::string_view name);

// Current time as "2026-11-22T06:19:35Z" (whole seconds).
std::string utc_now_iso8601();

// The "context" object: host, kernel, os, cpu_model, cpus, started_at, ended_at, env, and
// versions, cufile_json, cufile, gpus when they were collected.
void to_json(nlohmann::json& j, const RunContext& c);

}  // namespace gdsb
