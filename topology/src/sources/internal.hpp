// Helpers shared by the collectors (not part of the public interface).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo::detail {

// Whole small file, or nullopt when unreadable. Trailing newline removed.
std::optional<std::string> read_text(const std::filesystem::path& p);
std::optional<long long> read_number(const std::filesystem::path& p, int base);
std::vector<uint8_t> read_binary(const std::filesystem::path& p, size_t max_bytes);
bool is_bdf(const std::string& s);  // "0000:00:06.0"
// A net device's link speed in Mb/s from DIR/speed (DIR = /sys/class/net/<if>); nullopt
// while the link is down (-1, or EINVAL) or unreadable. The one reader of that file.
std::optional<int> read_net_speed_mbps(const std::filesystem::path& netdev_dir);
// Device::origin "line N" for readers whose library keeps no places (libpci's dump method,
// hwloc): the k-th device of an address (in s.devices order) gets the k-th line the input
// names that address on.
void set_origin_lines(Snapshot& s, const std::map<std::string, std::vector<int>>& lines);
std::string trim(std::string s);

// Machine::network in a saved snapshot (snapshot_network.cpp); network_from throws
// nlohmann::json::exception on a damaged object (the caller names the file).
nlohmann::json network_json(const NetworkFacts& n);
nlohmann::json interface_json(const NetInterface& i);  // one entry of network_json's lists
nlohmann::json rdma_device_json(const RdmaDevice& d);
NetworkFacts network_from(const nlohmann::json& j);
// Snapshot::faults in a saved snapshot (snapshot_faults.cpp), and the AER and NVLink error
// counters the known-good file keeps; the *_from throw nlohmann::json::exception when damaged.
nlohmann::json hw_faults_json(const HwFaults& f);
HwFaults hw_faults_from(const nlohmann::json& j);
nlohmann::json aer_json(const AerCounters& a);
AerCounters aer_from(const nlohmann::json& j);
nlohmann::json nvlink_errors_json(const std::vector<NvLinkErrorCounters>& links);
std::vector<NvLinkErrorCounters> nvlink_errors_from(const nlohmann::json& j);

// Fills Device::name from the pci.ids database through libpci (ids_file "" = libpci's
// default): unnamed devices get their full name, "Vendor Device 1234" names recorded by
// an lspci with an older database are completed, vendor IDs of text recorded without -nn
// are found from the vendor's name. Without a readable database a note says so once.
void lookup_names(Snapshot& s, const std::string& ids_file);

}  // namespace gdsb::topo::detail
