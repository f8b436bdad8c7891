// Decoding of PCI configuration space bytes (capability chains, PCIe link, ACS).
// All functions are bounds-checked: short or corrupt config space yields nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

inline constexpr uint8_t kCapIdExp = 0x10;
inline constexpr uint16_t kExtCapIdAcs = 0x0d;

// ACS capability/control bits (same layout in both registers).
inline constexpr uint16_t kAcsSv = 0x01, kAcsTb = 0x02, kAcsRr = 0x04, kAcsCr = 0x08, kAcsUf = 0x10,
                          kAcsEc = 0x20, kAcsDt = 0x40;
inline constexpr uint16_t kAcsRedirectMask = kAcsRr | kAcsCr | kAcsEc;

// PCIe port types (capability flags bits 7:4).
inline constexpr int kPortEndpoint = 0, kPortLegacyEndpoint = 1, kPortRootPort = 4,
                     kPortUpstream = 5, kPortDownstream = 6, kPortPcieToPci = 7, kPortPciToPcie = 8,
                     kPortRcEndpoint = 9;

std::optional<uint16_t> cfg_u16(std::span<const uint8_t> cfg, size_t off);
std::optional<uint32_t> cfg_u32(std::span<const uint8_t> cfg, size_t off);

// Offset of a standard capability, walking the list at 0x34 (loop-safe).
std::optional<size_t> find_capability(std::span<const uint8_t> cfg, uint8_t id);
// Offset of an extended capability, walking from 0x100 (needs > 256 bytes).
std::optional<size_t> find_ext_capability(std::span<const uint8_t> cfg, uint16_t id);

// The one PCIe generation table: generation <-> transfer rate <-> usable bandwidth per lane
// and direction in GB/s (base 1000, after line encoding). LnkCap/LnkSta speed codes and
// NVML's generation numbers are the generation (1 = 2.5 GT/s ... 6 = 64 GT/s).
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

std::string acs_bits_text(uint16_t v);  // "SrcValid+ TransBlk- ReqRedir+ ..."
std::string hex16(uint16_t v);          // "0x001d"
std::string hex4(uint16_t v);           // "10de" (an id as pci.ids and lspci -n write it)

// Fills port_type, link, ACS, bridge bus numbers and ids from d.config where readable.
void decode_config(Device& d);

}  // namespace gdsb::topo
