// The PCIe side from gdsb::topo itself: a snapshot (live, or a recorded input read by the
// same collectors gdsb-topo uses) and its classification, seen as a PcieTopologySource.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gdsb/p2p/pcie_source.hpp"
#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::p2p {

// The GPU x NVMe/NIC pairs of a classified snapshot's path model, peer names from its
// block/net devices.
std::vector<PciePair> pairs_from_topology(const topo::PathModel& model);

// The GPUs of a classified snapshot and every GPU pair: the tree's PIX..SYS label, NV# from
// the snapshot's NVLink facts, NVML's P2P status where a saved snapshot recorded it.
GpuTree gpu_tree_from_topology(const topo::TopologyView& view);

// A source over one snapshot. probe() says why there is nothing to show (no GPU, no
// NVMe/NIC) so that the p2pdma matrix is waived rather than printed empty.
std::unique_ptr<PcieTopologySource> make_snapshot_source(topo::Snapshot snapshot,
                                                         std::string description);

// Collects the snapshot the sources name (topo::collect_from). A recorded input that
// cannot be read throws gdsb::RuntimeError naming it (exit 1); when the live machine
// cannot be read, the returned source is unavailable with the reason (p2pdma waived).
std::unique_ptr<PcieTopologySource> collect_topology_source(const topo::InputSources& sources,
                                                            const topo::CollectOptions& options);

}  // namespace gdsb::p2p
