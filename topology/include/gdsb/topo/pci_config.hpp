// Decoding of PCI configuration space bytes (capability chains, PCIe link, ACS).
// All functions are bounds-checked: short or corrupt config space yields nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "gdsb/pcie.hpp"
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

// The PCIe generation table lives in libgdsbench (gdsb/pcie.hpp), for every tool.
using gdsb::gts_to_generation;
using gdsb::lane_gb_s;
using gdsb::link_gb_s;
using gdsb::link_text;
using gdsb::pcie_generation;
using gdsb::pcie_generation_at;
using gdsb::PcieGeneration;
using gdsb::speed_code_to_gts;

std::string acs_bits_text(uint16_t v);  // "SrcValid+ TransBlk- ReqRedir+ ..."
std::string hex16(uint16_t v);          // "0x001d"
std::string hex4(uint16_t v);           // "10de" (an id as pci.ids and lspci -n write it)

// Fills port_type, link, ACS, bridge bus numbers and ids from d.config where readable.
void decode_config(Device& d);

}  // namespace gdsb::topo
