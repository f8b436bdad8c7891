#include "doctor_app.hpp"

#include <cstdlib>
#include <iostream>
#include <map>

#include "gdsb/doctor/diagnose.hpp"
#include "gdsb/doctor/live.hpp"
#include "gdsb/doctor/render.hpp"
#include "gdsb/doctor/topo_json_reader.hpp"
#include "gdsb/cli/tool_flags.hpp"
#include "gdsb/error.hpp"
#include "gdsb/cpu_paths.hpp"
#include "gdsb/gpu/cuda_service.hpp"
#include "gdsb/gpu/fake_gpu_spec.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/p2p/measure.hpp"
#include "gdsb/p2p/service_layers.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/report/document.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/stop_signals.hpp"
#include "gdsb/topo/source_options.hpp"
#include "gdsb/units.hpp"
#include "gdsb/version.hpp"

namespace gdsb::doctor_app {
namespace {

void validate(const Options& o) {
  const bool recorded = !o.topo_json.empty() || !o.sources.live() || !o.io_docs.empty() ||
                        !o.p2p_doc.empty();
  if (o.gpu_given && recorded)
    throw UsageError("--gpu picks the GPU of a live diagnosis (this machine); recorded inputs "
                     "name their GPUs by PCI address");
  if (!o.io_dir.empty() && recorded)
    throw UsageError("--io-dir measures this machine; it cannot be combined with recorded "
                     "inputs (--topo, --io, --p2p, --from-snapshot, ...)");
  if (!o.topo_json.empty() && !o.sources.live())
    throw UsageError("--topo and " + o.sources.description() +
                     " both describe the topology; give one");
  if (!o.fake_gpu.empty() && recorded)
    throw UsageError("--fake-gpu stands in for this machine's GPUs in a live diagnosis; recorded inputs name "
                     "their own GPUs");
  if (o.budget_s < 5) throw UsageError("--budget must be at least 5 s (the ladder has 6 steps)");
  if (o.gpu < 0) throw UsageError("--gpu must be a CUDA ordinal (0, 1, ...)");
}

report::Document load(const std::string& path, report::DocKind kind, const char* option) {
  report::Document d = report::load_document(path);
  if (d.kind != kind)
    throw UsageError(std::string(option) + " " + path + ": is a " +
                     std::string(report::schema_name(d.kind)) + " document; " + option +
                     " needs " + std::string(report::schema_name(kind)));
  return d;
}

topo::CollectOptions collect_options(const Options& o) {
  topo::CollectOptions co;
  if (const char* e = std::getenv("CUFILE_ENV_PATH_JSON")) co.cufile_env_path = e;
  co.use_nvml = !o.no_nvml;
  return co;
}

int finish(const Options& o, const doctor::Diagnosis& d, const doctor::Figures& f,
           const nlohmann::json& inputs, const RunContext& ctx, bool interrupted) {
  doctor::render_text(std::cout, d);
  if (!o.json_path.empty() || !o.html_path.empty()) {
    RunContext c = ctx;
    c.ended_at = utc_now_iso8601();
    doctor::DocumentMeta meta;
    meta.tool_version = std::string(version());
    meta.argv = o.argv;
    meta.context = c;
    meta.inputs = inputs;
    meta.interrupted = interrupted;
    const nlohmann::json doc = doctor::to_json(d, f, meta);
    if (!o.json_path.empty())
      report::write_output_atomic(o.json_path, doc.dump(2) + "\n", o.allow_overwrite);
    if (!o.html_path.empty()) report::write_html(doc, o.html_path, o.allow_overwrite);
  }
  if (interrupted) return kExitInterrupted;
  // No NVIDIA GPU: GDS does not apply, whatever the storage findings say (issue 29).
  if (!d.not_applicable.empty()) return kExitOk;
  return d.has_problem() ? kExitCheckFailed : kExitOk;
}

int run_recorded(const Options& o, const RunContext& ctx) {
  std::optional<doctor::Platform> platform;
  nlohmann::json inputs = {{"topo", nullptr}, {"io", o.io_docs}, {"p2p", nullptr}};
  if (!o.topo_json.empty()) {
    const report::Document d = load(o.topo_json, report::DocKind::Topo, "--topo");
    platform = doctor::platform_from_topo_json(d.json, o.topo_json);
    inputs["topo"] = {{"kind", "gdsbench.topo/1"}, {"path", o.topo_json}};
  } else if (!o.sources.live()) {
    platform = doctor::platform_from_snapshot(topo::collect_from(o.sources, collect_options(o)),
                                              o.sources.description());
    inputs["topo"] = {{"kind", "topology source"}, {"path", o.sources.description()}};
  }
  doctor::Figures figures;
  for (const auto& p : o.io_docs)
    doctor::add_io_document(figures, load(p, report::DocKind::Io, "--io").json, p);
  if (!o.p2p_doc.empty()) {
    doctor::add_p2p_document(figures, load(o.p2p_doc, report::DocKind::P2p, "--p2p").json,
                             o.p2p_doc);
    inputs["p2p"] = o.p2p_doc;
  }
  const doctor::Diagnosis d = doctor::diagnose(platform ? &*platform : nullptr, figures);
  return finish(o, d, figures, inputs, ctx, false);
}

int run_live(const Options& o, const RunContext& ctx) {
  const StopSignals signals("gdsb-doctor", "stopping after the current step");
  // CUDA, or with --fake-gpu the host-memory fake GPU service (tests): it lists the GPUs whose
  // host links are measured and that read in the storage steps, and moves their bytes.
  PathRegistry registry;
  std::shared_ptr<gpu::GpuService> gpus;
  std::unique_ptr<p2p::CopyTimer> timer;
  topo::CollectOptions co = collect_options(o);
  if (o.fake_gpu.empty()) {
    registry = make_default_registry();
    timer = p2p::make_cuda_copy_timer();
    gpus = gpu::make_cuda_service();
  } else {
    const gpu::GpuPathDeps fake = gpu::fake_gpu_path_deps(gpu::load_fake_gpu_spec(o.fake_gpu));
    registry.add(make_cpu_only_path());
    gpu::add_gpu_paths(registry, fake);
    gpus = fake.service;
    timer = p2p::make_service_copy_timer(gpus);
    co.use_nvml = false;  // the fake's GPUs are not NVML's
  }
  doctor::LiveDeps deps{registry, *timer, [&] { return topo::collect_live(co); }, gpus.get()};
  doctor::LiveOptions lo;
  lo.io_dir = o.io_dir;
  lo.budget_s = o.budget_s;
  if (o.gpu_given) lo.gpu = o.gpu;
  lo.file_size = o.size;
  lo.stop = &signals.flag();
  lo.progress = [](const std::string& l) { std::cerr << "gdsb-doctor: " << l << '\n'; };
  doctor::LiveResult live = doctor::run_live(lo, deps);
  doctor::Diagnosis d =
      doctor::diagnose(live.platform ? &*live.platform : nullptr, live.figures);
  d.steps = live.steps;
  const nlohmann::json inputs = {{"live", {{"io_dir", o.io_dir}, {"budget_s", o.budget_s},
                                           {"gpu", o.gpu_given ? nlohmann::json(o.gpu) : nlohmann::json("all")}}}};
  return finish(o, d, live.figures, inputs, ctx, live.interrupted || signals.stopped());
}

}  // namespace

void setup_doctor(CLI::App& app, Options& opt) {
  app.description(
      "gdsb-doctor: why is this node's storage -> GPU path slow? Measures (or reads recorded "
      "reports), compares every figure with the ceiling of each hop and names the causes with "
      "evidence, fix and the figure to expect. Without arguments: this machine, without a "
      "scratch file (topology, stack, host link).\nExit: 0 nothing wrong, 3 a certain or likely "
      "finding, 1 runtime error, 2 usage.");
  auto* io_dir = app.add_option("--io-dir", opt.io_dir,
                                "Live: measure this machine, scratch file in DIR (the storage "
                                "under test)")
                     ->check(CLI::ExistingDirectory);
  app.add_option("--budget", opt.budget_s, "Live: time for the whole ladder (default 60s)")
      ->transform(CLI::AsNumberWithUnit(std::map<std::string, double>{{"s", 1}, {"m", 60}},
                                        CLI::AsNumberWithUnit::CASE_INSENSITIVE))
      ->needs(io_dir);
  app.add_option("--gpu", opt.gpu,
                 "Live: CUDA ordinal of the one GPU to read (default: every GPU reads at once)")
      ->each([&opt](const std::string&) { opt.gpu_given = true; });
  app.add_option_function<std::string>(
         "--size", [&opt](const std::string& s) { opt.size = parse_size(s, "--size"); },
         "Live: scratch file size (default min(1G, half the free space))")
      ->needs(io_dir);
  app.add_option("--topo", opt.topo_json, "Recorded: gdsb-topo's JSON report (gdsbench.topo/1)");
  topo::add_source_options(app, opt.sources);
  app.add_option("--io", opt.io_docs, "Recorded: gdsb-io's JSON report(s) (gdsbench.io/1)");
  app.add_option("--p2p", opt.p2p_doc, "Recorded: gdsb-p2p --measure JSON (gdsbench.p2p/1)");
  app.add_option("--json", opt.json_path, "Write the gdsbench.doctor/1 report to FILE");
  app.add_option("--html", opt.html_path, "Write the diagnosis as a self-contained HTML page");
  app.add_flag("--allow-overwrite", opt.allow_overwrite,
               "Replace an existing file that is not a gdsbench report");
  app.add_option("--fake-gpu", opt.fake_gpu,
                 "Live, tests: the host-memory fake GPU service described by FILE ({\"devices\": 8}) "
                 "instead of CUDA (no cuFile: -x 0 is waived)")
      ->check(CLI::ExistingFile);
  app.add_flag("--no-nvml", opt.no_nvml, "Do not ask NVML for GPU facts (live topology)");
  cli::add_tool_flags(app, "gdsb-doctor");
}

int run_doctor(const Options& opt) {
  try {
    validate(opt);
    if (!opt.json_path.empty()) report::check_output_path(opt.json_path, opt.allow_overwrite);
    if (!opt.html_path.empty()) report::check_output_path(opt.html_path, opt.allow_overwrite);
    const RunContext ctx = collect_context();
    // No input at all: this machine, without a scratch file (topology, stack, host link).
    const bool recorded = !opt.topo_json.empty() || !opt.sources.live() ||
                          !opt.io_docs.empty() || !opt.p2p_doc.empty();
    return recorded ? run_recorded(opt, ctx) : run_live(opt, ctx);
  } catch (const Error& e) {
    std::cerr << "gdsb-doctor: " << e.what() << '\n';
    return exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "gdsb-doctor: " << e.what() << '\n';
    return kExitRuntime;
  }
}

int doctor_main(int argc, char** argv) {
  CLI::App app{"gdsb-doctor"};
  Options opt;
  setup_doctor(app, opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  opt.argv.assign(argv, argv + argc);
  return run_doctor(opt);
}

}  // namespace gdsb::doctor_app
