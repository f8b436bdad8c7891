// Fingerprints across a fleet: each node's facts (gdsb/topo/fingerprint.hpp: devices by PCI
// address, links, ACS, IOMMU, BAR1, NUMA, driver and firmware versions) against the
// majority of its hardware class, said in words, and the node whose facts stand for the
// class (the reference fingerprint gdsb-cluster writes for gdsb-topo --health).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "gdsb/cluster/fingerprint_texts.hpp"
#include "gdsb/topo/fingerprint.hpp"

namespace gdsb::cluster {

// A node's facts as its node report carries them: key text -> value text (topo::fact_texts),
// interned (fingerprint_texts.hpp). The diff reads them back into typed facts
// (topo::facts_from_texts), once per distinct key and value, and judges those.
using Fingerprint = FingerprintTexts;

struct FingerprintDiff {
  std::string node;
  std::string key;
  std::string value;     // this node's, "absent" when it lacks the key
  std::string majority;  // the class majority's
  int others = 0;        // nodes holding the majority value
  std::string words;     // "node17: port 0000:17:02.0 ACS RR+CR (63 others: off)"
};

// For each key, the value most nodes hold; a node that differs from a strict majority is
// reported. Keys without a strict majority are not judged (no node can be called odd).
// A device a node lacks is one line ("node05: GPU 0000:19:00.0 absent; present on the 7
// other nodes of its class"); its other facts are not repeated.
struct NamedFingerprint {
  std::string node;
  const Fingerprint* fingerprint = nullptr;
};
// Throws UsageError naming the node for a fact it cannot read (a newer gdsbench's report).
std::vector<FingerprintDiff> diff_against_majority(const std::vector<NamedFingerprint>& nodes);

// The member whose facts stand for the class: the one with the fewest of `diffs` (what
// diff_against_majority(nodes) returned), the first such. nodes must not be empty.
std::size_t reference_member(const std::vector<NamedFingerprint>& nodes,
                             const std::vector<FingerprintDiff>& diffs);

}  // namespace gdsb::cluster
