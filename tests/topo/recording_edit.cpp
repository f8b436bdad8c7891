#include "recording_edit.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>

namespace gdsb::topo::testing {
namespace {

std::string hex(unsigned v, int digits) {
  char b[16];
  std::snprintf(b, sizeof b, "%0*x", digits, v);
  return b;
}

// "[DDDD:]BB:DD.F " at the start of a line.
bool parse_address(const std::string& line, Stanza& s) {
  const size_t sp = line.find(' ');
  const std::string a = line.substr(0, sp);
  unsigned d = 0, b = 0, dv = 0, f = 0;
  char tail = 0;
  if (a.size() == 12 && std::sscanf(a.c_str(), "%4x:%2x:%2x.%1u%c", &d, &b, &dv, &f, &tail) == 4) {
    s.long_form = true;
  } else if (a.size() == 7 && std::sscanf(a.c_str(), "%2x:%2x.%1u%c", &b, &dv, &f, &tail) == 3) {
    s.long_form = false;
  } else {
    return false;
  }
  s.domain = d;
  s.bus = b;
  s.dev = dv;
  s.func = f;
  s.rest = sp == std::string::npos ? "" : line.substr(sp);
  return true;
}

// "00: 86 80 ..." / "100: ..." hex lines of a dump: offset, else nullopt.
std::optional<size_t> hex_offset(const std::string& line) {
  static const std::regex kHex(R"(^([0-9a-f]{2,3}):( [0-9a-f]{2})+$)");
  if (!std::regex_match(line, kHex)) return std::nullopt;
  return std::stoul(line.substr(0, line.find(':')), nullptr, 16);
}

}  // namespace

std::string Stanza::bdf() const {
  return hex(domain, 4) + ":" + hex(bus, 2) + ":" + hex(dev, 2) + "." + std::to_string(func);
}

std::vector<uint8_t> Stanza::config() const {
  std::vector<uint8_t> out;
  for (const auto& l : lines)
    if (auto off = hex_offset(l)) {
      std::istringstream in(l.substr(l.find(':') + 1));
      size_t i = *off;
      for (std::string byte; in >> byte; ++i) {
        if (out.size() <= i) out.resize(i + 1);
        out[i] = static_cast<uint8_t>(std::stoul(byte, nullptr, 16));
      }
    }
  return out;
}

void Stanza::set_config(const std::vector<uint8_t>& bytes) {
  for (auto& l : lines)
    if (auto off = hex_offset(l)) {
      std::string out = l.substr(0, l.find(':') + 1);
      const size_t n = (l.size() - out.size()) / 3;
      for (size_t i = *off; i < *off + n && i < bytes.size(); ++i) out.append(" ").append(hex(bytes[i], 2));
      l = out;
    }
}

std::string* Stanza::line(const std::string& key) {
  for (auto& l : lines) {
    const size_t start = l.find_first_not_of('\t');
    if (start > 0 && start != std::string::npos && l.compare(start, key.size(), key) == 0) return &l;
  }
  return nullptr;
}

Recording Recording::parse(const std::string& text) {
  Recording r;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    Stanza s;
    if (!line.empty() && line[0] != '\t' && line[0] != ' ' && parse_address(line, s)) {
      r.stanzas.push_back(std::move(s));
    } else if (line.empty()) {
      continue;  // stanzas are separated by blank lines; text() writes them back
    } else if (r.stanzas.empty()) {
      r.preamble.push_back(line);
    } else {
      r.stanzas.back().lines.push_back(line);
    }
  }
  return r;
}

std::string Recording::text() const {
  std::string out;
  for (const auto& p : preamble) out += p + "\n";
  for (const auto& s : stanzas) {
    out += s.long_form ? s.bdf() : s.bdf().substr(5);
    out += s.rest + "\n";
    for (const auto& l : s.lines) out += l + "\n";
    out += "\n";
  }
  return out;
}

Stanza* Recording::find(const std::string& bdf) {
  for (auto& s : stanzas)
    if (s.bdf() == bdf) return &s;
  return nullptr;
}

