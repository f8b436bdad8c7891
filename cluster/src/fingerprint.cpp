#include "gdsb/cluster/fingerprint.hpp"

#include <cmath>
#include <set>
#include <unordered_map>

namespace gdsb::cluster {
namespace {

int gen_of(double gts) {
  const double rates[] = {2.5, 5, 8, 16, 32, 64};
  for (int i = 0; i < 6; ++i)
    if (std::abs(gts - rates[i]) < 0.3) return i + 1;
  return 0;
}

std::string iommu_words(const topo::Machine& m) {
  if (!m.iommu_known) return "unknown";
  if (m.iommu_units.empty()) return "off";
  std::set<std::string> types;
  for (const auto& [group, type] : m.iommu_group_types) types.insert(type);
  std::string out;
  for (const auto& t : types) out += (out.empty() ? "" : "+") + t;
  return out.empty() ? "on" : out;
}

std::string fill(const std::string& key, const std::string& value) {
  const auto at = key.find("{}");
  if (at == std::string::npos) return key + " " + value;
  return key.substr(0, at) + value + key.substr(at + 2);
}

}  // namespace

std::string link_words(double speed_gts, int width) {
  const int gen = gen_of(speed_gts);
  std::string s = gen > 0 ? "Gen" + std::to_string(gen) : std::to_string(speed_gts) + "GT/s";
  return s + " x" + std::to_string(width);
}

std::string acs_words(uint16_t ctl) {
  static const std::pair<uint16_t, const char*> bits[] = {{0x01, "SV"}, {0x02, "TB"}, {0x04, "RR"},
                                                          {0x08, "CR"}, {0x10, "UF"}, {0x20, "EC"},
                                                          {0x40, "DT"}};
  std::string out;
  for (const auto& [bit, name] : bits)
    if ((ctl & bit) != 0) out += (out.empty() ? "" : "+") + std::string(name);
  return out.empty() ? "off" : out;
}

Fingerprint make_fingerprint(const topo::Snapshot& s, const FingerprintExtras& extras) {
  Fingerprint f;
  std::map<std::string, std::string> gpu_label;  // bdf -> "GPU3"
  int position = 0;
  for (const topo::Device* g : s.with_role(topo::Role::Gpu))
    gpu_label[g->bdf] = "GPU" + std::to_string(position++);
  for (const topo::Device& d : s.devices) {
    const auto role = std::string(topo::role_name(d.role));
    if (d.role == topo::Role::Other || d.role == topo::Role::HostBridge) continue;
    const auto g = gpu_label.find(d.bdf);
    const std::string who = g != gpu_label.end() ? g->second + " (" + d.bdf + ")" : d.bdf;
    f["device " + d.bdf] = role + (d.parent.empty() ? " on a root bus" : " under " + d.parent);
    if (d.link && d.link->cur_width > 0)
      f[who + " link"] = link_words(d.link->cur_speed_gts, d.link->cur_width);
    if (d.acs) f["ACS {} on " + d.bdf] = acs_words(d.acs->ctl);
    if (g != gpu_label.end()) {
      const auto facts = s.gpu_facts.find(d.bdf);
      std::optional<uint64_t> bar1;
      if (facts != s.gpu_facts.end() && facts->second.bar1_total_bytes)
        bar1 = facts->second.bar1_total_bytes;
      else if (d.bars_known)
        for (const auto& b : d.bars)
          if (b.index == 1) bar1 = b.size;
      if (bar1) f[g->second + " BAR1"] = std::to_string(*bar1 >> 20) + " MiB";
      const auto vbios = extras.vbios.find(d.bdf);
      f[g->second + " VBIOS"] = vbios != extras.vbios.end() ? vbios->second : kNotAvailable;
    }
  }
  for (const auto& [gpu, links] : extras.nvlinks)
    f["GPU" + std::to_string(gpu) + " NVLink links"] = std::to_string(links);
  if (s.machine.proc_known) {
    f["kernel"] = s.machine.kernel_release;
    f["kernel command line"] = s.machine.cmdline;
  }
  f["IOMMU"] = iommu_words(s.machine);
  if (!extras.driver.empty()) f["NVIDIA driver"] = extras.driver;
  f["CUDA driver"] = extras.cuda_driver.empty() ? kNotAvailable : extras.cuda_driver;
  return f;
}

std::vector<FingerprintDiff> diff_against_majority(const std::vector<NamedFingerprint>& nodes) {
  std::vector<FingerprintDiff> out;
  if (nodes.size() < 2) return out;
  // key -> value -> count; "absent" for nodes lacking the key.
  std::map<std::string, std::unordered_map<std::string, int>> counts;
  for (const auto& n : nodes)
    for (const auto& [k, v] : *n.fingerprint) ++counts[k][v];
  const int total = static_cast<int>(nodes.size());
  std::map<std::string, std::pair<std::string, int>> majority;
  for (auto& [k, values] : counts) {
    int present = 0;
    for (const auto& [v, c] : values) present += c;
    if (present < total) values["absent"] += total - present;
    std::pair<std::string, int> best{"", 0};
    for (const auto& [v, c] : values)
      if (c > best.second || (c == best.second && v < best.first)) best = {v, c};
    if (best.second * 2 > total) majority[k] = best;
  }
  for (const auto& n : nodes) {
    for (const auto& [k, m] : majority) {
      const auto it = n.fingerprint->find(k);
      const std::string value = it == n.fingerprint->end() ? "absent" : it->second;
      if (value == m.first) continue;
      FingerprintDiff d{n.node, k, value, m.first, m.second, ""};
      d.words = n.node + ": " + fill(k, value) + " (" + std::to_string(m.second) +
                (m.second == 1 ? " other: " : " others: ") + m.first + ")";
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace gdsb::cluster
