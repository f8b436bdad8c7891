// Hop ceilings per GPU (through the topology library's link arithmetic), the rules, the
// ranking and the "nothing wrong" verdict.
#include "gdsb/doctor/diagnose.hpp"

#include <algorithm>

#include "gdsb/doctor/rules.hpp"
#include "gdsb/nvml.hpp"
#include "gdsb/units.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "attribution.hpp"
#include "finding_groups.hpp"
#include "gpu_groups.hpp"
#include "said_once.hpp"
#include "rules/rule_util.hpp"

namespace gdsb::doctor {

std::string_view confidence_name(Confidence c) {
  switch (c) {
    case Confidence::Certain:
      return "certain";
    case Confidence::Likely:
      return "likely";
    case Confidence::Possible:
      return "possible";
  }
  return "possible";
}

bool Diagnosis::has_problem() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.confidence != Confidence::Possible; });
}

namespace detail {
std::string describe_run(const RunResult& r) {
  const auto& w = r.workload;
  std::string s = std::string(xfer_uses_cufile(w.xfer) ? "cuFile" : xfer_label(w.xfer)) + " -x " +
                  std::to_string(static_cast<int>(w.xfer));
  if (!r.path.path_used.empty()) s += " (" + r.path.path_used + ")";
  s += ", " + std::to_string(w.threads) + " thread" + (w.threads == 1 ? "" : "s") + " x " +
       format_size(w.io_size);
  if (w.iodepth > 1) s += " depth " + std::to_string(w.iodepth);
  return s;
}
}  // namespace detail

namespace {

using detail::gb;

// The GPU's hardware hops: the inputs of gdsb-topo's ceiling for its best source (local
// NVMe, else a data NIC, else virtual storage), from the one path model.
void add_platform_hops(GpuDiagnosis& g, const Platform& p) {
  const auto kind = p.model->best_kind(g.bdf);
  if (!kind) return;
  const topo::Ceiling c = p.model->gpu_ceiling(g.bdf, *kind);
  g.source_kind = std::string(topo::data_source_name(*kind));
  const auto near = p.model->nearest(g.bdf, *kind);
  g.p2p_possible = !near.empty() && near.front()->p2p;
  if (*kind == topo::DataSource::Virtual)
    for (const topo::DataPath* path : near) {
      const topo::Device* d = p.snapshot->find(path->source);
      std::string what = path->source;
      if (d)
        for (const auto& b : d->block_devices) what += " " + b;
      g.virtual_storage += (g.virtual_storage.empty() ? "" : ", ") + what + " (" +
                           (d ? topo::virtual_device_kind(*d) : std::string("virtual")) + ")";
    }
  for (const auto& h : c.hops) {
    Hop hop{h.kind, h.gb_s, h.what, false, h.device,
            std::string(topo::capacity_source_name(h.source)), {}};
    if (const topo::Device* d = h.device.empty() ? nullptr : p.snapshot->find(h.device)) {
      hop.device_names = d->block_devices;
      hop.device_names.insert(hop.device_names.end(), d->net_devices.begin(), d->net_devices.end());
    }
    g.hops.push_back(std::move(hop));
  }
  if (c.gb_s) {
    g.ceiling_gb_s = g.topo_ceiling_gb_s = c.gb_s;
    g.binding = g.topo_binding = c.limited_by;
  }
}

// A measured hop bounds the ceiling like any other: min over the topology ceiling and
// the measurements (storage alone, host link). Without either the ceiling stays unknown.
void bound_by(GpuDiagnosis& g, const Hop& h) {
  if (!h.gb_s) return;
  if (!g.ceiling_gb_s || *h.gb_s < *g.ceiling_gb_s) {
    g.ceiling_gb_s = h.gb_s;
    // Named by its hop: what was measured is said once, in the GPU's hop list (issue 27).
    g.binding = std::string(topo::hop_kind_name(h.kind)) + " " + detail::gb(*h.gb_s) + " measured";
    g.binding_hop = topo::hop_kind_name(h.kind);
  }
}

// What the GPU's hops of unknown rate leave open (GpuDiagnosis::ceiling_unknown): a hop on the
// storage's side is the storage's rate, which storage alone measures when `storage_measured`;
// the GPU's own link is crossed by the measured host link; a switch or bridge link by neither.
std::string unknown_rates(const GpuDiagnosis& g, bool storage_measured) {
  bool host_link = false;
  for (const auto& h : g.hops) host_link = host_link || (h.kind == topo::HopKind::HostLink && h.gb_s);
  std::vector<std::string> open;
  for (const auto& h : g.hops) {
    if (h.gb_s || h.measured) continue;
    std::string what;
    switch (h.kind) {
      case topo::HopKind::DriveLink:
      case topo::HopKind::NicLink:
      case topo::HopKind::Network:
      case topo::HopKind::Hypervisor:
        if (!storage_measured) what = "the storage's rate";
        break;
      case topo::HopKind::GpuLink:
        if (!host_link) what = "the GPU link's rate";
        break;
      default:
        what = "the " + std::string(topo::hop_kind_name(h.kind)) + "'s rate";
    }
    if (!what.empty()) detail::add_unique(open, what);
  }
  std::string out;
  for (std::size_t i = 0; i < open.size(); ++i)
    out += (i == 0 ? "" : i + 1 == open.size() ? " and " : ", ") + open[i];
  return out;
}

bool is_gpu_run(const RunResult& r) { return r.workload.xfer != XferType::CpuOnly; }

// A direct read: O_DIRECT storage I/O or GDS peer-to-peer, never the page cache. cuFile's
// compat path may read through the page cache with read-ahead (its batch API does), so only
// these are bounded by storage alone, which is read with O_DIRECT.
bool reads_direct(const RunResult& r) {
  const PathUsed p = path_used_of(r.path.path_used);
  return r.workload.odirect && (p == PathUsed::Posix || path_is_gds(p));
}

// The storage alone run a node read made for this GPU (Figures::run_gpus), the best if several.
const RunResult* own_storage_alone(const Figures& f, const GpuDiagnosis& g) {
  if (g.bdf.empty()) return nullptr;
  const RunResult* own = nullptr;
  for (std::size_t i = 0; i < f.runs.size() && i < f.run_gpus.size(); ++i) {
    const RunResult& r = f.runs[i];
    if (f.run_gpus[i].empty() || nvml::normalize_bus_id(f.run_gpus[i]) != g.bdf || !measures_storage_alone(r))
      continue;
    if (!own || *run_gb_s(r) > *run_gb_s(*own)) own = &r;
  }
  return own;
}

}  // namespace

