// Inconsistent recordings (issue 27 item 6), as a mutation test over every recording of the
// corpus: each inconsistency no machine can have (one address twice, a parent the input
// lacks, a bus outside its bridge's range, a parent loop) is injected by editing the
// recorded text, and the reader must name it with its places in the input. The healthy
// recordings themselves name none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <functional>
#include <regex>

#include "gdsb/error.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "invariant_util.hpp"

namespace gdsb::topo::testing {
namespace {

constexpr const char* kMark = "inconsistent input: ";

std::vector<std::string> inconsistencies(const Snapshot& s) {
  std::vector<std::string> out;
  for (const auto& n : s.notes)
    if (n.rfind(kMark, 0) == 0) out.push_back(n);
  return out;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += n + "\n";
  return out;
}

// The note that names every one of `words`, or "".
std::string note_naming(const std::vector<std::string>& notes, const std::vector<std::string>& words) {
  for (const auto& n : notes)
    if (std::all_of(words.begin(), words.end(), [&](const std::string& w) { return n.find(w) != std::string::npos; }))
      return n;
  return "";
}

// The 1-based numbers of the lines of `text` that contain `needle`.
std::vector<int> lines_with(const std::string& text, const std::string& needle) {
  std::vector<int> out;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (++n, line.find(needle) != std::string::npos) out.push_back(n);
  return out;
}

std::string line_of(const std::string& text, const std::string& needle) {
  const auto l = lines_with(text, needle);
  return l.size() == 1 ? "line " + std::to_string(l[0]) : "(" + needle + " on " + std::to_string(l.size()) + " lines)";
}

// The first line of a text or dump stanza as Recording::text() writes it.
std::string header(const Stanza& s) { return (s.long_form ? s.bdf() : s.bdf().substr(5)) + s.rest; }

std::string hex2(int v) {
  char b[8];
  std::snprintf(b, sizeof b, "%02x", v & 0xff);
  return b;
}

// A bridge of the healthy snapshot that leads to another device, and one such child;
// with `nested`, a bridge whose own parent is a bridge.
struct BridgeAndChild {
  const Device* bridge = nullptr;
  const Device* child = nullptr;
};
BridgeAndChild bridge_with_child(const Snapshot& s, bool nested) {
  for (const auto& c : s.devices) {
    const Device* b = c.parent.empty() ? nullptr : s.find(c.parent);
    if (!b || !b->secondary_bus || !b->subordinate_bus) continue;
    const Device* above = b->parent.empty() ? nullptr : s.find(b->parent);
    if (nested && !(above && above->secondary_bus)) continue;
    return {b, &c};
  }
  return {};
}

// Sets secondary and subordinate bus of `bdf`'s bridge in a text or dump recording.
std::string set_bus_range(Recording r, RecordingKind kind, const std::string& bdf, int sec, int sub) {
  Stanza* st = r.find(bdf);
  if (!st) return "";
  if (kind == RecordingKind::PciDump) {
    auto cfg = st->config();
    cfg[0x19] = static_cast<uint8_t>(sec);
    cfg[0x1a] = static_cast<uint8_t>(sub);
    st->set_config(cfg);
    return r.text();
  }
  std::string* l = st->line("Bus: primary=");
  if (!l) return "";
  static const std::regex kBus(R"(secondary=[0-9a-f]{2}, subordinate=[0-9a-f]{2})");
  *l = std::regex_replace(*l, kBus, "secondary=" + hex2(sec) + ", subordinate=" + hex2(sub));
  return r.text();
}

std::string set_xml_bus_range(const std::string& xml, const std::string& bdf, int sec, int sub) {
  const size_t attr = xml.find("pci_busid=\"" + bdf + "\"");
  if (attr == std::string::npos) return "";
  const size_t start = xml.rfind("<object", attr), end = xml.find('>', attr);
  static const std::regex kRange(R"(bridge_pci="([0-9a-f]{4}):\[[0-9a-f]{2}-[0-9a-f]{2}\]")");
  const std::string tag = std::regex_replace(xml.substr(start, end - start), kRange,
                                             "bridge_pci=\"$1:[" + hex2(sec) + "-" + hex2(sub) + "]\"");
  return xml.substr(0, start) + tag + xml.substr(end);
}

// "0000:01:00.0 (line N)": a device and the line of its header (text, dump) or element
// (hwloc XML) in the edited input.
std::string at_line(const Subject& s, const std::string& edited, const std::string& bdf) {
  if (s.kind == RecordingKind::HwlocXml) return bdf + " (" + line_of(edited, "pci_busid=\"" + bdf + "\"") + ")";
  Recording r = Recording::parse(s.text);
  const Stanza* st = r.find(bdf);
  return bdf + " (" + (st ? line_of(edited, header(*st)) : "no stanza") + ")";
}

// The edited input, collected, names every one of `words` in one inconsistency note.
void expect_named(const Subject& s, const std::string& edited, const std::vector<std::string>& words) {
  ASSERT_NE(edited, "");
  const auto notes = inconsistencies(collect(s.kind, edited).snapshot);
  EXPECT_NE(note_naming(notes, words), "") << joined(notes) << "expected: " << joined(words);
}

// Runs `one` on every subject of the corpus; it returns "" where it ran, else why the
// inconsistency cannot be made in that recording (printed, so a vacuous run shows).
void for_each_subject(const std::string& invariant, const std::function<std::string(const Subject&)>& one) {
  Coverage cov{invariant, {}};
  for (const auto& s : subjects()) {
    SCOPED_TRACE(s.name);
    if (const std::string why_not = one(s); why_not.empty())
      cov.ran.push_back(s.name);
    else
      std::cout << "[ skipped   ] " << s.name << ": " << why_not << "\n";
  }
}

// A saved snapshot with its device list edited; `devices[i]` as the reader names it.
std::string edit_snapshot(const std::string& text, const std::function<void(nlohmann::json&)>& edit) {
  auto j = nlohmann::json::parse(text);
  edit(j.at("devices"));
  return j.dump(1);
}
std::string at_index(const nlohmann::json& devs, size_t i) {
  return devs.at(i).at("bdf").get<std::string>() + " (devices[" + std::to_string(i) + "])";
}

// The collect of an edited subject that must refuse it: the message, "" when it did not.
std::string refusal(RecordingKind kind, const std::string& text) {
  try {
    collect(kind, text);
  } catch (const RuntimeError& e) {
    return e.what();
  }
  return "";
}

TEST(TopoInconsistent, HealthyRecordingsNameNoInconsistency) {
  for_each_subject("no inconsistency in a healthy recording", [](const Subject& s) {
    EXPECT_EQ(joined(inconsistencies(collect(s.kind, s.text).snapshot)), "");
    return std::string();
  });
}

TEST(TopoInconsistent, OneAddressTwiceIsRefusedNamingBothPlaces) {
  for_each_subject("one address twice", [](const Subject& s) {
    std::string edited, bdf, first, second;
    if (s.kind == RecordingKind::Snapshot) {
      edited = edit_snapshot(s.text, [&](nlohmann::json& devs) {
        bdf = devs.back().at("bdf").get<std::string>();
        first = "devices[" + std::to_string(devs.size() - 1) + "]";
        second = "devices[" + std::to_string(devs.size()) + "]";
        devs.push_back(devs.back());
      });
    } else {
      std::string needle;
      if (s.kind == RecordingKind::HwlocXml) {
        // A PCI device's element (not a bridge's) copied after it.
        const Snapshot healthy = collect(s.kind, s.text).snapshot;
        for (const auto& x : healthy.devices)
          if (!x.secondary_bus && s.text.find("pci_busid=\"" + x.bdf + "\"") != std::string::npos) {
            bdf = x.bdf;
            break;
          }
        edited = duplicate_xml_object(s.text, bdf).value_or("");
        needle = "pci_busid=\"" + bdf + "\"";
      } else {
        Recording r = Recording::parse(s.text);
        const Stanza copy = r.stanzas.back();
        r.stanzas.push_back(copy);
        edited = r.text();
        bdf = copy.bdf();
        needle = header(copy);
      }
      const auto l = lines_with(edited, needle);
      EXPECT_EQ(l.size(), 2U) << needle;
      if (l.size() != 2) return std::string("no copy made");
      first = "line " + std::to_string(l[0]);
      second = "line " + std::to_string(l[1]);
    }
    const std::string msg = refusal(s.kind, edited);
    EXPECT_NE(msg.find(bdf + " is recorded twice"), std::string::npos) << msg;
    // The two places, in either order (a library may list the copies backwards).
    EXPECT_TRUE(msg.find("(" + first + " and " + second + ")") != std::string::npos ||
                msg.find("(" + second + " and " + first + ")") != std::string::npos)
        << msg << "\nexpected " << first << " and " << second;
    return std::string();
  });
}

TEST(TopoInconsistent, AChildWhoseParentIsAbsentIsNamed) {
  for_each_subject("parent absent", [](const Subject& s) {
    if (s.kind == RecordingKind::Snapshot) {
      // A saved snapshot names each parent: the last device's parent made one it lacks.
      std::string child;
      const std::string edited = edit_snapshot(s.text, [&](nlohmann::json& devs) {
        devs.back()["parent"] = "0000:7f:1f.7";
        child = at_index(devs, devs.size() - 1);
      });
      expect_named(s, edited, {child, "names its parent 0000:7f:1f.7, which the input does not hold"});
      return std::string();
    }
    // Bus numbers show a missing bridge where a bridge above it holds its buses (a bridge
    // below a bridge deleted), or where a device only a port leads to (a PCIe endpoint or
    // upstream port, its port type known) is left on a bus other than 0 (a root port
    // deleted).
    const Snapshot healthy = collect(s.kind, s.text).snapshot;
    const BridgeAndChild found = bridge_with_child(healthy, true);
    const Device* bridge = found.bridge;
    const Device* child = found.child;
    if (bridge) {
      const Device* above = healthy.find(bridge->parent);
      std::string edited;
      if (s.kind == RecordingKind::HwlocXml) {
        edited = unwrap_xml_bridge(s.text, bridge->bdf).value_or("");
      } else {
        Recording r = Recording::parse(s.text);
        std::erase_if(r.stanzas, [&](const Stanza& x) { return x.bdf() == bridge->bdf; });
        edited = r.text();
      }
      expect_named(s, edited,
                   {at_line(s, edited, child->bdf), "of bridge " + at_line(s, edited, above->bdf), "its parent is absent"});
      return std::string();
    }
    for (const auto& c : healthy.devices) {
      const Device* port = c.parent.empty() ? nullptr : healthy.find(c.parent);
      if (!port || c.bus() == 0 || s.kind == RecordingKind::HwlocXml ||
          (c.port_type != kPortEndpoint && c.port_type != kPortLegacyEndpoint && c.port_type != kPortUpstream))
        continue;
      Recording r = Recording::parse(s.text);
      std::erase_if(r.stanzas, [&](const Stanza& x) { return x.bdf() == port->bdf; });
      const std::string edited = r.text();
      expect_named(s, edited, {at_line(s, edited, c.bdf), "which no bridge of the input leads to", "its parent is absent"});
      return std::string();
    }
    return std::string("no bridge below a bridge and no PCIe port type recorded below a root port (a root port "
                       "deleted then leaves what bus numbers cannot tell from a root bus)");
  });
}

TEST(TopoInconsistent, ABusOutsideItsBridgesRangeIsNamed) {
  for_each_subject("bus outside its bridge's range", [](const Subject& s) {
    if (s.kind == RecordingKind::Snapshot) {
      // The second-to-last device made a bridge to bus 7e..7e and the last one's parent.
      std::vector<std::string> words;
      const std::string edited = edit_snapshot(s.text, [&](nlohmann::json& devs) {
        auto& b = devs[devs.size() - 2];
        b["secondary_bus"] = 0x7e;
        b["subordinate_bus"] = 0x7e;
        devs.back()["parent"] = b.at("bdf");
        words = {at_index(devs, devs.size() - 1), "outside the bus range 7e..7e of its bridge " + at_index(devs, devs.size() - 2)};
      });
      expect_named(s, edited, words);
      return std::string();
    }
    // A bridge's subordinate bus set below its secondary bus: its child is outside.
    const Snapshot healthy = collect(s.kind, s.text).snapshot;
    const BridgeAndChild found = bridge_with_child(healthy, false);
    const Device* bridge = found.bridge;
    const Device* child = found.child;
    if (!bridge) return std::string("no bridge leads to a device, so no bus range to move a device out of");
    const int sec = *bridge->secondary_bus;
    const std::string edited = s.kind == RecordingKind::HwlocXml
                                   ? set_xml_bus_range(s.text, bridge->bdf, sec, sec - 1)
                                   : set_bus_range(Recording::parse(s.text), s.kind, bridge->bdf, sec, sec - 1);
    expect_named(s, edited,
                 {at_line(s, edited, child->bdf), "outside the bus range " + hex2(sec) + ".." + hex2(sec - 1) +
                                                      " of its bridge " + at_line(s, edited, bridge->bdf)});
    return std::string();
  });
}

TEST(TopoInconsistent, ADeviceThatIsItsOwnAncestorIsNamed) {
  for_each_subject("parent loop", [](const Subject& s) {
    if (s.kind == RecordingKind::Snapshot) {
      // Two devices made each other's parent.
      std::string a, b;
      const std::string edited = edit_snapshot(s.text, [&](nlohmann::json& devs) {
        auto& x = devs[devs.size() - 2];
        auto& y = devs.back();
        x["parent"] = y.at("bdf");
        y["parent"] = x.at("bdf");
        a = at_index(devs, devs.size() - 2);
        b = at_index(devs, devs.size() - 1);
      });
      expect_named(s, edited, {a, b, "is its own ancestor"});
      return std::string();
    }
    // In bus numbers a loop needs two bridges, one below the other: the lower one's
    // secondary bus set to the bus of the upper one.
    const Snapshot healthy = collect(s.kind, s.text).snapshot;
    const BridgeAndChild found = bridge_with_child(healthy, true);
    const Device* bridge = found.bridge;
    if (!bridge)
      return std::string("no bridge below a bridge, so bus numbers cannot make a loop (a bridge leading to its "
                         "own bus is no parent)");
    const Device* above = healthy.find(bridge->parent);
    const int bus = above->bus();
    const std::string edited = s.kind == RecordingKind::HwlocXml
                                   ? set_xml_bus_range(s.text, bridge->bdf, bus, bus)
                                   : set_bus_range(Recording::parse(s.text), s.kind, bridge->bdf, bus, bus);
    expect_named(s, edited, {at_line(s, edited, bridge->bdf), at_line(s, edited, above->bdf), "is its own ancestor"});
    return std::string();
  });
}

// A sysfs tree takes its parents from the kernel's own paths (no address twice, no parent
// missing, no loop can be written there), but its bridges' bus ranges come from config
// space: a switch port whose subordinate bus is set below its secondary bus is named.
TEST(TopoInconsistent, SysfsBridgeRangeThatMissesItsChildIsNamed) {
  fixture::Machine m = fixture::make_box(1, 1, 1, 1, 0);
  fixture::TempDir dir;
  fixture::write_sysfs(m, dir.path() / "healthy");
  EXPECT_EQ(joined(inconsistencies(collect_sysfs_root(dir.path() / "healthy", offline()))), "");
  fixture::Dev* gpu = fixture::first(m, 0x0302);
  ASSERT_NE(gpu, nullptr);
  fixture::Dev* port = fixture::find(m, gpu->parent);
  ASSERT_NE(port, nullptr);
  ASSERT_GT(port->secondary, 0);
  port->subordinate = port->secondary - 1;
  fixture::write_sysfs(m, dir.path() / "edited");
  const auto notes = inconsistencies(collect_sysfs_root(dir.path() / "edited", offline()));
  EXPECT_NE(note_naming(notes, {gpu->bdf + " is on bus", "outside the bus range " + hex2(port->secondary) + ".." +
                                                            hex2(port->subordinate) + " of its bridge " + port->bdf}),
            "")
      << joined(notes);
}

}  // namespace
}  // namespace gdsb::topo::testing
