// Differential test against lspci itself: for every `lspci -xxxx` dump of the corpus (real
// recordings first, then dumps the fixture builder generates), pciutils reads the same
// file with `lspci -F` and its -tv, -nn and -vvv output is compared field by field with
// the snapshot gdsb-topo's dump collector makes of it: the tree (parent of each function),
// class, vendor/device IDs and names (pci.ids through libpci), PCIe port type, LnkCap and
// LnkSta speed and width, ACS capability and control bits, and BAR sizes.
// The lspci parsers below are deliberately separate from gdsb-topo's lspci text collector:
// they read lspci's output of the dump, not the recording, so the two sides share nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "oracle_util.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;
const std::string kLspci = GDSB_LSPCI;

struct LinkFacts {
  double speed = 0;  // GT/s, 0 for "unknown"
  int width = 0;
};

// One function as lspci prints it.
struct LspciDev {
  bool in_tree = false;
  std::string parent;  // "" on a root bus
  uint16_t class_id = 0, vendor = 0, device = 0;
  std::string name;
  int port_type = -1;
  std::optional<LinkFacts> lnkcap, lnksta;
  std::optional<uint16_t> acs_cap, acs_ctl;
  std::map<int, std::string> region_sizes;  // index -> "16M"; only regions with [size=]
  int regions = 0;
};

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string hex2(unsigned v) {
  char b[8];
  std::snprintf(b, sizeof b, "%02x", v & 0xff);
  return b;
}

// `lspci -tv`: a device token "dd.f" sits at the column where its bus's children start;
// the bus is named by the "[dddd:bb]" (root) or "[bb]"/"[bb-ss]" (behind the bridge just
// printed) label before the first child. Later children of that bus sit at the same column.
void parse_tree(const std::string& text, std::map<std::string, LspciDev>& out) {
  struct Bus {
    std::string domain;
    unsigned bus = 0;
    std::string bridge;
  };
  std::map<size_t, Bus> at_column;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::optional<Bus> pending;
    std::string last, domain;
    for (size_t i = 0; i < line.size();) {
      if (line[i] == '[') {
        const size_t close = line.find(']', i);
        if (close == std::string::npos) break;
        const std::string label = line.substr(i + 1, close - i - 1);
        if (const size_t colon = label.find(':'); colon != std::string::npos) {
          pending = Bus{label.substr(0, colon), static_cast<unsigned>(std::stoul(label.substr(colon + 1), nullptr, 16)), ""};
        } else {
          pending = Bus{domain, static_cast<unsigned>(std::stoul(label, nullptr, 16)), last};
        }
        i = close + 1;
        continue;
      }
      const bool token = i > 0 && line[i - 1] == '-' && i + 4 <= line.size() && is_hex(line[i]) &&
                         is_hex(line[i + 1]) && line[i + 2] == '.' && line[i + 3] >= '0' &&
                         line[i + 3] <= '7' && (i + 4 == line.size() || line[i + 4] == ' ' || line[i + 4] == '-');
      if (!token) {
        ++i;
        continue;
      }
      Bus bus;
      if (pending) {
        bus = *pending;
        pending.reset();
      } else if (auto it = at_column.find(i); it != at_column.end()) {
        bus = it->second;
      } else {
        ADD_FAILURE() << "lspci -t line without a bus: " << line;
        break;
      }
      at_column[i] = bus;
      last = bus.domain + ":" + hex2(bus.bus) + ":" + line.substr(i, 4);
      domain = bus.domain;
      out[last].in_tree = true;
      out[last].parent = bus.bridge;
      i += 4;
      if (line.compare(i, 2, "  ") == 0) break;  // -v: the name follows
    }
  }
}

// `lspci -D -nn`: "0000:00:1c.0 PCI bridge [0604]: Intel Corporation Name [8086:a110] (rev f1)".
void parse_nn(const std::string& text, std::map<std::string, LspciDev>& out) {
  static const std::regex kLine(R"(^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) [^\[]*\[([0-9a-f]{4})\]: (.*) \[([0-9a-f]{4}):([0-9a-f]{4})\]( \(rev [0-9a-f]{2}\))?( \(prog-if .*\))?$)");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) {
      ADD_FAILURE() << "unexpected lspci -nn line: " << line;
      continue;
    }
    LspciDev& d = out[m[1]];
    d.class_id = static_cast<uint16_t>(std::stoul(m[2], nullptr, 16));
    d.name = m[3];
    // A device pci.ids lacks: -nn prints "Intel Corporation Device [8086:09a2]", plain
    // lspci "Intel Corporation Device 09a2"; the IDs are compared on their own below.
    if (d.name.size() >= 6 && d.name.compare(d.name.size() - 6, 6, "Device") == 0)
      d.name.append(" ").append(m[5].str());
    d.vendor = static_cast<uint16_t>(std::stoul(m[4], nullptr, 16));
    d.device = static_cast<uint16_t>(std::stoul(m[5], nullptr, 16));
  }
}

