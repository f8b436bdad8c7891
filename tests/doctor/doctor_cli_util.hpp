// Runs gdsb-doctor and gdsb-topo in process through their real main functions, with
// stdout and stderr captured: the CLI tests drive the tools exactly as a user does.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "doctor_app.hpp"
#include "topo_app.hpp"

namespace gdsb::doctor::testing {

struct CliRun {
  int rc = 0;
  std::string out, err;
};

template <typename Main>
CliRun cli(Main main, const std::string& prog, std::vector<std::string> args) {
  args.insert(args.begin(), prog);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliRun r;
  r.rc = main(static_cast<int>(argv.size()), argv.data());
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

inline CliRun doctor(std::vector<std::string> args) {
  return cli(doctor_app::doctor_main, "gdsb-doctor", std::move(args));
}

inline CliRun gdsb_topo(std::vector<std::string> args) {
  return cli(topo_app::topo_main, "gdsb-topo", std::move(args));
}

}  // namespace gdsb::doctor::testing
