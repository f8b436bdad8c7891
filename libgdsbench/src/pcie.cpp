#include "gdsb/pcie.hpp"

#include <array>
#include <cstdio>

namespace gdsb {

namespace {
constexpr std::array<PcieGeneration, 6> kPcieGenerations{{{1, 2.5, 0.25},
                                                         {2, 5, 0.5},
                                                         {3, 8, 0.985},
                                                         {4, 16, 1.969},
                                                         {5, 32, 3.938},
                                                         {6, 64, 7.563}}};
}  // namespace

std::optional<PcieGeneration> pcie_generation(int generation_or_speed_code) {
  for (const PcieGeneration& g : kPcieGenerations)
    if (g.generation == generation_or_speed_code) return g;
  return std::nullopt;
}

std::optional<PcieGeneration> pcie_generation_at(double gts) {
  for (const PcieGeneration& g : kPcieGenerations)
    if (gts > g.gts - 0.1 && gts < g.gts + 0.1) return g;
  return std::nullopt;
}

double speed_code_to_gts(int code) {
  const auto g = pcie_generation(code);
  return g ? g->gts : 0;
}

int gts_to_generation(double gts) {
  const auto g = pcie_generation_at(gts);
  return g ? g->generation : 0;
}

double lane_gb_s(double gts) {
  const auto g = pcie_generation_at(gts);
  return g ? g->lane_gb_s : 0;
}

double link_gb_s(double gts, int width) { return lane_gb_s(gts) * width; }

std::string link_text(double gts, int width) {
  std::array<char, 48> buf{};
  if (const auto g = pcie_generation_at(gts))
    std::snprintf(buf.data(), buf.size(), "Gen%d x%d", g->generation, width);
  else if (gts > 0)
    std::snprintf(buf.data(), buf.size(), "%.1fGT/s x%d", gts, width);
  else
    std::snprintf(buf.data(), buf.size(), "unknown speed x%d", width);
  return buf.data();
}

}  // namespace gdsb
