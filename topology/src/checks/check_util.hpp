// Small helpers for building check results (internal).
#pragma once

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {

// BAR1 is the second memory BAR, not resource index 1: a 64-bit BAR takes two slots, so
// on data-center NVIDIA GPUs (64-bit BAR0) BAR1 sits at index 2 (lspci "Region 2").
inline int bar1_resource_index(const Device& g) {
  for (const auto& b : g.bars)
    if (b.index == 0) return b.is_64bit ? 2 : 1;
  return 1;  // BAR0 unknown: assume a 32-bit BAR0, the PCI default
}

inline const Bar* second_memory_bar(const Device& g) {
  const int want = bar1_resource_index(g);
  for (const auto& b : g.bars)
    if (b.index == want) return &b;
  return nullptr;
}

inline CheckResult make(const std::string& id, const std::string& title, Verdict v) {
  CheckResult r;
  r.id = id;
  r.title = title;
  r.verdict = v;
  return r;
}

inline CheckResult waived(const std::string& id, const std::string& title,
                          const std::string& reason) {
  CheckResult r = make(id, title, Verdict::Waived);
  r.reason = reason;
  return r;
}

inline void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

// Why no GDS peer exists: none at all, or only virtual devices (named, with the reason).
inline std::string no_peer_reason(const TopologyView& v) {
  if (v.virtual_devices().empty()) return "no NVMe drive or NIC found";
  std::string names;
  for (const Device* d : v.virtual_devices()) {
    names += (names.empty() ? "" : ", ") + d->bdf;
    for (const auto& b : d->block_devices) names += " " + b;
    for (const auto& n : d->net_devices) names += " " + n;
  }
  // Why a virtual device has no P2P path is said once, where gdsb-topo lists the virtual
  // devices (and in the JSON's virtual_devices); here the devices are named (issue 27).
  return "no PCIe NVMe drive or NIC: only virtual ones (" + names +
         "), and GDS P2P is not possible with them (see virtual devices)";
}

// Waived when no GPU has a P2P-capable path (PCIe NVMe or data NIC): the path model's
// applicability sentence says why.
inline std::optional<CheckResult> waive_without_pairs(const CheckContext& ctx,
                                                      const std::string& id,
                                                      const std::string& title) {
  if (ctx.view.gpus().empty()) return waived(id, title, "no NVIDIA GPU found");
  if (ctx.view.peers().empty()) return waived(id, title, no_peer_reason(ctx.view));
  if (!ctx.model.gds_applicable()) return waived(id, title, ctx.model.applicability());
  return std::nullopt;
}

// A pair GDS can use: a GPU with an NVMe drive or a data NIC (management NICs are listed,
// never judged).
inline bool judged_pair(const CheckContext& ctx, const Pair& p) {
  return p.peer_role == Role::Nvme || ctx.model.is_data_nic(p.peer);
}

inline std::string acs_evidence(const Device& d) {
  std::string off =
      d.acs->offset ? " (ECAP_ACS at config offset " + hex16(d.acs->offset) + ")" : "";
  return d.bdf + " ACSCap " + hex16(d.acs->cap) + ", ACSCtl " + hex16(d.acs->ctl) + ": " +
         acs_bits_text(d.acs->ctl) + off;
}

inline std::string pair_text(const CheckContext& ctx, const Pair& p) {
  return ctx.view.gpu_label(p.gpu) + " " + p.gpu + " <-> " + std::string(role_name(p.peer_role)) +
         " " + p.peer + ": " + std::string(path_label_name(p.label)) + ", P2PDMA " +
         std::string(p2pdma_map_name(p.p2pdma)) + " distance " + std::to_string(p.distance) + " (" +
         p.p2pdma_reason + ")";
}

// The host-software checks (gds-stack, rdma-stack) read /proc, /run/udev and cufile.json:
// an input without them (PCI dumps, lspci text, hwloc XML) is waived once, saying so.
inline std::optional<CheckResult> waive_without_host_facts(const CheckContext& ctx,
                                                           const std::string& id,
                                                           const std::string& title) {
  if (ctx.snapshot.machine.proc_known) return std::nullopt;
  return waived(id, title,
                "the " + std::string(source_kind_name(ctx.snapshot.kind)) +
                    " input has no host facts (/proc, /run/udev, cufile.json)");
}

// "6.18.44-fc-v657-gpu" -> {6, 18}; nullopt when the release does not start "N.N".
inline std::optional<std::pair<int, int>> kernel_major_minor(const std::string& release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::pair{major, minor};
}

// Without a P2P-capable path the GDS stack's state changes nothing: its failures and
// warnings become facts (waived), the applicability's why said once, in Platform
// verification (issue 27).
inline void facts_only_without_gds(const CheckContext& ctx, std::vector<CheckResult>& out) {
  if (ctx.model.gds_applicable()) return;
  for (auto& r : out)
    if (r.verdict == Verdict::Fail || r.verdict == Verdict::Warn) {
      r.verdict = Verdict::Waived;
      r.reason = "fact only: GDS does not apply on this node (Platform verification says why)";
      r.remedy.clear();
    }
}

inline bool is_x86(const Machine& m) { return m.arch == "x86_64" || m.arch == "i686"; }
// NVIDIA Grace: Arm implementer 0x41 with Neoverse V2 core part 0xd4f.
inline bool is_grace(const Machine& m) { return m.arch == "aarch64" && m.cpu_part == "0xd4f"; }

}  // namespace gdsb::topo
