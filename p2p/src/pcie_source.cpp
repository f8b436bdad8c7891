#include "gdsb/p2p/pcie_source.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/nvml.hpp"

namespace gdsb::p2p {

std::string_view peer_role_name(PeerRole r) { return r == PeerRole::Nvme ? "nvme" : "nic"; }

std::string_view map_type_name(MapType m) {
  switch (m) {
    case MapType::BusAddr: return "BUS_ADDR";
    case MapType::ThruHostBridge: return "THRU_HOST_BRIDGE";
    case MapType::NotSupported: return "NOT_SUPPORTED";
  }
  return "NOT_SUPPORTED";
}

std::optional<MapType> parse_map_type(std::string_view text) {
  if (text == "BUS_ADDR") return MapType::BusAddr;
  if (text == "THRU_HOST_BRIDGE") return MapType::ThruHostBridge;
  if (text == "NOT_SUPPORTED") return MapType::NotSupported;
  return std::nullopt;
}

std::vector<PciePair> pairs_from_topo_json(const nlohmann::json& doc) {
  if (!doc.is_object() || doc.value("schema", "") != "gdsbench.topo/1") {
    throw UsageError("not a gdsbench.topo/1 document (its \"schema\" must be gdsbench.topo/1)");
  }
  std::vector<PciePair> out;
  for (const auto& j : doc.value("pairs", nlohmann::json::array())) {
    PciePair p;
    p.gpu = nvml::normalize_bus_id(j.at("gpu").get<std::string>());
    p.peer = nvml::normalize_bus_id(j.at("peer").get<std::string>());
    const std::string role = j.at("peer_role").get<std::string>();
    if (role != "nvme" && role != "nic") {
      throw UsageError("pair " + p.gpu + " x " + p.peer + ": peer_role '" + role +
                       "' is neither nvme nor nic");
    }
    p.role = role == "nvme" ? PeerRole::Nvme : PeerRole::Nic;
    p.label = j.at("label").get<std::string>();
    const std::string map = j.at("p2pdma").get<std::string>();
    const auto m = parse_map_type(map);
    if (!m) throw UsageError("pair " + p.gpu + " x " + p.peer + ": p2pdma '" + map + "' is unknown");
    p.p2pdma = *m;
    p.distance = j.value("distance", 0);
    for (const auto& port : j.value("acs_redirect_ports", nlohmann::json::array())) {
      p.acs_redirect_ports.push_back(port.get<std::string>());
    }
    out.push_back(std::move(p));
  }
  // Peer names (nvme0, eth0) come from the document's device list when present; NICs the
  // document calls management NICs (gdsb-topo's nic_role) are no GDS peers.
  for (const auto& d : doc.value("devices", nlohmann::json::array())) {
    const std::string bdf = nvml::normalize_bus_id(d.value("bdf", ""));
    if (d.value("nic_role", "") == "management")
      out.erase(std::remove_if(out.begin(), out.end(),
                               [&](const PciePair& p) { return p.peer == bdf; }),
                out.end());
    std::string name;
    for (const auto& key : {"block_devices", "net_devices"}) {
      const auto list = d.value(key, nlohmann::json::array());
      if (!list.empty() && name.empty()) name = list.front().get<std::string>();
    }
    for (PciePair& p : out) {
      if (p.peer == bdf && !name.empty()) p.peer_name = name;
    }
  }
  return out;
}

std::unique_ptr<PcieTopologySource> load_topo_document(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--topo-json " + path + ": cannot open it (write one with gdsb-topo --json)");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
    return std::make_unique<StaticPcieTopologySource>("gdsbench.topo/1 document " + path,
                                                      pairs_from_topo_json(doc));
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("--topo-json " + path + ": " + e.what());
  } catch (const UsageError& e) {
    throw UsageError("--topo-json " + path + ": " + e.what());
  }
}

std::string gds_direct_verdict(const PciePair& p) {
  std::string acs;
  if (!p.acs_redirect_ports.empty()) {
    acs = "; ACS redirects at";
    for (const auto& port : p.acs_redirect_ports) acs += " " + port;
  }
  switch (p.p2pdma) {
    case MapType::BusAddr:
      return "GDS direct: peer-to-peer below a common switch (" + p.label + ")" + acs;
    case MapType::ThruHostBridge:
      return "GDS direct through the root complex (" + p.label +
             "): works, but shares the host bridge" + acs;
    case MapType::NotSupported:
      return "no direct path (" + p.label + "): GDS falls back to compat mode/bounce buffers" + acs;
  }
  return "unknown";
}

}  // namespace gdsb::p2p