std::vector<GpuDiagnosis> gpu_hops(const Platform* platform, const Figures& figures) {
  std::vector<GpuDiagnosis> out;
  if (platform) {
    const auto& gpus = platform->view->gpus();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      GpuDiagnosis g;
      g.label = "GPU" + std::to_string(i);
      g.bdf = gpus[i]->bdf;
      add_platform_hops(g, *platform);
      out.push_back(std::move(g));
    }
  }
  // GPUs the runs or the host-link figures name that the platform does not know, matched
  // by PCI address where known. A new one is labelled by its CUDA index only without a
  // platform (labels are then CUDA indices throughout), else by its address.
  auto ensure = [&](int index, const std::string& bdf) {
    const std::string by_index = "GPU" + std::to_string(index);
    for (const auto& g : out)
      if (bdf.empty() ? g.label == by_index : g.bdf == bdf) return;
    GpuDiagnosis g;
    // By CUDA index where no platform GPU could carry the same label (none, or a platform
    // without GPUs: the fake GPU service's), else by address.
    g.label = !platform || bdf.empty() || platform->view->gpus().empty() ? by_index : "GPU " + bdf;
    g.bdf = bdf;
    out.push_back(std::move(g));
  };
  for (const auto& hl : figures.host_links) ensure(hl.gpu, hl.bdf);
  for (const auto& r : figures.runs)
    if (is_gpu_run(r) && r.status == RunStatus::Ok) {
      const detail::RunGpu at = detail::place_run(figures, platform, r);
      if (!at.bdf.empty() || at.cuda_index) ensure(r.workload.gpu, at.bdf);
    }

  Facts facts{platform, figures, out};
  // Storage alone: the one rule (measures_storage_alone), as every rule reads it; in a node
  // read the GPU's own -x 1 run, its share of the storage while every GPU read.
  const RunResult* best = facts.storage_alone();
  for (auto& g : out) {
    const RunResult* own = own_storage_alone(figures, g);
    const RunResult* x1 = own ? own : best;
    if (x1) {
      Hop h{topo::HopKind::StorageAlone, run_gb_s(*x1),
            detail::describe_run(*x1) + ", O_DIRECT, no GPU" + (own ? ", every GPU reading at once" : ""), true,
            "", "measured", {}};
      g.storage_gb_s = h.gb_s;
      bound_by(g, h);
      g.hops.push_back(std::move(h));
    }
  }
  for (const auto& hl : figures.host_links) {
    GpuDiagnosis* g = nullptr;
    for (auto& x : out)
      if ((!hl.bdf.empty() && x.bdf == hl.bdf) ||
          (hl.bdf.empty() && x.label == "GPU" + std::to_string(hl.gpu)))
        g = &x;
    if (!g || !hl.h2d_gb_s) continue;
    Hop h{topo::HopKind::HostLink, hl.h2d_gb_s, "pinned H2D measured (cudaMemcpy)", true, g->bdf,
          "measured", {}};
    bound_by(*g, h);
    g->hops.push_back(std::move(h));
  }
  // The path's ceiling without today's storage figure: the topology's and the host link.
  for (auto& g : out) {
    g.path_ceiling_gb_s = g.topo_ceiling_gb_s;
    g.path_binding = g.topo_binding;
    for (const auto& h : g.hops)
      if (h.kind == topo::HopKind::HostLink && h.gb_s &&
          (!g.path_ceiling_gb_s || *h.gb_s < *g.path_ceiling_gb_s)) {
        g.path_ceiling_gb_s = h.gb_s;
        g.path_binding =
            std::string(topo::hop_kind_name(h.kind)) + " " + detail::gb(*h.gb_s) + " measured";
      }
    g.ceiling_unknown = unknown_rates(g, g.storage_gb_s.has_value());
    g.path_ceiling_unknown = unknown_rates(g, false);
  }
  for (auto& g : out) {
    // Best GPU read figure: cuFile types first (what GDS gives), else the bounce paths.
    for (bool cufile : {true, false}) {
      if (g.measured_gb_s) break;
      for (const auto& r : figures.runs) {
        const auto v = run_gb_s(r);
        if (!v || !is_gpu_run(r) || !is_read(r.workload) ||
            xfer_uses_cufile(r.workload.xfer) != cufile || facts.gpu_of(r) != &g)
          continue;
        if (!g.measured_gb_s || *v > *g.measured_gb_s) {
          g.measured_gb_s = v;
          g.measured_by = detail::describe_run(r);
          g.measured_gds = detail::ran_gds(r);
          g.measured_buffered = !reads_direct(r);
        }
      }
    }
  }
  return out;
}

