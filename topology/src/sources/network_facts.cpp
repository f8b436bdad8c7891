// A node's network facts (model.hpp NetworkFacts) under a root, "/" live: net devices,
// addresses, main-table routes, RDMA devices and ports, NVMe controllers, modules. Every fact
// is read from files, so a recorded tree gives what the live node gave; only live IPv4
// addresses come from getifaddrs(), which is exact where the files leave an address's
// interface to a guess (read_ipv4_recorded says when).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <set>
#include <sstream>
#include <system_error>

#include "gdsb/topo/collect.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace detail {

std::optional<int> read_net_speed_mbps(const fs::path& netdev_dir) {
  // speed reads -1 while the link is down, or fails with EINVAL (no link, no driver answer).
  const auto mbps = read_number(netdev_dir / "speed", 10);
  if (!mbps || *mbps <= 0 || *mbps >= (1 << 30)) return std::nullopt;
  return static_cast<int>(*mbps);
}

}  // namespace detail
namespace {

using detail::read_number;
using detail::read_text;
using detail::trim;

std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The PCI function a class device stands on: its `device` link's target, "" when it is not
// a PCI function (a bond, a VLAN, lo, a virtio device's virtioN).
std::string device_bdf(const fs::path& class_dir) {
  std::error_code ec;
  const fs::path real = fs::canonical(class_dir / "device", ec);
  if (ec) return {};
  const std::string name = real.filename().string();
  return detail::is_bdf(name) ? name : std::string();
}

std::string text_of(const fs::path& p) { return trim(read_text(p).value_or("")); }

// "4: ACTIVE" -> "ACTIVE": the kernel writes the number and the name of the state.
std::string after_colon(const std::string& s) {
  const auto colon = s.find(':');
  return trim(colon == std::string::npos ? s : s.substr(colon + 1));
}

std::string ipv4_text(uint32_t network_order) {
  in_addr a{};
  a.s_addr = network_order;
  std::array<char, INET_ADDRSTRLEN> b{};
  return inet_ntop(AF_INET, &a, b.data(), b.size()) ? b.data() : "";
}

// 32 hex digits as /proc/net/if_inet6 and ipv6_route write them -> "fd00::2".
std::optional<std::string> ipv6_text(const std::string& hex) {
  if (hex.size() != 32) return std::nullopt;
  in6_addr a{};
  for (size_t i = 0; i < 16; ++i) {
    unsigned v = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &v) != 1) return std::nullopt;
    a.s6_addr[i] = static_cast<uint8_t>(v);
  }
  std::array<char, INET6_ADDRSTRLEN> b{};
  return inet_ntop(AF_INET6, &a, b.data(), b.size()) ? std::optional<std::string>(b.data()) : std::nullopt;
}

// /proc/net/route: the main table (fib_route_seq_show prints RT_TABLE_MAIN only), addresses
// in hex as the kernel holds them (network byte order read as a host-order word).
struct Route4 {
  Route route;
  uint32_t dest = 0, mask = 0;  // network order
  bool connected = false;       // no gateway: a prefix of the interface
};
std::vector<Route4> read_routes4(const fs::path& file) {
  std::vector<Route4> out;
  std::istringstream in(read_text(file).value_or(""));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string dev;
    unsigned dest = 0, gw = 0, flags = 0, refcnt = 0, use = 0, mask = 0;
    int metric = 0;
    if (!(f >> dev >> std::hex >> dest >> gw >> flags >> std::dec >> refcnt >> use >> metric >> std::hex >> mask))
      continue;
    constexpr unsigned kRtfUp = 0x1, kRtfGateway = 0x2;
    if ((flags & kRtfUp) == 0 || dev == "*") continue;  // "*": a reject route has no device
    Route4 r;
    r.dest = dest;
    r.mask = mask;
    r.connected = (flags & kRtfGateway) == 0;
    r.route.destination = ipv4_text(dest) + "/" + std::to_string(std::popcount(mask));
    r.route.gateway = r.connected ? "" : ipv4_text(gw);
    r.route.dev = dev;
    r.route.metric = metric;
    out.push_back(std::move(r));
  }
  return out;
}