LinkFacts parse_link(const std::string& s) {
  LinkFacts l;
  static const std::regex kSpeed(R"(Speed ([0-9.]+)GT/s)"), kWidth(R"(Width x([0-9]+))");
  std::smatch m;
  if (std::regex_search(s, m, kSpeed)) l.speed = std::stod(m[1]);
  if (std::regex_search(s, m, kWidth)) l.width = std::stoi(m[1]);
  return l;
}

uint16_t parse_acs_bits(const std::string& s) {
  static constexpr std::pair<const char*, uint16_t> kBits[] = {
      {"SrcValid+", kAcsSv}, {"TransBlk+", kAcsTb},    {"ReqRedir+", kAcsRr},   {"CmpltRedir+", kAcsCr},
      {"UpstreamFwd+", kAcsUf}, {"EgressCtrl+", kAcsEc}, {"DirectTrans+", kAcsDt}};
  uint16_t v = 0;
  for (const auto& [flag, bit] : kBits)
    if (s.find(flag) != std::string::npos) v |= bit;
  return v;
}

int parse_port_type(const std::string& s) {
  // ls-caps.c cap_express(): "Express (vN) <type>"; longest names first.
  static constexpr std::pair<const char*, int> kTypes[] = {
      {"Legacy Endpoint", kPortLegacyEndpoint},
      {"Root Complex Integrated Endpoint", kPortRcEndpoint},
      {"Root Complex Event Collector", 10},
      {"Endpoint", kPortEndpoint},
      {"Root Port", kPortRootPort},
      {"Upstream Port", kPortUpstream},
      {"Downstream Port", kPortDownstream},
      {"PCI-Express to PCI/PCI-X Bridge", kPortPcieToPci},
      {"PCI/PCI-X to PCI-Express Bridge", kPortPciToPcie}};
  for (const auto& [name, type] : kTypes)
    if (s.find(name) != std::string::npos) return type;
  return -2;  // an Express capability lspci names in words this test does not know
}

// `lspci -D -vvv`: one stanza per function.
void parse_vvv(const std::string& text, std::map<std::string, LspciDev>& out) {
  static const std::regex kRegion(R"(^\tRegion ([0-5]): .*?(\[size=([0-9]+[KMGT]?)\])?$)");
  std::istringstream in(text);
  LspciDev* d = nullptr;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] != '\t') {
      d = &out[line.substr(0, 12)];
      continue;
    }
    if (!d) continue;
    std::smatch m;
    if (std::regex_match(line, m, kRegion)) {
      ++d->regions;
      if (m[3].matched) d->region_sizes[std::stoi(m[1])] = m[3];
    } else if (line.rfind("\tCapabilities: [", 0) == 0 && line.find("] Express (v") != std::string::npos) {
      d->port_type = parse_port_type(line);
    } else if (line.rfind("\t\tLnkCap:", 0) == 0) {
      d->lnkcap = parse_link(line);
    } else if (line.rfind("\t\tLnkSta:", 0) == 0) {
      d->lnksta = parse_link(line);
    } else if (line.rfind("\t\tACSCap:", 0) == 0) {
      d->acs_cap = parse_acs_bits(line);
    } else if (line.rfind("\t\tACSCtl:", 0) == 0) {
      d->acs_ctl = parse_acs_bits(line);
    }
  }
}

std::map<std::string, LspciDev> lspci_view(const fs::path& dump) {
  std::map<std::string, LspciDev> out;
  const std::string base = shell_quote(kLspci) + " -F " + shell_quote(dump.string());
  parse_tree(run_command(base + " -tv"), out);
  parse_nn(run_command(base + " -D -nn"), out);
  parse_vvv(run_command(base + " -D -vvv"), out);
  return out;
}

