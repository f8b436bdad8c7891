// The node mode's text (node_mode.hpp): what the plan (gdsb/topo/node_run.hpp, whose JSON
// the report carries) says and what the run measured. The writers only read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gdsb/topo/node_run.hpp"

namespace gdsb::io {

using topo::NodeGpu;
using topo::NodePlan;

// --dry-run: where each GPU reads from and the ceilings; nothing measured.
std::string node_plan_text(const NodePlan& p);
// The measured table: a row a GPU, a column a transfer type, the aggregate and its share of
// the node ceiling; facts common to all GPUs said once; the odd GPU with its explanation.
std::string node_text(const NodePlan& p);
}  // namespace gdsb::io
