// Runs gdsb-topo's main in-process for the CLI tests, capturing its output.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "topo_app.hpp"

namespace gdsb::topo::testing {

struct CliRun {
  int rc = 0;
  std::string out, err;
};

inline CliRun cli(std::vector<std::string> args) {
  args.insert(args.begin(), "gdsb-topo");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliRun r;
  r.rc = topo_app::topo_main(static_cast<int>(argv.size()), argv.data());
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

}  // namespace gdsb::topo::testing
