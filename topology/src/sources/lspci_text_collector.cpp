// `lspci -vvv` text as people paste it into tickets (with or without -nn and -D).
// Everything comes from the text; what it lacks (ACS without root, ids without -nn)
// stays unknown so that the checks waive rather than guess.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "gdsb/topo/hw_faults_collect.hpp"
#include "internal.hpp"

namespace gdsb::topo {
namespace {

// pci.ids class names as lspci prints them without -nn: every storage subclass (role
// "storage"), the network and InfiniBand classes (NICs), GPUs and bridges.
constexpr std::array<std::pair<std::string_view, uint32_t>, 20> kClassNames{
    {{"Host bridge", 0x060000},
     {"PCI bridge", 0x060400},
     {"3D controller", 0x030200},
     {"VGA compatible controller", 0x030000},
     {"Non-Volatile memory controller", 0x010802},
     {"Ethernet controller", 0x020000},
     {"Infiniband controller", 0x020700},
     {"Mass storage controller", 0x018000},
     {"SCSI storage controller", 0x010000},
     {"SATA controller", 0x010601},
     {"RAID bus controller", 0x010400},
     {"IDE interface", 0x010100},
     {"Floppy disk controller", 0x010200},
     {"ATA controller", 0x010500},
     {"Serial Attached SCSI controller", 0x010700},
     {"Universal Flash Storage controller", 0x010900},
     {"InfiniBand", 0x0c0600},
     {"ISA bridge", 0x060100},
     {"Unassigned class", 0xff0000},
     {"Bridge", 0x068000}}};  // pci.ids 06/80 "Bridge": NVSwitches print as this

uint16_t acs_from_text(const std::string& s) {
  static constexpr std::array<const char*, 7> kNames{"SrcValid+",   "TransBlk+",    "ReqRedir+",
                                                     "CmpltRedir+", "UpstreamFwd+", "EgressCtrl+",
                                                     "DirectTrans+"};
  uint16_t v = 0;
  for (size_t i = 0; i < kNames.size(); ++i)
    if (s.find(kNames[i]) != std::string::npos) v = static_cast<uint16_t>(v | (1U << i));
  return v;
}

uint64_t size_from_text(const std::string& num, char unit) {
  uint64_t v = std::strtoull(num.c_str(), nullptr, 10);
  switch (unit) {
    case 'K':
      return v << 10;
    case 'M':
      return v << 20;
    case 'G':
      return v << 30;
    case 'T':
      return v << 40;
    default:
      return v;
  }
}

bool is_hex(const std::string& s, size_t pos, size_t n) {
  if (pos + n > s.size()) return false;
  for (size_t i = pos; i < pos + n; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

unsigned hex_at(const std::string& s, size_t pos, size_t n) {
  return static_cast<unsigned>(std::stoul(s.substr(pos, n), nullptr, 16));
}

// Number after `key` (e.g. "Speed " -> 16 from "Speed 16GT/s"), when present.
std::optional<double> number_after(const std::string& t, const char* key, bool hex = false) {
  auto pos = t.find(key);
  if (pos == std::string::npos) return std::nullopt;
  const char* start = t.c_str() + pos + std::char_traits<char>::length(key);
  char* end = nullptr;
  double v = hex ? static_cast<double>(std::strtoul(start, &end, 16)) : std::strtod(start, &end);
  if (end == start) return std::nullopt;
  return v;
}

// A line of the device itself (one tab or a few spaces), not of a capability: SR-IOV
// prints the VF BARs as "Region N" lines indented twice.
bool top_level(const std::string& line) {
  size_t indent = line.find_first_not_of(" \t");
  return indent != std::string::npos && indent > 0 &&
         (line[0] == '\t' ? indent == 1 : indent <= 4);
}

struct Header {
  std::string bdf, cls, rest;
  std::optional<uint32_t> class_code;
};

// "[DDDD:]BB:DD.F Class name[ [cccc]]: rest"
std::optional<Header> parse_header(const std::string& line) {
  auto sp = line.find(' ');
  if (sp == std::string::npos) return std::nullopt;
  std::string bdf = line.substr(0, sp);
  if (bdf.size() == 7) bdf = "0000:" + bdf;
  for (auto& c : bdf) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!detail::is_bdf(bdf)) return std::nullopt;
  auto colon = line.find(": ", sp);
  if (colon == std::string::npos) return std::nullopt;
  Header h;
  h.bdf = bdf;
  h.cls = line.substr(sp + 1, colon - sp - 1);
  h.rest = line.substr(colon + 2);
  // "... [0302]": '[' six characters from the end, four hex digits, ']'.
  size_t n = h.cls.size();
  if (n > 6 && h.cls.back() == ']' && h.cls[n - 6] == '[' && is_hex(h.cls, n - 5, 4)) {
    h.class_code = hex_at(h.cls, n - 5, 4) << 8;
    h.cls = detail::trim(h.cls.substr(0, n - 6));
  }
  return h;
}

// The first "[vvvv:dddd]" in the text (lspci -nn ids).
std::optional<std::pair<uint16_t, uint16_t>> parse_ids(const std::string& s) {
  for (auto pos = s.find('['); pos != std::string::npos; pos = s.find('[', pos + 1))
    if (pos + 11 <= s.size() && s[pos + 5] == ':' && s[pos + 10] == ']' && is_hex(s, pos + 1, 4) &&
        is_hex(s, pos + 6, 4))
      return std::make_pair(static_cast<uint16_t>(hex_at(s, pos + 1, 4)),
                            static_cast<uint16_t>(hex_at(s, pos + 6, 4)));
  return std::nullopt;
}

// The device's name without lspci's " (rev a1)" and " (prog-if 02 [NVM Express])"
// suffixes and without -nn's " [10de:2330]" (the ids are kept in their own fields).
std::string device_name(std::string rest) {
  for (const char* suffix : {" (prog-if ", " (rev "})
    if (auto pos = rest.rfind(suffix); pos != std::string::npos && rest.back() == ')')
      rest.erase(pos);
  if (rest.size() > 12 && rest.back() == ']' && rest[rest.size() - 12] == ' ' &&
      rest[rest.size() - 11] == '[' && rest[rest.size() - 6] == ':' &&
      is_hex(rest, rest.size() - 10, 4) && is_hex(rest, rest.size() - 5, 4))
    rest.erase(rest.size() - 12);
  return rest;
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

Snapshot collect_lspci_text(const std::filesystem::path& file, const CollectOptions& opt) {
  Snapshot s = collect_lspci_text(file);
  if (!opt.lookup_names) return s;
  detail::lookup_names(s, opt.pci_ids_path);
  for (auto& d : s.devices) d.role = classify_role(d);  // vendor IDs found from names
  return s;
}

Snapshot collect_lspci_text(const std::filesystem::path& file) {
  auto text = detail::read_text(file);
  if (!text) throw RuntimeError("cannot open lspci text " + file.string());
  Parser p;
  std::istringstream in(*text);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (auto h = line.size() < 4096 ? parse_header(line) : std::nullopt) {
      p.flush();
      Device d;
      d.bdf = h->bdf;
      d.origin = "line " + std::to_string(line_no);
      if (h->class_code) d.class_code = *h->class_code;
      for (const auto& [name, code] : kClassNames)
        if (!h->class_code && h->cls == name) d.class_code = code;
      if (auto ids = parse_ids(h->rest)) {
        d.vendor = ids->first;
        d.device = ids->second;
      } else if (h->rest.rfind("NVIDIA", 0) == 0) {
        d.vendor = 0x10de;  // without -nn only the vendor's name identifies a GPU
        // A device pci.ids does not name, lspci writes as "Device %04x" (pciutils names.c):
        // the id itself ("NVIDIA Corporation Device 2330 (rev a1)").
        const std::string name = device_name(h->rest);
        if (const size_t at = name.rfind(" Device "); at != std::string::npos &&
                                                      name.size() == at + 12 && is_hex(name, at + 8, 4))
          d.device = static_cast<uint16_t>(std::stoul(name.substr(at + 8), nullptr, 16));
      } else if (h->rest.rfind("Mellanox", 0) == 0) {
        d.vendor = 0x15b3;  // and a ConnectX/BlueField as a data NIC (nic_role.hpp)
      }
      d.name = device_name(h->rest);
      p.s.devices.push_back(std::move(d));
      p.cur = &p.s.devices.back();
      continue;
    }
    if (!p.cur || line.size() > 4096) continue;
    std::string t = detail::trim(line);
    if (t.rfind("Bus: primary=", 0) == 0) {
      auto sec = number_after(t, "secondary=", true);
      auto sub = number_after(t, "subordinate=", true);
      if (sec && sub) {
        p.cur->secondary_bus = static_cast<int>(*sec) & 0xff;
        p.cur->subordinate_bus = static_cast<int>(*sub) & 0xff;
      }
    } else if (t.rfind("Capabilities: <access denied>", 0) == 0) {
      p.access_denied = true;
    } else if (t.rfind("Capabilities: [", 0) == 0 && t.find("Express") != std::string::npos) {
      // lspci's words for each type (ls-caps.c); the longer names first ("Legacy
      // Endpoint" and "Root Complex Integrated Endpoint" also contain "Endpoint").
      static constexpr std::pair<std::string_view, int> kTypes[] = {
          {"Legacy Endpoint", kPortLegacyEndpoint},
          {"Root Complex Integrated Endpoint", kPortRcEndpoint},
          {"Root Complex Event Collector", 10},
          {"Root Port", kPortRootPort},
          {"Upstream Port", kPortUpstream},
          {"Downstream Port", kPortDownstream},
          {"PCI-Express to PCI/PCI-X Bridge", kPortPcieToPci},
          {"PCI/PCI-X to PCI-Express Bridge", kPortPciToPcie},
          {"Endpoint", kPortEndpoint}};
      for (const auto& [words, type] : kTypes)
        if (t.find(words) != std::string::npos) {
          p.cur->port_type = type;
          break;
        }
    } else if (t.rfind("LnkCap:", 0) == 0 || t.rfind("LnkSta:", 0) == 0) {
      bool cap = t[3] == 'C';
      if (auto v = number_after(t, "Speed "); v && *v > 0 && *v < 1000)
        (cap ? p.cap_speed : p.sta_speed) = *v;
      // "Width x0": the link of an empty slot is down; the dump says the same.
      if (auto v = number_after(t, "Width x"); v && *v >= 0 && *v <= 32)
        (cap ? p.cap_width : p.sta_width) = static_cast<int>(*v);
    } else if (t.rfind("ACSCap:", 0) == 0) {
      if (!p.acs) p.acs = Acs{};
      p.acs->cap = acs_from_text(t);
    } else if (t.rfind("ACSCtl:", 0) == 0) {
      if (!p.acs) p.acs = Acs{};
      p.acs->ctl = acs_from_text(t);
    } else if (t.rfind("UESta:", 0) == 0 || t.rfind("CESta:", 0) == 0) {
      // The AER status registers (bits set: errors seen and not cleared); no counts.
      const bool ce = t[0] == 'C';
      AerCounters& a = p.s.faults.aer[p.cur->bdf];
      a.status_known = true;
      (ce ? a.status_correctable : a.status_uncorrectable) =
          aer_status_bits(detail::trim(t.substr(6)), ce ? AerClass::Correctable : AerClass::Uncorrectable);
    } else if (t.rfind("NUMA node:", 0) == 0) {
      p.cur->numa_node = std::atoi(t.c_str() + 10);
    } else if (t.rfind("IOMMU group:", 0) == 0) {
      p.cur->iommu_group = std::atoi(t.c_str() + 12);
    } else if (t.rfind("Kernel driver in use:", 0) == 0) {
      p.cur->driver = detail::trim(t.substr(21));
    } else if (top_level(line) && t.rfind("Region ", 0) == 0 && t.size() > 8 && t[7] >= '0' && t[7] <= '5' &&
               t.find(": Memory at") != std::string::npos &&
               t.find("[size=") != std::string::npos) {
      p.cur->bars_known = true;
      auto pos = t.find("[size=") + 6;
      size_t digits = pos;
      while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
      if (digits == pos || digits - pos > 12) continue;
      char unit = digits < t.size() ? t[digits] : ' ';
      bool pref = t.find("prefetchable") != std::string::npos &&
                  t.find("non-prefetchable") == std::string::npos;
      p.cur->bars.push_back(Bar{t[7] - '0', size_from_text(t.substr(pos, digits - pos), unit), pref,
                                t.find("64-bit") != std::string::npos});
    }
  }
  p.flush();
  if (p.s.devices.empty())
    throw RuntimeError(file.string() +
                       " holds no `lspci -vvv` device lines (expected lines "
                       "such as \"01:00.0 3D controller: NVIDIA Corporation ...\")");
  p.s.kind = SourceKind::LspciText;
  p.s.path = file.string();
  p.s.notes.push_back("lspci text has no host facts (kernel, IOMMU mode, cufile.json, udev)");
  std::stable_sort(p.s.devices.begin(), p.s.devices.end(),
                   [](const Device& a, const Device& b) { return a.bdf < b.bdf; });
  rebuild_tree_from_bus_numbers(p.s);
  infer_port_types(p.s);
  check_consistency(p.s, true);
  return p.s;
}

}  // namespace gdsb::topo
