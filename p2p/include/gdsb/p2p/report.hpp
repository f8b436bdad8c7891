// The gdsbench.p2p/1 document and its two reporters (text matrices, JSON). Reporters only
// read the collected data.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gdsb/p2p/capabilities.hpp"
#include "gdsb/p2p/expect.hpp"
#include "gdsb/p2p/measure.hpp"

namespace gdsb::p2p {

inline constexpr const char* kSchema = "gdsbench.p2p/1";

struct RunContext {
  std::string host, kernel, os, cpu_model;
  int cpus = 0;
  std::string started_at, ended_at;  // ISO 8601 UTC
  std::map<std::string, std::string> env;  // CUFILE_* and CUDA_* only
};

std::string utc_now_iso();
RunContext collect_context();  // started_at = now

struct P2PDocument {
  std::vector<std::string> argv;
  RunContext context;
  bool interrupted = false;
  CapabilityReport caps;
  std::optional<Measurements> measurements;
  std::vector<ExpectationResult> expectations;
};

nlohmann::json to_json(const P2PDocument& doc);
void write_text(std::ostream& out, const P2PDocument& doc);

// Writes doc to path through a temporary file and a rename. An existing file is replaced
// only when it is an earlier gdsbench.p2p/1 report or allow_overwrite is set; otherwise
// UsageError names the file.
void check_json_target(const std::string& path, bool allow_overwrite);  // the same test, early
void write_json_file(const std::string& path, const nlohmann::json& doc, bool allow_overwrite);

}  // namespace gdsb::p2p
