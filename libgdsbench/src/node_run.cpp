#include "gdsb/node_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "gdsb/error.hpp"

namespace gdsb {

Workload node_job(const NodeReader& r, XferType x, const NodeReadOptions& o) {
  Workload w;
  w.name = o.name + "-gpu" + std::to_string(r.gpu);
  w.file = r.file;
  w.file_size = o.file_size;
  w.io_size = std::min(o.io_size, o.file_size);
  w.xfer = x;
  w.pattern = o.pattern;
  w.gpu = r.gpu;
  w.threads = o.threads;
  w.runtime_s = o.seconds;
  if (o.adjust) o.adjust(w);
  w.allow_overwrite = true;  // the run's own file
  return w;
}

std::vector<RunResult> run_at_once(const Runner& runner, const std::vector<Workload>& jobs,
                                   const std::function<RunOptions(std::size_t)>& options_for,
                                   const std::function<void(std::size_t)>& on_done) {
  std::vector<RunResult> out(jobs.size());
  {
    std::vector<std::jthread> threads;
    threads.reserve(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i)
      threads.emplace_back([&, i] {
        RunResult& r = out[i];
        try {
          r = runner.run(jobs[i], options_for ? options_for(i) : RunOptions{});
        } catch (const std::exception& e) {
          r = RunResult{};
          r.workload = jobs[i];
          r.status = RunStatus::Failed;
          r.reason = e.what();
        }
        if (on_done) on_done(i);
      });
  }
  return out;
}

NodeMode read_at_once(const Runner& runner, const std::vector<NodeReader>& readers, XferType x,
                      const NodeReadOptions& o) {
  NodeMode m;
  m.xfer = x;
  std::vector<Workload> jobs;
  for (const auto& r : readers) jobs.push_back(node_job(r, x, o));
  if (jobs.empty()) return m;
  const Availability a = runner.probe(jobs.front());
  if (!a.ok) {
    m.waived = a.reason;
    for (const auto& w : jobs) {
      RunResult r;
      r.workload = w;
      r.status = RunStatus::Waived;
      r.reason = a.reason;
      m.runs.push_back(std::move(r));
    }
    m.figure = node_figure(m.runs);
    return m;
  }
  const auto options_for = [&](std::size_t i) {
    RunOptions ro = o.run_options ? o.run_options(i) : RunOptions{};
    ro.stop = o.stop;
    return ro;
  };
  m.runs = run_at_once(runner, jobs, options_for, o.on_done);
  m.figure = node_figure(m.runs);
  return m;
}

bool write_scratch_file(const Runner& runner, const std::string& path, uint64_t size,
                        const std::atomic<bool>* stop) {
  Workload w;
  w.name = "scratch-fill";
  w.file = path;
  w.file_size = size;
  w.io_size = std::min<uint64_t>(1ULL << 20, size);
  w.xfer = XferType::CpuOnly;
  w.pattern = IoPattern::Write;
  w.odirect = false;
  w.fill_random = true;  // no two blocks alike
  w.threads = 1;
  RunOptions ro;
  ro.stop = stop;
  const RunResult r = runner.run(w, ro);
  if (r.status != RunStatus::Ok) throw RuntimeError("cannot write scratch file " + path + ": " + r.reason);
  return !r.interrupted;
}

ScratchFiles::~ScratchFiles() {
  for (const auto& p : paths_) ::unlink(p.c_str());
}

const std::string& ScratchFiles::add(std::string path) { return paths_.emplace_back(std::move(path)); }

}  // namespace gdsb