// /proc/net/ipv6_route lists every table and has no table column. The local table's entries
// are told apart by what the kernel puts there: addresses (RTF_LOCAL), the multicast ff00::/8
// route addrconf adds per device, and each table's root, ip6_null_entry (::/0 on lo, reject,
// metric 0xffffffff). What is left is the main table, as `ip -6 route` prints it.
std::vector<Route> read_routes6(const fs::path& file) {
  std::vector<Route> out;
  std::istringstream in(read_text(file).value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string dest, src, next, dev;
    unsigned plen = 0, src_plen = 0, metric = 0, refcnt = 0, use = 0, flags = 0;
    if (!(f >> dest >> std::hex >> plen >> src >> src_plen >> next >> metric >> refcnt >> use >> flags >> dev)) continue;
    constexpr unsigned kRtfLocal = 0x80000000U, kRtfReject = 0x200;
    const bool null_entry = (flags & kRtfReject) != 0 && metric == 0xffffffffU && plen == 0;
    if ((flags & kRtfLocal) != 0 || null_entry || dest.rfind("ff", 0) == 0) continue;
    const auto d = ipv6_text(dest), gw = ipv6_text(next);
    if (!d || !gw) continue;
    out.push_back({*d + "/" + std::to_string(plen), *gw == "::" ? "" : *gw, dev, static_cast<int>(metric)});
  }
  return out;
}

// /proc/net/if_inet6: "fd000000000000000000000000000002 04 40 00 82 eth0" (address, ifindex,
// prefix length, scope, flags, device; hex).
std::map<std::string, std::vector<std::string>> read_ipv6_addresses(const fs::path& file) {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(read_text(file).value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string addr, dev;
    unsigned index = 0, plen = 0, scope = 0, flags = 0;
    if (!(f >> addr >> std::hex >> index >> plen >> scope >> flags >> dev)) continue;
    if (const auto a = ipv6_text(addr)) out[dev].push_back(*a + "/" + std::to_string(plen));
  }
  return out;
}

// Live: the kernel's own list of IPv4 addresses with their interface and prefix.
std::map<std::string, std::vector<std::string>> read_ipv4_live() {
  std::map<std::string, std::vector<std::string>> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_netmask) continue;
    std::string dev = a->ifa_name;
    dev = dev.substr(0, dev.find(':'));  // "eth0:1" is a label of eth0
    const auto* addr = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    const auto* mask = reinterpret_cast<const sockaddr_in*>(a->ifa_netmask);
    out[dev].push_back(ipv4_text(addr->sin_addr.s_addr) + "/" + std::to_string(std::popcount(mask->sin_addr.s_addr)));
  }
  freeifaddrs(list);
  return out;
}

// A recorded tree: the local addresses are the "/32 host LOCAL" leaves of /proc/net/fib_trie;
// /proc/net has no file naming their interface, so each goes to the one device whose
// connected route in the main table (/proc/net/route) holds it, longest prefix first, with
// that prefix's length. An address no connected route holds (loopback's, whose route is in the
// local table) or that two devices' equal prefixes hold stays unattributed: not guessed.
std::map<std::string, std::vector<std::string>> read_ipv4_recorded(const fs::path& fib_trie,
                                                                   const std::vector<Route4>& routes) {
  std::set<uint32_t> locals;
  std::istringstream in(read_text(fib_trie).value_or(""));
  std::string line, leaf;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.rfind("|-- ", 0) == 0) {
      leaf = t.substr(4);
    } else if (t == "/32 host LOCAL" && !leaf.empty()) {
      in_addr a{};
      if (inet_pton(AF_INET, leaf.c_str(), &a) == 1) locals.insert(a.s_addr);
    }
  }
  std::map<std::string, std::vector<std::string>> out;
  for (uint32_t a : locals) {
    int best = -1;
    std::set<std::string> devs;
    for (const Route4& r : routes) {
      if (!r.connected || (a & r.mask) != r.dest) continue;
      const int len = std::popcount(r.mask);
      if (len > best) best = len, devs.clear();
      if (len == best) devs.insert(r.route.dev);
    }
    if (devs.size() == 1) out[*devs.begin()].push_back(ipv4_text(a) + "/" + std::to_string(best));
  }
  return out;
}

