// Which NICs carry a network mount (network_carriers.hpp); the rules are in docs/gdsb-topo.md,
// "Which NICs carry a mount".
#include "network_carriers.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <optional>

namespace gdsb::topo::net {
namespace {

struct Ip {
  int family = 0;  // AF_INET or AF_INET6
  std::array<uint8_t, 16> b{};
  bool operator==(const Ip& o) const { return family == o.family && b == o.b; }
};

std::optional<Ip> parse_ip(std::string text) {
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  if (auto pct = text.find('%'); pct != std::string::npos) text.resize(pct);  // fe80::1%ib0
  Ip ip;
  if (inet_pton(AF_INET, text.c_str(), ip.b.data()) == 1) {
    ip.family = AF_INET;
    return ip;
  }
  if (inet_pton(AF_INET6, text.c_str(), ip.b.data()) == 1) {
    ip.family = AF_INET6;
    return ip;
  }
  return std::nullopt;
}

// "10.10.1.0/24" -> network and prefix length; a bare address is a host route.
std::optional<std::pair<Ip, int>> parse_prefix(const std::string& text) {
  const auto slash = text.find('/');
  auto ip = parse_ip(text.substr(0, slash));
  if (!ip) return std::nullopt;
  const int max = ip->family == AF_INET ? 32 : 128;
  int len = max;
  if (slash != std::string::npos) {
    try {
      len = std::stoi(text.substr(slash + 1));
    } catch (...) {
      return std::nullopt;
    }
  }
  if (len < 0 || len > max) return std::nullopt;
  return std::make_pair(*ip, len);
}

bool in_prefix(const Ip& a, const Ip& net, int len) {
  if (a.family != net.family) return false;
  for (size_t i = 0; i < static_cast<size_t>(len); ++i) {
    const int mask = 0x80 >> (i % 8);
    if ((a.b[i / 8] & mask) != (net.b[i / 8] & mask)) return false;
  }
  return true;
}

}  // namespace

bool is_ip_address(const std::string& text) { return parse_ip(text).has_value(); }

// Pieces of `s` between any of `seps`, empty ones dropped.
std::vector<std::string> split(const std::string& s, const std::string& seps) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (seps.find(c) != std::string::npos) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// VAST's address lists (remoteports=, localports=): "a~b~c", ranges "first-last"; IPv4 ranges
// expand (capped: a VIP pool is tens of addresses), anything else stays as written.
std::vector<std::string> expand_ports(const std::string& spec) {
  std::vector<std::string> out;
  for (const std::string& item : split(spec, "~")) {
    const auto dash = item.find('-');
    auto first = dash == std::string::npos ? std::nullopt : parse_ip(item.substr(0, dash));
    auto last = dash == std::string::npos ? std::nullopt : parse_ip(item.substr(dash + 1));
    if (first && last && first->family == AF_INET && last->family == AF_INET) {
      auto v4 = [](const Ip& ip) {
        return uint32_t{ip.b[0]} << 24 | uint32_t{ip.b[1]} << 16 | uint32_t{ip.b[2]} << 8 | ip.b[3];
      };
      for (uint32_t a = v4(*first); a <= v4(*last) && out.size() < 1024; ++a) {
        char buf[INET_ADDRSTRLEN];
        const uint32_t be = htonl(a);
        inet_ntop(AF_INET, &be, buf, sizeof buf);
        out.emplace_back(buf);
      }
    } else {
      out.push_back(item);
    }
  }
  return out;
}

std::vector<std::string> lustre_nids(const std::string& source) {
  return split(source.substr(0, source.find(":/")), ":,");
}

std::map<std::string, std::string> mount_options(const std::string& options) {
  std::map<std::string, std::string> out;
  for (const std::string& item : split(options, ",")) {
    const auto eq = item.find('=');
    out[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

namespace {

const NetInterface* find_interface(const NetworkFacts& n, const std::string& name) {
  for (const NetInterface& i : n.interfaces)
    if (i.name == name) return &i;
  return nullptr;
}

constexpr int kArphrdInfiniband = 32;  // include/uapi/linux/if_arp.h

void collect_leaves(const NetworkFacts& n, const std::string& name, const std::string& via,
                    int depth, std::vector<NetLeaf>& out) {
  const NetInterface* iface = find_interface(n, name);
  for (const RdmaDevice& d : n.rdma_devices)
    for (const RdmaPort& p : d.ports)
      if (p.netdev == name) return out.push_back({name, iface, &d, &p, via});
  if (iface && depth < 4) {
    const std::string next = via + " via " + name;
    if (!iface->lower.empty()) {
      for (const std::string& l : iface->lower) collect_leaves(n, l, next, depth + 1, out);
      return;
    }
    if (!iface->parent.empty()) return collect_leaves(n, iface->parent, next, depth + 1, out);
    // An IPoIB device the pairing left out (a partition child recorded without `parent`):
    // the RDMA device of its PCI function, where that has a single port to be.
    if (iface->type == kArphrdInfiniband && !iface->bdf.empty()) {
      const auto devs = rdma_devices_of(n, iface->bdf);
      if (devs.size() == 1 && devs.front()->ports.size() == 1) {
        const RdmaPort& p = devs.front()->ports.front();
        return out.push_back({p.netdev.empty() ? name : p.netdev, iface, devs.front(), &p,
                              p.netdev.empty() || p.netdev == name ? via : next});
      }
    }
  }
  out.push_back({name, iface, nullptr, nullptr, via});
}

}  // namespace

std::vector<NetLeaf> net_leaves(const NetworkFacts& n, const std::string& netdev) {
  std::vector<NetLeaf> out;
  collect_leaves(n, netdev, "", 0, out);
  return out;
}

CufileEntry resolve_cufile_entry(const NetworkFacts& n, const std::string& entry) {
  CufileEntry e;
  if (const auto ip = parse_ip(entry)) {
    for (const NetInterface& i : n.interfaces)
      for (const std::string& a : i.addresses)
        if (auto p = parse_prefix(a); p && p->first == *ip) {
          e.kind = CufileEntry::Address;
          e.iface = &i;
          return e;
        }
    return e;
  }
  for (const RdmaDevice& d : n.rdma_devices)
    if (d.name == entry) {
      e.kind = CufileEntry::RdmaDeviceName;
      e.rdma = &d;
      return e;
    }
  if ((e.iface = find_interface(n, entry))) e.kind = CufileEntry::NetDeviceName;
  return e;
}

// A multipath (ECMP) route spreads a server's traffic over its next hops. /proc/net/ipv6_route
// lists each next hop as a line of its own (same prefix and metric, a gateway each: the
// kernel's sibling routes), so every one carries the mount. /proc/net/route prints one line per
// IPv4 route with its first next hop only (fib_route_seq_show), and the model has no other
// source of IPv4 routes: a gatewayed IPv4 carrier says so, as `ip route show` would tell more.
void CarrierFinder::by_route(const std::string& server) {
  const auto r = topo::route_to(net_, server);
  if (!r) return;
  const bool v6 = r->destination.find(':') != std::string::npos;
  std::vector<const Route*> hops;
  if (v6 && !r->gateway.empty())
    for (const Route& x : net_.routes)
      if (x.destination == r->destination && x.metric == r->metric && !x.gateway.empty())
        hops.push_back(&x);
  if (hops.size() < 2) {
    const std::string note = !v6 && !r->gateway.empty()
                                 ? "; /proc/net/route shows a multipath route's first next hop only"
                                 : "";
    add_netdev(r->dev, "route to " + server + " (" + r->destination +
                           (r->gateway.empty() ? "" : " via " + r->gateway) + " dev " + r->dev +
                           note + ")");
    return;
  }
  for (size_t i = 0; i < hops.size(); ++i)
    add_netdev(hops[i]->dev, "route to " + server + " (" + r->destination + ", next hop " +
                                 std::to_string(i + 1) + " of " + std::to_string(hops.size()) +
                                 ": via " + hops[i]->gateway + " dev " + hops[i]->dev + ")");
}

bool CarrierFinder::by_local_address(const std::string& addr, const std::string& how) {
  const CufileEntry e = resolve_cufile_entry(net_, addr);
  if (e.kind != CufileEntry::Address) return false;
  add_netdev(e.iface->name, how);
  return true;
}

void CarrierFinder::by_cufile_entry(const std::string& entry, const std::string& key) {
  const std::string how = "cufile.json " + key + " " + entry;
  const CufileEntry e = resolve_cufile_entry(net_, entry);
  if (e.kind == CufileEntry::RdmaDeviceName)
    for (const RdmaPort& p : e.rdma->ports) add(carrier_of_port(*e.rdma, p), how);
  else if (e.iface)
    add_netdev(e.iface->name, how);
}

void CarrierFinder::add_netdev(const std::string& name, const std::string& how) {
  for (const NetLeaf& leaf : net_leaves(net_, name)) {
    MountCarrier c;
    if (leaf.port) {
      c = carrier_of_port(*leaf.rdma, *leaf.port);
      // A RoCE LAG bond (mlx5_bond_0 ==> bond0) carries RDMA as one port; its PCI function
      // is the RDMA device's. Elsewhere the net device's own function, where it has one.
      if (leaf.iface && !leaf.iface->bdf.empty()) c.bdf = leaf.iface->bdf;
    } else {
      c.netdev = leaf.netdev;
      if (leaf.iface) c.bdf = leaf.iface->bdf;
    }
    add(std::move(c), how + leaf.via);
  }
}

const NetInterface* CarrierFinder::interface(const std::string& name) const {
  for (const NetInterface& i : net_.interfaces)
    if (i.name == name) return &i;
  return nullptr;
}

MountCarrier CarrierFinder::carrier_of_port(const RdmaDevice& d, const RdmaPort& p) {
  MountCarrier c;
  c.netdev = p.netdev;
  c.bdf = d.bdf;
  c.rdma_dev = d.name;
  c.rdma_port = p.port;
  c.rdma_state = p.state;
  return c;
}

void CarrierFinder::add(MountCarrier c, const std::string& how) {
  for (MountCarrier& have : carriers_)
    if (have.netdev == c.netdev && have.rdma_dev == c.rdma_dev &&
        have.rdma_port == c.rdma_port) {
      if (have.how.find(how) == std::string::npos) have.how += "; " + how;
      return;
    }
  c.how = how;
  carriers_.push_back(std::move(c));
}

void add_cufile_carriers(CarrierFinder& f, const CufileSettings& c, const std::string& fs_key,
                         const Mount& m) {
  auto mt = c.mount_rdma_dev_addr_list.find(m.target);
  if (mt == c.mount_rdma_dev_addr_list.end())
    mt = c.mount_rdma_dev_addr_list.find(m.target + "/");  // the shipped example ends some in '/'
  if (mt != c.mount_rdma_dev_addr_list.end()) {
    for (const auto& e : mt->second)
      f.by_cufile_entry(e, "fs." + fs_key + ".mount_table[" + mt->first + "].rdma_dev_addr_list");
  } else if (auto it = c.fs_rdma_dev_addr_list.find(fs_key); it != c.fs_rdma_dev_addr_list.end()) {
    for (const auto& e : it->second) f.by_cufile_entry(e, "fs." + fs_key + ".rdma_dev_addr_list");
  } else if (c.rdma_dev_addr_list) {
    for (const auto& e : *c.rdma_dev_addr_list) f.by_cufile_entry(e, "rdma_dev_addr_list");
  }
}

void add_locality(MountCarrier& c, const Snapshot& s, const TopologyView& v) {
  const Device* nic = c.bdf.empty() ? nullptr : s.find(c.bdf);
  if (!nic) return;
  std::optional<Pair> best;
  for (const Device* g : v.gpus()) {
    const Pair p = v.classify(*g, *nic);
    c.gpus.push_back({g->bdf, v.gpu_label(g->bdf), p.label});
    if (!best || closer(p, *best)) best = p;
  }
  if (best) c.nearest_gpu = best->gpu;
}

}  // namespace gdsb::topo::net

namespace gdsb::topo {

std::optional<Route> route_to(const NetworkFacts& n, const std::string& addr) {
  const auto ip = net::parse_ip(addr);
  if (!ip) return std::nullopt;
  // The local table (rule 0) before main: the kernel delivers to its own addresses and to
  // 127.0.0.0/8 and ::1 through lo, whatever the main table says of their prefix.
  const int host_len = ip->family == AF_INET ? 32 : 128;
  bool local = (ip->family == AF_INET && ip->b[0] == 127) ||
               (ip->family == AF_INET6 && *ip == *net::parse_ip("::1"));
  for (const NetInterface& i : n.interfaces)
    for (const std::string& a : i.addresses)
      if (auto p = net::parse_prefix(a); p && p->first == *ip) local = true;
  if (local) return Route{addr + "/" + std::to_string(host_len), "", "lo", 0};
  const Route* best = nullptr;
  int best_len = -1;
  for (const Route& r : n.routes) {
    const auto p = net::parse_prefix(r.destination);
    if (!p || !net::in_prefix(*ip, p->first, p->second)) continue;
    if (p->second > best_len || (p->second == best_len && r.metric < best->metric)) {
      best = &r;
      best_len = p->second;
    }
  }
  if (!best) return std::nullopt;
  return *best;
}

std::string describe_carrier(const MountCarrier& c) {
  std::string out = c.netdev.empty() ? c.rdma_dev : c.netdev;
  std::vector<std::string> facts;
  facts.push_back(c.bdf.empty() ? "no PCI function" : c.bdf);
  if (!c.rdma_dev.empty())
    facts.push_back(c.rdma_dev + " port " + std::to_string(c.rdma_port) +
                    (c.rdma_state.empty() ? "" : " " + c.rdma_state));
  else
    facts.push_back("no RDMA device");
  if (!c.how.empty()) facts.push_back(c.how);
  out += " (" + net::join(facts, "; ") + ")";
  if (!c.gpus.empty()) {
    std::vector<std::string> labels;
    std::string nearest;
    for (const auto& g : c.gpus) {
      labels.push_back(g.label + " " + std::string(path_label_name(g.path)));
      if (g.gpu == c.nearest_gpu)
        nearest = g.label + " (" + std::string(path_label_name(g.path)) + ")";
    }
    out += ": " + net::join(labels);
    if (!nearest.empty()) out += "; cuFile pairs it with " + nearest;
  }
  return out;
}

}  // namespace gdsb::topo
