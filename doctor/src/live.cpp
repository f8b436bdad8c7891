#include "gdsb/doctor/live.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gdsb/doctor/diagnose.hpp"
#include "gdsb/error.hpp"
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

// Removes the scratch file whatever happens (the runner created and marked it).
class Scratch {
 public:
  explicit Scratch(std::string path) : path_(std::move(path)) {}
  ~Scratch() { ::unlink(path_.c_str()); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

uint64_t scratch_size(const LiveOptions& o) {
  if (o.file_size > 0) return o.file_size;
  struct statvfs vfs {};
  if (::statvfs(o.io_dir.c_str(), &vfs) != 0)
    throw RuntimeError("--io-dir " + o.io_dir + ": " + std::strerror(errno));
  const uint64_t half = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize / 2;
  uint64_t size = std::min(kDefaultFile, half);
  size -= size % kMiB;
  if (size < 16 * kMiB)
    throw RuntimeError("--io-dir " + o.io_dir + ": not enough free space for a scratch file (" +
                       format_size(half * 2) + " free)");
  return size;
}

Workload read_job(const std::string& file, uint64_t size, XferType x, double seconds, int gpu) {
  Workload w;
  w.name = "doctor";
  w.file = file;
  w.file_size = size;
  w.io_size = kMiB;
  w.xfer = x;
  w.pattern = IoPattern::Read;
  w.threads = static_cast<uint32_t>(std::clamp<long>(::sysconf(_SC_NPROCESSORS_ONLN), 1, 4));
  w.runtime_s = seconds;
  w.gpu = gpu;
  w.allow_overwrite = true;  // our own scratch file
  return w;
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
  if (out.empty()) out.emplace_back(o.gpu, "");
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
    if (gpu == o.gpu || !s.gb_s) s.gb_s = hl.h2d_gb_s;
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

// Runs one job through the runner; waived or failed runs become "not run" with the reason.
void run_step(const std::string& name, const Workload& w, const LiveOptions& o,
              const LiveDeps& deps, LiveResult& out, const std::string& source) {
  Step s{name, false, "", std::nullopt, ""};
  if (o.stop && o.stop->load()) {
    s.reason = "interrupted before it ran";
    out.steps.push_back(s);
    return;
  }
  if (o.progress)
    o.progress(name + (w.runtime_s > 0
                           ? ", " + std::to_string(static_cast<int>(w.runtime_s)) + " s"
                           : std::string()));
  const Runner runner(deps.registry);
  const Availability a = runner.probe(w);
  RunResult r;
  if (!a.ok) {
    r.workload = w;
    r.status = RunStatus::Waived;
    r.reason = a.reason;
  } else {
    RunOptions ro;
    ro.stop = o.stop;
    try {
      r = runner.run(w, ro);
    } catch (const Error& e) {
      r.workload = w;
      r.status = RunStatus::Failed;
      r.reason = e.what();
    }
  }
  if (r.status == RunStatus::Ok) {
    s.ran = true;
    s.gb_s = run_gb_s(r);
    s.detail = detail::describe_run(r);
    for (const auto& warn : r.path.warnings) s.detail += "; " + warn;
  } else {
    s.reason = r.reason;
  }
  if (r.interrupted) out.interrupted = true;
  out.figures.runs.push_back(std::move(r));
  out.figures.run_sources.push_back(source);
  out.figures.run_ordering.push_back(cuda_ordering_of(collect_context().env));
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

  const double secs = step_seconds(o.budget_s);
  const uint64_t size = scratch_size(o);
  Scratch scratch(o.io_dir + "/gdsb-doctor." + std::to_string(::getpid()) + ".tmp");
  Workload fill = read_job(scratch.path(), size, XferType::CpuOnly, 0, o.gpu);
  fill.pattern = IoPattern::Write;
  fill.threads = 1;
  say("[3/6] writing a " + format_size(size) + " scratch file " + scratch.path());
  {
    const Runner runner(deps.registry);
    RunOptions ro;
    ro.stop = o.stop;
    const RunResult w = runner.run(fill, ro);
    if (w.status != RunStatus::Ok)
      throw RuntimeError("cannot write the scratch file " + scratch.path() + ": " + w.reason);
  }
  run_step(kStorageStep,
           read_job(scratch.path(), size, XferType::CpuOnly, secs, o.gpu), o, deps, out, "live -x 1");
  run_step(kBounceStep, read_job(scratch.path(), size, XferType::CpuGpu, secs, o.gpu),
           o, deps, out, "live -x 2");
  run_step(kCufileStep, read_job(scratch.path(), size, XferType::GpuDirect, secs, o.gpu), o,
           deps, out, "live -x 0");

  // -x 0 again, larger, when the first figures name no platform cause.
  const RunResult& x0 = out.figures.runs.back();
  Step retry{"[6/6] cuFile (-x 0) again, 4x threads and 4 MiB I/O", false, "", std::nullopt, ""};
  if (x0.status != RunStatus::Ok) {
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
      Workload big = x0.workload;
      big.threads = std::min<uint32_t>(big.threads * 4, 32);
      big.io_size = 4 * kMiB;
      run_step(retry.name, big, o, deps, out, "live -x 0 retry");
      return out;
    }
  }
  out.steps.push_back(retry);
  return out;
}

}  // namespace gdsb::doctor
