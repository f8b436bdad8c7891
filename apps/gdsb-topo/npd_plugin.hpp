// gdsb-topo --health --npd: the health check's verdict in node-problem-detector's custom plugin
// protocol (kubernetes/node-problem-detector, pkg/custompluginmonitor/plugin/plugin.go and
// types/config.go): exit 0 sets the rule's condition False, 1 True, any other code Unknown;
// stdout is trimmed and cut at max_output_length bytes (default 80) to become the condition's
// message; the plugin is killed at the rule's timeout (default 5 s) and then reads as Unknown.
// So the answer is one line of at most 80 bytes on stdout naming the fault; the lines for
// people go to stderr, which NPD logs. A check that could not be made is a problem (exit 1)
// unless --npd-unchecked-unknown says otherwise: fail closed, as --slurm-drain.
// docs/gdsb-topo.md "Kubernetes" and deploy/kubernetes/README.md.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/topo/fingerprint.hpp"
#include "gdsb/topo/hw_faults.hpp"
#include "topo_app.hpp"

namespace gdsb::topo_app {

// NPD's default max_output_length (types/config.go defaultMaxOutputLength).
inline constexpr size_t kNpdMaxOutput = 80;
// --timeout under --npd when not given: NPD kills the plugin at 5 s (defaultGlobalTimeout) and
// then reports Unknown, so the check ends first: the deadline, the reap grace of a hung child
// (deadline_child.hpp) and the exit fit in the last second.
inline constexpr double kNpdDefaultTimeoutS = 4;
// The exit codes NPD maps to the condition's status (plugin.go): True and Unknown. 0 is False.
inline constexpr int kNpdProblem = 1, kNpdUnknown = 2;

// The line NPD keeps: control characters as spaces, PCI addresses of domain 0000 in lspci's
// short form, Slurm's "drain, " left out (the condition's taint is the drain), cut to
// kNpdMaxOutput bytes with "..." at a character boundary; " (+N more)" when `more` other
// faults of the kind were found.
std::string npd_line(std::string_view fault, size_t more);

// The verdict of a check that ran: writes the line to `out`, returns the exit code. A
// difference without a fact (the collection failed) is a check that could not be made.
int npd_verdict(const Options& opt, const std::vector<topo::HealthDifference>& differences,
                const std::vector<topo::FaultFinding>& findings, std::ostream& out);
// A check that could not be made at all (the known-good file unreadable, an error, a usage
// error): "not checked: <why>", exit 1 (2 with --npd-unchecked-unknown).
int npd_unchecked(const Options& opt, std::string_view why, std::ostream& out);

}  // namespace gdsb::topo_app
