// The node's own figure in gdsb-cluster (issue 35): every GPU of the node reading at once,
// through the same library call as gdsb-io's node mode and the doctor (gdsb/topo/node_run.hpp),
// once per node (by its lowest rank), so the fleet compares nodes by it.
#include <filesystem>

#include "gdsb/cluster/node_report.hpp"
#include "gdsb/cpu_paths.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_spec.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/report/io_document.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/runner.hpp"
#include "gdsb/topo/node_run.hpp"

namespace gdsb::cluster {

Availability node_figure_probe(const NodeOptions& o) {
  if (o.io_dir.empty()) return Availability::no("no --io-dir given");
  if (o.no_cuda && !o.fake_gpu) return Availability::no("disabled by --no-cuda");
  const gpu::GpuPathDeps deps = o.fake_gpu ? gpu::fake_gpu_path_deps(*o.fake_gpu) : gpu::default_gpu_path_deps();
  const Availability a = deps.service ? deps.service->probe() : Availability::no("no GPU service");
  if (!a.ok) return Availability::no("no GPU can read here: " + a.reason);
  if (deps.service->device_count() < 1) return Availability::no("no GPU can read here: the service lists none");
  return Availability::yes();
}

nlohmann::json node_figure_phase(const NodeOptions& o, const NodeFacts& facts) {
  gpu::GpuPathDeps deps = o.fake_gpu ? gpu::fake_gpu_path_deps(*o.fake_gpu) : gpu::default_gpu_path_deps();
  const Availability a = deps.service->probe();
  if (!a.ok) throw RuntimeError("no GPU can read here: " + a.reason);
  topo::NodePlan plan;
  for (int g = 0; g < deps.service->device_count(); ++g) {
    topo::NodeGpu n;
    n.index = g;
    n.pci_bus_id = deps.service->properties(g).pci_bus_id;
    plan.gpus.push_back(std::move(n));
  }
  // The topology as the topology phase reads it; a recording (--topo-input) gives the plan and
  // the ceiling, and every GPU then reads --io-dir (the recording's mounts are not here).
  std::optional<topo::Snapshot> snap;
  try {
    topo::CollectOptions co;
    co.use_hwloc = !o.no_hwloc;
    co.use_nvml = false;
    co.lookup_names = false;
    snap = topo::collect_from(o.sources, co);
    plan.topology_source = o.sources.live() ? "collected live" : o.sources.description();
  } catch (const std::exception& e) {
    plan.topology_note = std::string("topology not collected: ") + e.what();
  }
  topo::NodeLayoutOptions layout;
  layout.shared_dir = o.io_dir;
  layout.recorded = !o.sources.live();
  topo::lay_out_node(plan, snap ? &*snap : nullptr, layout);
  plan.file_size = topo::node_file_size(plan, o.io_file_size, "--io-dir", "--io-size");
  plan.seconds = o.io_time_s;
  plan.threads = topo::node_threads(plan.gpus.size());

  PathRegistry paths;
  paths.add(make_cpu_only_path());
  gpu::add_gpu_paths(paths, deps);
  const Runner runner(paths);
  RunContext ctx = collect_context();
  std::vector<RunResult> runs;
  {
    topo::NodeRun run(runner, plan, "gdsb-cluster.node." + o.file_tag);
    if (run.write_files(o.stop)) {
      NodeReadOptions ro;
      ro.io_size = o.io_block;
      ro.threads = plan.threads;
      ro.seconds = plan.seconds;
      ro.stop = o.stop;
      for (const int mode : o.io_modes) {
        if (o.stop != nullptr && o.stop->load()) break;
        for (const auto& r : run.read(static_cast<XferType>(mode), ro).runs) runs.push_back(r);
      }
    }
  }
  ctx.ended_at = utc_now_iso8601();
  const bool interrupted = o.stop != nullptr && o.stop->load();
  nlohmann::json doc =
      nlohmann::json::parse(report::io_document({"gdsb-cluster", facts.version}, facts.argv, ctx, runs, interrupted).dump());
  doc["node"] = topo::node_json(plan);
  return doc;
}

}  // namespace gdsb::cluster
