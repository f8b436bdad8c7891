// One consistency pass over every reader's Snapshot (lspci text, lspci dumps, hwloc XML,
// sysfs, saved snapshots): what no machine can have is named with the places in the input
// (Device::origin) rather than merged into a tree that looks real.
#include <algorithm>
#include <set>
#include <string>

#include "gdsb/error.hpp"
#include "gdsb/topo/model.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "internal.hpp"

namespace gdsb::topo {
namespace {

std::string at(const Device& d) {
  return d.origin.empty() ? d.bdf : d.bdf + " (" + d.origin + ")";
}

std::string bus_hex(int bus) {
  static constexpr char kHex[] = "0123456789abcdef";
  return {kHex[(bus >> 4) & 0xf], kHex[bus & 0xf]};
}

std::string range_text(const Device& b) {
  return bus_hex(*b.secondary_bus) + ".." + bus_hex(*b.subordinate_bus);
}

bool has_range(const Device& d) { return d.secondary_bus && d.subordinate_bus; }

std::string domain_of(const Device& d) { return d.bdf.substr(0, 4); }

}  // namespace

void check_consistency(Snapshot& s, bool tree_from_bus_numbers, const std::string& input_name) {
  const std::string input = !input_name.empty() ? input_name : s.path.empty() ? std::string("the input") : s.path;
  // One address twice: two devices cannot share it, and every later step finds devices by
  // address, so the input is refused (exit 1) naming both places.
  for (size_t i = 1; i < s.devices.size(); ++i)
    if (s.devices[i].bdf == s.devices[i - 1].bdf)
      throw RuntimeError(input + ": PCI address " + s.devices[i].bdf + " is recorded twice (" +
                         (s.devices[i - 1].origin.empty() ? "first" : s.devices[i - 1].origin) +
                         " and " + (s.devices[i].origin.empty() ? "again" : s.devices[i].origin) +
                         "); two devices cannot share one address: record the machine again "
                         "or remove the stray copy");
  // A device that is its own ancestor: named, and the link that closes the loop dropped so
  // that every walk up the tree ends.
  for (auto& d : s.devices) {
    std::set<std::string> seen{d.bdf};
    const Device* cur = &d;
    while (!cur->parent.empty()) {
      const Device* p = s.find(cur->parent);
      if (!p) break;
      if (p->bdf == d.bdf) {
        s.notes.push_back("inconsistent input: " + at(d) + " is its own ancestor (its parent chain " +
                          "returns to it through " + at(*cur) + "); that parent link is dropped");
        s.devices[static_cast<size_t>(cur - s.devices.data())].parent.clear();
        break;
      }
      if (!seen.insert(p->bdf).second) break;  // a loop above d, named from one of its members
      cur = p;
    }
  }
  for (const auto& d : s.devices) {
    const Device* p = d.parent.empty() ? nullptr : s.find(d.parent);
    if (!d.parent.empty() && !p) {
      s.notes.push_back("inconsistent input: " + at(d) + " names its parent " + d.parent +
                        ", which the input does not hold");
      continue;
    }
    if (p && has_range(*p)) {
      const int bus = d.bus();
      if (bus < *p->secondary_bus || bus > *p->subordinate_bus)
        s.notes.push_back("inconsistent input: " + at(d) + " is on bus " + bus_hex(bus) +
                          ", outside the bus range " + range_text(*p) + " of its bridge " + at(*p));
      else if (has_range(d) && domain_of(d) == domain_of(*p) &&
               (*d.secondary_bus < *p->secondary_bus || *d.subordinate_bus > *p->subordinate_bus))
        s.notes.push_back("inconsistent input: bridge " + at(d) + " leads to buses " + range_text(d) +
                          ", outside the bus range " + range_text(*p) + " of its bridge " + at(*p));
    }
    // Where the tree is the kernel's own (sysfs, and snapshots of it), a device without a
    // parent is on a root bus; only a tree read from bus numbers can lack a bridge.
    if (p || !tree_from_bus_numbers) continue;
    // No parent: on a root bus, unless a bridge's range holds its bus (that bridge's
    // subtree then lacks the bridge that leads to it), or the device is one that only a
    // port leads to (a PCIe endpoint or switch upstream port) on a bus other than 0 that
    // holds no host bridge, root port or root complex function (a root bus holds those).
    bool named = false;
    for (const auto& b : s.devices)
      if (&b != &d && has_range(b) && domain_of(b) == domain_of(d) && b.bus() != *b.secondary_bus &&
          d.bus() > *b.secondary_bus && d.bus() <= *b.subordinate_bus) {
        s.notes.push_back("inconsistent input: " + at(d) + " is on bus " + bus_hex(d.bus()) +
                          " inside the bus range " + range_text(b) + " of bridge " + at(b) +
                          ", but no bridge there leads to that bus: its parent is absent");
        named = true;
        break;
      }
    const bool below_a_port = d.port_type == kPortEndpoint || d.port_type == kPortLegacyEndpoint ||
                              d.port_type == kPortUpstream;
    if (named || !below_a_port || d.bus() <= 0) continue;
    const bool root_bus = std::any_of(s.devices.begin(), s.devices.end(), [&](const Device& x) {
      return domain_of(x) == domain_of(d) && x.bus() == d.bus() &&
             (x.class_id() == 0x0600 || x.port_type == kPortRootPort || x.port_type == kPortRcEndpoint ||
              x.port_type == 10);
    });
    if (!root_bus)
      s.notes.push_back("inconsistent input: " + at(d) + " is a PCIe " +
                        (d.port_type == kPortUpstream ? "switch upstream port" : "endpoint") + " on bus " +
                        bus_hex(d.bus()) + ", which no bridge of the input leads to and which holds no "
                        "host bridge or root port: its parent is absent");
  }
}

namespace detail {

void set_origin_lines(Snapshot& s, const std::map<std::string, std::vector<int>>& lines) {
  std::map<std::string, size_t> seen;
  for (auto& d : s.devices) {
    const auto it = lines.find(d.bdf);
    const size_t k = seen[d.bdf]++;
    if (it != lines.end() && k < it->second.size()) d.origin = "line " + std::to_string(it->second[k]);
  }
}

}  // namespace detail
}  // namespace gdsb::topo