NetInterface read_interface(const fs::path& dir, const std::string& name) {
  NetInterface n;
  n.name = name;
  n.bdf = device_bdf(dir);
  n.operstate = text_of(dir / "operstate");
  n.speed_mbps = detail::read_net_speed_mbps(dir);
  n.mac = text_of(dir / "address");
  n.mtu = static_cast<int>(read_number(dir / "mtu", 10).value_or(0));
  n.type = static_cast<int>(read_number(dir / "type", 10).value_or(0));
  for (const std::string& e : list_dir(dir))
    if (e.rfind("lower_", 0) == 0) n.lower.push_back(e.substr(6));
  // Only an IPoIB child has `parent` (ipoib_vlan.c); an RDMA device's own `parent` (rxe) is
  // under /sys/class/infiniband, not here.
  n.parent = text_of(dir / "parent");
  return n;
}

// The net device of an RDMA port, found as MLNX_OFED's ibdev2netdev finds it
// (Mellanox/mlnx-tools, ofed_scripts/ibdev2netdev): a RoCE port names it in its GID table
// (ports/<n>/gid_attrs/ndevs/0); an InfiniBand port's GID 0 ends in the port GUID, which is the
// last 8 bytes of its IPoIB device's 20-byte address; else a net device of the same PCI
// function whose dev_port (dev_id where the driver sets only that, as mlx4 did) is the port
// number less one.
std::string port_netdev(const fs::path& ibdev, int port, const fs::path& class_net) {
  const fs::path p = ibdev / "ports" / std::to_string(port);
  if (std::string nd = text_of(p / "gid_attrs/ndevs/0"); !nd.empty()) return nd;
  const std::string gid = text_of(p / "gids/0");  // "fe80:0000:0000:0000:0c42:a103:0065:b1e4"
  if (gid.size() == 39) {
    std::string guid = gid.substr(20);
    guid.erase(std::remove(guid.begin(), guid.end(), ':'), guid.end());
    for (const std::string& nd : list_dir(class_net)) {
      std::string addr = text_of(class_net / nd / "address");
      addr.erase(std::remove(addr.begin(), addr.end(), ':'), addr.end());
      if (addr.size() == 40 && addr.substr(24) == guid && guid != "0000000000000000") return nd;
    }
  }
  for (const std::string& nd : list_dir(ibdev / "device/net")) {
    const fs::path d = ibdev / "device/net" / nd;
    auto index = read_number(d / "dev_port", 10);
    if (!index) index = read_number(d / "dev_id", 16);
    if (index && *index + 1 == port) return nd;
  }
  return {};
}

RdmaDevice read_rdma_device(const fs::path& dir, const std::string& name, const fs::path& class_net) {
  RdmaDevice r;
  r.name = name;
  r.bdf = device_bdf(dir);
  r.fw_ver = text_of(dir / "fw_ver");
  r.node_guid = text_of(dir / "node_guid");
  for (const std::string& n : list_dir(dir / "ports")) {
    RdmaPort p;
    try {
      p.port = std::stoi(n);
    } catch (const std::exception&) {
      continue;
    }
    const fs::path pd = dir / "ports" / n;
    p.link_layer = text_of(pd / "link_layer");
    p.state = after_colon(text_of(pd / "state"));
    p.phys_state = after_colon(text_of(pd / "phys_state"));
    p.rate = text_of(pd / "rate");
    char* end = nullptr;
    const double gbps = std::strtod(p.rate.c_str(), &end);
    if (end != p.rate.c_str() && gbps > 0) p.rate_gbps = gbps;
    p.netdev = port_netdev(dir, p.port, class_net);
    r.ports.push_back(std::move(p));
  }
  std::sort(r.ports.begin(), r.ports.end(), [](const RdmaPort& a, const RdmaPort& b) { return a.port < b.port; });
  return r;
}

