// The fingerprint of a node: the facts that must stay as they were when the node was known to
// be good, and alike across the nodes of one hardware class. gdsb-topo --save-fingerprint and
// --health, and gdsb-cluster's fleet comparison, all read facts made here.
//
// A fingerprint is key -> value. Devices are named by PCI address, never by position, so a
// node that loses one GPU differs in that GPU only:
//   "GPU 0000:19:00.0"                  -> "present"  (one per GPU, NVMe drive, data NIC, port)
//   "GPU 0000:19:00.0 link"             -> "Gen5 x16" ("down" for a link that is not up)
//   "GPU 0000:19:00.0 device"           -> "10de:2330" (vendor:device)
//   "GPU 0000:19:00.0 NUMA node", "... BAR1", "... driver", "... VBIOS", "... NVLink links"
//   "port 0000:18:00.0 ACS"             -> "SV" (ACS control bits in words, "off")
//   "IOMMU", "kernel", "kernel command line", "nvidia-fs", "NVIDIA driver", "CUDA driver"
// Kinds: GPU, NVMe, NIC (data NICs only: a gigabit management port is no known-good fact),
// port (PCIe root and switch ports). A fact the input does not record is left out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

using Fingerprint = std::map<std::string, std::string>;

// What the GPU driver says about software and firmware (NVML): not in the snapshot.
struct GpuSoftware {
  std::string driver;                        // "580.95.05"; "" when NVML does not say
  std::string cuda_driver;                   // "13.0"; "" when NVML does not say
  std::map<std::string, std::string> vbios;  // GPU bdf -> VBIOS version
};
// Reads it through the NVML shim (lib "" = libnvidia-ml.so.1). Never throws: empty fields
// where NVML is absent or does not answer (never guessed).
GpuSoftware read_gpu_software(const std::string& nvml_lib);

// The value of a fact NVML did not give (no driver, an old NVML, --no-nvml, a fake GPU).
inline constexpr const char* kNotAvailable = "not available";

Fingerprint make_fingerprint(const Snapshot& s, const GpuSoftware& software);

// "Gen4 x16" from a link speed in GT/s and a width.
std::string link_words(double speed_gts, int width);
// "RR+CR+UF" from an ACS control register, "off" when no bit is set.
std::string acs_words(uint16_t ctl);

// The device a key is about ("GPU 0000:19:00.0"), "" for a node fact. A key equal to its
// subject is the device's presence.
std::string_view fact_subject(std::string_view key);
bool is_presence(std::string_view key);

struct DeviceCounts {
  int gpus = 0, drives = 0, data_nics = 0;
};
DeviceCounts count_devices(const Fingerprint& f);
// "8 GPUs, 8 drives, 8 data NICs"
std::string counts_words(const DeviceCounts& c);

// One way the node differs from its known-good facts.
struct HealthDifference {
  std::string key;       // the fact ("GPU 0000:19:00.0 link")
  std::string now;       // "absent" / "unknown" when the current input lacks it
  std::string expected;  // "absent" for a device the known-good facts do not hold
  std::string words;     // "GPU 0000:19:00.0 link Gen5 x8, expected Gen5 x16"
};

// Every fact of `expected` and every device present now, compared. A device absent (or new)
// gives one line; its other facts are not repeated. Facts the known-good file does not hold
// about a device it does hold are not judged (an older file, a source with fewer facts).
// Order: absent and new devices first, then the rest by key.
std::vector<HealthDifference> compare_with_expected(const Fingerprint& now,
                                                    const Fingerprint& expected);

}  // namespace gdsb::topo
