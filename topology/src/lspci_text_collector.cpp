// `lspci -vvv` text as people paste it into tickets (with or without -nn and -D).
// Everything comes from the text; what it lacks (ACS without root, ids without -nn)
// stays unknown so that the checks waive rather than guess.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <utility>

#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "internal.hpp"

namespace gdsb::topo {
namespace {

constexpr std::array<std::pair<std::string_view, uint32_t>, 12> kClassNames{{
    {"Host bridge", 0x060000}, {"PCI bridge", 0x060400}, {"3D controller", 0x030200},
    {"VGA compatible controller", 0x030000}, {"Non-Volatile memory controller", 0x010802},
    {"Ethernet controller", 0x020000}, {"Infiniband controller", 0x020700},
    {"Mass storage controller", 0x018000}, {"SATA controller", 0x010601},
    {"RAID bus controller", 0x010400}, {"ISA bridge", 0x060100}, {"Unassigned class", 0xff0000}}};

uint16_t acs_from_text(const std::string& s) {
  static constexpr std::array<const char*, 7> kNames{
      "SrcValid+", "TransBlk+", "ReqRedir+", "CmpltRedir+", "UpstreamFwd+", "EgressCtrl+", "DirectTrans+"};
  uint16_t v = 0;
  for (size_t i = 0; i < kNames.size(); ++i)
    if (s.find(kNames[i]) != std::string::npos) v = static_cast<uint16_t>(v | (1U << i));
  return v;
}

uint64_t size_from_text(const std::string& num, char unit) {
  uint64_t v = std::strtoull(num.c_str(), nullptr, 10);
  switch (unit) {
    case 'K': return v << 10;
    case 'M': return v << 20;
    case 'G': return v << 30;
    case 'T': return v << 40;
    default: return v;
  }
}

struct Parser {
  Snapshot s;
  Device* cur = nullptr;
  bool access_denied = false;
  std::optional<Acs> acs;
  std::optional<double> cap_speed, sta_speed;
  std::optional<int> cap_width, sta_width;

