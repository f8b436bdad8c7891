// The summary's schema, listed once: its plain fields (text and counts, at the top level or
// in "hardware"), the fields of a failing check, and the keys of its containers. The writer
// (summary.cpp), the SAX reader of a summary block (summary_reader.cpp) and the reader of a
// node document without one (summarize()) all walk these tables, so a field added here is
// written and read by all three. Private to gdsb::cluster.
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "gdsb/cluster/summary.hpp"

namespace gdsb::cluster::summary_fields {

enum class Group { Top, Hardware };  // a summary's top level, or its "hardware" object

inline constexpr const char* kHardware = "hardware";

// One plain field: a text or a count member. `identity`: the node document (a report
// without a summary block) carries the field at the same place, so summarize() reads it
// from there; the others it derives (topology verdict from the topology report).
struct Field {
  const char* key;
  Group group;
  std::string NodeSummary::*text;  // one of text and count
  int NodeSummary::*count;
  bool identity;
  bool omit_empty = false;  // a text written only when set (added after reports were written)
};

inline constexpr Field kFields[] = {
    {"node", Group::Top, &NodeSummary::node, nullptr, true},
    {"host", Group::Top, &NodeSummary::host, nullptr, true},
    {"rank", Group::Top, nullptr, &NodeSummary::rank, true},
    {"node_id", Group::Top, &NodeSummary::node_id, nullptr, true, true},
    {"driver", Group::Top, &NodeSummary::driver, nullptr, true},
    {"kernel", Group::Top, &NodeSummary::kernel, nullptr, true},
    {"topology_verdict", Group::Top, &NodeSummary::topo_verdict, nullptr, false},
    {"applicability", Group::Top, &NodeSummary::applicability, nullptr, false},
    {"gpu_model", Group::Hardware, &NodeSummary::gpu_model, nullptr, true},
    {"gpus", Group::Hardware, nullptr, &NodeSummary::gpus, true},
    {"drive_model", Group::Hardware, &NodeSummary::drive_model, nullptr, true},
    {"drives", Group::Hardware, nullptr, &NodeSummary::drives, true},
    {"nic_model", Group::Hardware, &NodeSummary::nic_model, nullptr, true},
    {"nics", Group::Hardware, nullptr, &NodeSummary::nics, true},
    {"management_nic_model", Group::Hardware, &NodeSummary::management_nic_model, nullptr, true},
    {"management_nics", Group::Hardware, nullptr, &NodeSummary::management_nics, true},
};

// The one field every summary must have.
inline constexpr const char* kRequired = "node";

inline const Field* find_field(Group group, std::string_view key) {
  for (const Field& f : kFields)
    if (f.group == group && key == f.key) return &f;
  return nullptr;
}

// The fields of one failing check, all text.
struct CheckField {
  const char* key;
  std::string FailingCheck::*text;
};

inline constexpr CheckField kCheckFields[] = {
    {"id", &FailingCheck::id},       {"verdict", &FailingCheck::verdict},
    {"summary", &FailingCheck::summary}, {"title", &FailingCheck::title},
    {"cause", &FailingCheck::cause},
};

inline const CheckField* find_check_field(std::string_view key) {
  for (const CheckField& f : kCheckFields)
    if (key == f.key) return &f;
  return nullptr;
}

// The fields of one hardware fault: a text or a count.
struct FaultField {
  const char* key;
  std::string NodeFault::*text;
  int NodeFault::*count;
};

inline constexpr FaultField kFaultFields[] = {
    {"kind", &NodeFault::kind, nullptr},     {"severity", &NodeFault::severity, nullptr},
    {"bdf", &NodeFault::bdf, nullptr},       {"device", &NodeFault::device, nullptr},
    {"xid", nullptr, &NodeFault::xid},       {"count", nullptr, &NodeFault::count},
    {"words", &NodeFault::words, nullptr},   {"when", &NodeFault::when, nullptr},
};

inline const FaultField* find_fault_field(std::string_view key) {
  for (const FaultField& f : kFaultFields)
    if (key == f.key) return &f;
  return nullptr;
}

// The keys of the status and of the containers.
inline constexpr const char* kStatus = "status";
inline constexpr const char* kErrors = "errors";
inline constexpr const char* kFailingChecks = "failing_checks";
inline constexpr const char* kGpuMetrics = "gpu_metrics";
inline constexpr const char* kNodeMetrics = "node_metrics";
inline constexpr const char* kWaived = "waived";
inline constexpr const char* kFingerprint = "fingerprint";
inline constexpr const char* kStorage = "storage";
inline constexpr const char* kFaults = "faults";  // NodeFault, written only when there are some  // shared_storage.hpp's RankStorage

inline NodeStatus status_from_name(std::string_view name) {
  return name == "ok" ? NodeStatus::Ok : name == "missing" ? NodeStatus::Missing : NodeStatus::Error;
}

// A count (rank, GPUs...) from a JSON number: a whole number an int holds, else nullopt. A
// corrupt report's 1e300 cast to int would be undefined behaviour.
inline constexpr const char* kCountWanted = "a whole number from -2147483648 to 2147483647";
inline std::optional<int> to_count(double v) {
  if (!(v >= -2147483648.0 && v <= 2147483647.0) || std::trunc(v) != v) return std::nullopt;
  return static_cast<int>(v);
}
inline std::string number_words(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

}  // namespace gdsb::cluster::summary_fields
