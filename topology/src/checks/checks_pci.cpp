// PCIe-path checks: ACS redirect, pair locality (PIX..SYS, P2PDMA), link training.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "check_util.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {
namespace {

class AcsCheck final : public Check {
 public:
  std::string id() const override { return "acs-redirect"; }
  std::string title() const override { return "ACS redirect on GPU-peer paths"; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    if (auto w = waive_without_pairs(ctx, id(), title())) return {*w};
    const Snapshot& s = ctx.snapshot;
    std::map<std::string, std::vector<const Pair*>> redirect, other_bits;
    std::set<std::string> unknown;
    size_t sharing = 0;
    for (const auto& p : ctx.view.pairs()) {
      if (p.common_bridge.empty() || !judged_pair(ctx, p)) continue;
      ++sharing;
      for (const auto& b : p.acs_redirect_ports) redirect[b].push_back(&p);
      for (const auto& b : p.acs_unknown_ports) unknown.insert(b);
      for (const auto& b : p.path) {
        const Device* d = s.find(b);
        if (d && d->acs && !acs_redirects(*d) &&
            (d->acs->ctl & (kAcsSv | kAcsUf | kAcsDt | kAcsTb)))
          other_bits[b].push_back(&p);
      }
    }
    std::vector<CheckResult> out;
    std::string boot_list;
    for (const auto& [bdf, pairs] : redirect) boot_list += (boot_list.empty() ? "" : ";") + bdf;
    for (const auto& [bdf, pairs] : redirect) {
      const Device* d = s.find(bdf);
      CheckResult r = make(
          id(), "ACS redirect enabled on " + bdf + " (" + std::string(role_name(d->role)) + ")",
          Verdict::Fail);
      r.devices.push_back(bdf);
      r.evidence.push_back(acs_evidence(*d));
      for (const Pair* p : pairs) {
        add_unique(r.devices, p->gpu);
        add_unique(r.devices, p->peer);
        r.evidence.push_back("on the path " + ctx.view.gpu_label(p->gpu) + " " + p->gpu + " <-> " +
                             std::string(role_name(p->peer_role)) + " " + p->peer +
                             " (kernel P2PDMA: " + std::string(p2pdma_map_name(p->p2pdma)) + ")");
      }
      r.consequence =
          "peer-to-peer requests and completions through this port are redirected up to the root "
          "complex: GDS traffic between these devices crosses the host bridge (and the IOMMU) "
          "instead of turning inside the switch, typically halving throughput";
      r.remedy = "setpci -s " + bdf +
                 " ECAP_ACS+6.w=0:2c   (clears ReqRedir/CmpltRedir/EgressCtrl until reboot); "
                 "permanently: kernel parameter pci=disable_acs_redir=" +
                 boot_list + " or disable ACS for the switch in the BIOS";
      out.push_back(std::move(r));
    }
    for (const auto& [bdf, pairs] : other_bits) {
      const Device* d = s.find(bdf);
      CheckResult r =
          make(id(), "ACS controls enabled on " + bdf + " without redirect", Verdict::Warn);
      r.devices.push_back(bdf);
      r.evidence.push_back(acs_evidence(*d));
      r.evidence.push_back("on the path of " + std::to_string(pairs.size()) + " GPU-peer pair(s)");
      r.consequence =
          "P2P is not redirected (kernel P2PDMA still maps BUS_ADDR), but SrcValid/UpstreamFwd/"
          "DirectTrans split IOMMU groups and some firmware pairs them with redirect after updates";
      r.remedy = "none needed for GDS; to clear them: setpci -s " + bdf + " ECAP_ACS+6.w=0:7f";
      out.push_back(std::move(r));
    }
    if (!unknown.empty()) {
      CheckResult r =
          make(id(), "ACS state unknown on " + std::to_string(unknown.size()) + " port(s)",
               Verdict::Waived);
      for (const auto& b : unknown) {
        r.devices.push_back(b);
        r.evidence.push_back(b + ": " + s.find(b)->acs_note);
      }
      r.reason =
          "extended config space (ACS) is unreadable for ports on GPU-peer paths; not guessed";
      r.remedy = "run gdsb-topo as root (or record with `sudo lspci -xxxx`)";
      out.push_back(std::move(r));
    }
    if (out.empty()) {
      CheckResult r = make(id(), title(), Verdict::Pass);
      r.evidence.push_back(
          std::to_string(sharing) + " of " + std::to_string(ctx.view.pairs().size()) +
          " GPU-peer pairs share a PCIe bridge; no port on their paths has RR, CR or EC set");
      if (sharing == 0)
        r.evidence.push_back("no pair shares a bridge: ACS does not apply (see pair-locality)");
      out.push_back(std::move(r));
    }
    return out;
  }
};

class PairCheck final : public Check {
 public:
  std::string id() const override { return "pair-locality"; }
  std::string title() const override { return "Shared switch / root complex per GPU"; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    if (auto w = waive_without_pairs(ctx, id(), title())) return {*w};
    std::vector<CheckResult> out;
    const Machine& m = ctx.snapshot.machine;
    bool p2pdma_only =
        m.proc_known && !m.nvidia_fs_loaded && m.cufile.use_pci_p2pdma.value_or(false);
    for (const Device* g : ctx.view.gpus())
      for (Role role : {Role::Nvme, Role::Nic}) {
        // The path model's nearest sources: data NICs only (management NICs: see below).
        std::vector<const Pair*> best;
        for (const DataPath* d : ctx.model.nearest(
                 g->bdf, role == Role::Nvme ? DataSource::LocalNvme : DataSource::DataNic))
          best.push_back(d->pair);
        if (best.empty()) continue;
        const Pair& p = *best.front();
        std::string what = role == Role::Nvme ? "NVMe" : "data NIC";
        CheckResult r =
            make(id(), ctx.view.gpu_label(g->bdf) + " and its nearest " + what, Verdict::Pass);
        r.devices.push_back(g->bdf);
        for (const Pair* b : best) {
          r.devices.push_back(b->peer);
          r.evidence.push_back(pair_text(ctx, *b));
        }
        bool shares = p.label == PathLabel::Pix || p.label == PathLabel::Pxb;
        if (shares && p.p2pdma != P2pdmaMap::BusAddr) {
          r.verdict = Verdict::Warn;
          r.consequence =
              "the devices share a switch but ACS redirect sends their traffic to the root complex";
          r.remedy = "clear ACS redirect (see acs-redirect)";
        } else if (p.label == PathLabel::Sys) {
          r.verdict = Verdict::Fail;
          r.consequence = "the nearest " + what +
                          " is on another CPU socket: every transfer crosses the SMP "
                          "interconnect, far below the PCIe link rate";
          r.remedy = "use a GPU and " + what +
                     " on the same socket (numactl/CUDA_VISIBLE_DEVICES), or move the card";
        } else if (!shares) {
          r.verdict = Verdict::Warn;
          r.consequence = "no " + what +
                          " shares a PCIe switch with this GPU: P2P crosses the host bridge "
                          "(NVIDIA's guide: 6.5 -> 3.9 GiB/s, 4K random 850k -> 28k IOPS)";
          r.remedy = role == Role::Nvme ? "put the data for this GPU on a drive below the same "
                                          "switch (or use the better partner GPU listed)"
                                        : "use a NIC below the same switch as this GPU for "
                                          "GPUDirect RDMA (or the better partner GPU listed)";
        }
        if (p2pdma_only && p.p2pdma == P2pdmaMap::NotSupported) {
          r.verdict = Verdict::Fail;
          r.consequence =
              "cufile.json sets use_pci_p2pdma without nvidia-fs, and the kernel refuses P2PDMA "
              "for this pair: cuFile falls back to compat mode";
          r.remedy = "place GPU and drive under one switch, or install nvidia-fs";
        }
        for (const Pair* b : best)
          if (const Pair* bp = ctx.view.best_for_peer(b->peer);
              bp && bp->gpu != g->bdf && bp->label < b->label)
            r.evidence.push_back("better partner for " + b->peer + " than " +
                                 ctx.view.gpu_label(g->bdf) + " (" +
                                 std::string(path_label_name(b->label)) + "): " +
                                 ctx.view.gpu_label(bp->gpu) + " " + bp->gpu + " (" +
                                 std::string(path_label_name(bp->label)) + ")");
        out.push_back(std::move(r));
      }
    if (!ctx.model.management_nics().empty()) {
      CheckResult r = waived(id(), "management NICs (not judged for GPU locality)",
                             "management NICs carry no GPUDirect data: listed, not judged");
      // NICs with one why (the ports of one card) share one line: the why is said once.
      std::vector<std::pair<std::string, std::string>> by_why;  // why -> the NICs, in order
      for (const Device* n : ctx.model.management_nics()) {
        r.devices.push_back(n->bdf);
        std::string names = n->bdf;
        for (const auto& x : n->net_devices) names += " " + x;
        const std::string why = classify_nic(*n).why;
        auto it = std::find_if(by_why.begin(), by_why.end(),
                               [&why](const auto& w) { return w.first == why; });
        if (it == by_why.end())
          by_why.emplace_back(why, names);
        else
          it->second += ", " + names;
      }
      for (const auto& [why, names] : by_why) r.evidence.push_back(names + ": " + why);
      out.push_back(std::move(r));
    }
    return out;
  }
};

// A GPU trained below the expected speed: idle GPUs lower their link speed to save power.
// NVML's maximum generation (the GPU and slot together) tells downclocking (warn) from a
// link that cannot reach the speed at all (fail); without NVML it stays a warning.
void gpu_speed_note(const Snapshot& s, const Device& d, double exp_speed, CheckResult& r) {
  auto f = s.gpu_facts.find(d.bdf);
  const GpuFacts* facts = f == s.gpu_facts.end() ? nullptr : &f->second;
  r.remedy = "re-check under load: cat /sys/bus/pci/devices/" + d.bdf +
             "/current_link_speed (or nvidia-smi -q -d PCI) while a transfer runs";
  if (!facts || !facts->pcie_max_gen) {
    r.verdict = Verdict::Warn;
    r.consequence +=
        "; idle NVIDIA GPUs lower their link speed to save power, so this may be idle "
        "downclocking (NVML not available to confirm)";
    return;
  }
  const auto gen_text = [](const std::optional<int>& gen, const std::optional<int>& width) {
    return "Gen" + (gen ? std::to_string(*gen) : std::string("?")) +
           (width ? " x" + std::to_string(*width) : std::string());
  };
  r.evidence.push_back(d.bdf + " " + facts->source + ": PCIe " +
                       gen_text(facts->pcie_cur_gen, facts->pcie_cur_width) + " now, " +
                       gen_text(facts->pcie_max_gen, facts->pcie_max_width) + " max");
  if (speed_code_to_gts(*facts->pcie_max_gen) + 0.01 >= exp_speed) {
    r.verdict = Verdict::Warn;
    r.consequence += "; " + facts->source + " reports Gen" + std::to_string(*facts->pcie_max_gen) +
                     " as this GPU's maximum, so the lower speed is idle power saving and the "
                     "link retrains under load";
  } else {
    r.verdict = Verdict::Fail;
    r.consequence += "; " + facts->source + " reports Gen" + std::to_string(*facts->pcie_max_gen) +
                     " as the most this GPU can train to here, below both ends' capability";
    r.remedy =
        "check the BIOS PCIe speed setting for the slot and the riser/cable, then " + r.remedy;
  }
}

class LinkCheck final : public Check {
 public:
  std::string id() const override { return "link"; }
  std::string title() const override { return "PCIe link width and speed"; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    const Snapshot& s = ctx.snapshot;
    if (s.kind == SourceKind::HwlocXml) {
      // No speed or width, so no trained-below-capability verdict; the bandwidth hwloc
      // recorded (pci_link_speed, from the link status) is shown for what it is.
      CheckResult r = waived(id(), title(),
                             "hwloc XML records no link width or speed, only each link's "
                             "current bandwidth (pci_link_speed)");
      std::vector<const Device*> subjects = ctx.view.gpus();
      subjects.insert(subjects.end(), ctx.view.peers().begin(), ctx.view.peers().end());
      for (const Device* d : subjects) {
        if (!d->recorded_link_gb_s) continue;
        char b[96];
        std::snprintf(b, sizeof b, "%.2f GB/s per direction (hwloc pci_link_speed)",
                      *d->recorded_link_gb_s);
        r.evidence.push_back(d->bdf + " (" + std::string(role_name(d->role)) + "): " + b);
      }
      return {r};
    }
    std::set<std::string> subjects;
    for (const Device* d : ctx.view.gpus()) subjects.insert(d->bdf);
    for (const Device* d : ctx.view.peers())
      if (d->role == Role::Nvme || ctx.model.is_data_nic(d->bdf)) subjects.insert(d->bdf);
    for (const auto& bdf : std::set<std::string>(subjects))
      for (const Device* a : ctx.view.ancestors(*s.find(bdf))) subjects.insert(a->bdf);
    if (subjects.empty()) return {waived(id(), title(), "no GPU, NVMe drive or NIC found")};
    std::vector<CheckResult> out;
    size_t checked = 0;
    std::vector<std::string> no_link;
    for (const auto& bdf : subjects) {
      const Device& d = *s.find(bdf);
      if (d.role == Role::RootPort || d.role == Role::SwitchDownstream)
        continue;  // seen from below
      if (!d.link) {
        if (d.role == Role::Gpu || d.role == Role::Nvme || d.role == Role::Nic)
          no_link.push_back(bdf);
        continue;
      }
      ++checked;
      const Device* partner = d.parent.empty() ? nullptr : s.find(d.parent);
      if (partner && !partner->link) partner = nullptr;
      double exp_speed = d.link->max_speed_gts;
      int exp_width = d.link->max_width;
      if (partner) {
        exp_speed = std::min(exp_speed, partner->link->max_speed_gts);
        exp_width = std::min(exp_width, partner->link->max_width);
      }
      // A speed code the generation table does not know (a newer generation, a damaged
      // recording) is kept as 0 GT/s: unknown, never a downgrade to 0 (issue 24).
      const bool speeds_known = d.link->cur_speed_gts > 0 && exp_speed > 0;
      bool width_loss = d.link->cur_width < exp_width;
      bool speed_loss = speeds_known && d.link->cur_speed_gts + 0.01 < exp_speed;
      if (!width_loss && !speed_loss) continue;
      CheckResult r =
          make(id(),
               "link of " + bdf + " (" + std::string(role_name(d.role)) + ") trained at " +
                   link_text(d.link->cur_speed_gts, d.link->cur_width) + " of " +
                   link_text(exp_speed, exp_width),
               Verdict::Fail);
      r.devices.push_back(bdf);
      r.evidence.push_back(bdf + " LnkSta " + link_text(d.link->cur_speed_gts, d.link->cur_width) +
                           ", LnkCap " + link_text(d.link->max_speed_gts, d.link->max_width));
      if (partner) {
        r.devices.push_back(partner->bdf);
        r.evidence.push_back("link partner " + partner->bdf + " LnkCap " +
                             link_text(partner->link->max_speed_gts, partner->link->max_width));
      }
      char buf[160];
      if (speeds_known)
        std::snprintf(buf, sizeof buf, "%.1f of %.1f GB/s per direction available on this link",
                      link_gb_s(d.link->cur_speed_gts, d.link->cur_width),
                      link_gb_s(exp_speed, exp_width));
      else
        std::snprintf(buf, sizeof buf,
                      "%d of %d lanes trained; the link's speed is unknown in this input, so "
                      "its GB/s are too",
                      d.link->cur_width, exp_width);
      r.consequence = buf;
      if (width_loss) {
        r.remedy =
            "reseat the card or drive, check the slot's lane wiring and BIOS bifurcation, then "
            "`lspci -vvv -s " +
            bdf + "` (LnkSta)";
      } else if (d.role == Role::Gpu) {
        gpu_speed_note(s, d, exp_speed, r);
      } else {
        r.remedy = "check BIOS PCIe speed settings and the riser/cable; `setpci -s " + bdf +
                   " CAP_EXP+10.w=0020:0020` retrains the link";
      }
      out.push_back(std::move(r));
    }
    if (out.empty()) {
      CheckResult r = make(id(), title(), Verdict::Pass);
      if (checked > 0)
        r.evidence.push_back(
            std::to_string(checked) +
            " link(s) on GPU, NVMe and NIC paths trained at the lower of both ends' capability");
      for (const auto& b : no_link)
        r.evidence.push_back(b + ": no PCIe link capability (conventional PCI or virtual device)");
      if (checked == 0) {
        r.verdict = Verdict::Waived;
        r.reason = "no link information for the GPUs, drives and NICs in this input";
      }
      out.push_back(std::move(r));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Check> make_acs_check() { return std::make_unique<AcsCheck>(); }
std::unique_ptr<Check> make_pair_check() { return std::make_unique<PairCheck>(); }
std::unique_ptr<Check> make_link_check() { return std::make_unique<LinkCheck>(); }

}  // namespace gdsb::topo
