// GPUs said together (issue 35, STYLE 18: on eight GPUs a fact common to all is said once).
// GPUs whose hops read alike once each GPU's own devices (its link, its drive) are left out
// form one group; the group says the shared hops and ceiling once, and each GPU keeps one
// line for what is its own: its address, devices, measured figures and read. The text
// renderer and the JSON document (HTML is its view) both read these groups. Private to the
// doctor library.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gdsb/doctor/diagnosis.hpp"
#include "gdsb/topo/said_together.hpp"

namespace gdsb::doctor::detail {

using topo::gpu_set;  // "GPU0-3, GPU5" (said_together.hpp)

// One hop line: hops of one kind and figure (two virtual disks behind one hypervisor) are
// one row naming each device, in the order data flows.
struct HopRow {
  topo::HopKind kind = topo::HopKind::BridgeLink;
  std::optional<double> gb_s;
  bool measured = false;
  std::string source;
  std::string what;                  // devices joined, a reason they share said once
  std::vector<std::string> devices;  // the hops' BDFs ("" for a measurement)
};
std::vector<HopRow> hop_rows(const GpuDiagnosis& g);
std::string hop_figure(const HopRow& h);  // "7.9 GB/s (pcie-link)", "54.6 GB/s measured"

// A group's row: its figure and text when every GPU's agree, else "" and per GPU below.
struct GroupRow {
  topo::HopKind kind = topo::HopKind::BridgeLink;
  std::string figure;  // common figure, "" when it differs per GPU
  std::string what;    // the text without each GPU's own devices
  bool own_devices = false;  // each GPU has its own device here (named on its line)
};

// A GPU's ceiling in words: "~55.2 GB/s (host link ...)", with a hop of unknown rate "at most
// ~55.2 GB/s (host link ...), the storage's rate unknown" (GpuDiagnosis::ceiling_unknown),
// "unknown" without a figure; `each` after the figure for a group ("~7.9 GB/s each (...)").
// `say_unknown` false leaves the unknown out where the group says it once.
std::string ceiling_text(const GpuDiagnosis& g, const std::string& binding, const std::string& each = "",
                         bool say_unknown = true);
// What leads a ceiling_text: "the platform allows " for an allowance, "its ceiling is " (or
// "their ceiling is ") for an upper bound only.
std::string ceiling_lead(bool open, bool many);

struct GpuLine {
  const GpuDiagnosis* gpu = nullptr;
  std::vector<std::string> own;  // "drive link 0000:18:00.0", "host link 54.6 GB/s measured"
  std::string ceiling;           // ceiling_text when not common, else ""
  bool ceiling_open = false;     // the ceiling is an upper bound only (a hop's rate unknown)
};

struct GpuGroup {
  std::vector<const GpuDiagnosis*> gpus;
  std::string label;    // gpu_set of their labels
  std::string ceiling;  // common ceiling_text "~7.9 GB/s each (...)", "unknown", or "" (per GPU)
  bool ceiling_open = false;
  // With a ceiling per GPU: what every GPU's leaves unknown alike ("the storage's rate"), said
  // once for the group and not on each line; "" otherwise.
  std::string unknown;
  std::vector<GroupRow> rows;
  std::vector<GpuLine> lines;
};

// Groups in the order of their first GPU; a GPU alike with no other is a group of one.
std::vector<GpuGroup> gpu_groups(const std::vector<GpuDiagnosis>& gpus);

}  // namespace gdsb::doctor::detail
