// gdsb-topo's GPU x GPU section: NVSwitches and the nvidia-smi topo -m style matrix (NV#
// from the snapshot's NVLink facts, else the PCIe label), printed only when the input has
// NVLink facts or NVSwitches; gdsb-p2p prints the full view.
#include <algorithm>
#include <ostream>

#include "gdsb/topo/nvlink.hpp"
#include "gdsb/topo/render.hpp"

namespace gdsb::topo {

void render_nvlink(std::ostream& out, const TopologyView& v) {
  const Snapshot& s = v.snapshot();
  const auto switches = s.with_role(Role::NvSwitch);
  const bool facts = std::any_of(v.gpus().begin(), v.gpus().end(),
                                 [&](const Device* g) { return has_nvlink_facts(s, g->bdf); });
  if (!facts && switches.empty()) return;
  out << " NVSwitches: " << switches.size();
  for (const Device* sw : switches) out << ' ' << sw->bdf;
  out << '\n';
  if (!facts) {
    out << " NVLink: unknown: the input has no NVLink data\n";
    return;
  }
  out << " GPU x GPU (NV# = NVLinks, from " << s.gpu_facts.at(v.gpus().front()->bdf).source
      << "; else the PCIe path)\n        ";
  for (const Device* g : v.gpus()) {
    const std::string l = v.gpu_label(g->bdf);
    out << ' ' << std::string(6 - std::min<size_t>(6, l.size()), ' ') << l;
  }
  out << '\n';
  for (const Device* a : v.gpus()) {
    const std::string label = v.gpu_label(a->bdf);
    out << ' ' << label << std::string(7 - std::min<size_t>(7, label.size()), ' ');
    for (const Device* b : v.gpus()) {
      std::string cell = "X";
      if (a != b) {
        const auto nv = nvlink_pair(s, a->bdf, b->bdf);
        cell = nv && nv->links > 0 ? "NV" + std::to_string(nv->links)
                                   : std::string(path_label_name(v.classify(*a, *b).label));
      }
      out << ' ' << std::string(6 - std::min<size_t>(6, cell.size()), ' ') << cell;
    }
    out << '\n';
  }
}

}  // namespace gdsb::topo
