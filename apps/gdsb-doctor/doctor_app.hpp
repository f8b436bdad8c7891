// gdsb-doctor: options struct, CLI setup and the run function (main stays a few lines).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "gdsb/topo/collect.hpp"

namespace gdsb::doctor_app {

struct Options {
  // Live: measure on this machine, the scratch file in io_dir.
  std::string io_dir;
  double budget_s = 60;
  int gpu = 0;
  bool gpu_given = false;  // --gpu: that GPU alone reads; otherwise every GPU at once (live only)
  std::string fake_gpu;    // --fake-gpu FILE: the fake GPU service instead of CUDA (live, tests)
  uint64_t size = 0;  // scratch file bytes, 0: automatic
  // Recorded: gdsb-topo JSON, or one of the topology sources, plus io/p2p documents.
  std::string topo_json;
  topo::InputSources sources;
  std::vector<std::string> io_docs;
  std::string p2p_doc;
  std::string json_path, html_path;
  bool allow_overwrite = false;
  bool no_nvml = false;
  std::vector<std::string> argv;
};

void setup_doctor(CLI::App& app, Options& opt);
// Exit code: 0 nothing wrong, 3 a certain or likely finding, 1 runtime error, 2 usage,
// 130 interrupted.
int run_doctor(const Options& opt);
int doctor_main(int argc, char** argv);

}  // namespace gdsb::doctor_app
