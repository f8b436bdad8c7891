#include "gdsb/topo/pci_config.hpp"

#include <array>
#include <cstdio>

namespace gdsb::topo {

std::optional<uint16_t> cfg_u16(std::span<const uint8_t> cfg, size_t off) {
  if (off + 2 > cfg.size()) return std::nullopt;
  return static_cast<uint16_t>(cfg[off] | (cfg[off + 1] << 8));
}

std::optional<uint32_t> cfg_u32(std::span<const uint8_t> cfg, size_t off) {
  if (off + 4 > cfg.size()) return std::nullopt;
  return static_cast<uint32_t>(cfg[off]) | (static_cast<uint32_t>(cfg[off + 1]) << 8) |
         (static_cast<uint32_t>(cfg[off + 2]) << 16) | (static_cast<uint32_t>(cfg[off + 3]) << 24);
}

std::optional<size_t> find_capability(std::span<const uint8_t> cfg, uint8_t id) {
  auto status = cfg_u16(cfg, 0x06);
  if (!status || !(*status & 0x10) || cfg.size() <= 0x34) return std::nullopt;
  size_t pos = cfg[0x34] & 0xfc;
  // At most 48 capabilities fit in 192 bytes; the bound also stops corrupt loops.
  for (int ttl = 48; ttl > 0 && pos >= 0x40 && pos + 2 <= cfg.size() && pos < 0x100; --ttl) {
    if (cfg[pos] == id) return pos;
    pos = cfg[pos + 1] & 0xfc;
  }
  return std::nullopt;
}

std::optional<size_t> find_ext_capability(std::span<const uint8_t> cfg, uint16_t id) {
  size_t pos = 0x100;
  for (int ttl = 960; ttl > 0 && pos >= 0x100; --ttl) {
    auto header = cfg_u32(cfg, pos);
    if (!header || *header == 0 || *header == 0xffffffffU) return std::nullopt;
    if ((*header & 0xffff) == id) return pos;
    pos = (*header >> 20) & 0xffc;
  }
  return std::nullopt;
}

std::string acs_bits_text(uint16_t v) {
  static constexpr std::array<const char*, 7> kNames{
      "SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"};
  std::string out;
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += kNames[i];
    out += (v >> i) & 1 ? '+' : '-';
  }
  return out;
}

std::string hex16(uint16_t v) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%04x", v);
  return buf.data();
}

std::string hex4(uint16_t v) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "%04x", v);
  return buf.data();
}

void decode_config(Device& d) {
  std::span<const uint8_t> cfg(d.config);
  if (cfg.size() < 64) return;
  d.vendor = *cfg_u16(cfg, 0);
  d.device = *cfg_u16(cfg, 2);
  d.class_code = *cfg_u32(cfg, 8) >> 8;
  // Type 1 (PCI-to-PCI) and type 2 (CardBus) headers both keep the secondary and
  // subordinate bus at 0x19/0x1a; devices behind a CardBus bridge hang below it.
  if (const int header = cfg[0x0e] & 0x7f; header == 1 || header == 2) {
    d.secondary_bus = cfg[0x19];
    d.subordinate_bus = cfg[0x1a];
  }
  if (auto exp = find_capability(cfg, kCapIdExp)) {
    auto flags = cfg_u16(cfg, *exp + 2);
    auto lnkcap = cfg_u32(cfg, *exp + 0x0c);
    auto lnksta = cfg_u16(cfg, *exp + 0x12);
    if (flags) d.port_type = (*flags >> 4) & 0xf;
    if (lnkcap && lnksta && (*lnkcap & 0x3f0) != 0) {
      Link l;
      l.max_speed_gts = speed_code_to_gts(static_cast<int>(*lnkcap & 0xf));
      l.max_width = static_cast<int>((*lnkcap >> 4) & 0x3f);
      l.cur_speed_gts = speed_code_to_gts(*lnksta & 0xf);
      l.cur_width = (*lnksta >> 4) & 0x3f;
      d.link = l;
    }
  }
  // Extended space exists only for PCIe functions; a conventional function with 256
  // readable bytes has no ACS by construction, so its ACS state is known too.
  bool conventional = d.port_type < 0 && cfg.size() >= 0x100;
  if (cfg.size() > 0x100 || conventional) {
    d.ext_config_readable = true;
    d.acs_note.clear();
    d.acs.reset();
    if (auto pos = find_ext_capability(cfg, kExtCapIdAcs)) {
      auto cap = cfg_u16(cfg, *pos + 4);
      auto ctl = cfg_u16(cfg, *pos + 6);
      if (cap && ctl) d.acs = Acs{*cap, *ctl, static_cast<uint16_t>(*pos)};
    }
  }
}

}  // namespace gdsb::topo
