// A canonical, comparable form of an evaluate() outcome for the metamorphic tests: every
// check result (id, verdict, devices), ceiling (GPU, peers, GB/s) and GPU-peer pair
// (label, P2PDMA, common bridge, ACS ports) becomes one item. Display texts are left out
// on purpose: they change with wording, the verdicts and devices must not.
#pragma once

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gdsb/units.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {

struct Item {
  std::string kind;  // "check", "ceiling-nvme", "ceiling-nic", "node-nvme", "node-nic", "pair"
  std::string id;    // check id, ceiling GPU, pair "gpu peer"
  std::vector<std::string> devices;
  std::string value;
  auto key() const { return std::tie(kind, id, devices, value); }
  bool operator<(const Item& o) const { return key() < o.key(); }
  bool operator==(const Item& o) const { return key() == o.key(); }
  std::string text() const {
    std::string s = kind + " " + id + " [";
    for (const auto& d : devices) s += d + " ";
    return s + "] " + value;
  }
};

using Rename = std::function<std::string(const std::string&)>;

inline std::vector<std::string> renamed(const std::vector<std::string>& v, const Rename& r) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(r(s));
  std::sort(out.begin(), out.end());
  return out;
}

inline std::set<Item> items(const Outcome& o, const Rename& r) {
  std::set<Item> out;
  for (const auto& c : o.report.checks)
    out.insert({"check", c.id, renamed(c.devices, r), std::string(verdict_name(c.verdict))});
  auto ceiling = [&](const char* kind, const Ceiling& c) {
    const std::string gb = c.gb_s ? format_fixed(*c.gb_s, 3) : "unknown";
    out.insert({kind, c.gpu.empty() ? "" : r(c.gpu), renamed(c.peers, r), gb});
  };
  for (const auto& c : o.report.ceilings) ceiling("ceiling-nvme", c);
  for (const auto& c : o.report.nic_ceilings) ceiling("ceiling-nic", c);
  ceiling("node-nvme", o.report.node_nvme);
  ceiling("node-nic", o.report.node_nic);
  for (const Pair& p : o.view->pairs()) {
    std::string v = std::string(path_label_name(p.label)) + " " + std::string(p2pdma_map_name(p.p2pdma)) +
                    " d=" + std::to_string(p.distance) + " via " + (p.common_bridge.empty() ? "-" : r(p.common_bridge));
    for (const auto& a : renamed(p.acs_redirect_ports, r)) v += " redirect:" + a;
    for (const auto& a : renamed(p.acs_unknown_ports, r)) v += " unknown:" + a;
    out.insert({"pair", r(p.gpu) + " " + r(p.peer), {r(p.gpu), r(p.peer)}, v});
  }
  return out;
}

// The GPU<->NVMe part: pairs with a drive, ACS and locality results that name a drive
// (NICs dropped from their device lists), NVMe ceilings.
inline std::set<Item> nvme_items(const Outcome& o, const Rename& r) {
  std::set<std::string> nvme, nic;
  for (const Device* d : o.snapshot.with_role(Role::Nvme)) nvme.insert(r(d->bdf));
  for (const Device* d : o.snapshot.with_role(Role::Nic)) nic.insert(r(d->bdf));
  std::set<Item> out;
  for (Item i : items(o, r)) {
    const bool names_nvme =
        std::any_of(i.devices.begin(), i.devices.end(), [&](const std::string& d) { return nvme.count(d) > 0; });
    if (i.kind == "pair" && names_nvme) out.insert(i);
    if (i.kind == "ceiling-nvme" || i.kind == "node-nvme") out.insert(i);
    if (i.kind == "check" && (i.id == "acs-redirect" || i.id == "pair-locality") && names_nvme) {
      std::erase_if(i.devices, [&](const std::string& d) { return nic.count(d) > 0; });
      out.insert(i);
    }
  }
  return out;
}

inline std::string diff(const std::set<Item>& a, const std::set<Item>& b) {
  std::string out;
  for (const auto& i : a)
    if (!b.count(i)) out += "  - " + i.text() + "\n";
  for (const auto& i : b)
    if (!a.count(i)) out += "  + " + i.text() + "\n";
  return out;
}

}  // namespace gdsb::topo::testing
