#include "gdsb/doctor/live.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "gdsb/doctor/diagnose.hpp"
#include "gdsb/error.hpp"
#include "gdsb/node_run.hpp"
#include "gdsb/topo/node_run.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/units.hpp"
#include "gpu_groups.hpp"
#include "rules/rule_util.hpp"

namespace gdsb::doctor {
namespace {

constexpr uint64_t kMiB = 1ULL << 20;
constexpr uint64_t kDefaultFile = 1ULL << 30;
constexpr uint64_t kCopyBytes = 64 * kMiB;

// The names of the storage steps, said where they run and where they cannot.
constexpr const char* kScratchStep = "[3/6] scratch file";
constexpr const char* kStorageStep = "[4/6] storage alone (-x 1, O_DIRECT)";
constexpr const char* kBounceStep = "[5/6] CPU bounce (-x 2)";
constexpr const char* kCufileStep = "[6/6] cuFile (-x 0)";
constexpr const char* kRetryStep = "[6/6] cuFile (-x 0) again, 4x threads and 4 MiB I/O";

// The default file of each GPU: 1 GiB over the GPUs that share a directory, at least 256 MiB
// (the ladder's writes stay within the budget on eight GPUs: 2 GiB a directory at most).
uint64_t default_file_size(const topo::NodePlan& plan) {
  std::map<std::string, uint64_t> users;
  uint64_t most = 1;
  for (const auto& n : plan.gpus) most = std::max(most, ++users[n.directory]);
  const uint64_t each = std::max(kDefaultFile / most, 256 * kMiB);
  return each - each % kMiB;
}

// The GPUs whose host links are measured: every CUDA device when the service lists them,
// by CUDA ordinal with its PCI bus id; else --gpu's alone.
std::vector<std::pair<int, std::string>> host_link_gpus(const LiveOptions& o, const LiveDeps& deps) {
  std::vector<std::pair<int, std::string>> out;
  if (deps.gpus && deps.gpus->probe().ok)
    for (int i = 0; i < deps.gpus->device_count(); ++i) {
      std::string bdf;
      try {
        bdf = deps.gpus->properties(i).pci_bus_id;
      } catch (const Error&) {  // placed by its ordinal, as --gpu's is
      }
      out.emplace_back(i, bdf);
    }
  if (out.empty()) out.emplace_back(o.gpu.value_or(0), "");
  return out;
}

// "54.6 GB/s", or "54.1-54.9 GB/s" over several GPUs.
std::string span(const std::vector<double>& v) {
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const std::string a = detail::gb(*lo), b = detail::gb(*hi);
  return a == b ? a : a.substr(0, a.find(' ')) + "-" + b;
}

// A short pinned copy each way on every GPU: each GPU's host link bounds its own ceiling.
void host_link_step(const LiveOptions& o, const LiveDeps& deps, LiveResult& out) {
  Step s{"[2/6] pinned H2D/D2H (host link)", false, "", std::nullopt, ""};
  const Availability a = deps.timer.probe();
  if (!a.ok) {  // the step says why, once (no note repeats it)
    s.reason = a.reason;
    out.steps.push_back(s);
    return;
  }
  std::vector<std::string> measured;
  std::vector<std::pair<std::string, std::vector<std::string>>> failed;  // reason -> GPUs
  std::vector<double> h2d, d2h;
  for (const auto& [gpu, bdf] : host_link_gpus(o, deps)) {
    HostLink hl{gpu, bdf, std::nullopt, std::nullopt};
    try {
      for (auto kind : {p2p::CopyKind::HostToDevice, p2p::CopyKind::DeviceToHost}) {
        p2p::CopyCase c;
        c.kind = kind;
        c.src = c.dst = gpu;
        c.bytes = kCopyBytes;
        c.loops = 4;
        const auto secs = deps.timer.time_case(c, 1, 3);
        if (secs.empty()) continue;
        const double gb_s = static_cast<double>(c.bytes) * c.loops / p2p::median(secs) / 1e9;
        const bool to_gpu = kind == p2p::CopyKind::HostToDevice;
        (to_gpu ? hl.h2d_gb_s : hl.d2h_gb_s) = gb_s;
        (to_gpu ? h2d : d2h).push_back(gb_s);
      }
    } catch (const Error& e) {
      auto it = std::find_if(failed.begin(), failed.end(),
                             [&](const auto& f) { return f.first == e.what(); });
      if (it == failed.end()) it = failed.insert(failed.end(), {e.what(), {}});
      it->second.push_back("GPU" + std::to_string(gpu));
      continue;
    }
    measured.push_back("GPU" + std::to_string(gpu));
    if (gpu == o.gpu.value_or(0) || !s.gb_s) s.gb_s = hl.h2d_gb_s;
    out.figures.host_links.push_back(hl);
  }
  // Each reason once, with the GPUs it applies to.
  for (const auto& [why, gpus] : failed)
    out.figures.host_link_waived += (out.figures.host_link_waived.empty() ? "" : "; ") +
                                    std::string("pinned H2D/D2H not measured on ") +
                                    detail::gpu_set(gpus) + ": " + why;
  s.ran = !measured.empty();
  if (!s.ran) s.reason = std::move(out.figures.host_link_waived);  // said by the step alone
  else s.detail = "H2D " + span(h2d) + ", D2H " + span(d2h) + " on " + detail::gpu_set(measured);
  out.steps.push_back(s);
}

// The GPUs whose storage reads are measured, all at once: --gpu's alone, else every GPU the
// service lists; where it lists none (no driver) one reader under --gpu's index, so storage
// alone still runs and the GPU types are waived with the probe's reason.
std::vector<topo::NodeGpu> reading_gpus(const LiveOptions& o, const LiveDeps& deps) {
  std::vector<topo::NodeGpu> out;
  const bool listed = deps.gpus && deps.gpus->probe().ok && deps.gpus->device_count() > 0;
  if (listed && o.gpu && *o.gpu >= deps.gpus->device_count())
    throw UsageError("--gpu " + std::to_string(*o.gpu) + ": this machine has " +
                     std::to_string(deps.gpus->device_count()) + " GPU(s) (0.." +
                     std::to_string(deps.gpus->device_count() - 1) + ")");
  const auto add = [&](int i) {
    topo::NodeGpu n;
    n.index = i;
    if (listed) {
      try {
        n.pci_bus_id = deps.gpus->properties(i).pci_bus_id;
      } catch (const Error&) {  // placed by its ordinal
      }
    }
    out.push_back(std::move(n));
  };
  if (o.gpu || !listed)
    add(o.gpu.value_or(0));
  else
    for (int i = 0; i < deps.gpus->device_count(); ++i) add(i);
  return out;
}

// One node read as a step: every GPU's run kept in the figures (each charged to its GPU), the
// step's figure the aggregate where several GPUs read, each GPU's rate in its detail.
void node_step(const std::string& name, const NodeMode& m, const topo::NodePlan& plan, const std::string& source,
               LiveResult& out) {
  Step s{name, false, "", std::nullopt, ""};
  std::vector<std::string> measured;
  std::vector<double> rates;
  std::vector<std::pair<std::string, std::vector<std::string>>> failed;  // reason -> GPUs
  for (std::size_t i = 0; i < m.runs.size(); ++i) {
    const RunResult& r = m.runs[i];
    const std::string label = "GPU" + std::to_string(r.workload.gpu);
    if (r.status == RunStatus::Ok) {
      measured.push_back(label);
      rates.push_back(*run_gb_s(r));
    } else {
      auto it = std::find_if(failed.begin(), failed.end(), [&](const auto& f) { return f.first == r.reason; });
      if (it == failed.end()) it = failed.insert(failed.end(), {r.reason, {}});
      it->second.push_back(label);
    }
    if (r.interrupted) out.interrupted = true;
    out.figures.runs.push_back(r);
    out.figures.run_sources.push_back(source);
    out.figures.run_ordering.push_back(cuda_ordering_of(collect_context().env));
    out.figures.run_gpus.push_back(i < plan.gpus.size() ? plan.gpus[i].pci_bus_id : "");
  }
  s.ran = !measured.empty();
  if (m.runs.size() == 1) {
    if (s.ran) {
      s.gb_s = rates.front();
      s.detail = detail::describe_run(m.runs.front());
      for (const auto& warn : m.runs.front().path.warnings) s.detail += "; " + warn;
    }
  } else if (s.ran) {
    s.gb_s = m.figure.gb_s;
    s.detail = detail::gpu_set(measured) + " at once: " + span(rates) + " each, aggregate " +
               (m.figure.gb_s ? detail::gb(*m.figure.gb_s) : std::string("-")) + "; " +
               detail::describe_run(m.runs.front()) + " a GPU";
  }
  std::string why;
  for (const auto& [reason, gpus] : failed)
    why += (why.empty() ? "" : "; ") + (s.ran || failed.size() > 1 ? "not on " + detail::gpu_set(gpus) + ": " : "") +
           reason;
  if (s.ran && !why.empty()) s.detail += "; " + why;
  if (!s.ran) s.reason = why.empty() ? "interrupted before it ran" : why;
  out.steps.push_back(s);
}

}  // namespace

double step_seconds(double budget_s) { return std::clamp((budget_s - 10.0) / 5.0, 1.0, 10.0); }

LiveResult run_live(const LiveOptions& o, const LiveDeps& deps) {
  LiveResult out;
  auto say = [&](const std::string& l) {
    if (o.progress) o.progress(l);
  };
  say("[1/6] topology and software stack");  // steps carry the same numbers
  try {
    out.platform = platform_from_snapshot(deps.collect_topology(), "live");
    out.steps.push_back({"[1/6] topology and stack (gdsb-topo's collector)", true, "", std::nullopt,
                         std::to_string(out.platform->view->gpus().size()) + " GPU(s), " +
                             std::to_string(out.platform->snapshot->with_role(topo::Role::Nvme).size()) +
                             " NVMe drive(s)"});
  } catch (const Error& e) {
    out.steps.push_back({"[1/6] topology and stack (gdsb-topo's collector)", false, e.what(),
                         std::nullopt, ""});
  }
  say("[2/6] pinned H2D/D2H");
  host_link_step(o, deps, out);
  if (o.io_dir.empty()) {
    // Without --io-dir the doctor writes nothing: the storage steps need a scratch file on
    // the storage under test, and each says so.
    const std::string why =
        "needs --io-dir DIR (a scratch file on the storage under test); nothing was written";
    for (const char* name : {kScratchStep, kStorageStep, kBounceStep, kCufileStep})
      out.steps.push_back({name, false, why, std::nullopt, ""});
    return out;
  }

  // Every GPU (or --gpu's) reads at once (gdsb/topo/node_run.hpp, as gdsb-io --gpus all),
  // each from --io-dir: the user named the storage under test (a network mount on a node
  // with local NVMe must be read as named), so no GPU is moved to its own drive's file system.
  topo::NodePlan plan;
  plan.gpus = reading_gpus(o, deps);
  plan.topology_note = out.platform ? "" : "topology not collected";
  topo::NodeLayoutOptions layout;
  layout.shared_dir = o.io_dir;
  layout.shared_only = true;
  layout.shared_option = "--io-dir";
  topo::lay_out_node(plan, out.platform ? out.platform->snapshot.get() : nullptr, layout);
  plan.file_size = topo::node_file_size(plan, o.file_size > 0 ? o.file_size : default_file_size(plan), "--io-dir",
                                        "--size");
  plan.seconds = step_seconds(o.budget_s);
  plan.threads = plan.gpus.size() == 1 ? static_cast<uint32_t>(std::clamp<long>(::sysconf(_SC_NPROCESSORS_ONLN), 1, 4))
                                       : topo::node_threads(plan.gpus.size());
  const Runner runner(deps.registry);
  topo::NodeRun run(runner, plan, "gdsb-doctor");
  std::vector<std::string> dirs;
  for (const auto& n : plan.gpus)
    if (std::find(dirs.begin(), dirs.end(), n.directory) == dirs.end()) dirs.push_back(n.directory);
  std::string where;
  for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d;
  say(std::string(kScratchStep) + ": writing " + std::to_string(plan.gpus.size()) + " file(s) of " +
      format_size(plan.file_size) + " in " + where);
  if (!run.write_files(o.stop)) {
    out.interrupted = true;
    return out;
  }
  NodeReadOptions ro;
  ro.threads = plan.threads;
  ro.seconds = plan.seconds;
  ro.name = "doctor";
  ro.stop = o.stop;
  const auto step = [&](const char* name, XferType x, const char* source, const NodeReadOptions& opts) {
    if (o.stop && o.stop->load()) {
      out.steps.push_back({name, false, "interrupted before it ran", std::nullopt, ""});
      return;
    }
    say(std::string(name) + ", " + std::to_string(static_cast<int>(opts.seconds)) + " s" +
        (plan.gpus.size() > 1 ? ", " + std::to_string(plan.gpus.size()) + " GPUs at once" : ""));
    node_step(name, run.read(x, opts), plan, source, out);
  };
  step(kStorageStep, XferType::CpuOnly, "live -x 1", ro);
  step(kBounceStep, XferType::CpuGpu, "live -x 2", ro);
  step(kCufileStep, XferType::GpuDirect, "live -x 0", ro);

  // -x 0 again, larger, when the first figures name no platform cause.
  Step retry{kRetryStep, false, "", std::nullopt, ""};
  if (!out.steps.back().ran) {
    retry.reason = "-x 0 did not run";
  } else {
    const Diagnosis first = diagnose(out.platform ? &*out.platform : nullptr, out.figures);
    const auto platform_cause =
        std::find_if(first.findings.begin(), first.findings.end(), [](const Finding& f) {
          return f.confidence != Confidence::Possible && f.rule != "workload-limit";
        });
    if (platform_cause != first.findings.end()) {
      retry.reason = "not needed: " + platform_cause->title;
    } else if (!first.nothing_wrong.empty()) {
      retry.reason = "not needed: within 10% of the ceiling";
    } else {
      NodeReadOptions big = ro;
      big.threads = std::min<uint32_t>(ro.threads * 4, 32);
      big.io_size = 4 * kMiB;
      step(kRetryStep, XferType::GpuDirect, "live -x 0 retry", big);
      return out;
    }
  }
  out.steps.push_back(retry);
  return out;
}

}  // namespace gdsb::doctor
