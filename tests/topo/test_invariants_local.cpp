// Metamorphic invariants of local edits: one change in the recorded input (a GPU link
// trained narrower, ACS redirect on one switch port, one drive removed) changes exactly the
// verdicts and ceilings that depend on it, and nothing else.
#include <gtest/gtest.h>

#include "gdsb/topo/pci_config.hpp"
#include "invariant_util.hpp"

namespace gdsb::topo::testing {
namespace {

std::set<Item> changed(const std::set<Item>& a, const std::set<Item>& b) {
  std::set<Item> out;
  for (const auto& i : a)
    if (!b.count(i)) out.insert(i);
  for (const auto& i : b)
    if (!a.count(i)) out.insert(i);
  return out;
}

bool names(const Item& i, const std::string& bdf) { return contains(i.devices, bdf) || i.id == bdf; }

TEST(TopoInvariants, DowngradedGpuLinkChangesOnlyThatGpu) {
  Coverage cov{"GPU link x16 -> x8", {}};
  for (const auto& s : pci_subjects()) {
    SCOPED_TRACE(s.name);
    const Outcome before = collect(s.kind, s.text);
    const Device* gpu = nullptr;
    for (const Device* g : before.view->gpus())
      if (g->link && g->link->cur_width >= 2 && g->link->cur_width == g->link->max_width) {
        gpu = g;
        break;
      }
    if (!gpu) continue;
    const int narrow = gpu->link->cur_width / 2;
    Recording r = Recording::parse(s.text);
    Stanza* st = r.find(gpu->bdf);
    ASSERT_NE(st, nullptr);
    if (auto cfg = st->config(); cfg.size() >= 64) {
      const size_t sta = *find_capability(cfg, kCapIdExp) + 0x12;
      const uint16_t v = static_cast<uint16_t>((cfg[sta] | cfg[sta + 1] << 8) & ~0x3f0) | static_cast<uint16_t>(narrow << 4);
      cfg[sta] = static_cast<uint8_t>(v & 0xff);
      cfg[sta + 1] = static_cast<uint8_t>(v >> 8);
      st->set_config(cfg);
    }
    if (std::string* l = st->line("LnkSta:")) {
      const std::string from = "Width x" + std::to_string(gpu->link->cur_width);
      const size_t at = l->find(from);
      ASSERT_NE(at, std::string::npos) << *l;
      l->replace(at, from.size(), "Width x" + std::to_string(narrow));
    }
    const Outcome after = collect(s.kind, r.text());
    EXPECT_EQ(after.snapshot.find(gpu->bdf)->link->cur_width, narrow);
    const auto diff_items = changed(items(before, kSame), items(after, kSame));
    bool link_changed = false;
    for (const Item& i : diff_items) {
      const bool own_link = i.kind == "check" && i.id == "link" && names(i, gpu->bdf);
      const bool own_ceiling = i.kind.starts_with("ceiling") && i.id == gpu->bdf;
      const bool node = i.kind.starts_with("node");
      // The check's "all links as expected" line goes when one link is not.
      const bool summary = i.kind == "check" && i.id == "link" && i.devices.empty();
      link_changed = link_changed || own_link;
      EXPECT_TRUE(own_link || own_ceiling || node || summary) << "changed beyond " << gpu->bdf << ": " << i.text();
    }
    EXPECT_TRUE(link_changed) << "the link check did not notice x" << narrow;
    cov.ran.push_back(s.name + " " + gpu->bdf);
  }
  EXPECT_GE(cov.ran.size(), 3U);
}

TEST(TopoInvariants, AcsRedirectOnASwitchPortFailsExactlyThePairsBelowIt) {
  Coverage cov{"ACS ReqRedir+CmpltRedir on one downstream port", {}};
  for (const auto& s : pci_subjects()) {
    SCOPED_TRACE(s.name);
    const Outcome before = collect(s.kind, s.text);
    // The first switch downstream port with ACS off that a GPU-peer path crosses.
    const Device* port = nullptr;
    std::set<std::string> below;  // pairs whose kernel walk crosses it
    for (const Device& d : before.snapshot.devices) {
      if (d.role != Role::SwitchDownstream || !d.acs || acs_redirects(d)) continue;
      for (const Pair& p : before.view->pairs())
        if (!p.common_bridge.empty() && contains(p.path, d.bdf)) below.insert(p.gpu + " " + p.peer);
      if (!below.empty()) {
        port = &d;
        break;
      }
    }
    if (!port) continue;
    Recording r = Recording::parse(s.text);
    Stanza* st = r.find(port->bdf);
    ASSERT_NE(st, nullptr);
    if (auto cfg = st->config(); cfg.size() > 0x100) {
      const size_t ctl = *find_ext_capability(cfg, kExtCapIdAcs) + 6;
      cfg[ctl] = static_cast<uint8_t>(cfg[ctl] | kAcsRr | kAcsCr);
      st->set_config(cfg);
    }
    if (std::string* l = st->line("ACSCtl:")) {
      for (const std::string f : {"ReqRedir", "CmpltRedir"})
        if (size_t at = l->find(f + "-"); at != std::string::npos) (*l)[at + f.size()] = '+';
    }
    const Outcome after = collect(s.kind, r.text());
    ASSERT_TRUE(acs_redirects(*after.snapshot.find(port->bdf)));
    std::set<std::string> failed;
    for (const Item& i : changed(items(before, kSame), items(after, kSame))) {
      if (i.kind == "pair") {
        failed.insert(i.id);
        continue;
      }
      // Everything else that changes must name the port or a device of a pair below it.
      bool related = names(i, port->bdf);
      for (const auto& p : below) related = related || names(i, p.substr(0, 12)) || names(i, p.substr(13));
      const bool summary = i.kind == "check" && i.id == "acs-redirect" && i.devices.empty();
      EXPECT_TRUE(related || summary || i.kind.starts_with("node")) << "changed beyond the port: " << i.text();
    }
    EXPECT_EQ(failed, below);
    for (const auto& p : below) {
      const Pair* q = after.view->pair(p.substr(0, 12), p.substr(13));
      ASSERT_NE(q, nullptr);
      EXPECT_TRUE(contains(q->acs_redirect_ports, port->bdf)) << p;
      EXPECT_NE(q->p2pdma, P2pdmaMap::BusAddr) << p;
    }
    const CheckResult* fail = nullptr;
    for (const auto* c : after.results("acs-redirect"))
      if (c->verdict == Verdict::Fail && contains(c->devices, port->bdf)) fail = c;
    EXPECT_NE(fail, nullptr) << "no acs-redirect failure names " << port->bdf;
    cov.ran.push_back(s.name + " " + port->bdf + " (" + std::to_string(below.size()) + " pairs)");
  }
  EXPECT_GE(cov.ran.size(), 2U);
}

TEST(TopoInvariants, RemovingAnNvmeChangesOnlyTheCeilingsThatCountedIt) {
  Coverage cov{"remove one NVMe", {}};
  for (const auto& s : pci_subjects()) {
    SCOPED_TRACE(s.name);
    const Outcome before = collect(s.kind, s.text);
    const auto drives = before.snapshot.with_role(Role::Nvme);
    if (drives.empty() || before.view->gpus().empty()) continue;
    const std::string nvme = drives.front()->bdf;
    Recording r = Recording::parse(s.text);
    std::erase_if(r.stanzas, [&](const Stanza& x) { return x.bdf() == nvme; });
    const Outcome after = collect(s.kind, r.text());
    ASSERT_EQ(after.snapshot.find(nvme), nullptr);
    const auto a = items(before, kSame), b = items(after, kSame);
    size_t counted = 0;
    for (const Item& i : a) {
      if (!i.kind.starts_with("ceiling") && !i.kind.starts_with("node")) continue;
      if (contains(i.devices, nvme)) {
        ++counted;
        EXPECT_FALSE(b.count(i)) << "still counts the removed drive: " << i.text();
      } else {
        EXPECT_TRUE(b.count(i)) << "changed without counting the drive: " << i.text();
      }
    }
    EXPECT_GT(counted, 0U);
    cov.ran.push_back(s.name + " " + nvme + " (" + std::to_string(counted) + " ceilings)");
  }
  EXPECT_GE(cov.ran.size(), 2U);
}

}  // namespace
}  // namespace gdsb::topo::testing