// "nvme2n1" (a namespace of this controller) and "nvme0c2n1" (a path of subsystem 0's
// namespace 1 through controller 2, native multipath: the block device is "nvme0n1").
std::optional<std::string> namespace_block(const std::string& entry) {
  unsigned subsys = 0, ctrl = 0, ns = 0;
  char tail = 0;
  if (std::sscanf(entry.c_str(), "nvme%uc%un%u%c", &subsys, &ctrl, &ns, &tail) == 3)
    return "nvme" + std::to_string(subsys) + "n" + std::to_string(ns);
  if (std::sscanf(entry.c_str(), "nvme%un%u%c", &subsys, &ns, &tail) == 2) return entry;
  return std::nullopt;
}

NvmeController read_nvme(const fs::path& dir, const std::string& name) {
  NvmeController c;
  c.name = name;
  c.transport = text_of(dir / "transport");
  c.address = text_of(dir / "address");
  c.subsysnqn = text_of(dir / "subsysnqn");
  if (c.transport == "pcie") c.bdf = device_bdf(dir);
  std::set<std::string> ns;
  for (const std::string& e : list_dir(dir))
    if (auto b = namespace_block(e)) ns.insert(*b);
  c.namespaces.assign(ns.begin(), ns.end());
  return c;
}

}  // namespace

NetworkFacts read_network_facts(const fs::path& root, bool live) {
  NetworkFacts n;
  std::error_code ec;
  const fs::path class_net = root / "sys/class/net", proc_net = root / "proc/net";
  const bool have_net = fs::is_directory(class_net, ec);
  n.net_known = have_net && fs::is_directory(proc_net, ec);
  for (const std::string& name : list_dir(class_net)) n.interfaces.push_back(read_interface(class_net / name, name));
  const auto routes4 = read_routes4(proc_net / "route");
  auto v4 = live ? read_ipv4_live() : read_ipv4_recorded(proc_net / "fib_trie", routes4);
  auto v6 = read_ipv6_addresses(proc_net / "if_inet6");
  for (NetInterface& i : n.interfaces) {
    for (auto* m : {&v4, &v6})
      if (const auto it = m->find(i.name); it != m->end())
        i.addresses.insert(i.addresses.end(), it->second.begin(), it->second.end());
  }
  for (const Route4& r : routes4) n.routes.push_back(r.route);
  for (Route& r : read_routes6(proc_net / "ipv6_route")) n.routes.push_back(std::move(r));

  // The class directory appears when the subsystem (ib_core, nvme_core) loads: live, absent
  // means none; a recording without it may just not have copied it.
  const fs::path class_ib = root / "sys/class/infiniband", class_nvme = root / "sys/class/nvme";
  n.rdma_known = live || fs::is_directory(class_ib, ec);
  n.nvme_known = live || fs::is_directory(class_nvme, ec);
  for (const std::string& name : list_dir(class_ib))
    n.rdma_devices.push_back(read_rdma_device(class_ib / name, name, class_net));
  for (const std::string& name : list_dir(class_nvme)) n.nvme_controllers.push_back(read_nvme(class_nvme / name, name));

  // Every loaded module, not a chosen few: which names matter grows with each network file
  // system client and RDMA driver, and a whole list (a few hundred short names) lets a later
  // reader decide without a new recording.
  if (const auto mods = read_text(root / "proc/modules")) {
    n.modules_known = true;
    std::istringstream in(*mods);
    std::string line;
    while (std::getline(in, line))
      if (const std::string name = line.substr(0, line.find(' ')); !name.empty()) n.modules.push_back(name);
    std::sort(n.modules.begin(), n.modules.end());
  }
  n.lnet_networks = text_of(root / "sys/module/lnet/parameters/networks");
  if (n.lnet_networks == "(null)") n.lnet_networks.clear();  // a charp parameter never set
  const std::string version = read_text(root / "proc/driver/nvidia/version").value_or("");
  n.nvidia_driver_version = trim(version.substr(0, version.find('\n')));
  return n;
}

}  // namespace gdsb::topo