std::string bar_size_text(uint64_t size) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && size >= 1024 && size % 1024 == 0) {
    size /= 1024;
    ++u;
  }
  return std::to_string(size) + kUnits[u];
}

// The comparison itself; returns how many functions were compared.
size_t compare_with_lspci(const fs::path& dump) {
  SCOPED_TRACE(dump.filename().string());
  CollectOptions opt;
  opt.use_hwloc = false;
  opt.lookup_names = true;  // the same pci.ids that lspci reads, through the same libpci
  const Snapshot s = collect_pci_dump(dump, opt);
  const auto lspci = lspci_view(dump);
  EXPECT_EQ(s.devices.size(), lspci.size());
  for (const auto& [bdf, l] : lspci) {
    SCOPED_TRACE(bdf);
    const Device* d = s.find(bdf);
    if (!d) {
      ADD_FAILURE() << "lspci lists " << bdf << ", gdsb-topo does not";
      continue;
    }
    EXPECT_TRUE(l.in_tree);
    EXPECT_EQ(d->parent, l.parent) << "parent (lspci -tv)";
    EXPECT_EQ(d->class_id(), l.class_id) << "class (lspci -nn)";
    EXPECT_EQ(d->vendor, l.vendor);
    EXPECT_EQ(d->device, l.device);
    EXPECT_EQ(d->name, l.name) << "name (pci.ids)";
    EXPECT_EQ(d->port_type, l.port_type) << "PCIe port type (lspci -vvv Express)";
    EXPECT_EQ(d->link.has_value(), l.lnksta.has_value()) << "LnkSta present";
    if (d->link && l.lnksta && l.lnkcap) {
      EXPECT_DOUBLE_EQ(d->link->cur_speed_gts, l.lnksta->speed) << "LnkSta speed";
      EXPECT_EQ(d->link->cur_width, l.lnksta->width) << "LnkSta width";
      EXPECT_DOUBLE_EQ(d->link->max_speed_gts, l.lnkcap->speed) << "LnkCap speed";
      EXPECT_EQ(d->link->max_width, l.lnkcap->width) << "LnkCap width";
    }
    EXPECT_EQ(d->acs.has_value(), l.acs_ctl.has_value()) << "ACS capability present";
    if (d->acs && l.acs_ctl && l.acs_cap) {
      EXPECT_EQ(d->acs->ctl & 0x7f, *l.acs_ctl) << "ACSCtl " << acs_bits_text(d->acs->ctl);
      EXPECT_EQ(d->acs->cap & 0x7f, *l.acs_cap) << "ACSCap";
      EXPECT_EQ(acs_redirects(*d), (*l.acs_ctl & kAcsRedirectMask) != 0);
    }
    // A dump cannot size BARs (that needs writes to the device): neither side may invent one.
    std::map<int, std::string> ours;
    if (d->bars_known)
      for (const Bar& b : d->bars) ours[b.index] = bar_size_text(b.size);
    EXPECT_EQ(ours, l.region_sizes) << "BAR sizes";
  }
  return lspci.size();
}

bool lspci_missing() { return kLspci.empty() || !fs::exists(kLspci); }

TEST(TopoLspciOracle, EveryRealDumpAgreesWithLspci) {
  if (lspci_missing()) GTEST_SKIP() << "lspci (pciutils) not found at configure time: oracle not run";
  const auto dumps = corpus(kReal, RecordingKind::PciDump);
  ASSERT_GE(dumps.size(), 6U) << "the corpus lost its dumps";
  size_t functions = 0;
  for (const auto& f : dumps) functions += compare_with_lspci(f);
  EXPECT_GT(functions, 100U);
}

// The fixture builder's dumps reach what the real ones lack: switches with ACS redirect,
// a downgraded GPU link, several sockets, -xxx (256-byte) dumps without extended space.
TEST(TopoLspciOracle, GeneratedDumpsAgreeWithLspci) {
  if (lspci_missing()) GTEST_SKIP() << "lspci (pciutils) not found at configure time: oracle not run";
  auto m = fixture::make_box(2, 2, 2, 2, 1);
  fixture::first(m, 0x0302)->cur_width = 8;
  for (auto& d : m.devs)
    if (d.port_type == 6) {
      d.acs_ctl = 0x001d;  // SV RR CR UF: the kernel's default when ACS is enforced
      break;
    }
  fixture::TempDir dir;
  for (size_t bytes : {size_t{4096}, size_t{256}}) {
    const fs::path p = dir.path() / ("box-" + std::to_string(bytes) + ".txt");
    std::ofstream(p) << fixture::lspci_dump(m, bytes);
    EXPECT_EQ(compare_with_lspci(p), m.devs.size());
  }
  const fs::path vm = dir.path() / "vm.txt";
  std::ofstream(vm) << fixture::lspci_dump(fixture::make_flat_vm(), 4096);
  EXPECT_GT(compare_with_lspci(vm), 0U);
}

