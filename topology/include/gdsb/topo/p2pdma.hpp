// Whether cuFile's P2PDMA mode (GDS to NVMe without nvidia-fs, through the kernel's PCI
// P2PDMA; CUDA 12.8+) can engage on a node: each prerequisite NVIDIA's documents name is one
// fact with its evidence and, where it is missing, its fix. Sources: "GDS Support for NVMe
// Drives Using Linux PCI P2PDMA" and the GDS troubleshooting guide's chapter "NVMe P2PDMA
// Troubleshooting" (docs/gdsb-topo.md, "P2PDMA readiness").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

// The NVIDIA GPU kernel module as its /proc/driver/nvidia/version line names it:
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
// (open) or "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  ..." (proprietary).
struct NvidiaKernelModule {
  enum Flavour { Unknown, Open, Proprietary } flavour = Unknown;
  std::string version;  // "580.159.04", "" when the line has none
  int major = -1;       // 580; -1 unknown
};
NvidiaKernelModule nvidia_kernel_module(std::string_view version_line);

enum class FactState { Met, Missing, Unknown, NotNeeded };
std::string_view fact_state_name(FactState s);  // "met", "missing", "unknown", "not needed"

struct P2pdmaFact {
  std::string name;      // "kernel PCI P2PDMA", "GPU kernel module", ...
  FactState state = FactState::Unknown;
  std::string evidence;  // what was read, where
  std::string fix;       // Missing: the exact change; else ""
  std::string why_not;   // Missing: what is wrong, short ("RMForceStaticBar1 is not set"); else ""
};

struct P2pdmaReadiness {
  std::vector<P2pdmaFact> facts;  // in kP2pdmaFactNames order
  bool ready() const;             // every fact met or not needed
  std::vector<const P2pdmaFact*> with(FactState s) const;
  // "P2PDMA ready", "P2PDMA not ready: kernel PCI P2PDMA, driver registry" or
  // "P2PDMA readiness unknown: <facts> not read".
  std::string verdict() const;
  const P2pdmaFact* fact(std::string_view name) const;
  // The missing facts' why_not, "; " between ("" when none is missing).
  std::string why_not() const;
};

// The facts' names, in the order they are judged (the order data flows: kernel, driver,
// registry, NVMe driver, GPU, platform, storage, cuFile's configuration).
inline constexpr std::string_view kP2pdmaFactNames[] = {
    "kernel PCI P2PDMA", "GPU kernel module",  "driver registry", "NVMe native multipath",
    "GPU model",         "platform",           "storage layout",  "cufile.json use_pci_p2pdma"};

P2pdmaReadiness p2pdma_readiness(const Snapshot& s);

// Reads the facts under a root ("/" live; a recorded tree laid out like /): /proc/kallsyms,
// /proc/config.gz (else /boot/config-<kernel_release>), /proc/driver/nvidia/params,
// /sys/module/nvme_core.
P2pdmaHostFacts read_p2pdma_facts(const std::filesystem::path& root, bool live,
                                  const std::string& kernel_release);

}  // namespace gdsb::topo
