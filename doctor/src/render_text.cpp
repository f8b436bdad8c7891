#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gdsb/doctor/render.hpp"
#include "rules/rule_util.hpp"

namespace gdsb::doctor {

using detail::gb;

namespace {

// Where a hop sits on the way data flows: storage (the drive, the virtual disk, the network,
// storage measured alone), its link, switches and bridges, the host, the GPU's link.
int flow_rank(topo::HopKind k) {
  switch (k) {
    case topo::HopKind::Hypervisor:
    case topo::HopKind::Network:
      return 0;
    case topo::HopKind::StorageAlone:
      return 1;
    case topo::HopKind::DriveLink:
    case topo::HopKind::NicLink:
      return 2;
    case topo::HopKind::SwitchUplink:
      return 3;
    case topo::HopKind::BridgeLink:
      return 4;
    case topo::HopKind::HostLink:
      return 5;
    case topo::HopKind::GpuLink:
      return 6;
  }
  return 7;
}

std::string hop_figure(const Hop& h) {
  return (h.gb_s ? gb(*h.gb_s) : std::string("unknown")) + (h.measured ? " measured" : "") +
         (h.source.empty() || h.measured || !h.gb_s ? "" : " (" + h.source + ")");
}

// One line per hop in flow order. Hops of one kind and figure (two virtual disks behind
// one hypervisor) are one hop naming each device: each hop is listed once (issue 27).
// A hop an earlier GPU's list gave (a NIC two GPUs share) is referred to by that GPU.
void render_hops(std::ostream& out, const GpuDiagnosis& g,
                 std::map<std::string, std::string>& listed) {
  std::vector<const Hop*> hops;
  for (const auto& h : g.hops) hops.push_back(&h);
  std::stable_sort(hops.begin(), hops.end(), [](const Hop* a, const Hop* b) {
    return flow_rank(a->kind) < flow_rank(b->kind);
  });
  for (std::size_t i = 0; i < hops.size();) {
    const Hop& h = *hops[i];
    // "DEVICE: why": the devices are joined, a why they share is said once.
    std::vector<std::string> devices;
    std::string why;
    bool one_why = true;
    std::size_t j = i;
    for (; j < hops.size() && hops[j]->kind == h.kind && hops[j]->gb_s == h.gb_s &&
           hops[j]->measured == h.measured;
         ++j) {
      const std::string& w = hops[j]->what;
      const std::size_t colon = w.find(": ");
      const std::string dev = colon == std::string::npos ? w : w.substr(0, colon);
      const std::string rest = colon == std::string::npos ? "" : w.substr(colon + 2);
      if (j == i) why = rest;
      one_why = one_why && rest == why;
      if (std::find(devices.begin(), devices.end(), w) == devices.end()) devices.push_back(w);
    }
    std::string what;
    for (const auto& w : devices) {
      const std::size_t colon = w.find(": ");
      what += (what.empty() ? "" : one_why ? ", " : "; ") +
              (one_why && colon != std::string::npos ? w.substr(0, colon) : w);
    }
    if (one_why && !why.empty()) what += ": " + why;
    const std::string line = std::string(topo::hop_kind_name(h.kind)) + ": " + hop_figure(h) +
                             " - " + what;
    const auto [it, first] = listed.emplace(line, g.label);
    if (first)
      out << "  hop " << line << '\n';
    else
      out << "  hop " << topo::hop_kind_name(h.kind) << ": as for " << it->second
          << (h.device.empty() ? "" : " (" + h.device + ")") << '\n';
    i = j;
  }
}

// The one headline: the diagnosis's own, else what these inputs allow.
std::string headline_text(const Diagnosis& d) {
  if (!d.headline.empty()) return d.headline;
  if (d.gpus.empty())
    return "no GPU figure from these inputs (see the steps and notes)" +
           (d.storage.empty() ? std::string() : "; " + d.storage);
  for (const auto& g : d.gpus)
    if (g.measured_gb_s) return "each GPU's read against its ceiling, below";
  return "no GPU read measured: each GPU's ceiling and hops, below";
}

}  // namespace

void render_text(std::ostream& out, const Diagnosis& d) {
  out << "Diagnosis: " << headline_text(d) << ".\n";
  // With a GPU, storage alone is a hop of each GPU's list: said there, not here.
  std::map<std::string, std::string> listed;  // hop line -> the GPU that listed it first
  for (const auto& g : d.gpus) {
    out << g.label << (g.bdf.empty() ? "" : " (" + g.bdf + ")");
    if (g.measured_gb_s)
      out << " reads at " << gb(*g.measured_gb_s) << " (" << g.measured_by << ")";
    else
      out << " has no measured read";
    if (g.ceiling_gb_s)
      out << "; the platform allows ~" << gb(*g.ceiling_gb_s) << " (" << g.binding << ")";
    else
      out << "; ceiling unknown from these inputs";
    out << ".\n";
    render_hops(out, g, listed);
  }
  if (!d.steps.empty()) {
    out << "Steps:\n";
    for (const auto& s : d.steps) {
      out << "  " << (s.ran ? "ran     " : "not run ") << s.name;
      if (s.gb_s) out << ": " << gb(*s.gb_s);
      if (!s.detail.empty()) out << " (" << s.detail << ")";
      if (!s.ran) out << ": " << s.reason;
      out << '\n';
    }
  }
  if (!d.findings.empty()) {
    out << "Findings (most certain and costly first):\n";
    int n = 0;
    for (const auto& f : d.findings) {
      out << "  " << ++n << ". [" << confidence_name(f.confidence) << "] " << f.title << '\n';
      if (!f.devices.empty()) {
        out << "     devices:";
        for (const auto& dev : f.devices) out << ' ' << dev;
        out << '\n';
      }
      for (const auto& e : f.evidence) out << "     evidence: " << e << '\n';
      if (!f.fix.empty()) out << "     fix: " << f.fix << '\n';
      if (!f.expected.empty()) out << "     expected after the fix: " << f.expected << '\n';
    }
  }
  for (const auto& note : d.notes) out << "Note: " << note << '\n';
  if (!d.not_applicable.empty()) {
    out << "Verdict: " << d.not_applicable << '\n';
  } else if (d.has_problem()) {
    std::size_t strong = 0;
    for (const auto& f : d.findings) strong += f.confidence != Confidence::Possible ? 1 : 0;
    out << "Verdict: " << strong << " certain or likely cause(s); the first: "
        << d.findings.front().title << '\n';
  } else if (!d.nothing_wrong.empty()) {
    out << "Verdict: nothing wrong: " << d.nothing_wrong << '\n';
  } else {
    out << "Verdict: no certain or likely cause found" << '\n';
  }
}

}  // namespace gdsb::doctor
