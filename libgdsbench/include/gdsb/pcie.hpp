// The PCIe generation table, the one place the project holds it: generation, line rate
// and usable bandwidth per lane and direction in GB/s (base 1000, after line encoding;
// REFERENCE.md). LnkCap/LnkSta speed codes and NVML's generation numbers are the
// generation (1 = 2.5 GT/s ... 6 = 64 GT/s). Every tool (topology, p2p, reports) reads it.
#pragma once

#include <optional>
#include <string>

namespace gdsb {

struct PcieGeneration {
  int generation;
  double gts;
  double lane_gb_s;
};
// nullopt for a code, generation or rate the table does not hold (a newer generation, a
// reserved code, 0): "unknown", never 0 GB/s.
std::optional<PcieGeneration> pcie_generation(int generation_or_speed_code);
std::optional<PcieGeneration> pcie_generation_at(double gts);  // within 0.1 GT/s

// The same lookups for callers that keep 0 as "unknown" in their model (Link's speeds).
double speed_code_to_gts(int code);  // 1..6 -> 2.5 .. 64; 0 for unknown codes
int gts_to_generation(double gts);   // 2.5 -> 1 ... 64 -> 6; 0 when unknown
double lane_gb_s(double gts);        // 0 when the rate is unknown
double link_gb_s(double gts, int width);
std::string link_text(double gts, int width);  // "Gen4 x16"; "2.7GT/s x4", "unknown speed x4"

}  // namespace gdsb