  void flush() {
    if (!cur) return;
    if (cap_speed && sta_speed && cap_width && sta_width)
      cur->link = Link{*sta_speed, *sta_width, *cap_speed, *cap_width};
    if (access_denied) {
      cur->ext_config_readable = false;
      cur->acs_note = "lspci ran without root: capabilities show <access denied>";
    } else {
      cur->ext_config_readable = true;
      cur->acs = acs;
    }
    cur->role = classify_role(*cur);
    cur = nullptr;
    access_denied = false;
    acs.reset();
    cap_speed = sta_speed = std::nullopt;
    cap_width = sta_width = std::nullopt;
  }
};

}  // namespace

Snapshot collect_lspci_text(const std::filesystem::path& file) {
  auto text = detail::read_text(file);
  if (!text) throw RuntimeError("cannot open lspci text " + file.string());
  static const std::regex header(
      R"(^(([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7]) ([^:\[]+?)( \[([0-9a-fA-F]{4})\])?: (.*)$)");
  static const std::regex ids(R"(\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\])");
  static const std::regex busnr(R"(Bus: primary=([0-9a-fA-F]+), secondary=([0-9a-fA-F]+), subordinate=([0-9a-fA-F]+))");
  static const std::regex speed(R"(Speed ([0-9.]+)GT/s)");
  static const std::regex width(R"(Width x([0-9]+))");
  static const std::regex region(R"(Region ([0-5]): Memory at .*\[size=([0-9]+)([KMGT]?)\])");
  Parser p;
  std::istringstream in(*text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() < 4096 && std::regex_match(line, m, header)) {
      p.flush();
      Device d;
      d.bdf = (m[2].matched ? m[2].str() : std::string("0000")) + ":" + m[3].str() + ":" +
              m[4].str() + "." + m[5].str();
      for (auto& c : d.bdf) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string cls = detail::trim(m[6].str());
      if (m[8].matched) d.class_code = static_cast<uint32_t>(std::stoul(m[8].str(), nullptr, 16)) << 8;
      for (const auto& [name, code] : kClassNames)
        if (!m[8].matched && cls == name) d.class_code = code;
      std::string rest = m[9].str();
      std::smatch im;
      if (std::regex_search(rest, im, ids)) {
        d.vendor = static_cast<uint16_t>(std::stoul(im[1].str(), nullptr, 16));
        d.device = static_cast<uint16_t>(std::stoul(im[2].str(), nullptr, 16));
      } else if (rest.rfind("NVIDIA", 0) == 0) {
        d.vendor = 0x10de;  // without -nn only the vendor's name identifies a GPU
      }
      d.name = rest;
      p.s.devices.push_back(std::move(d));
      p.cur = &p.s.devices.back();
      continue;
    }
    if (!p.cur || line.size() > 4096) continue;
    std::string t = detail::trim(line);
    if (std::regex_search(t, m, busnr)) {
      p.cur->secondary_bus = static_cast<int>(std::stoul(m[2].str(), nullptr, 16));
      p.cur->subordinate_bus = static_cast<int>(std::stoul(m[3].str(), nullptr, 16));
    } else if (t.rfind("Capabilities: <access denied>", 0) == 0) {
      p.access_denied = true;
    } else if (t.rfind("Capabilities: [", 0) == 0 && t.find("Express") != std::string::npos) {
      if (t.find("Root Port") != std::string::npos) p.cur->port_type = kPortRootPort;
      else if (t.find("Upstream Port") != std::string::npos) p.cur->port_type = kPortUpstream;
      else if (t.find("Downstream Port") != std::string::npos) p.cur->port_type = kPortDownstream;
      else if (t.find("Endpoint") != std::string::npos) p.cur->port_type = kPortEndpoint;
    } else if (t.rfind("LnkCap:", 0) == 0 || t.rfind("LnkSta:", 0) == 0) {
      bool cap = t[3] == 'C';
      std::smatch sm, wm;
      if (std::regex_search(t, sm, speed)) (cap ? p.cap_speed : p.sta_speed) = std::atof(sm[1].str().c_str());
      if (std::regex_search(t, wm, width)) (cap ? p.cap_width : p.sta_width) = std::atoi(wm[1].str().c_str());
    } else if (t.rfind("ACSCap:", 0) == 0) {
      if (!p.acs) p.acs = Acs{};
      p.acs->cap = acs_from_text(t);
    } else if (t.rfind("ACSCtl:", 0) == 0) {
      if (!p.acs) p.acs = Acs{};
      p.acs->ctl = acs_from_text(t);
    } else if (t.rfind("NUMA node:", 0) == 0) {
      p.cur->numa_node = std::atoi(t.c_str() + 10);
    } else if (t.rfind("IOMMU group:", 0) == 0) {
      p.cur->iommu_group = std::atoi(t.c_str() + 12);
    } else if (t.rfind("Kernel driver in use:", 0) == 0) {
      p.cur->driver = detail::trim(t.substr(21));
    } else if (std::regex_search(t, m, region)) {
      p.cur->bars_known = true;
      bool pref = t.find("prefetchable") != std::string::npos && t.find("non-prefetchable") == std::string::npos;
      p.cur->bars.push_back(Bar{std::atoi(m[1].str().c_str()), size_from_text(m[2].str(), m[3].str().empty() ? ' ' : m[3].str()[0]),
                                pref, t.find("64-bit") != std::string::npos});
    }
  }
  p.flush();
  if (p.s.devices.empty())
    throw RuntimeError(file.string() + " holds no `lspci -vvv` device lines (expected lines "
                       "such as \"01:00.0 3D controller: NVIDIA Corporation ...\")");
  p.s.kind = SourceKind::LspciText;
  p.s.path = file.string();
  p.s.notes.push_back("lspci text has no host facts (kernel, IOMMU mode, cufile.json, udev)");
  std::sort(p.s.devices.begin(), p.s.devices.end(),
            [](const Device& a, const Device& b) { return a.bdf < b.bdf; });
  rebuild_tree_from_bus_numbers(p.s);
  infer_port_types(p.s);
  return p.s;
}

}  // namespace gdsb::topo
