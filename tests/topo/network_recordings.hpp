// Real nodes' network side as sysfs-root fixtures (fixture_builder.hpp): the values of the
// RDMA ports and net devices are copied from what people pasted from those nodes, each
// origin in fixtures/real/SOURCES.md ("Network recordings"). What the paste did not show (PCI
// addresses where no name gives them, the PCI IDs) is chosen here and says so.
#pragma once

#include "fixture_builder.hpp"

namespace gdsb::topo::fixture {

// NVIDIA/nccl issue 489, `ibstatus` of a node with two HDR ports: mlx5_0 port 1 ACTIVE at
// "200 Gb/sec (4X HDR)", mlx5_1 port 1 DOWN/Disabled at "10 Gb/sec (4X)". PCI addresses
// chosen: mlx5_0 at 0000:1b:00.0, mlx5_1 at 0000:1c:00.0 (ConnectX-6, 15b3:101b).
Machine nccl489_two_hdr_ports();

// imbue-ai/cluster-health issue 4, `ibdev2netdev` of an 8x H100 node: eight ConnectX-7
// InfiniBand ports (ibp26s0 .. ibp220s0) and two dual-port ConnectX-6 Ethernet functions
// (enp27s0f0np0/f1np1, enp157s0f0np0/f1np1), mlx5_0 .. mlx5_11, each port 1. PCI addresses
// are the predictable names' bus/slot/function (ibp26s0: 0000:1a:00.0); (Up)/(Down), the
// carrier, is written as operstate up/down.
Machine imbue_h100_ibdev2netdev();

// stepfun-ai/StepMesh issue 15, `ip addr show` of two RoCE ports of an H20 node: ens108np0
// (altname enp14s0np0: 0000:0e:00.0) with 172.31.31.1/24 and fe80::966d:aeff:feeb:f05e/64,
// ens110np0 (enp71s0np0: 0000:47:00.0) with only fe80::966d:aeff:feec:18fe/64; the poster's
// mlx5_0 is ens108np0's RDMA device and mlx5_3 ens110np0's. The /proc/net files are written
// as the kernel writes them for those addresses (a connected route per prefix, the local
// table's entries in ipv6_route); the paste holds `ip addr`, not the files.
Machine stepmesh_two_roce_ports();

// linux-nvme/nvme-cli issue 1785, `nvme list -v` of a host with NVMe over RDMA through two
// target ports: nvme7 (traddr=192.168.0.50,trsvcid=4420) and nvme31
// (traddr=192.168.1.51,trsvcid=4420) are two paths to nvme-subsys7, whose namespace the list
// shows as nvme7n1 under both; nvme8 (192.168.0.50) shows none. Under native multipath the
// kernel names the paths nvme7c7n1 and nvme7c31n1 (nvme<subsystem>c<controller>n<ns>), which
// is what the controllers' directories are given. One ConnectX function (0000:1b:00.0,
// chosen) so the tree has a PCI device.
Machine nvmecli1785_rdma_multipath();

}  // namespace gdsb::topo::fixture
