#include "gdsb/topo/nvlink.hpp"

#include <algorithm>
#include <array>

namespace gdsb::topo {
namespace {

const std::vector<NvLink>* links_of(const Snapshot& s, const std::string& gpu) {
  const auto it = s.gpu_facts.find(gpu);
  if (it == s.gpu_facts.end() || !it->second.nvlinks) return nullptr;
  return &*it->second.nvlinks;
}

bool pair_nvlink_ok(const Snapshot& s, const std::string& a, const std::string& b) {
  for (const GpuPairFacts& p : s.gpu_pairs) {
    if (p.a != a || p.b != b) continue;
    const auto it = p.p2p.find("nvlink");
    return it != p.p2p.end() && it->second == "OK";
  }
  return false;
}

struct Tally {
  int to_switch = 0;
  uint64_t switch_mbps = 0;
  bool switch_mbps_known = true;
};

}  // namespace

std::string remote_kind(const Snapshot& s, const NvLink& link) {
  if (const Device* d = link.remote.empty() ? nullptr : s.find(link.remote)) {
    if (d->role == Role::NvSwitch) return "nvswitch";
    if (d->role == Role::Gpu) return "gpu";
  }
  if (s.gpu_facts.count(link.remote) != 0) return "gpu";
  return link.remote_type.empty() ? "unknown" : link.remote_type;
}

bool has_nvlink_facts(const Snapshot& s, const std::string& gpu) {
  return links_of(s, gpu) != nullptr;
}

std::optional<int> nvlinks_active(const Snapshot& s, const std::string& gpu) {
  const auto* links = links_of(s, gpu);
  if (!links) return std::nullopt;
  int n = 0;
  for (const NvLink& l : *links)
    if (l.active) n += l.count;
  return n;
}

std::optional<NvLinkPair> nvlink_pair(const Snapshot& s, const std::string& a,
                                      const std::string& b) {
  const auto* la = links_of(s, a);
  const auto* lb = links_of(s, b);
  if (!la || !lb) return std::nullopt;
  NvLinkPair out;
  std::optional<uint64_t> direct_mbps = 0;
  for (const NvLink& l : *la) {
    if (!l.active || l.remote != b) continue;
    out.links += l.count;
    direct_mbps = l.bandwidth_mbps && direct_mbps ? std::optional(*direct_mbps + *l.bandwidth_mbps)
                                                  : std::nullopt;
  }
  if (out.links > 0) {
    out.bandwidth_mbps = direct_mbps;
    return out;
  }
  const bool fabric_confirmed = pair_nvlink_ok(s, a, b);
  auto tally = [&](const std::vector<NvLink>& links) {
    Tally t;
    for (const NvLink& l : links) {
      if (!l.active) continue;
      const std::string kind = remote_kind(s, l);
      if (kind == "nvswitch" || (kind == "unknown" && fabric_confirmed)) {
        t.to_switch += l.count;
        if (l.bandwidth_mbps)
          t.switch_mbps += *l.bandwidth_mbps;
        else
          t.switch_mbps_known = false;
      }
    }
    return t;
  };
  const Tally ta = tally(*la);
  const Tally tb = tally(*lb);
  if (ta.to_switch == 0 || tb.to_switch == 0) return out;
  out.through_nvswitch = true;
  out.links = std::min(ta.to_switch, tb.to_switch);
  if (ta.switch_mbps_known && tb.switch_mbps_known && ta.switch_mbps > 0 && tb.switch_mbps > 0)
    out.bandwidth_mbps = std::min(ta.switch_mbps, tb.switch_mbps);
  return out;
}

std::optional<uint64_t> hwloc_link_rate_mbps(uint64_t total_mbps) {
  static constexpr std::array<uint64_t, 3> kRates{25000, 50000, 20000};
  constexpr uint64_t kMaxLinks = 18;
  if (total_mbps == 0) return std::nullopt;
  for (uint64_t rate : kRates)
    if (total_mbps % rate == 0 && total_mbps / rate <= kMaxLinks) return rate;
  return std::nullopt;
}

}  // namespace gdsb::topo
