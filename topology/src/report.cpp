// The registry, the overall verdict and the per-GPU ceiling.
#include <algorithm>
#include <cstdio>

#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Pass:
      return "pass";
    case Verdict::Warn:
      return "warn";
    case Verdict::Fail:
      return "fail";
    case Verdict::Waived:
      return "waived";
  }
  return "fail";
}

std::vector<std::unique_ptr<Check>> all_checks() {
  std::vector<std::unique_ptr<Check>> checks;
  checks.push_back(make_acs_check());
  checks.push_back(make_iommu_check());
  checks.push_back(make_pair_check());
  checks.push_back(make_link_check());
  checks.push_back(make_bar1_check());
  checks.push_back(make_numa_check());
  checks.push_back(make_gds_stack_check());
  return checks;
}

namespace {

struct Bottleneck {
  double gb_s = 0;
  std::string what;
};

// Narrowest link from d up to (not including) stop, or to the top when stop is empty.
// A GPU's own link is counted at its capable speed: idle GPUs downclock (see link check).
std::optional<Bottleneck> narrowest(const Snapshot& s, const TopologyView& v, const Device& d,
                                    const std::string& stop) {
  std::optional<Bottleneck> best;
  std::vector<const Device*> chain{&d};
  for (const Device* a : v.ancestors(d)) chain.push_back(a);
  for (const Device* x : chain) {
    if (x->bdf == stop) break;
    if (!x->link || x->role == Role::RootPort || x->role == Role::SwitchDownstream) continue;
    double speed = x->link->cur_speed_gts;
    if (x->role == Role::Gpu) {
      speed = x->link->max_speed_gts;
      if (const Device* p = x->parent.empty() ? nullptr : s.find(x->parent); p && p->link)
        speed = std::min(speed, p->link->max_speed_gts);
    }
    double bw = link_gb_s(speed, x->link->cur_width);
    if (!best || bw < best->gb_s)
      best = Bottleneck{bw, std::string(x == &d ? "" : "uplink ") + x->bdf + " (" +
                                std::string(role_name(x->role)) + ") " +
                                link_text(speed, x->link->cur_width)};
  }
  return best;
}

}  // namespace

std::vector<Ceiling> compute_ceilings(const Snapshot& s, const TopologyView& v) {
  std::vector<Ceiling> out;
  for (const Device* g : v.gpus()) {
    Ceiling c;
    c.gpu = g->bdf;
    auto peers = v.best_for_gpu(g->bdf, Role::Nvme);
    if (peers.empty()) peers = v.best_for_gpu(g->bdf, Role::Nic);
    auto gpu_side = narrowest(s, v, *g, "");
    if (!gpu_side) {
      c.limited_by = "GPU link width/speed unknown in this input";
    } else if (peers.empty()) {
      c.limited_by = "no NVMe drive or NIC to read from";
    } else {
      double sum = 0;
      std::string names;
      bool known = true;
      for (const Pair* p : peers) {
        auto side = narrowest(s, v, *s.find(p->peer), p->common_bridge);
        if (!side) {
          known = false;
          break;
        }
        sum += side->gb_s;
        names += (names.empty() ? "" : ", ") + side->what;
      }
      char buf[64];
      if (!known) {
        c.limited_by = "link of the nearest drive/NIC unknown; GPU side " + gpu_side->what;
      } else if (sum < gpu_side->gb_s) {
        c.gb_s = sum;
        std::snprintf(buf, sizeof buf, "%zu nearest %s (%s): ", peers.size(),
                      peers.front()->peer_role == Role::Nvme ? "NVMe" : "NIC(s)",
                      std::string(path_label_name(peers.front()->label)).c_str());
        c.limited_by = buf + names;
      } else {
        c.gb_s = gpu_side->gb_s;
        c.limited_by = gpu_side->what;
      }
      if (c.gb_s && peers.front()->label >= PathLabel::Phb)
        c.limited_by += "; path crosses the host bridge (" +
                        std::string(path_label_name(peers.front()->label)) + "), expect less";
      if (c.gb_s && !peers.front()->acs_redirect_ports.empty())
        c.limited_by += "; ACS redirect routes it through the root complex";
    }
    out.push_back(std::move(c));
  }
  return out;
}

Report evaluate(const Snapshot& s, const TopologyView& view) {
  Report r;
  CheckContext ctx{s, view};
  for (const auto& check : all_checks())
    for (auto& res : check->run(ctx)) r.checks.push_back(std::move(res));
  for (const auto& c : r.checks) {
    if (c.verdict == Verdict::Fail) r.verdict = Verdict::Fail;
    if (c.verdict == Verdict::Warn && r.verdict == Verdict::Pass) r.verdict = Verdict::Warn;
  }
  r.ceilings = compute_ceilings(s, view);
  return r;
}

}  // namespace gdsb::topo
