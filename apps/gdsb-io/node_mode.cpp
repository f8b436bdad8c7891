#include "node_mode.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <optional>
#include <sstream>

#include "execute.hpp"
#include "gdsb/cpu_paths.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_spec.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/node_run.hpp"
#include "gdsb/runner.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/node_run.hpp"
#include "gdsb/units.hpp"
#include "node_output.hpp"
#include "run_io.hpp"
#include "survey.hpp"
#include "values.hpp"

namespace gdsb::io {
namespace {

constexpr uint64_t kDefaultSize = 1ULL << 30;

// Options of the command-line workload that the node mode reads; any other is refused.
constexpr const char* kNodeOptions[] = {"--dir", "--gpu", "--xfer-type", "--size", "--io-size",
                                        "--threads", "--duration", "--io-type"};

std::vector<XferType> node_modes(const Options& opt) {
  const bool given = std::find(opt.given.begin(), opt.given.end(), "--xfer-type") != opt.given.end();
  std::vector<XferType> out;
  std::istringstream in(given ? opt.xfer : "1,0,2");
  for (std::string item; std::getline(in, item, ',');) {
    const XferType x = parse_xfer(item, "-x/--xfer-type");
    if (std::find(out.begin(), out.end(), x) != out.end())
      throw UsageError("-x/--xfer-type " + opt.xfer + ": " + item + " is listed twice");
    out.push_back(x);
  }
  if (out.empty()) throw UsageError("-x/--xfer-type: give one or more types, e.g. 1,0,2");
  return out;
}

// A GPU's topology facts: the plan from a collected topology, or nothing (with why).
struct Topology {
  std::optional<topo::Snapshot> snapshot;
  std::string note;  // why there is none
};

Topology collect(const Options& opt) {
  Topology t;
  try {
    topo::CollectOptions co;
    t.snapshot = topo::collect_from(opt.topo_sources, co);
  } catch (const std::exception& e) {
    t.note = std::string("topology not collected: ") + e.what();
  }
  return t;
}

std::string shared_directory(const Options& opt) {
  if (!opt.dir.empty()) return opt.dir;
  const char* env = std::getenv("GDSB_SCRATCH");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(".");
}

// Each GPU's file size asked for: -s, else $GDSB_SURVEY_SIZE, else 1 GiB (the library fits it
// to the directories' free space).
uint64_t wanted_size(const Options& opt) {
  if (!opt.size.empty()) return parse_size(opt.size, "-s/--size");
  if (const char* env = std::getenv("GDSB_SURVEY_SIZE"); env != nullptr && *env != '\0')
    return parse_size(env, "GDSB_SURVEY_SIZE");
  return kDefaultSize;
}

NodeGpu node_gpu(int index, std::string bus_id) {
  NodeGpu n;
  n.index = index;
  n.pci_bus_id = std::move(bus_id);
  return n;
}

}  // namespace

GpuSelection parse_gpus(const std::string& text) {
  GpuSelection s;
  if (text.empty() || text == "all") {
    s.all = true;
    return s;
  }
  if (text.find(',') == std::string::npos) {
    s.count = static_cast<int>(parse_uint(text, "--gpus (all, a count or a list such as 0,2)", 64));
    if (s.count == 0) throw UsageError("--gpus 0: give all, a count from 1 or a list such as 0,2");
    return s;
  }
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const int g = static_cast<int>(parse_uint(item, "--gpus " + text + " (a list of GPU indexes)", 63));
    if (std::find(s.list.begin(), s.list.end(), g) != s.list.end())
      throw UsageError("--gpus " + text + ": GPU " + item + " is listed twice");
    s.list.push_back(g);
  }
  return s;
}

std::vector<int> selected_gpus(const GpuSelection& s, int first, int available) {
  std::vector<int> out = s.list;
  if (s.all) {
    for (int g = first; g < available; ++g) out.push_back(g);
  } else if (s.count > 0) {
    for (int g = first; g < first + s.count; ++g) out.push_back(g);
  }
  for (const int g : out)
    if (available >= 0 && g >= available)
      throw UsageError("--gpus: GPU " + std::to_string(g) + " is not here: this machine has " +
                       std::to_string(available) + " GPU(s) (indexes 0.." + std::to_string(available - 1) + ")");
  return out;
}

bool node_mode_requested(const Options& opt) {
  return !opt.gpus_text.empty() && opt.workload.empty() && opt.job_file.empty();
}

