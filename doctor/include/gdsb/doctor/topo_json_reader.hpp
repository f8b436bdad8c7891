// Reads a gdsb-topo report (gdsbench.topo/1) back into the topology model, so the doctor
// computes paths and hop ceilings with the topology library's own functions.
//
// Kept apart on purpose: it is the only place that knows gdsb-topo's JSON layout. The
// topology comes from the document's "snapshot" object, read by the snapshot loader's own
// code (topo::snapshot_from_json), so every fact a rule reads (BARs, links, ACS, tree, NUMA,
// block devices, mounts, udev, nvidia-fs, cufile.json, IOMMU, NVML facts) is the one a live
// run or a replay gives. Documents written before that field: devices[].{bdf, role, vendor,
// device, class, name, parent, root_complex, numa_node, iommu_group, link{cur_speed_gts,
// cur_width, max_speed_gts, max_width}, acs{cap, ctl}, acs_unknown_reason, block_devices,
// net_devices, driver} and notes, without host facts or BARs. Always read:
// checks[].{id, title, verdict, devices, evidence, consequence, remedy, reason};
// pairs[].{gpu, peer, p2pdma}; ceilings[].{gpu, gb_s, limited_by}; source.{kind, path}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gdsb/doctor/inputs.hpp"

namespace gdsb::doctor {

// Throws gdsb::RuntimeError naming `name` and the field when the document is malformed.
Platform platform_from_topo_json(const nlohmann::json& doc, const std::string& name);

}  // namespace gdsb::doctor
