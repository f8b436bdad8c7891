// The flow solve under every ceiling (path_model.hpp): each transfer is a flow along its
// chain's hops; a hop shared by several flows caps their sum.
#pragma once

#include <string>
#include <vector>

#include "gdsb/topo/path_model.hpp"

namespace gdsb::topo {

struct FlowResult {
  double gb_s = 0;                   // the flows' sum; meaningless when `unknown`
  std::vector<std::string> binding;  // each hop running at capacity: "GPU link <what>"
  // Some flow's own link (or every hop of a flow) has unknown capacity: no ceiling.
  bool unknown = false;
  bool socket = false, host_bridge = false, acs = false;  // any flow crosses / is redirected
};

// Solves the flows together. `inputs` receives each distinct hop (by key) the flows cross,
// in first-seen order. A hop without a positive capacity bounds nothing; a flow whose own
// link is unknown (DataPath::unknown_capacity) or that crosses no known hop makes the
// result unknown.
FlowResult solve_flows(const std::vector<const DataPath*>& flows, std::vector<PathHop>& inputs);

}  // namespace gdsb::topo
