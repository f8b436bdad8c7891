// This machine's network facts against iproute2 (label integration): the interfaces, their
// addresses and the main table's routes that read_network_facts gives live must be what
// `ip -j` says. iproute2 asks the kernel over netlink, a path independent of the /sys and
// /proc files the collector reads. Skipped, saying why, where `ip` is not installed.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "oracle_util.hpp"

namespace gdsb::topo::testing {
namespace {

using nlohmann::json;

std::optional<json> ip_json(const std::string& args) { return command_json("ip -j " + args); }

bool have_ip() { return std::system("ip -V >/dev/null 2>&1") == 0; }

const NetInterface* find_if(const NetworkFacts& n, const std::string& name) {
  for (const auto& i : n.interfaces)
    if (i.name == name) return &i;
  return nullptr;
}

// iproute2's words for a route as our Route holds them: "default" is the zero prefix, a
// destination without a length is a host route, no "metric" is metric 0.
using RouteRow = std::tuple<std::string, std::string, std::string, int>;
std::multiset<RouteRow> ip_routes(const json& routes, bool v6) {
  std::multiset<RouteRow> out;
  for (const json& r : routes) {
    if (!r.contains("dev")) continue;                              // multipath: no one device
    if (r.value("type", "unicast") != "unicast") continue;         // blackhole/unreachable: no device
    std::string dst = r.at("dst").get<std::string>();
    if (dst == "default") dst = v6 ? "::/0" : "0.0.0.0/0";
    else if (dst.find('/') == std::string::npos) dst += v6 ? "/128" : "/32";
    out.insert({dst, r.value("gateway", ""), r.at("dev").get<std::string>(), r.value("metric", 0)});
  }
  return out;
}

std::multiset<RouteRow> our_routes(const NetworkFacts& n, bool v6) {
  std::multiset<RouteRow> out;
  for (const Route& r : n.routes)
    if ((r.destination.find(':') != std::string::npos) == v6) out.insert({r.destination, r.gateway, r.dev, r.metric});
  return out;
}

std::set<std::string> ip_addresses(const json& link) {
  std::set<std::string> out;
  for (const json& a : link.value("addr_info", json::array()))
    out.insert(a.at("local").get<std::string>() + "/" + std::to_string(a.at("prefixlen").get<int>()));
  return out;
}

TEST(TopoNetworkLive, InterfacesAndAddressesAreWhatIpSays) {
  if (!have_ip()) GTEST_SKIP() << "iproute2 (ip) is not installed: no oracle for the network facts";
  const NetworkFacts n = read_network_facts("/", true);
  EXPECT_TRUE(n.net_known);
  const auto links = ip_json("addr show");
  ASSERT_TRUE(links && links->is_array()) << "ip -j addr show gave no JSON list";
  std::set<std::string> names;
  for (const json& l : *links) {
    const std::string name = l.at("ifname").get<std::string>();
    names.insert(name);
    const NetInterface* i = find_if(n, name);
    ASSERT_NE(i, nullptr) << name << " is listed by ip but not collected";
    std::string oper = l.at("operstate").get<std::string>();
    for (char& c : oper) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(i->operstate, oper) << name;
    EXPECT_EQ(i->mtu, l.at("mtu").get<int>()) << name;
    if (l.contains("address")) {
      EXPECT_EQ(i->mac, l.at("address").get<std::string>()) << name;
    }
    const std::map<std::string, int> arphrd{{"ether", 1}, {"infiniband", 32}, {"loopback", 772}};
    if (const auto t = arphrd.find(l.value("link_type", "")); t != arphrd.end()) {
      EXPECT_EQ(i->type, t->second) << name;
    }
    EXPECT_EQ(std::set<std::string>(i->addresses.begin(), i->addresses.end()), ip_addresses(l)) << name;
  }
  std::set<std::string> ours;
  for (const auto& i : n.interfaces) ours.insert(i.name);
  EXPECT_EQ(ours, names);
}

TEST(TopoNetworkLive, MainTableRoutesAreWhatIpSays) {
  if (!have_ip()) GTEST_SKIP() << "iproute2 (ip) is not installed: no oracle for the network facts";
  const NetworkFacts n = read_network_facts("/", true);
  const auto v4 = ip_json("route show table main"), v6 = ip_json("-6 route show table main");
  ASSERT_TRUE(v4 && v6) << "ip -j route gave no JSON";
  EXPECT_EQ(our_routes(n, false), ip_routes(*v4, false));
  EXPECT_EQ(our_routes(n, true), ip_routes(*v6, true));
}

// The reader of a recorded tree, pointed at this machine's own /proc and /sys: IPv4 addresses
// from /proc/net/fib_trie, each given to the device of its connected route. It must never
// give an address to a device ip does not list it on, and must find every address whose
// prefix the main table routes through that device alone.
TEST(TopoNetworkLive, RecordedReaderOfThisMachinesFilesAgreesWithIp) {
  if (!have_ip()) GTEST_SKIP() << "iproute2 (ip) is not installed: no oracle for the network facts";
  const NetworkFacts n = read_network_facts("/", false);
  const auto links = ip_json("addr show");
  const auto v4 = ip_json("route show table main");
  ASSERT_TRUE(links && v4);
  std::map<std::string, std::set<std::string>> prefix_devs;  // "192.0.2.0/24" -> devices
  for (const json& r : *v4)
    if (!r.contains("gateway") && r.contains("dev")) prefix_devs[r.at("dst").get<std::string>()].insert(r.at("dev").get<std::string>());
  int checked = 0;
  for (const json& l : *links) {
    const std::string name = l.at("ifname").get<std::string>();
    const NetInterface* i = find_if(n, name);
    ASSERT_NE(i, nullptr) << name;
    const std::set<std::string> want = ip_addresses(l);
    for (const std::string& a : i->addresses) EXPECT_TRUE(want.count(a)) << name << " given " << a;
    for (const json& a : l.value("addr_info", json::array())) {
      if (a.at("family") != "inet") continue;
      in_addr_t addr = inet_addr(a.at("local").get<std::string>().c_str());
      const int len = a.at("prefixlen").get<int>();
      const uint32_t mask = len == 0 ? 0 : htonl(~0U << (32 - len));
      in_addr net{addr & mask};
      const std::string prefix = std::string(inet_ntoa(net)) + "/" + std::to_string(len);
      const auto it = prefix_devs.find(prefix);
      if (it == prefix_devs.end() || it->second != std::set<std::string>{name}) continue;
      const std::string text = a.at("local").get<std::string>() + "/" + std::to_string(len);
      EXPECT_NE(std::find(i->addresses.begin(), i->addresses.end(), text), i->addresses.end()) << name << " " << text;
      ++checked;
    }
  }
  RecordProperty("ipv4_addresses_checked", checked);
}

// The rules as the kernel has them by default (local, main, default, nothing else): the only
// policy route_to models. A node with other rules (VRFs, source routing) is no oracle for it.
bool default_rules_only() {
  for (const char* family : {"", "-6 "}) {
    const auto rules = ip_json(std::string(family) + "rule show");
    if (!rules) return false;
    for (const json& r : *rules) {
      const std::string table = r.value("table", "");
      if (r.value("src", "") != "all" || r.size() != 3 ||
          (table != "local" && table != "main" && table != "default"))
        return false;
    }
  }
  return true;
}

// An address inside `prefix` that is neither its network nor its broadcast address: the
// prefix's bits, then the host part's last byte set to all ones but its lowest bit (".254",
// "::fe"). nullopt for a prefix with fewer than 8 host bits, which has no such simple one.
std::optional<std::string> inside(const std::string& prefix) {
  const auto slash = prefix.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string net = prefix.substr(0, slash);
  const int len = std::stoi(prefix.substr(slash + 1));
  const int family = net.find(':') == std::string::npos ? AF_INET : AF_INET6;
  unsigned char b[16] = {};
  if (inet_pton(family, net.c_str(), b) != 1) return std::nullopt;
  const int bytes = family == AF_INET ? 4 : 16;
  if (bytes * 8 - len < 8) return std::nullopt;
  b[bytes - 1] = 0xfe;
  char text[INET6_ADDRSTRLEN];
  return std::string(inet_ntop(family, b, text, sizeof text));
}

std::string without_length(const std::string& a) { return a.substr(0, a.find('/')); }
bool link_local(const std::string& a) { return a.rfind("fe80:", 0) == 0; }

// The net device the carriers' route step (route_to) picks for a server address must be the
// one the kernel picks: `ip -j route get ADDR`'s dev. Destinations: each address this node
// holds (the kernel answers "local ... dev lo"), each route's gateway, an address inside each
// connected prefix, an off-subnet address of each family, and loopback. Link-local
// destinations other than the node's own are left out: with fe80::/64 on several devices the
// kernel needs an outgoing device to choose, which a mount's server address does not give.
TEST(TopoNetworkLive, RouteLookupPicksTheDeviceIpRouteGetPicks) {
  if (!have_ip()) GTEST_SKIP() << "iproute2 (ip) is not installed: no oracle for the route lookup";
  if (!default_rules_only())
    GTEST_SKIP() << "this node has policy routing rules beyond local/main/default; route_to "
                    "models the default rules only";
  const NetworkFacts n = read_network_facts("/", true);
  std::set<std::string> dests{"127.0.0.1", "8.8.8.8", "2001:4860:4860::8888", "::1"};
  for (const NetInterface& i : n.interfaces)
    for (const std::string& a : i.addresses) dests.insert(without_length(a));
  for (const Route& r : n.routes) {
    if (!r.gateway.empty() && !link_local(r.gateway)) dests.insert(r.gateway);
    if (r.gateway.empty() && !link_local(r.destination))
      if (const auto a = inside(r.destination)) dests.insert(*a);
  }
  int compared = 0;
  for (const std::string& d : dests) {
    const std::optional<Route> ours = route_to(n, d);
    const auto got = ip_json("route get " + d);
    if (!got) {  // "Network is unreachable": the kernel has no route, nor must we
      EXPECT_FALSE(ours) << d << ": ip route get finds no route, route_to gives dev " << ours->dev;
      continue;
    }
    ASSERT_TRUE(got->is_array() && !got->empty()) << d;
    ASSERT_TRUE(ours) << d << ": route_to finds no route, ip route get says dev "
                      << got->at(0).value("dev", "");
    EXPECT_EQ(ours->dev, got->at(0).value("dev", ""))
        << d << " (ours: " << ours->destination << ")";
    ++compared;
  }
  RecordProperty("destinations_compared", compared);
  EXPECT_GE(compared, 5);
}

}  // namespace
}  // namespace gdsb::topo::testing
