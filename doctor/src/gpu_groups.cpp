#include "gpu_groups.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "rules/rule_util.hpp"

namespace gdsb::doctor::detail {
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

// The text with the GPU's own devices (addresses and names) left out, each as a whole word:
// they are said on the GPU's own line.
std::string without(std::string text, const std::set<std::string>& own) {
  const auto edge = [&](std::size_t i) {
    return i >= text.size() || text[i] == ' ' || text[i] == ',' || text[i] == ':' || text[i] == ')';
  };
  for (const auto& word : own) {
    if (word.empty()) continue;
    std::size_t at = 0;
    while ((at = text.find(word, at)) != std::string::npos) {
      if ((at == 0 || text[at - 1] == ' ' || text[at - 1] == '(') && edge(at + word.size())) {
        const bool space = at + word.size() < text.size() && text[at + word.size()] == ' ';
        const bool lead = !space && at > 0 && text[at - 1] == ' ';
        text.erase(lead ? at - 1 : at, word.size() + (space || lead ? 1 : 0));
        if (lead) --at;
      } else {
        at += word.size();
      }
    }
  }
  return text;
}

// A GPU's own devices: its own address, and every hop device no other GPU's hops name,
// with the device's block and net names.
std::set<std::string> own_devices(const GpuDiagnosis& g,
                                  const std::map<std::string, int>& gpus_naming) {
  std::set<std::string> own{g.bdf};
  for (const auto& h : g.hops)
    if (!h.device.empty() && gpus_naming.at(h.device) == 1) {
      own.insert(h.device);
      own.insert(h.device_names.begin(), h.device_names.end());
    }
  own.erase("");
  return own;
}

}  // namespace

std::string ceiling_text(const GpuDiagnosis& g, const std::string& binding, const std::string& each,
                         bool say_unknown) {
  if (!g.ceiling_gb_s) return "unknown";
  const bool open = !g.ceiling_unknown.empty();
  return (open ? "at most ~" : "~") + gb(*g.ceiling_gb_s) + each + " (" + binding + ")" +
         (open && say_unknown ? ", " + g.ceiling_unknown + " unknown" : "");
}

std::string ceiling_lead(bool open, bool many) {
  return !open ? "the platform allows " : many ? "their ceiling is " : "its ceiling is ";
}

std::vector<HopRow> hop_rows(const GpuDiagnosis& g) {
  std::vector<const Hop*> hops;
  for (const auto& h : g.hops) hops.push_back(&h);
  std::stable_sort(hops.begin(), hops.end(), [](const Hop* a, const Hop* b) {
    return flow_rank(a->kind) < flow_rank(b->kind);
  });
  std::vector<HopRow> out;
  for (std::size_t i = 0; i < hops.size();) {
    const Hop& h = *hops[i];
    // "DEVICE: why": the devices are joined, a why they share is said once.
    std::vector<std::string> whats;
    HopRow row{h.kind, h.gb_s, h.measured, h.source, "", {}};
    std::string why;
    bool one_why = true;
    std::size_t j = i;
    for (; j < hops.size() && hops[j]->kind == h.kind && hops[j]->gb_s == h.gb_s &&
           hops[j]->measured == h.measured;
         ++j) {
      const std::string& w = hops[j]->what;
      const std::size_t colon = w.find(": ");
      const std::string rest = colon == std::string::npos ? "" : w.substr(colon + 2);
      if (j == i) why = rest;
      one_why = one_why && rest == why;
      if (std::find(whats.begin(), whats.end(), w) == whats.end()) whats.push_back(w);
      row.devices.push_back(hops[j]->device);
    }
    for (const auto& w : whats) {
      const std::size_t colon = w.find(": ");
      row.what += (row.what.empty() ? "" : one_why ? ", " : "; ") +
                  (one_why && colon != std::string::npos ? w.substr(0, colon) : w);
    }
    if (one_why && !why.empty()) row.what += ": " + why;
    out.push_back(std::move(row));
    i = j;
  }
  return out;
}

std::string hop_figure(const HopRow& h) {
  return (h.gb_s ? gb(*h.gb_s) : std::string("unknown")) + (h.measured ? " measured" : "") +
         (h.source.empty() || h.measured || !h.gb_s ? "" : " (" + h.source + ")");
}