const GpuDiagnosis* Facts::gpu_of(const RunResult& r) const {
  const detail::RunGpu at = detail::place_run(figures, platform, r);
  for (const auto& g : gpus)
    if (at.bdf.empty() ? at.cuda_index && g.label == "GPU" + std::to_string(*at.cuda_index)
                       : g.bdf == at.bdf)
      return &g;
  return nullptr;
}

const RunResult* Facts::storage_alone() const {
  const RunResult* best = nullptr;
  for (const auto& r : figures.runs)
    if (measures_storage_alone(r) && (!best || *run_gb_s(r) > *run_gb_s(*best))) best = &r;
  return best;
}

const RunResult* Facts::best_read(XferType x) const {
  const RunResult* best = nullptr;
  for (const auto& r : figures.runs) {
    const auto v = run_gb_s(r);
    if (!v || r.workload.xfer != x || !is_read(r.workload)) continue;
    if (!best || *v > *run_gb_s(*best)) best = &r;
  }
  return best;
}

std::optional<double> Facts::hop(const GpuDiagnosis& g, topo::HopKind kind) const {
  for (const auto& h : g.hops)
    if (h.kind == kind) return h.gb_s;
  return std::nullopt;
}

std::optional<double> Facts::drives(const GpuDiagnosis& g) const {
  std::optional<double> sum;
  for (const auto& h : g.hops)
    if (h.kind == topo::HopKind::DriveLink) {
      if (!h.gb_s) return std::nullopt;
      sum = sum.value_or(0) + *h.gb_s;
    }
  return sum;
}

void rank(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.confidence != b.confidence) return a.confidence < b.confidence;
    return a.impact_gb_s > b.impact_gb_s;
  });
}

