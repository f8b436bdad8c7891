// gdsb-p2p: which devices in this node can move data directly, over what, and how fast.
#include <iostream>
#include <memory>

#include "gdsb/error.hpp"
#include "p2p_cli.hpp"
#include "gdsb/stop_signals.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gdsb-p2p: GPU peer-to-peer capabilities (CUDA, NVML, PCIe P2PDMA) and measured "
               "copy bandwidth/latency"};
  gdsb::p2p::P2POptions options;
  gdsb::p2p::setup_p2p(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? gdsb::kExitOk : gdsb::kExitUsage;
  }
  options.argv.assign(argv, argv + argc);
  // Before make_backends: the signal mask must be in place before CUDA starts threads.
  std::unique_ptr<gdsb::StopSignals> signals;
  if (options.measure) {
    signals = std::make_unique<gdsb::StopSignals>(
        "gdsb-p2p", "stopping after the current case (again to quit now)");
  }
  try {
    gdsb::p2p::Backends backends = gdsb::p2p::make_backends(options);
    if (signals) backends.stop = &signals->flag();
    return gdsb::p2p::run_p2p(options, backends, std::cout, std::cerr);
  } catch (const gdsb::Error& e) {
    std::cerr << "gdsb-p2p: " << e.what() << '\n';
    return gdsb::exit_code_for(e.kind());
  }
}
