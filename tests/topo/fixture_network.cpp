// The network side of a recorded tree (fixture_builder.hpp Network): /sys/class/net,
// /sys/class/infiniband, /sys/class/nvme, /proc/net and /proc/modules.
#include "fixture_builder.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo::fixture {
namespace {

void write_if(const fs::path& p, const std::string& text) {
  if (!text.empty()) write_file(p, text + "\n");
}

// A device of /sys/class/<cls>: below its PCI function (DEV/<cls>/<name>, with a `device`
// link back), or where the kernel keeps a virtual one; linked from /sys/class/<cls>.
struct ClassDevice {
  std::string cls, name, bdf, virtual_dir;
};
fs::path class_device(const Machine& m, const fs::path& root, const ClassDevice& c) {
  const fs::path dir = c.bdf.empty() ? root / c.virtual_dir / c.name : device_path(m, c.bdf, root) / c.cls / c.name;
  fs::create_directories(dir);
  if (!c.bdf.empty()) fs::create_directory_symlink(device_path(m, c.bdf, root), dir / "device");
  fs::create_directories(root / "sys/class" / c.cls);
  fs::create_directory_symlink(dir, root / "sys/class" / c.cls / c.name);
  return dir;
}

}  // namespace

void write_network(const Machine& m, const fs::path& root) {
  const Network& n = m.host.network;
  if (!n.modules.empty()) write_file(root / "proc/modules", n.modules);
  for (const NvmeCtrl& c : n.nvme) {
    const fs::path dir = class_device(m, root, {"nvme", c.name, c.bdf, "sys/devices/virtual/nvme-fabrics/ctl"});
    write_if(dir / "transport", c.transport);
    write_if(dir / "address", c.address);
    write_if(dir / "subsysnqn", c.subsysnqn);
    for (const auto& e : c.entries) fs::create_directories(dir / e);
  }
  if (n.netdevs.empty() && n.ibdevs.empty() && n.route.empty() && n.fib_trie.empty()) return;
  fs::create_directories(root / "sys/class/net");
  for (const NetDev& d : n.netdevs) {
    const fs::path dir = class_device(m, root, {"net", d.name, d.bdf, "sys/devices/virtual/net"});
    write_if(dir / "operstate", d.operstate);
    write_if(dir / "address", d.address);
    write_if(dir / "speed", d.speed);
    if (d.mtu) write_if(dir / "mtu", std::to_string(d.mtu));
    if (d.type) write_if(dir / "type", std::to_string(d.type));
    if (d.dev_port) write_if(dir / "dev_port", std::to_string(*d.dev_port));
    for (const auto& l : d.lower) fs::create_directory_symlink(root / "sys/class/net" / l, dir / ("lower_" + l));
    write_if(dir / "parent", d.parent);
  }
  for (const IbDev& d : n.ibdevs) {
    const fs::path dir = class_device(m, root, {"infiniband", d.name, d.bdf, ""});
    write_if(dir / "fw_ver", d.fw_ver);
    write_if(dir / "node_guid", d.node_guid);
    for (const IbPort& p : d.ports) {
      const fs::path pd = dir / "ports" / std::to_string(p.port);
      fs::create_directories(pd);
      write_if(pd / "link_layer", p.link_layer);
      write_if(pd / "state", p.state);
      write_if(pd / "phys_state", p.phys_state);
      write_if(pd / "rate", p.rate);
      write_if(pd / "gids/0", p.gid0);
      write_if(pd / "gid_attrs/ndevs/0", p.ndev);
    }
  }
  if (n.route.empty() && n.fib_trie.empty() && n.if_inet6.empty() && n.ipv6_route.empty()) return;  // not recorded
  write_file(root / "proc/net/route",
             "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" + n.route);
  write_file(root / "proc/net/fib_trie", n.fib_trie);
  write_file(root / "proc/net/if_inet6", n.if_inet6);
  write_file(root / "proc/net/ipv6_route", n.ipv6_route);
}


}  // namespace gdsb::topo::fixture
