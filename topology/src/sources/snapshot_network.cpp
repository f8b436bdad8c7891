// The network facts in a saved snapshot (snapshot_io.cpp's "machine"."network"): written and
// read back field by field. A snapshot written before they were recorded has no "network":
// every *_known stays false, so nothing reads "no RDMA device" from an older file.
#include <nlohmann/json.hpp>

#include "internal.hpp"

using nlohmann::json;

namespace gdsb::topo::detail {
namespace {

template <class T>
T field(const json& j, const char* key) {
  return j.at(key).get<T>();
}

}  // namespace

json interface_json(const NetInterface& i) {
  return {{"name", i.name},
          {"bdf", i.bdf},
          {"operstate", i.operstate},
          {"speed_mbps", i.speed_mbps ? json(*i.speed_mbps) : json(nullptr)},
          {"mac", i.mac},
          {"mtu", i.mtu},
          {"type", i.type},
          {"addresses", i.addresses},
          {"lower", i.lower},
          {"parent", i.parent}};
}

json rdma_device_json(const RdmaDevice& d) {
  json ports = json::array();
  for (const RdmaPort& p : d.ports)
    ports.push_back({{"port", p.port},
                     {"link_layer", p.link_layer},
                     {"state", p.state},
                     {"phys_state", p.phys_state},
                     {"rate", p.rate},
                     {"rate_gbps", p.rate_gbps ? json(*p.rate_gbps) : json(nullptr)},
                     {"netdev", p.netdev}});
  return {{"name", d.name}, {"bdf", d.bdf}, {"fw_ver", d.fw_ver}, {"node_guid", d.node_guid}, {"ports", ports}};
}

json network_json(const NetworkFacts& n) {
  json interfaces = json::array(), routes = json::array(), rdma = json::array(), nvme = json::array();
  for (const NetInterface& i : n.interfaces) interfaces.push_back(interface_json(i));
  for (const Route& r : n.routes)
    routes.push_back({{"destination", r.destination}, {"gateway", r.gateway}, {"dev", r.dev}, {"metric", r.metric}});
  for (const RdmaDevice& d : n.rdma_devices) rdma.push_back(rdma_device_json(d));
  for (const NvmeController& c : n.nvme_controllers)
    nvme.push_back({{"name", c.name},
                    {"transport", c.transport},
                    {"address", c.address},
                    {"subsysnqn", c.subsysnqn},
                    {"bdf", c.bdf},
                    {"namespaces", c.namespaces}});
  return {{"net_known", n.net_known},
          {"rdma_known", n.rdma_known},
          {"nvme_known", n.nvme_known},
          {"modules_known", n.modules_known},
          {"interfaces", interfaces},
          {"routes", routes},
          {"rdma_devices", rdma},
          {"nvme_controllers", nvme},
          {"modules", n.modules},
          {"lnet_networks", n.lnet_networks},
          {"nvidia_driver_version", n.nvidia_driver_version}};
}

NetworkFacts network_from(const json& j) {
  NetworkFacts n;
  n.net_known = field<bool>(j, "net_known");
  n.rdma_known = field<bool>(j, "rdma_known");
  n.nvme_known = field<bool>(j, "nvme_known");
  n.modules_known = field<bool>(j, "modules_known");
  for (const json& i : j.at("interfaces")) {
    NetInterface x;
    x.name = field<std::string>(i, "name");
    x.bdf = field<std::string>(i, "bdf");
    x.operstate = field<std::string>(i, "operstate");
    if (!i.at("speed_mbps").is_null()) x.speed_mbps = field<int>(i, "speed_mbps");
    x.mac = field<std::string>(i, "mac");
    x.mtu = field<int>(i, "mtu");
    x.type = field<int>(i, "type");
    x.addresses = field<std::vector<std::string>>(i, "addresses");
    x.lower = field<std::vector<std::string>>(i, "lower");
    x.parent = i.value("parent", std::string());  // absent in snapshots before issue 34
    n.interfaces.push_back(std::move(x));
  }
  for (const json& r : j.at("routes"))
    n.routes.push_back({field<std::string>(r, "destination"), field<std::string>(r, "gateway"),
                        field<std::string>(r, "dev"), field<int>(r, "metric")});
  for (const json& d : j.at("rdma_devices")) {
    RdmaDevice x;
    x.name = field<std::string>(d, "name");
    x.bdf = field<std::string>(d, "bdf");
    x.fw_ver = field<std::string>(d, "fw_ver");
    x.node_guid = field<std::string>(d, "node_guid");
    for (const json& p : d.at("ports")) {
      RdmaPort y;
      y.port = field<int>(p, "port");
      y.link_layer = field<std::string>(p, "link_layer");
      y.state = field<std::string>(p, "state");
      y.phys_state = field<std::string>(p, "phys_state");
      y.rate = field<std::string>(p, "rate");
      if (!p.at("rate_gbps").is_null()) y.rate_gbps = field<double>(p, "rate_gbps");
      y.netdev = field<std::string>(p, "netdev");
      x.ports.push_back(std::move(y));
    }
    n.rdma_devices.push_back(std::move(x));
  }
  for (const json& c : j.at("nvme_controllers"))
    n.nvme_controllers.push_back({field<std::string>(c, "name"), field<std::string>(c, "transport"),
                                  field<std::string>(c, "address"), field<std::string>(c, "subsysnqn"),
                                  field<std::string>(c, "bdf"), field<std::vector<std::string>>(c, "namespaces")});
  n.modules = field<std::vector<std::string>>(j, "modules");
  n.lnet_networks = field<std::string>(j, "lnet_networks");
  n.nvidia_driver_version = field<std::string>(j, "nvidia_driver_version");
  return n;
}

}  // namespace gdsb::topo::detail
