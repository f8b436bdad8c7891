// Derived topology facts shared by the checks and the renderers: upward paths, pair
// classification as nvidia-smi (PIX..SYS) and as the kernel's P2PDMA code does it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

enum class PathLabel { Pix, Pxb, Phb, Node, Sys };  // ordered best to worst
std::string_view path_label_name(PathLabel l);      // "PIX", ...

enum class P2pdmaMap { BusAddr, ThruHostBridge, NotSupported };
std::string_view p2pdma_map_name(P2pdmaMap m);  // "BUS_ADDR", ...

struct Pair {
  std::string gpu, peer;
  Role peer_role = Role::Other;
  PathLabel label = PathLabel::Sys;
  P2pdmaMap p2pdma = P2pdmaMap::NotSupported;
  int distance = 0;
  std::string common_bridge;                    // lowest common upstream bridge, empty when none
  std::vector<std::string> path;                // devices the kernel walks (both sides)
  std::vector<std::string> acs_redirect_ports;  // ports on the path with RR|CR|EC
  std::vector<std::string> acs_unknown_ports;   // ports whose ACS state is unreadable
  std::string p2pdma_reason;
};

// Built once per snapshot; checks and renderers read it.
class TopologyView {
 public:
  explicit TopologyView(const Snapshot& s);
  const Snapshot& snapshot() const { return s_; }
  // Upstream bridges from the device's parent to the top (loop-safe).
  std::vector<const Device*> ancestors(const Device& d) const;
  const std::vector<const Device*>& gpus() const { return gpus_; }
  const std::vector<const Device*>& peers() const { return peers_; }  // NVMe then NICs
  // Virtual drives and NICs (virtio, emulated, cloud volumes): never GDS peers.
  const std::vector<const Device*>& virtual_devices() const { return virtual_; }
  const std::vector<Pair>& pairs() const { return pairs_; }
  const Pair* pair(const std::string& gpu, const std::string& peer) const;
  // Best GPU for a peer and best peers of a role for a GPU (lowest label, then distance).
  const Pair* best_for_peer(const std::string& peer) const;
  std::vector<const Pair*> best_for_gpu(const std::string& gpu, Role peer_role) const;
  std::string gpu_label(const std::string& bdf) const;  // "GPU0"
  bool cpu_supports_p2pdma() const;
  std::optional<int> numa_of(const Device& d) const;  // device, else its ancestors'
  std::optional<int> package_of(const Device& d) const;  // likewise (hwloc inputs only)
  // One pair as the kernel and nvidia-smi see it; also GPU x GPU (gdsb-p2p's matrix).
  Pair classify(const Device& gpu, const Device& peer) const;

 private:
  bool host_bridges_whitelisted(const Device& a, const Device& b, bool& cpu_unknown) const;
  const Snapshot& s_;
  std::vector<const Device*> gpus_, peers_, virtual_;
  std::vector<Pair> pairs_;
};

bool acs_redirects(const Device& d);  // kernel's pci_bridge_has_acs_redir()
// The fastest its upstream link can train to, in GT/s: the slower of its own and its
// parent's LnkCap speed (an end whose speed is unknown caps nothing); nullopt when its own
// is unknown. A GPU is judged at this, not at its LnkSta: NVIDIA GPUs drop to Gen1 idle.
std::optional<double> capable_link_gts(const Snapshot& s, const Device& d);
// Ranking of pairs for "nearest": lower PIX..SYS label, then no ACS redirect, then distance.
bool closer(const Pair& a, const Pair& b);

}  // namespace gdsb::topo