BusMap make_bus_map(const std::vector<unsigned>& used) {
  std::set<unsigned> u(used.begin(), used.end());
  unsigned top = 255;
  while (top > 0 && u.count(top)) --top;  // the highest unused number
  unsigned gap = 0;  // unused numbers ending at `top`
  while (gap <= top && !u.count(top - gap)) ++gap;
  BusMap m;
  for (unsigned b = 0; b < 256; ++b)
    m.bus[b] = b > top ? b : b + gap <= top ? b + gap : b - (top + 1 - gap);
  return m;
}

std::string BusMap::map_bdf(const std::string& bdf) const {
  unsigned d = 0, b = 0, dv = 0, f = 0;
  if (std::sscanf(bdf.c_str(), "%x:%x:%x.%u", &d, &b, &dv, &f) != 4) return bdf;
  return hex(d + domain_shift, 4) + ":" + hex(map_bus(b), 2) + ":" + hex(dv, 2) + "." + std::to_string(f);
}

std::string BusMap::unmap_bdf(const std::string& bdf) const {
  unsigned d = 0, b = 0, dv = 0, f = 0;
  if (std::sscanf(bdf.c_str(), "%x:%x:%x.%u", &d, &b, &dv, &f) != 4) {
    if (std::sscanf(bdf.c_str(), "%x:%x", &d, &b) == 2 && bdf.size() == 7)  // root complex
      for (const auto& [o, n] : bus)
        if (n == b) return hex(d - domain_shift, 4) + ":" + hex(o, 2);
    return bdf;
  }
  for (const auto& [o, n] : bus)
    if (n == b) return hex(d - domain_shift, 4) + ":" + hex(o, 2) + ":" + hex(dv, 2) + "." + std::to_string(f);
  return bdf;
}

std::vector<unsigned> used_buses(const Recording& r) {
  std::vector<unsigned> out;
  for (const auto& s : r.stanzas) {
    out.push_back(s.bus);
    const auto cfg = s.config();
    unsigned sec = 0, sub = 0;
    bool bridge = false;
    if (cfg.size() >= 64 && ((cfg[0x0e] & 0x7f) == 1 || (cfg[0x0e] & 0x7f) == 2)) {
      sec = cfg[0x19];
      sub = cfg[0x1a];
      bridge = true;
    }
    for (const auto& l : s.lines)
      if (l.find("Bus: primary=") != std::string::npos && cfg.empty()) {
        unsigned p = 0;
        if (std::sscanf(l.c_str() + l.find("Bus: primary="), "Bus: primary=%x, secondary=%x, subordinate=%x", &p, &sec, &sub) == 3)
          bridge = true;
      }
    if (bridge)
      for (unsigned b = sec; b <= sub && b < 256; ++b) out.push_back(b);
  }
  return out;
}

Recording renumber(Recording r, const BusMap& m) {
  for (auto& s : r.stanzas) {
    s.domain += m.domain_shift;
    s.long_form = true;
    s.bus = m.map_bus(s.bus);
    if (auto cfg = s.config(); cfg.size() >= 64 && ((cfg[0x0e] & 0x7f) == 1 || (cfg[0x0e] & 0x7f) == 2)) {
      for (size_t off : {size_t{0x18}, size_t{0x19}, size_t{0x1a}}) cfg[off] = static_cast<uint8_t>(m.map_bus(cfg[off]));
      s.set_config(cfg);
    }
    for (auto& l : s.lines) {
      const size_t at = l.find("Bus: primary=");
      unsigned p = 0, sec = 0, sub = 0;
      if (at == std::string::npos ||
          std::sscanf(l.c_str() + at, "Bus: primary=%x, secondary=%x, subordinate=%x", &p, &sec, &sub) != 3)
        continue;
      const size_t end = l.find(", sec-latency", at);
      l = l.substr(0, at) + "Bus: primary=" + hex(m.map_bus(p), 2) + ", secondary=" + hex(m.map_bus(sec), 2) +
          ", subordinate=" + hex(m.map_bus(sub), 2) + (end == std::string::npos ? "" : l.substr(end));
    }
  }
  return r;
}

