// Which node a rank reports on, decided here once (issue 34): ranks of one identity are one
// node. Their GPUs and storage ceiling are counted once, their shares of a shared-storage
// point add up to the node's, they read one clock (never a clock finding among themselves),
// and --scale counts nodes, not ranks.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gdsb::cluster {

struct NodeSummary;

// This host's kernel boot (/proc/sys/kernel/random/boot_id): the ranks of one host share it,
// containers included, and two machines that carry one hostname do not. "" when unreadable.
std::string this_boot_id();

// The machine a rank reports on: the recording it reads in place of the machine
// (--topo-input, --fake-gpu after {rank}: tests and replays, where each recording stands for
// a node of its own), else its host's boot.
std::string machine_of(std::string_view boot_id, std::string_view recording);

// A node's identity: its host and the machine the rank reports on.
std::string node_identity(std::string_view host, std::string_view machine);

// The identity of a summary: its node_id, or for a report of an older version (which has
// none) its node name and rank, one node each, as those versions counted.
std::string node_key(const NodeSummary& s);

// Every rank's node: nodes numbered by their lowest rank, so node 0 holds rank 0.
struct RankLayout {
  std::vector<int> node_of_rank;
  std::vector<std::vector<int>> ranks_of_node;  // ascending
  // host, or host.<lowest rank> where one host holds several nodes (recordings)
  std::vector<std::string> name_of_node;
  std::vector<std::string> id_of_node;  // node_identity()
  int nodes() const { return static_cast<int>(ranks_of_node.size()); }
  int ranks() const { return static_cast<int>(node_of_rank.size()); }
  // The ranks of the first k nodes, ascending: the ranks of a point on k nodes.
  std::vector<int> ranks_of_first(int k) const;
  // "4 ranks on 1 node" / "2 nodes": how the run's ranks sit, in words.
  std::string words() const;
};

// From every rank's (host, machine), indexed by rank.
RankLayout rank_layout(const std::vector<std::pair<std::string, std::string>>& host_machine_of_rank);

}  // namespace gdsb::cluster
