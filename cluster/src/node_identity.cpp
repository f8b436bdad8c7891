#include "gdsb/cluster/node_identity.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "gdsb/cluster/summary.hpp"

namespace gdsb::cluster {

std::string this_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

std::string machine_of(std::string_view boot_id, std::string_view recording) {
  if (!recording.empty()) return "recording " + std::string(recording);
  return "boot " + std::string(boot_id);
}

std::string node_identity(std::string_view host, std::string_view machine) {
  return std::string(host) + " / " + std::string(machine);
}

std::string node_key(const NodeSummary& s) {
  if (!s.node_id.empty()) return s.node_id;
  return node_identity(s.node, "rank " + std::to_string(s.rank));
}

std::vector<int> RankLayout::ranks_of_first(int k) const {
  std::vector<int> out;
  for (int node = 0; node < k && node < nodes(); ++node)
    out.insert(out.end(), ranks_of_node[static_cast<std::size_t>(node)].begin(),
               ranks_of_node[static_cast<std::size_t>(node)].end());
  std::sort(out.begin(), out.end());
  return out;
}

std::string RankLayout::words() const {
  const std::string n = std::to_string(nodes()) + " node(s)";
  return ranks() == nodes() ? n : std::to_string(ranks()) + " ranks on " + n;
}

RankLayout rank_layout(const std::vector<std::pair<std::string, std::string>>& host_machine_of_rank) {
  RankLayout l;
  std::map<std::string, int> node_of_id;
  std::vector<std::string> host_of_node;
  for (std::size_t r = 0; r < host_machine_of_rank.size(); ++r) {
    const auto& [host, machine] = host_machine_of_rank[r];
    const std::string id = node_identity(host, machine);
    const auto [it, added] = node_of_id.emplace(id, l.nodes());
    if (added) {
      l.ranks_of_node.emplace_back();
      l.id_of_node.push_back(id);
      host_of_node.push_back(host);
    }
    l.node_of_rank.push_back(it->second);
    l.ranks_of_node[static_cast<std::size_t>(it->second)].push_back(static_cast<int>(r));
  }
  std::map<std::string, int> nodes_of_host;
  for (const std::string& h : host_of_node) ++nodes_of_host[h];
  for (int node = 0; node < l.nodes(); ++node) {
    const std::string& h = host_of_node[static_cast<std::size_t>(node)];
    l.name_of_node.push_back(nodes_of_host[h] > 1 ? h + "." + std::to_string(l.ranks_of_node[static_cast<std::size_t>(node)].front()) : h);
  }
  return l;
}

}  // namespace gdsb::cluster
