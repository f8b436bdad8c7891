// Shared by the metamorphic tests: the subjects (every recording of the corpus and the
// fixture builder's dumps), collecting an edited input, and a record of what each
// invariant really exercised.
#pragma once

#include <fstream>
#include <iostream>
#include <sstream>

#include "oracle_util.hpp"
#include "outcome_items.hpp"
#include "recording_edit.hpp"

namespace gdsb::topo::testing {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;

struct Subject {
  std::string name;
  RecordingKind kind;
  std::string text;
};

inline std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline std::vector<Subject> subjects() {
  std::vector<Subject> out;
  for (RecordingKind k : {RecordingKind::LspciText, RecordingKind::PciDump, RecordingKind::HwlocXml,
                          RecordingKind::Snapshot})
    for (const auto& p : corpus(kReal, k))
      out.push_back({(p.filename() == "snapshot" ? p.parent_path().filename() / p.filename() : p.filename()).string(),
                     k, read(k == RecordingKind::Snapshot ? p / "snapshot.json" : p)});
  auto box = fixture::make_box(2, 2, 2, 2, 1);
  out.push_back({"generated box dump", RecordingKind::PciDump, fixture::lspci_dump(box, 4096)});
  out.push_back({"generated VM dump", RecordingKind::PciDump, fixture::lspci_dump(fixture::make_flat_vm(), 4096)});
  return out;
}

// The recordings whose function stanzas the local edits change: lspci text and dumps
// (hwloc XML has no LnkSta, ACS or NVMe here; snapshots are edited as a whole).
inline std::vector<Subject> pci_subjects() {
  auto all = subjects();
  std::erase_if(all, [](const Subject& s) {
    return s.kind == RecordingKind::HwlocXml || s.kind == RecordingKind::Snapshot;
  });
  return all;
}

inline Outcome collect(RecordingKind kind, const std::string& text) {
  fixture::TempDir dir;
  const fs::path p = dir.path() / (kind == RecordingKind::HwlocXml   ? "in.xml"
                                    : kind == RecordingKind::Snapshot ? "snapshot.json"
                                                                      : "in.txt");
  std::ofstream(p, std::ios::binary) << text;
  if (kind == RecordingKind::Snapshot) return evaluate_snapshot(load_snapshot(dir.path()));
  CollectOptions opt = offline();
  switch (kind) {
    case RecordingKind::LspciText:
      return evaluate_snapshot(collect_lspci_text(p, opt));
    case RecordingKind::PciDump:
      opt.lookup_names = true;  // names tell gigabit NICs apart
      return evaluate_snapshot(collect_pci_dump(p, opt));
    case RecordingKind::HwlocXml:
    case RecordingKind::Snapshot:
      break;
  }
  return evaluate_snapshot(collect_hwloc_xml(p));
}

inline const Rename kSame = [](const std::string& s) { return s; };

// Which subjects each invariant really exercised, printed so a vacuous run shows.
struct Coverage {
  std::string invariant;
  std::vector<std::string> ran;
  ~Coverage() {
    std::cout << "[ invariant ] " << invariant << ": " << ran.size() << " recording(s):";
    for (const auto& r : ran) std::cout << " " << r << ";";
    std::cout << "\n";
  }
};

}  // namespace gdsb::topo::testing
