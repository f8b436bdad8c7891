// gdsb-report: HTML views, before/after comparison and a CI regression gate over the JSON
// documents of gdsb-io, gdsb-topo and gdsb-p2p. Exit codes: 0 ok, 1 unreadable input or
// I/O error, 2 usage (wrong arguments, wrong or mismatched document kinds), 3 gate failed.
#include <iostream>

#include "cli.hpp"
#include "gdsb/error.hpp"

int main(int argc, char** argv) {
  namespace cli = gdsb::report::cli;
  const gdsb::RunContext context = gdsb::collect_context();
  CLI::App app{"gdsb-report: HTML reports, comparisons and CI gates for gdsbench documents"};
  cli::Options opt;
  cli::setup(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? gdsb::kExitOk : gdsb::kExitUsage;
  }
  try {
    if (app.got_subcommand("html")) return cli::run_html(opt.html);
    if (app.got_subcommand("compare"))
      return cli::run_compare(opt.compare, cli::run_meta(argc, argv, context));
    if (app.got_subcommand("gate")) return cli::run_gate(opt.gate);
    if (app.got_subcommand("history"))
      return cli::run_history(*app.get_subcommand("history"), opt.history, cli::run_meta(argc, argv, context));
  } catch (const gdsb::Error& e) {
    std::cerr << "gdsb-report: " << e.what() << "\n";
    return gdsb::exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "gdsb-report: " << e.what() << "\n";
    return gdsb::kExitRuntime;
  }
  return gdsb::kExitUsage;
}