int run_node(const Options& opt, const std::atomic<bool>& stop, ProgressLine& progress) {
  for (const auto& g : opt.given)
    if (std::find(std::begin(kNodeOptions), std::end(kNodeOptions), g) == std::end(kNodeOptions))
      throw UsageError(g + " is not used by the node mode (--gpus without --workload): it takes -D, -d, -x, "
                           "-s, -i, -w, -T and -I");
  for (const auto& p : opt.preset_options)
    if (p == "--shards" || p == "--shard-size" || p == "--layers" || p == "--block-size" || p == "--kv-blocks" ||
        p == "--write-share" || p == "--files" || p == "--file-size" || p == "--topo-json")
      throw UsageError(p + " belongs to the workload presets: give --workload NAME, or leave it out of the node mode");
  const std::vector<XferType> modes = node_modes(opt);
  const IoPattern pattern = parse_pattern(opt.io_type, "-I/--io-type");
  if (pattern_is_write(pattern)) throw UsageError("-I/--io-type: the node mode measures reads (read or randread)");
  const uint64_t io_size = parse_size(opt.io_size, "-i/--io-size");
  if (opt.duration_s < 0) throw UsageError("-T/--duration: must not be negative");
  if (!opt.json_file.empty()) report::check_output_path(io_json_target(opt.json_file), opt.allow_overwrite);
  if (!opt.html_file.empty()) report::check_output_path(opt.html_file, opt.allow_overwrite);

  gpu::GpuPathDeps deps = opt.fake_gpu.empty() ? gpu::default_gpu_path_deps()
                                               : gpu::fake_gpu_path_deps(gpu::load_fake_gpu_spec(opt.fake_gpu));
  const Availability usable = deps.service ? deps.service->probe() : Availability::no("no GPU service");
  const GpuSelection selection = parse_gpus(opt.gpus_text);
  const bool recorded = !opt.topo_sources.live();
  if (recorded && !opt.dry_run)
    throw UsageError("the node mode measures this machine: a recorded topology (" + opt.topo_sources.description() +
                     ") goes with --dry-run only");
  if (!usable.ok && !(opt.dry_run && recorded))
    throw RuntimeError("--gpus: no GPU can take part here: " + usable.reason);

  NodePlan plan;
  const Topology topology = collect(opt);
  std::optional<topo::TopologyView> view;
  if (topology.snapshot) view.emplace(*topology.snapshot);
  plan.topology_note = topology.note;
  plan.topology_source = recorded ? opt.topo_sources.description() : "collected live";
  if (usable.ok) {
    for (const int g : selected_gpus(selection, opt.gpu, deps.service->device_count()))
      plan.gpus.push_back(node_gpu(g, deps.service->properties(g).pci_bus_id));
  } else {
    // A recorded topology's GPUs, in bus order, as CUDA's default PCI_BUS_ID order numbers them.
    int g = 0;
    for (const topo::Device* d : view ? view->gpus() : std::vector<const topo::Device*>{})
      plan.gpus.push_back(node_gpu(g++, d->bdf));
    std::vector<int> keep = selected_gpus(selection, opt.gpu, static_cast<int>(plan.gpus.size()));
    std::erase_if(plan.gpus, [&](const NodeGpu& n) { return std::find(keep.begin(), keep.end(), n.index) == keep.end(); });
  }
  if (plan.gpus.empty()) throw UsageError("--gpus " + opt.gpus_text + ": no GPU selected");
  // Directories (the GPU's own local file system where the live topology shows one) and the
  // node's ceiling: every GPU reading its own directory's sources at once.
  topo::NodeLayoutOptions layout;
  layout.shared_dir = shared_directory(opt);
  layout.shared_only = !opt.dir.empty();
  layout.recorded = recorded;
  topo::lay_out_node(plan, topology.snapshot ? &*topology.snapshot : nullptr, layout);

  if (opt.dry_run) {
    (void)std::fputs(node_plan_text(plan).c_str(), stdout);
    return kExitOk;
  }

  plan.file_size = topo::node_file_size(plan, wanted_size(opt), "-D", "-s");
  plan.seconds = opt.duration_s > 0 ? opt.duration_s : survey_seconds();
  plan.threads = opt.threads > 1 || std::find(opt.given.begin(), opt.given.end(), "--threads") != opt.given.end()
                     ? opt.threads
                     : topo::node_threads(plan.gpus.size());

  RunContext context = collect_context();
  PathRegistry registry;
  registry.add(make_cpu_only_path());
  gpu::add_gpu_paths(registry, deps);
  const Runner runner(registry);
  topo::NodeRun run(runner, plan, "gdsb-node");
  const bool written = run.write_files(&stop, [&](const NodeGpu& n) {
    if (progress.enabled())
      (void)std::fprintf(stderr, "gdsb-io: writing %s for GPU %d: %s\n", format_size(plan.file_size).c_str(), n.index,
                         n.file.c_str());
  });

  std::vector<RunResult> all;
  int code = kExitOk;
  NodeReadOptions ro;
  ro.pattern = pattern;
  ro.file_size = plan.file_size;
  ro.io_size = io_size;
  ro.threads = plan.threads;
  ro.seconds = plan.seconds;
  ro.stop = &stop;
  ro.adjust = [&](Workload& w) { apply_extras(opt, w); };
  for (const XferType x : modes) {
    if (!written || stop.load()) break;
    std::vector<Workload> jobs;  // for the progress labels
    for (const auto& n : plan.gpus) jobs.push_back(node_job({n.index, n.file}, x, ro));
    ro.run_options = [&](std::size_t i) {
      RunOptions r;
      r.on_progress = progress.for_job(i, job_label(i, jobs.size(), jobs[i]));
      return r;
    };
    ro.on_done = [&](std::size_t i) { progress.finish_job(i); };
    const NodeMode& m = run.read(x, ro);
    progress.clear();
    for (const auto& r : m.runs) {
      if (r.status == RunStatus::Failed) {
        print_error("GPU " + std::to_string(r.workload.gpu) + ": " + r.reason);
        code = std::max(code, kExitRuntime);
      }
      all.push_back(r);
    }
  }
  progress.clear();
  (void)std::fputs(node_text(plan).c_str(), stdout);
  (void)std::fflush(stdout);
  const bool interrupted = stop.load();
  if (!opt.json_file.empty() || !opt.html_file.empty()) {
    const nlohmann::json node = topo::node_json(plan);
    write_io_report(io_json_target(opt.json_file), opt.html_file, opt.argv, context, all, interrupted,
                    opt.allow_overwrite, {{"node", node}});
  }
  if (interrupted) {
    print_error("interrupted; the node's files were removed");
    return kExitInterrupted;
  }
  return code;
}

}  // namespace gdsb::io