std::vector<unsigned> used_buses_xml(const std::string& xml) {
  std::vector<unsigned> out;
  static const std::regex kBus(R"(pci_busid="[0-9a-f]{4}:([0-9a-f]{2}):)"),
      kRange(R"(bridge_pci="[0-9a-f]{4}:\[([0-9a-f]{2})-([0-9a-f]{2})\]")");
  for (std::sregex_iterator it(xml.begin(), xml.end(), kBus), end; it != end; ++it)
    out.push_back(static_cast<unsigned>(std::stoul((*it)[1], nullptr, 16)));
  for (std::sregex_iterator it(xml.begin(), xml.end(), kRange), end; it != end; ++it)
    for (unsigned b = static_cast<unsigned>(std::stoul((*it)[1], nullptr, 16));
         b <= std::stoul((*it)[2], nullptr, 16); ++b)
      out.push_back(b);
  return out;
}

std::string renumber_xml(const std::string& xml, const BusMap& m) {
  static const std::regex kAttr(
      R"((pci_busid="([0-9a-f]{4}):([0-9a-f]{2}):)|(bridge_pci="([0-9a-f]{4}):\[([0-9a-f]{2})-([0-9a-f]{2})\]"))");
  std::string out;
  auto last = xml.cbegin();
  for (std::sregex_iterator it(xml.begin(), xml.end(), kAttr), end; it != end; ++it) {
    const auto& mt = *it;
    out.append(last, mt[0].first);
    auto num = [](const std::string& s) { return static_cast<unsigned>(std::stoul(s, nullptr, 16)); };
    if (mt[1].matched)
      out += "pci_busid=\"" + hex(num(mt[2]) + m.domain_shift, 4) + ":" + hex(m.map_bus(num(mt[3])), 2) + ":";
    else
      out += "bridge_pci=\"" + hex(num(mt[5]) + m.domain_shift, 4) + ":[" + hex(m.map_bus(num(mt[6])), 2) +
             "-" + hex(m.map_bus(num(mt[7])), 2) + "]\"";
    last = mt[0].second;
  }
  out.append(last, xml.cend());
  return out;
}

std::vector<unsigned> used_buses_snapshot(const std::string& json) {
  std::vector<unsigned> out;
  for (const auto& d : nlohmann::json::parse(json).at("devices")) {
    unsigned dom = 0, b = 0;
    std::sscanf(d.at("bdf").get<std::string>().c_str(), "%x:%x", &dom, &b);
    out.push_back(b);
    if (d.contains("secondary_bus") && d["secondary_bus"].is_number())
      for (int x = d["secondary_bus"].get<int>(); x <= d["subordinate_bus"].get<int>(); ++x)
        out.push_back(static_cast<unsigned>(x));
  }
  return out;
}

std::string renumber_snapshot(const std::string& json, const BusMap& m) {
  auto j = nlohmann::json::parse(json);
  auto bdf = [&](nlohmann::json& v) {
    if (!v.is_string() || v.get<std::string>().empty()) return;
    const std::string s = v.get<std::string>();
    if (s.size() == 7) {  // root complex "dddd:bb"
      unsigned d = 0, b = 0;
      std::sscanf(s.c_str(), "%x:%x", &d, &b);
      v = hex(d + m.domain_shift, 4) + ":" + hex(m.map_bus(b), 2);
    } else {
      v = m.map_bdf(s);
    }
  };
  for (auto& d : j.at("devices")) {
    for (const char* k : {"bdf", "parent", "root_complex"})
      if (d.contains(k)) bdf(d[k]);
    for (const char* k : {"secondary_bus", "subordinate_bus"})
      if (d.contains(k) && d[k].is_number()) d[k] = m.map_bus(d[k].get<unsigned>());
    std::string cfg = d.value("config", "");
    if (cfg.size() >= 128 && (std::stoul(cfg.substr(0x0e * 2, 2), nullptr, 16) & 0x7f) >= 1)
      for (size_t off : {size_t{0x18}, size_t{0x19}, size_t{0x1a}})
        cfg.replace(off * 2, 2, hex(m.map_bus(static_cast<unsigned>(std::stoul(cfg.substr(off * 2, 2), nullptr, 16))), 2));
    if (d.contains("config")) d["config"] = cfg;
  }
  nlohmann::json facts = nlohmann::json::object();
  for (auto& [k, f] : j.at("gpu_facts").items()) {
    if (f.contains("nvlinks") && f["nvlinks"].is_array())
      for (auto& l : f["nvlinks"]) bdf(l["remote"]);
    facts[m.map_bdf(k)] = f;
  }
  j["gpu_facts"] = facts;
  for (auto& p : j.at("gpu_pairs")) {
    bdf(p["a"]);
    bdf(p["b"]);
  }
  return j.dump(1);
}

