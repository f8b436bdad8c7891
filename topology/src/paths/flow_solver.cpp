// Each flow starts at its narrowest hop; every hop carrying more than it can is scaled down
// proportionally, until no hop is over capacity (a few rounds suffice).
#include "flow_solver.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace gdsb::topo {
namespace {

// A capacity the solve may divide by: known and positive.
bool bounds(const PathHop& h) { return h.gb_s && *h.gb_s > 0; }

}  // namespace

FlowResult solve_flows(const std::vector<const DataPath*>& flows, std::vector<PathHop>& inputs) {
  FlowResult r;
  std::vector<double> rate(flows.size(), 0);
  std::map<std::string, double> capacity;  // by hop key
  std::map<std::string, std::string> what;
  std::set<std::string> seen;
  for (size_t i = 0; i < flows.size(); ++i) {
    const DataPath& f = *flows[i];
    for (const auto& h : f.hops)
      if (seen.insert(h.key).second) inputs.push_back(h);
    r.unknown = r.unknown || f.unknown_capacity;
    r.socket = r.socket || f.crosses_socket;
    r.host_bridge = r.host_bridge || f.crosses_host_bridge;
    r.acs = r.acs || f.acs_redirect;
    if (f.unknown_capacity) continue;
    bool any = false;
    for (const auto& h : f.hops) {
      if (!bounds(h)) continue;
      rate[i] = any ? std::min(rate[i], *h.gb_s) : *h.gb_s;
      any = true;
      // Hops of one key are one link: the narrowest statement of it holds.
      const auto [it, added] = capacity.emplace(h.key, *h.gb_s);
      if (added || *h.gb_s < it->second) {
        it->second = *h.gb_s;
        // Named with its kind, so a GPU link is never read as one of the sources counted.
        what[h.key] = std::string(hop_kind_name(h.kind)) + " " + h.what;
      }
    }
    r.unknown = r.unknown || !any;
  }
  if (r.unknown) return r;
  std::map<std::string, double> load;
  const auto compute_load = [&] {
    load.clear();
    for (size_t i = 0; i < flows.size(); ++i)
      for (const auto& h : flows[i]->hops)
        if (bounds(h)) load[h.key] += rate[i];
  };
  compute_load();
  for (int round = 0; round < 256; ++round) {
    // Scale the flows of the most oversubscribed hop, then look again.
    std::string worst;
    double ratio = 1.0001;
    for (const auto& [key, l] : load)
      if (l / capacity.at(key) > ratio) {
        ratio = l / capacity.at(key);
        worst = key;
      }
    if (worst.empty()) break;
    for (size_t i = 0; i < flows.size(); ++i)
      for (const auto& h : flows[i]->hops)
        if (h.key == worst) {
          rate[i] /= ratio;  // ratio > 1
          break;
        }
    compute_load();
  }
  for (double x : rate) r.gb_s += x;
  for (const auto& [key, l] : load)
    if (l >= capacity.at(key) * 0.999) r.binding.push_back(what.at(key));
  return r;
}

}  // namespace gdsb::topo
