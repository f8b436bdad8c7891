// --slurm-drain: tells Slurm to drain this node, by running scontrol (fork/exec with an argv,
// no shell, so a reason with quotes or spaces reaches scontrol as one argument).
#pragma once

#include <string>

namespace gdsb::topo_app {

// The executable `program` in the directories of path_env (PATH), as execvp would find it;
// "" when none is there.
std::string find_on_path(const std::string& program, const std::string& path_env);

// The node as Slurm knows it: slurmd_nodename ($SLURMD_NODENAME, set for HealthCheckProgram
// and prologs) when set, else this host's name up to its first dot.
std::string slurm_node_name(const std::string& slurmd_nodename);

// Runs `scontrol update NodeName=<node> State=DRAIN Reason=<reason>`, killed after `seconds`.
// Throws RuntimeError naming scontrol when it cannot be started, exits non-zero or does not
// finish in time.
void slurm_drain(const std::string& scontrol, const std::string& node, const std::string& reason, double seconds);

}  // namespace gdsb::topo_app