// The text collector has no dump to be compared against, but lspci can write its text:
// `lspci -F DUMP -vvv` of a real machine's config bytes is real lspci text whose truth is
// the dump itself (checked against lspci above). The text collector must read from it what
// the dump collector reads from the bytes, in each layout users paste (-vvv, -nn, -D).
// Whether the dump carries the recorded machine's own `lspci -vv` text next to its bytes.
bool has_recorded_text(const fs::path& dump) {
  std::ifstream in(dump);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("\tCapabilities: [", 0) == 0) return true;
  return false;
}

// flags empty: the recording's own text (what the recorded machine's lspci printed next
// to the bytes, in that lspci version's layout) is read instead.
size_t compare_text_with_dump(const fs::path& dump, const std::string& flags) {
  SCOPED_TRACE(dump.filename().string() + (flags.empty() ? " as recorded" : " lspci " + flags));
  CollectOptions opt;
  opt.use_hwloc = false;
  opt.lookup_names = false;
  const Snapshot truth = collect_pci_dump(dump, opt);
  fixture::TempDir dir;
  const fs::path text = dir.path() / "lspci.txt";
  if (flags.empty())
    fs::copy_file(dump, text);
  else
    std::ofstream(text) << run_command(shell_quote(kLspci) + " -F " + shell_quote(dump.string()) + " " + flags);
  const Snapshot s = collect_lspci_text(text, opt);
  EXPECT_EQ(s.devices.size(), truth.devices.size());
  const bool numeric = flags.find("-nn") != std::string::npos;
  for (const Device& t : truth.devices) {
    SCOPED_TRACE(t.bdf);
    const Device* d = s.find(t.bdf);
    if (!d) {
      ADD_FAILURE() << "the text collector lost " << t.bdf;
      continue;
    }
    EXPECT_EQ(d->parent, t.parent) << "parent";
    EXPECT_EQ(d->secondary_bus, t.secondary_bus);
    EXPECT_EQ(d->subordinate_bus, t.subordinate_bus);
    if (numeric) {
      EXPECT_EQ(d->class_id(), t.class_id());
      EXPECT_EQ(d->vendor, t.vendor);
      EXPECT_EQ(d->device, t.device);
    }
    EXPECT_EQ(d->role, t.role) << role_name(d->role) << " vs " << role_name(t.role);
    EXPECT_EQ(d->port_type, t.port_type) << "port type";
    EXPECT_EQ(d->link.has_value(), t.link.has_value()) << "link";
    if (d->link && t.link) {
      EXPECT_DOUBLE_EQ(d->link->cur_speed_gts, t.link->cur_speed_gts);
      EXPECT_EQ(d->link->cur_width, t.link->cur_width);
      EXPECT_DOUBLE_EQ(d->link->max_speed_gts, t.link->max_speed_gts);
      EXPECT_EQ(d->link->max_width, t.link->max_width);
    }
    EXPECT_EQ(d->acs.has_value(), t.acs.has_value()) << "ACS";
    if (d->acs && t.acs) {
      EXPECT_EQ(d->acs->ctl & 0x7f, t.acs->ctl & 0x7f);
      EXPECT_EQ(d->acs->cap & 0x7f, t.acs->cap & 0x7f);
    }
  }
  return truth.devices.size();
}

TEST(TopoLspciOracle, TextCollectorReadsLspciTextOfEveryRealDumpAsTheDumpCollectorReadsTheDump) {
  if (lspci_missing()) GTEST_SKIP() << "lspci (pciutils) not found at configure time: oracle not run";
  size_t functions = 0;
  for (const auto& f : corpus(kReal, RecordingKind::PciDump))
    for (const char* flags : {"-vvv", "-nn -vvv", "-D -nn -vvv", ""})
      if (*flags || has_recorded_text(f)) functions += compare_text_with_dump(f, flags);
  EXPECT_GT(functions, 300U);
}

}  // namespace
}  // namespace gdsb::topo::testing