namespace {

// A buffered read above storage alone with O_DIRECT: that figure does not bound it.
bool beats_direct_storage(const GpuDiagnosis& g) {
  return g.measured_buffered && g.measured_gb_s && g.storage_gb_s &&
         *g.measured_gb_s > *g.storage_gb_s;
}

// No finding promises more than the ceiling of the GPU(s) it is about (or, when it names
// none, the highest ceiling of any GPU): the ceiling is the minimum over every hop,
// measured storage included, so a fix cannot lift a read above it.
void cap_expected(Diagnosis& d) {
  for (auto& f : d.findings) {
    if (!f.expected_gb_s || f.path_bounded) continue;
    auto gpus = detail::named_gpus(d, f);
    if (gpus.empty())
      for (const auto& g : d.gpus) gpus.push_back(&g);
    std::optional<double> cap;
    const GpuDiagnosis* by = nullptr;
    for (const GpuDiagnosis* g : gpus) {
      const auto& c = f.storage_fix ? g->path_ceiling_gb_s : g->ceiling_gb_s;
      if (!c) {  // one GPU without a ceiling: nothing bounds the finding
        cap.reset();
        break;
      }
      if (!cap || *c > *cap) {
        cap = c;
        by = g;
      }
    }
    if (!cap || *f.expected_gb_s <= *cap) continue;
    const double measured = f.expected_gb_s.value() - f.impact_gb_s;
    f.expected_gb_s = cap;
    const std::string& open = f.storage_fix ? by->path_ceiling_unknown : by->ceiling_unknown;
    f.expected = (open.empty() ? "~" : "at most ~") + gb(*cap) + ", " + by->label + "'s ceiling set by " +
                 (f.storage_fix ? by->path_binding : by->binding) + (open.empty() ? "" : ", " + open + " unknown");
    if (f.impact_gb_s > 0) f.impact_gb_s = std::max(0.0, *cap - measured);
  }
}

// Virtual storage, or a read already at storage speed, decides the diagnosis: say it first.
// GPUs reading from the same virtual disks are one clause, and GPUs whose reads say the same
// (storage-bound) one clause with their figures as ranges (issue 35: not one per GPU).
void headline(Diagnosis& d) {
  for (auto& g : d.gpus) {
    if (g.measured_gb_s && g.storage_gb_s && *g.measured_gb_s >= 0.9 * *g.storage_gb_s &&
        !beats_direct_storage(g))
      g.storage_bound = true;
  }
  std::vector<std::string> clauses;
  std::vector<std::string> said;  // virtual storage already named
  std::vector<std::pair<std::string, detail::Clause>> bound, lagging;
  for (const auto& g : d.gpus) {
    if (g.source_kind == "virtual") {
      if (std::find(said.begin(), said.end(), g.virtual_storage) != said.end()) continue;
      said.push_back(g.virtual_storage);
      std::vector<std::string> labels;
      std::vector<std::pair<std::string, detail::Clause>> storage, reads;
      for (const auto& x : d.gpus) {
        if (x.source_kind != "virtual" || x.virtual_storage != g.virtual_storage) continue;
        labels.push_back(x.label);
        if (x.storage_gb_s) storage.emplace_back(x.label, detail::Clause().gb(*x.storage_gb_s));
        if (x.measured_gb_s)
          reads.emplace_back(x.label, detail::Clause().gpus("", "").gb(*x.measured_gb_s).text(
                                          x.storage_bound ? " (storage-bound)" : ""));
      }
      std::string line = "virtual storage: " + detail::gpu_set(labels) +
                         (labels.size() == 1 ? " reads" : " read") + " from " + g.virtual_storage +
                         " through the hypervisor, so GDS peer-to-peer does not apply and "
                         "cuFile's compat path is the expected one";
      // Storage alone is one figure or each GPU's share of a node read: its range once.
      if (!storage.empty()) line += "; storage alone reads " + detail::said_once(storage).front();
      for (const auto& r : detail::said_once(reads)) line += ", " + r;
      clauses.push_back(std::move(line));
    } else if (g.measured_gb_s && g.storage_gb_s && !beats_direct_storage(g)) {
      // Its read against storage alone; GPUs that are not storage-bound only where others are.
      detail::Clause c;
      if (g.storage_bound) c.text("storage-bound: ");
      c.gpus("reads at", "read at")
          .gb(*g.measured_gb_s)
          .text(", ")
          .pct(*g.measured_gb_s / *g.storage_gb_s)
          .text(" of storage alone (")
          .gb(*g.storage_gb_s)
          .text(g.storage_bound ? "): the storage, not the GPU path, sets the figure"
                                : "), below the storage-bound GPUs");
      (g.storage_bound ? bound : lagging).emplace_back(g.label, std::move(c));
    }
  }
  for (auto& c : detail::said_once(bound)) clauses.push_back(std::move(c));
  // The odd GPU: where others are storage-bound, one that is not is named on its own.
  if (!bound.empty())
    for (auto& c : detail::said_once(lagging)) clauses.push_back(std::move(c));
  for (const auto& c : clauses) d.headline += (d.headline.empty() ? "" : "; ") + c;
}

}  // namespace

