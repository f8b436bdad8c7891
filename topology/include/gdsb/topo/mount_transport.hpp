// A network mount's transport, decided once (issue 34): whether a mount reads its data over
// RDMA or over the kernel's sockets is read here and nowhere else. The network-storage
// verdicts (network_storage.hpp), the GPUDirect RDMA stack check, the path model's mount
// ceilings and gdsb-doctor all take it from NetworkMount::transport, which is this answer.
// Two readings of one fact gave two false verdicts before: a Lustre mount over TCP failed an
// Ethernet node's RDMA checks, and NFS over RDMA on IPv6 (proto=rdma6) was called TCP.
#pragma once

#include <string>
#include <string_view>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

enum class TransportKind {
  Rdma,    // the NIC moves the data (NFS proto=rdma/rdma6, LNet o2ib, NVMe/RDMA)
  Socket,  // the kernel's TCP or UDP stack (NFS proto=tcp/udp/tcp6/udp6, LNet tcp, NVMe/TCP)
  Other,   // a transport the GDS documents say nothing of (NVMe/FC, LNet kfi or gni)
  Unknown  // the node does not show it (WekaFS, IBM Storage Scale, BeeGFS choose out of sight)
};
std::string_view transport_kind_name(TransportKind k);  // "rdma", "socket", "other", "unknown"

struct MountTransport {
  TransportKind kind = TransportKind::Unknown;
  // As the mount or its driver names it: "rdma6", "tcp", "o2ib", "o2ib,tcp", "fc"; "" unknown.
  std::string name;
  // What decided it, for people: "proto=rdma6", "LNet NIDs 192.168.0.7@tcp",
  // "net=udp (WEKA's UDP mode)", "this node has no RDMA device (/sys/class/infiniband is
  // empty)", "nvme20 transport tcp"; "" where nothing did.
  std::string evidence;
  bool rdma() const { return kind == TransportKind::Rdma; }
};

// The NVMe-oF controller (transport other than pcie and loop) whose namespace holds
// `mount`'s drives; nullptr for any other mount.
const NvmeController* fabric_controller(const Machine& m, const Mount& mount);

// The transport of `mount`'s data, from what the node shows (each row's source is in
// docs/gdsb-topo.md, "Network mounts"): NFS by its netid (proto=, or the rdma/tcp/udp flag);
// Lustre by its servers' NIDs (the LND after '@'), narrowed to the LNet networks this node
// configures where the NIDs name several; a file system on NVMe-oF by its controller's
// transport; WekaFS's net=udp; and where the file system's client chooses out of sight of
// /proc/mounts (WekaFS, IBM Storage Scale, BeeGFS), Socket on a node without any RDMA device,
// else Unknown. Any other mount: Unknown with no evidence.
MountTransport mount_transport(const Machine& m, const Mount& mount);

}  // namespace gdsb::topo
