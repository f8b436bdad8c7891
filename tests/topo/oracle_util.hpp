// Shared by the oracle and invariant tests: the corpus of real recordings
// (tests/topo/fixtures/real, origins in SOURCES.md there) sorted by kind, a subprocess
// runner for the independent tools (lspci), and a canonical form of an evaluate() outcome.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/topo/checks.hpp"

namespace gdsb::topo::testing {

enum class RecordingKind { PciDump, LspciText, HwlocXml, Snapshot };

// By file name, as SOURCES.md names them: "*-lspci-*xxx*" are `lspci -xxx`/`-xxxx` dumps
// (lspci -F reads them), other "*-lspci-*" files are plain text, "*.xml" hwloc exports,
// directories holding a snapshot.json saved snapshots.
inline std::vector<std::filesystem::path> corpus(const std::filesystem::path& dir,
                                                 RecordingKind kind) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    const bool lspci = n.find("-lspci-") != std::string::npos;
    const bool dump = lspci && n.find("xxx") != std::string::npos;
    const bool xml = e.path().extension() == ".xml";
    const bool snapshot = e.is_directory() && std::filesystem::exists(e.path() / "snapshot.json");
    // A machine's recorded reports (h100-vm/) keep its snapshot in snapshot/.
    if (kind == RecordingKind::Snapshot && e.is_directory() &&
        std::filesystem::exists(e.path() / "snapshot" / "snapshot.json"))
      out.push_back(e.path() / "snapshot");
    if ((kind == RecordingKind::Snapshot && snapshot) ||
        (kind == RecordingKind::PciDump && dump) ||
        (kind == RecordingKind::LspciText && lspci && !dump) ||
        (kind == RecordingKind::HwlocXml && xml))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs a command through the shell; stdout only. Fails the test when it exits non-zero.
inline std::string run_command(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) {
    ADD_FAILURE() << "cannot start " << cmd;
    return out;
  }
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  EXPECT_EQ(rc, 0) << cmd;
  return out;
}

// Runs a command through the shell and reads its stdout as JSON (ip -j, findmnt -J); nullopt
// when it cannot start, exits non-zero ("ip route get" to an unreachable address) or prints
// no JSON. The caller decides what a failure means.
inline std::optional<nlohmann::json> command_json(const std::string& cmd) {
  FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (::pclose(p) != 0) return std::nullopt;
  auto j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace gdsb::topo::testing
