// Metamorphic invariants over every recording of the corpus (lspci text, lspci dumps, hwloc
// XML) and the fixture builder's dumps: the recorded input is edited the way a different but
// equivalent machine (or one changed in a single place) would have recorded it, and the
// outcome of evaluate() must change exactly where the edit says, nowhere else.
#include <gtest/gtest.h>

#include <set>

#include "gdsb/topo/pci_config.hpp"
#include "invariant_util.hpp"

namespace gdsb::topo::testing {
namespace {

TEST(TopoInvariants, RenumberingDomainsAndBusesChangesNothing) {
  Coverage cov{"renumber", {}};
  for (const auto& s : subjects()) {
    SCOPED_TRACE(s.name);
    const Outcome before = collect(s.kind, s.text);
    std::string edited;
    BusMap m;
    if (s.kind == RecordingKind::HwlocXml) {
      m = make_bus_map(used_buses_xml(s.text));
      edited = renumber_xml(s.text, m);
    } else if (s.kind == RecordingKind::Snapshot) {
      m = make_bus_map(used_buses_snapshot(s.text));
      edited = renumber_snapshot(s.text, m);
    } else {
      const Recording r = Recording::parse(s.text);
      m = make_bus_map(used_buses(r));
      edited = renumber(r, m).text();
    }
    const Outcome after = collect(s.kind, edited);
    const Rename back = [&](const std::string& b) { return m.unmap_bdf(b); };
    EXPECT_EQ(after.snapshot.devices.size(), before.snapshot.devices.size());
    EXPECT_TRUE(items(before, kSame) == items(after, back)) << diff(items(before, kSame), items(after, back));
    cov.ran.push_back(s.name);
  }
}

TEST(TopoInvariants, ReorderingStanzasChangesNothing) {
  Coverage cov{"reorder stanzas", {}};
  for (const auto& s : subjects()) {
    if (s.kind == RecordingKind::HwlocXml) continue;  // hwloc orders its objects itself
    SCOPED_TRACE(s.name);
    Recording r = Recording::parse(s.text);
    std::reverse(r.stanzas.begin(), r.stanzas.end());
    const std::string edited = s.kind == RecordingKind::Snapshot ? reverse_snapshot_devices(s.text) : r.text();
    const auto a = items(collect(s.kind, s.text), kSame), b = items(collect(s.kind, edited), kSame);
    EXPECT_TRUE(a == b) << diff(a, b);
    cov.ran.push_back(s.name);
  }
}

// A BCM5720 (14e4:165f) LOM port, as a text stanza or a config-space dump of one function.
Stanza gigabit_nic(const Recording& r, bool dump) {
  Stanza n = r.stanzas.front();
  std::set<unsigned> used;
  for (const auto& s : r.stanzas)
    if (s.domain == n.domain && s.bus == n.bus) used.insert(s.dev);
  n.dev = 0x1f;
  while (used.count(n.dev)) --n.dev;
  n.func = 0;
  n.rest = " Ethernet controller [0200]: Broadcom Inc. and subsidiaries NetXtreme BCM5720 Gigabit Ethernet PCIe [14e4:165f]";
  n.lines = {"\tSubsystem: Dell NetXtreme BCM5720 Gigabit Ethernet PCIe"};
  if (dump) {
    n.lines.clear();
    for (unsigned off = 0; off < 256; off += 16) {
      char l[8];
      std::snprintf(l, sizeof l, "%02x:", off);
      std::string line = l;
      for (int i = 0; i < 16; ++i) line += " 00";
      n.lines.push_back(line);
    }
    std::vector<uint8_t> cfg(256, 0);
    cfg[0] = 0xe4, cfg[1] = 0x14, cfg[2] = 0x5f, cfg[3] = 0x16, cfg[0x0b] = 0x02;
    n.set_config(cfg);
  }
  return n;
}

TEST(TopoInvariants, GigabitNicsChangeNoNvmeVerdict) {
  Coverage cov{"add/remove 1 GbE NIC", {}};
  for (const auto& s : subjects()) {
    if (s.kind == RecordingKind::Snapshot) continue;  // edits below are of recorded text
    SCOPED_TRACE(s.name);
    const Outcome before = collect(s.kind, s.text);
    const auto expected = nvme_items(before, kSame);
    std::vector<std::string> gigabit;
    for (const Device* d : before.snapshot.with_role(Role::Nic))
      if (d->name.find("Gigabit") != std::string::npos) gigabit.push_back(d->bdf);
    std::vector<std::string> edits;
    if (s.kind == RecordingKind::HwlocXml) {
      std::string xml = s.text;
      for (const auto& b : gigabit)
        if (auto e = remove_xml_pcidev(xml, b)) xml = *e;
      if (!gigabit.empty()) edits.push_back(xml);
    } else {
      Recording r = Recording::parse(s.text);
      Recording added = r;
      added.stanzas.push_back(gigabit_nic(r, s.kind == RecordingKind::PciDump));
      edits.push_back(added.text());
      std::erase_if(r.stanzas, [&](const Stanza& x) { return contains(gigabit, x.bdf()); });
      if (!gigabit.empty()) edits.push_back(r.text());
    }
    for (const auto& e : edits) {
      const Outcome after = collect(s.kind, e);
      EXPECT_NE(after.snapshot.with_role(Role::Nic).size(), before.snapshot.with_role(Role::Nic).size());
      const auto got = nvme_items(after, kSame);
      EXPECT_TRUE(expected == got) << diff(expected, got);
    }
    cov.ran.push_back(s.name + " x" + std::to_string(edits.size()));
  }
}

TEST(TopoInvariants, ConnectXClassChangesNoNvmeVerdict) {
  Coverage cov{"ConnectX Ethernet <-> InfiniBand", {}};
  for (const auto& s : subjects()) {
    if (s.kind == RecordingKind::Snapshot) continue;
    SCOPED_TRACE(s.name);
    const Outcome before = collect(s.kind, s.text);
    std::string edited = s.text;
    Recording r = Recording::parse(s.text);
    size_t switched = 0;
    for (const Device* d : before.snapshot.with_role(Role::Nic)) {
      if (!d->name.starts_with("Mellanox") && !d->name.starts_with("MT") && d->vendor != 0x15b3) continue;
      const uint16_t to = d->class_id() == 0x0200 ? 0x0207 : 0x0200;
      if (s.kind == RecordingKind::HwlocXml) {
        if (auto e = set_xml_class(edited, d->bdf, to)) edited = *e, ++switched;
        continue;
      }
      Stanza* st = r.find(d->bdf);
      if (!st) continue;
      auto swap = [](std::string& t, const std::string& a, const std::string& b) {
        if (auto p = t.find(a); p != std::string::npos) t.replace(p, a.size(), b);
      };
      if (to == 0x0207) {
        swap(st->rest, "Ethernet controller", "Infiniband controller");
        swap(st->rest, "[0200]", "[0207]");
      } else {
        swap(st->rest, "Infiniband controller", "Ethernet controller");
        swap(st->rest, "[0207]", "[0200]");
      }
      if (auto cfg = st->config(); cfg.size() >= 64) {
        cfg[0x0a] = static_cast<uint8_t>(to & 0xff);
        cfg[0x0b] = static_cast<uint8_t>(to >> 8);
        st->set_config(cfg);
      }
      ++switched;
    }
    if (!switched) continue;
    if (s.kind != RecordingKind::HwlocXml) edited = r.text();
    const Outcome after = collect(s.kind, edited);
    size_t changed = 0;
    for (const Device* d : after.snapshot.with_role(Role::Nic))
      changed += before.snapshot.find(d->bdf)->class_id() != d->class_id();
    EXPECT_EQ(changed, switched);
    const auto a = nvme_items(before, kSame), b = nvme_items(after, kSame);
    EXPECT_TRUE(a == b) << diff(a, b);
    cov.ran.push_back(s.name + " x" + std::to_string(switched));
  }
  EXPECT_FALSE(cov.ran.empty());
}

}  // namespace
}  // namespace gdsb::topo::testing