std::vector<GpuGroup> gpu_groups(const std::vector<GpuDiagnosis>& gpus) {
  std::map<std::string, int> gpus_naming;  // hop device -> how many GPUs' hops name it
  for (const auto& g : gpus) {
    std::set<std::string> mine;
    for (const auto& h : g.hops) mine.insert(h.device);
    for (const auto& d : mine) ++gpus_naming[d];
  }
  struct Member {
    const GpuDiagnosis* gpu;
    std::set<std::string> own;
    std::vector<HopRow> rows;
  };
  std::vector<std::pair<std::string, std::vector<Member>>> alike;  // signature -> GPUs
  for (const auto& g : gpus) {
    Member m{&g, own_devices(g, gpus_naming), hop_rows(g)};
    // Alike: the same hops, figures and text once the GPU's own devices are left out;
    // a measured figure (each GPU's own host link) may differ.
    std::string sig = g.source_kind + "\n";
    for (const auto& r : m.rows)
      sig += std::string(topo::hop_kind_name(r.kind)) + "|" + (r.measured ? "" : hop_figure(r)) +
             "|" + without(r.what, m.own) + "\n";
    auto it = std::find_if(alike.begin(), alike.end(), [&](const auto& a) { return a.first == sig; });
    if (it == alike.end()) it = alike.insert(alike.end(), {sig, {}});
    it->second.push_back(std::move(m));
  }

  std::vector<GpuGroup> out;
  for (const auto& [sig, members] : alike) {
    GpuGroup grp;
    std::vector<std::string> labels;
    for (const auto& m : members) {
      grp.gpus.push_back(m.gpu);
      labels.push_back(m.gpu->label);
    }
    grp.label = gpu_set(labels);
    const Member& first = members.front();
    std::vector<bool> figure_common(first.rows.size(), true);
    for (std::size_t i = 0; i < first.rows.size(); ++i) {
      GroupRow row{first.rows[i].kind, hop_figure(first.rows[i]), first.rows[i].what, false};
      for (const auto& m : members) {
        if (hop_figure(m.rows[i]) != row.figure) figure_common[i] = false;
        if (m.rows[i].what != first.rows[i].what) row.own_devices = true;
      }
      if (!figure_common[i]) row.figure.clear();
      if (row.own_devices) row.what = without(row.what, first.own);
      grp.rows.push_back(std::move(row));
    }
    // The ceiling is common when every GPU's figure and binding (own devices left out) agree.
    bool ceiling_common = true;
    const std::string c0 = ceiling_text(*first.gpu, without(first.gpu->binding, first.own));
    for (const auto& m : members)
      ceiling_common = ceiling_common && ceiling_text(*m.gpu, without(m.gpu->binding, m.own)) == c0;
    if (ceiling_common) {
      grp.ceiling = ceiling_text(*first.gpu, without(first.gpu->binding, first.own), " each");
      grp.ceiling_open = first.gpu->ceiling_gb_s && !first.gpu->ceiling_unknown.empty();
    }
    if (!ceiling_common) {  // the unknown every GPU's ceiling shares, once
      grp.unknown = first.gpu->ceiling_gb_s ? first.gpu->ceiling_unknown : "";
      for (const auto& m : members)
        if (!m.gpu->ceiling_gb_s || m.gpu->ceiling_unknown != grp.unknown) grp.unknown.clear();
    }
    for (const auto& m : members) {
      GpuLine line{m.gpu, {}, ceiling_common ? "" : ceiling_text(*m.gpu, m.gpu->binding, "", grp.unknown.empty()),
                   !ceiling_common && m.gpu->ceiling_gb_s && !m.gpu->ceiling_unknown.empty()};
      for (std::size_t i = 0; i < m.rows.size(); ++i) {
        const HopRow& r = m.rows[i];
        const std::string kind(topo::hop_kind_name(r.kind));
        if (grp.rows[i].own_devices) {
          std::string devs;
          for (const auto& d : r.devices)
            if (!d.empty() && d != m.gpu->bdf && m.own.count(d))
              devs += (devs.empty() ? "" : ", ") + d;
          if (!devs.empty()) line.own.push_back(kind + " " + devs);
        }
        // A figure of its own, unless the ceiling already says it (it binds).
        if (!figure_common[i] && (ceiling_common || m.gpu->binding.rfind(kind + " ", 0) != 0))
          line.own.push_back(kind + " " + hop_figure(r));
      }
      grp.lines.push_back(std::move(line));
    }
    out.push_back(std::move(grp));
  }
  return out;
}

}  // namespace gdsb::doctor::detail