Diagnosis diagnose(const Platform* platform, const Figures& figures) {
  Diagnosis d;
  d.gpus = gpu_hops(platform, figures);
  const Facts facts{platform, figures, d.gpus};
  for (const auto& rule : all_rules())
    for (auto& f : rule.run(facts)) d.findings.push_back(std::move(f));
  cap_expected(d);
  detail::group_findings(d);
  rank(d.findings);
  if (const RunResult* x1 = facts.storage_alone())
    d.storage = "storage alone reads at " + detail::run_line(*x1, *run_gb_s(*x1));
  for (const auto& r : figures.runs)
    if (is_gpu_run(r) && r.status == RunStatus::Ok)
      if (const auto at = detail::place_run(figures, platform, r); !at.unplaced.empty())
        detail::add_unique(d.notes, detail::describe_run(r) + " -d " +
                                        std::to_string(r.workload.gpu) +
                                        " is charged to no GPU: " + at.unplaced);
  // Runs without a figure of their own: GPU runs that did not run, and any run whose
  // figures are the memory's (status "page cache"), which no ceiling or verdict uses.
  for (const auto& r : figures.runs)
    if ((xfer_uses_gpu(r.workload.xfer) || r.status == RunStatus::PageCache) &&
        r.status != RunStatus::Ok)
      detail::add_unique(d.notes, detail::describe_run(r) + " " +
                                      std::string(run_status_name(r.status)) + ": " + r.reason);
  if (!platform) d.notes.push_back("no topology input: hop ceilings unknown, storage side only");
  if (!figures.host_link_waived.empty()) d.notes.push_back(figures.host_link_waived);
  headline(d);
  // A GPU a run or a host link measured is a GPU, whatever the topology lists (--fake-gpu).
  if (platform && platform->model && platform->model->no_nvidia_gpu() && d.gpus.empty())
    d.not_applicable = platform->model->applicability();
  if (d.has_problem()) return d;
  // Each GPU's verdict as a clause; GPUs whose words match are said once (issue 35).
  std::vector<std::pair<std::string, detail::Clause>> fine, short_of;
  for (const auto& g : d.gpus) {
    if (!g.measured_gb_s || !g.ceiling_gb_s) continue;
    detail::Clause c;
    c.gpus("reads at", "read at").gb(*g.measured_gb_s);
    if (beats_direct_storage(g)) {
      // Like with like: the O_DIRECT figure bounds the direct paths, not this one.
      c.text(" by " + g.measured_by + ", above storage alone read with O_DIRECT (")
          .gb(*g.storage_gb_s)
          .text("), which bounds the direct paths only: this path may read through the page cache with "
                "read-ahead, and no buffered storage figure was measured");
      fine.emplace_back(g.label, std::move(c));
      continue;
    }
    const double ratio = *g.measured_gb_s / *g.ceiling_gb_s;
    const auto binding = [&](detail::Clause& to) -> detail::Clause& {
      return g.binding_hop.empty() ? to.text(g.binding) : to.text(g.binding_hop + " ").gb(*g.ceiling_gb_s).text(" measured");
    };
    if (ratio >= 0.9 || g.storage_bound) {
      c.text(", ").pct(ratio).text(" of the ceiling ~").gb(*g.ceiling_gb_s).text(" set by ");
      binding(c);
      // Never more than 100% of a ceiling without saying why it does not bound the figure.
      if (ratio > 1.0) binding(c.text(" (above it: ")).text(" does not bound this read as measured)");
      fine.emplace_back(g.label, std::move(c));
    } else {
      // With a hop of unknown rate the ceiling is an upper bound only: the read may be all
      // the storage gives (issue 43).
      const bool open = !g.ceiling_unknown.empty();
      c.text(", ").pct(ratio).words(open ? " of its ceiling of at most ~" : " of its ceiling ~",
                                    open ? " of their ceilings of at most ~" : " of their ceilings ~");
      c.gb(*g.ceiling_gb_s);
      if (open) c.text(", " + g.ceiling_unknown + " unknown");
      c.text("; no rule found a certain or likely cause");
      short_of.emplace_back(g.label, std::move(c));
    }
  }
  for (const auto& s : detail::said_once(fine)) d.nothing_wrong += (d.nothing_wrong.empty() ? "" : "; ") + s;
  for (auto& s : detail::said_once(short_of)) d.notes.push_back(std::move(s));
  if (d.nothing_wrong.empty() && d.findings.empty() && figures.runs.empty())
    d.notes.push_back("no measured figure: nothing to compare with the ceilings");
  return d;
}

}  // namespace gdsb::doctor
