#include <algorithm>

#include "gdsb/topo/node_run.hpp"
#include "gdsb/topo/said_together.hpp"
#include "gdsb/units.hpp"

namespace gdsb::topo {
namespace {

using nlohmann::json;

const NodeGpu* gpu_of(const NodePlan& p, int index) {
  for (const auto& n : p.gpus)
    if (n.index == index) return &n;
  return nullptr;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

std::string odd_gpu_explanation(const NodePlan& p, const NodeMode& m, const OddGpu& odd) {
  const NodeGpu* me = gpu_of(p, odd.gpu);
  if (me == nullptr) return "";
  std::vector<double> peers_ceiling;
  std::vector<int> sharing;
  for (const auto& n : p.gpus) {
    if (n.index == odd.gpu) continue;
    if (n.topo.ceiling.gb_s) peers_ceiling.push_back(*n.topo.ceiling.gb_s);
    if (n.directory == me->directory) sharing.push_back(n.index);
  }
  if (me->topo.ceiling.gb_s && !peers_ceiling.empty() && *me->topo.ceiling.gb_s < 0.9 * median(peers_ceiling))
    return "its path is narrower: ~" + format_fixed(*me->topo.ceiling.gb_s, 1) + " GB/s against its peers' ~" +
           format_fixed(median(peers_ceiling), 1) + " GB/s (" + me->topo.ceiling.limited_by + ")";
  if (!sharing.empty())
    return "it reads " + me->directory + ", which " + gpu_ranges(sharing) + " read too: shared storage, not its own path";
  std::string mine, theirs;
  for (const auto& f : m.figure.per_gpu) (f.gpu == odd.gpu ? mine : theirs) = f.path_used;
  if (!mine.empty() && !theirs.empty() && mine != theirs)
    return "its reads took the " + mine + " path, its peers' the " + theirs + " path";
  return "its path in the topology is like its peers' (the topology does not explain it): look at its drive "
         "(nvme smart-log), its links' error counters (AER) and the GPU's NUMA binding";
}

std::string gpu_ranges(std::vector<int> gpus) {
  std::sort(gpus.begin(), gpus.end());
  std::vector<std::string> labels;
  for (const int g : gpus) labels.push_back("GPU" + std::to_string(g));
  return gpu_set(labels);
}

json node_json(const NodePlan& p) {
  json gpus = json::array();
  for (const auto& n : p.gpus) {
    gpus.push_back({{"gpu", n.index},
                    {"pci_bus_id", n.pci_bus_id},
                    {"sources", n.topo.sources},
                    {"drives", n.topo.drives},
                    {"directory", n.directory},
                    {"directory_note", n.directory_note},
                    {"ceiling_gb_s", n.topo.ceiling.gb_s ? json(*n.topo.ceiling.gb_s) : json(nullptr)},
                    {"ceiling_limited_by", n.topo.ceiling.limited_by}});
  }
  json modes = json::array();
  for (const auto& m : p.modes) {
    json e = {{"xfer_type", static_cast<int>(m.xfer)}, {"xfer_name", std::string(xfer_name(m.xfer))}};
    if (!m.waived.empty()) {
      e["waived"] = m.waived;
      modes.push_back(e);
      continue;
    }
    json per = json::array();
    for (const auto& f : m.figure.per_gpu)
      per.push_back({{"gpu", f.gpu}, {"pci_bus_id", f.pci_bus_id}, {"bytes", f.bytes}, {"seconds", f.seconds},
                     {"gb_s", f.gb_s}, {"path_used", f.path_used}});
    json odd = json::array();
    for (const auto& x : m.figure.odd)
      odd.push_back({{"gpu", x.gpu}, {"gb_s", x.gb_s}, {"peers_median_gb_s", x.peers_median_gb_s},
                     {"share", x.share}, {"explanation", odd_gpu_explanation(p, m, x)}});
    e["per_gpu"] = per;
    e["bytes"] = m.figure.bytes;
    e["window_s"] = m.figure.window_s ? json(*m.figure.window_s) : json(nullptr);
    e["aggregate_gb_s"] = m.figure.gb_s ? json(*m.figure.gb_s) : json(nullptr);
    e["sum_gb_s"] = m.figure.sum_gb_s ? json(*m.figure.sum_gb_s) : json(nullptr);
    json missing = json::array();
    for (const auto& x : m.figure.missing) missing.push_back({{"gpu", x.gpu}, {"reason", x.reason}});
    e["missing"] = missing;
    e["odd"] = odd;
    modes.push_back(e);
  }
  return {{"gpus", gpus},
          {"file_bytes", p.file_size},
          {"seconds", p.seconds},
          {"threads_per_gpu", p.threads},
          {"topology", p.topology_source},
          {"ceiling", {{"gb_s", p.ceiling.gb_s ? json(*p.ceiling.gb_s) : json(nullptr)},
                       {"limited_by", p.ceiling.limited_by}}},
          {"odd_share", kOddShare},
          {"modes", modes}};
}

}  // namespace gdsb::topo