std::string reverse_snapshot_devices(const std::string& json) {
  auto j = nlohmann::json::parse(json);
  auto& d = j.at("devices");
  std::reverse(d.begin(), d.end());
  return j.dump(1);
}

namespace {
// [start, end) of the <object ...> element whose pci_busid is `bdf`.
std::optional<std::pair<size_t, size_t>> xml_element(const std::string& xml, const std::string& bdf) {
  const size_t attr = xml.find("pci_busid=\"" + bdf + "\"");
  if (attr == std::string::npos) return std::nullopt;
  const size_t start = xml.rfind("<object", attr);
  size_t pos = xml.find('>', attr);
  if (start == std::string::npos || pos == std::string::npos) return std::nullopt;
  if (xml[pos - 1] == '/') return std::make_pair(start, pos + 1);
  for (int depth = 1; depth > 0;) {
    const size_t open = xml.find("<object", pos), close = xml.find("</object>", pos);
    if (close == std::string::npos) return std::nullopt;
    if (open != std::string::npos && open < close) {
      const size_t gt = xml.find('>', open);
      if (xml[gt - 1] != '/') ++depth;
      pos = gt + 1;
    } else {
      --depth;
      pos = close + 9;
    }
  }
  return std::make_pair(start, pos);
}
}  // namespace

std::optional<std::string> remove_xml_pcidev(const std::string& xml, const std::string& bdf) {
  auto e = xml_element(xml, bdf);
  if (!e) return std::nullopt;
  return xml.substr(0, e->first) + xml.substr(e->second);
}

std::optional<std::string> duplicate_xml_object(const std::string& xml, const std::string& bdf) {
  auto e = xml_element(xml, bdf);
  if (!e) return std::nullopt;
  const size_t gt = xml.find('>', e->first);
  std::string copy = xml.substr(e->first, gt + 1 - e->first);
  if (copy[copy.size() - 2] != '/') copy.insert(copy.size() - 1, "/");  // no children
  static const std::regex kGp(R"re(gp_index="([0-9]+)")re");
  unsigned top = 0;
  for (std::sregex_iterator it(xml.begin(), xml.end(), kGp), end; it != end; ++it)
    top = std::max(top, static_cast<unsigned>(std::stoul((*it)[1])));
  copy = std::regex_replace(copy, kGp, "gp_index=\"" + std::to_string(top + 1) + "\"");
  return xml.substr(0, e->second) + "\n" + copy + xml.substr(e->second);
}

std::optional<std::string> unwrap_xml_bridge(const std::string& xml, const std::string& bdf) {
  auto e = xml_element(xml, bdf);
  if (!e) return std::nullopt;
  const size_t gt = xml.find('>', e->first);
  if (xml[gt - 1] == '/') return xml.substr(0, e->first) + xml.substr(e->second);  // no children
  const std::string tail = "</object>";
  return xml.substr(0, e->first) + xml.substr(gt + 1, e->second - tail.size() - gt - 1) + xml.substr(e->second);
}

std::optional<std::string> set_xml_class(const std::string& xml, const std::string& bdf, uint16_t class_id) {
  const size_t attr = xml.find("pci_busid=\"" + bdf + "\"");
  if (attr == std::string::npos) return std::nullopt;
  const size_t type = xml.find("pci_type=\"", attr);
  if (type == std::string::npos || type > xml.find('>', attr)) return std::nullopt;
  std::string out = xml;
  out.replace(type + 10, 4, hex(class_id, 4));
  return out;
}

}  // namespace gdsb::topo::testing
