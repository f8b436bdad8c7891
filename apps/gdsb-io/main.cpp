// gdsb-io: gdsio-compatible transfer benchmark. Options in options.cpp, the work in
// run_io.cpp; main only maps parse errors to exit code 2.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "gdsb/error.hpp"
#include "options.hpp"
#include "run_io.hpp"

int main(int argc, char** argv) {
  try {
    CLI::App app;
    gdsb::io::Options opt;
    gdsb::io::setup_io(app, opt);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
      (void)std::fprintf(stderr, "gdsb-io: %s\nRun 'gdsb-io --help' for the options.\n", e.what());
      return gdsb::kExitUsage;
    }
    gdsb::io::record_given(app, opt);
    opt.any_argument = argc > 1;
    opt.argv.assign(argv, argv + argc);
    return gdsb::io::run_io(opt);
  } catch (...) {
    return gdsb::kExitRuntime;  // run_io never throws; this guards option setup itself
  }
}
