// Renderers: read a Snapshot, its TopologyView and a Report; never compute verdicts.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "gdsb/run_context.hpp"
#include "gdsb/topo/checks.hpp"

namespace gdsb::topo {

// Facts about this run for the report's header (CONTRACTS.md "context").
struct RunContext {
  std::string tool_version;
  std::vector<std::string> argv;
  gdsb::RunContext run;  // host, kernel, times, CUFILE_*/CUDA_* env: gdsb::collect_context()
};

struct TextOptions {
  bool verbose = false;  // all evidence lines of passing checks, not just the first
  bool tree = true;
  bool matrix = false;
};

void render_text(std::ostream& out, const Snapshot& s, const TopologyView& v, const Report& r,
                 const TextOptions& opt);
void render_tree(std::ostream& out, const Snapshot& s, const TopologyView& v);
void render_matrix(std::ostream& out, const TopologyView& v);
// NVSwitches and the GPU x GPU NV#/PCIe matrix; nothing when the input has neither.
void render_nvlink(std::ostream& out, const TopologyView& v);
// The verdict line. Alone (--quiet) it gives the waivers' reasons; after the CHECKS that
// said them (name_checks) it names the waived checks instead: each fact once (issue 27).
std::string platform_verification_line(const Report& r, bool name_checks = false);

// A ceiling's hops as JSON ({kind, device, gb_s, source, what}); gdsb-doctor writes its own
// hops the same way.
nlohmann::json hops_json(const std::vector<PathHop>& hops);
// The gdsbench.topo/1 document.
nlohmann::json to_json(const Snapshot& s, const TopologyView& v, const Report& r,
                       const RunContext& ctx);

}  // namespace gdsb::topo
