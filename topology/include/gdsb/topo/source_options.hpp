// The recorded-input options every tool that reads a topology snapshot offers, wired the
// same way in gdsb-topo and gdsb-p2p: --sysfs-root, --pci-dump, --lspci-text, --hwloc-xml,
// --from-snapshot, mutually exclusive (CLI11 reports two at once as a usage error).
// Header-only so that gdsb::topo itself does not depend on CLI11; apps link CLI11.
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "gdsb/topo/collect.hpp"

namespace gdsb::topo {

inline std::vector<CLI::Option*> add_source_options(CLI::App& app, InputSources& in) {
  std::vector<CLI::Option*> sources{
      app.add_option("--sysfs-root", in.sysfs_root,
                     "Read a recorded tree laid out like / (DIR/sys/...)")
          ->check(CLI::ExistingDirectory),
      app.add_option("--pci-dump", in.pci_dump, "Read `lspci -xxxx` output (libpci dump method)"),
      app.add_option("--lspci-text", in.lspci_text, "Read plain `lspci -vvv` text"),
      app.add_option("--hwloc-xml", in.hwloc_xml, "Read an hwloc XML export (lstopo --of xml)"),
      app.add_option("--from-snapshot", in.from_snapshot,
                     "Replay a directory made by gdsb-topo --save-snapshot")};
  for (auto* a : sources)
    for (auto* b : sources)
      if (a != b) a->excludes(b);
  return sources;
}

}  // namespace gdsb::topo
