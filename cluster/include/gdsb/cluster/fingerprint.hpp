// The topology fingerprint of a node: what must be alike across nodes of one hardware class
// (PCIe tree shape, link widths and speeds, ACS state, IOMMU mode, BAR1, NVLink count,
// driver, CUDA driver version, GPU firmware (VBIOS), kernel command line), as key -> value
// pairs, so differences can be said in words.
// A key may hold "{}" where the value belongs ("ACS {} on 0000:17:02.0"); otherwise the
// value follows the key.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gdsb/topo/analysis.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::cluster {

using Fingerprint = std::map<std::string, std::string>;

// Extra facts not in the snapshot (NVLink links per GPU, driver versions, firmware).
struct FingerprintExtras {
  std::map<int, int> nvlinks;  // GPU position -> active links
  std::string driver;
  std::string cuda_driver;                   // "13.0"; "" when NVML does not say
  std::map<std::string, std::string> vbios;  // GPU bdf -> VBIOS version (NVML)
};

// The value of a fact NVML did not give (no driver, an old NVML, --no-nvml, a fake GPU).
inline constexpr const char* kNotAvailable = "not available";

Fingerprint make_fingerprint(const topo::Snapshot& s, const FingerprintExtras& extras);

// "Gen4 x16" from a link speed in GT/s and a width.
std::string link_words(double speed_gts, int width);
// "RR+CR+UF" from an ACS control register, "off" when no redirect/validation bit is set.
std::string acs_words(uint16_t ctl);

struct FingerprintDiff {
  std::string node;
  std::string key;
  std::string value;     // this node's, "absent" when it lacks the key
  std::string majority;  // the class majority's
  int others = 0;        // nodes holding the majority value
  std::string words;     // "node17: ACS RR+CR on 0000:17:02.0 (63 others: off)"
};

// For each key, the value most nodes hold; a node that differs from a strict majority is
// reported. Keys without a strict majority are not judged (no node can be called odd).
struct NamedFingerprint {
  std::string node;
  const Fingerprint* fingerprint = nullptr;
};
std::vector<FingerprintDiff> diff_against_majority(const std::vector<NamedFingerprint>& nodes);

}  // namespace gdsb::cluster
