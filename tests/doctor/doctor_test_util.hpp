// Scenario helpers for the doctor tests: a recorded topology (the topology fixture
// builder's sysfs trees, read back by gdsb-topo's collector), gdsb-io runs written by
// gdsb-io's own document writer with path evidence from gdsb-io's own decide_path, and
// gdsb-p2p measurement documents shaped as docs/p2p-schema.md.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_builder.hpp"
#include "gdsb/doctor/diagnose.hpp"
#include "gdsb/doctor/inputs.hpp"
#include "gdsb/doctor/render.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/path_evidence.hpp"
#include "gdsb/report/io_document.hpp"
#include "gdsb/topo/collect.hpp"

namespace gdsb::doctor::testing {

namespace fx = gdsb::topo::fixture;

inline Platform platform_of(const fx::Machine& m) {
  fx::TempDir dir;
  fx::write_sysfs(m, dir.path() / "root");
  return platform_from_snapshot(topo::collect_sysfs_root(dir.path() / "root", {}), "fixture");
}

inline std::string bdf(int dev) {
  char b[32];
  std::snprintf(b, sizeof b, "0000:00:%02x.0", dev);
  return b;
}

// A VM as the 4 x H200 machine of issue 35: its GPUs on the flat bus 00 at the addresses the
// fake GPU service gives them (0000:00:0N.0 for device N), two virtio disks and a virtio NIC.
inline fx::Machine vm_with_gpus(int gpus) {
  fx::Machine m = fx::make_flat_vm();
  fx::Dev gpu = *fx::find(m, "0000:00:06.0");
  m.devs.clear();
  auto add = [&](int dev, uint16_t device, uint32_t cls) -> fx::Dev& {
    fx::Dev d;
    d.bdf = bdf(dev);
    d.vendor = 0x1af4;
    d.device = device;
    d.class_code = cls;
    m.devs.push_back(d);
    return m.devs.back();
  };
  add(0x10, 0x1042, 0x018000).block = {"vda"};
  add(0x11, 0x1042, 0x018000).block = {"vdb"};
  add(0x12, 0x1041, 0x020000).net = {"eth0"};
  for (int i = 0; i < gpus; ++i) {
    gpu.bdf = bdf(i);
    m.devs.push_back(gpu);
  }
  return m;
}

// GB/s (base 1000) as the GiB/s a run records.
inline double gib(double gb_s) { return gb_s * 1e9 / 1073741824.0; }

inline std::string text_of(const Diagnosis& d) {
  std::ostringstream out;
  render_text(out, d);
  return out.str();
}

inline std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// The HGX H100 recording (tests/doctor/fixtures/hgx-h100-lspci-vvv.txt), read by hand: each
// GPU's address and its one NVMe drive's below the same switch, GPU0-7 in PCI order.
inline constexpr const char* kHgxGpuAndDrive[8][2] = {
    {"0000:19:00.0", "0000:18:00.0"}, {"0000:3b:00.0", "0000:3a:00.0"}, {"0000:4c:00.0", "0000:4b:00.0"},
    {"0000:5d:00.0", "0000:5c:00.0"}, {"0000:9b:00.0", "0000:9a:00.0"}, {"0000:bb:00.0", "0000:ba:00.0"},
    {"0000:cb:00.0", "0000:ca:00.0"}, {"0000:db:00.0", "0000:da:00.0"}};

#ifdef GDSB_DOCTOR_FIXTURES
inline Platform hgx_platform() {
  return platform_from_snapshot(topo::collect_lspci_text(GDSB_DOCTOR_FIXTURES "/hgx-h100-lspci-vvv.txt"), "hgx");
}
#endif

inline RunResult run(XferType x, double gib_s, std::string path_used = "posix",
                     uint32_t threads = 4, uint64_t io_size = 1ULL << 20) {
  RunResult r;
  r.workload.file = "/raid/f";
  r.workload.file_size = 1ULL << 30;
  r.workload.xfer = x;
  r.workload.threads = threads;
  r.workload.io_size = io_size;
  r.workload.runtime_s = 5;
  r.path.path_used = std::move(path_used);
  r.result.seconds = 5;
  r.result.throughput_gib_s = gib_s;
  r.result.bytes = static_cast<uint64_t>(gib_s * 5 * 1073741824.0);
  r.result.ops = r.result.read_ops = r.result.bytes >> 20;
  return r;
}

// A run that did not run (Waived or Failed) with gdsb-io's reason, and no figures.
inline RunResult not_run(XferType x, RunStatus status, std::string reason) {
  RunResult r = run(x, 0);
  r.status = status;
  r.reason = std::move(reason);
  r.result = {};
  return r;
}

// A cuFile run whose path and evidence come from gdsb-io's decide_path on these facts.
inline RunResult cufile_run(double gib_s, const gpu::PathFacts& facts, uint32_t threads = 4) {
  RunResult r = run(XferType::GpuDirect, gib_s, "", threads);
  r.path = gpu::decide_path(facts);
  return r;
}

inline gpu::PathFacts no_nvfs_facts() {
  gpu::PathFacts f;
  f.library = "libcufile.so.0";
  f.config.path = "/etc/cufile.json";
  f.config.found = true;
  f.handles_registered = true;
  f.reads = 100;
  return f;
}

inline gpu::PathFacts nvfs_facts(bool counters_move) {
  gpu::PathFacts f = no_nvfs_facts();
  f.before.loaded = f.after.loaded = true;
  f.before.version = "2.20.5";
  f.before.stats_readable = f.after.stats_readable = true;
  f.after.reads = counters_move ? 100 : 0;
  return f;
}

// Through gdsb-io's writer and back, as gdsb-doctor --io reads a file; env: the CUDA_*
// variables the report's context records.
inline Figures figures_of(const std::vector<RunResult>& runs,
                          const std::map<std::string, std::string>& env = {}) {
  RunContext context;
  context.env = env;
  const auto doc = report::io_document({"gdsb-io", "0.1.0"}, {"gdsb-io"}, context, runs, false);
  Figures f;
  add_io_document(f, nlohmann::json::parse(doc.dump()), "io.json");
  return f;
}

inline nlohmann::json p2p_doc(double h2d, double d2h, const std::string& bdf) {
  return {{"schema", "gdsbench.p2p/1"},
          {"gpus", {{{"index", 0}, {"bdf", bdf}}}},
          {"measurements",
           {{"h2d", {{{"gpu", 0}, {"gb_s", h2d}}}}, {"d2h", {{{"gpu", 0}, {"gb_s", d2h}}}}}}};
}

// The diagnosis of a recorded machine with these runs (and a p2p document when given).
inline Diagnosis diagnose_with(const fx::Machine& m, const std::vector<RunResult>& runs,
                               const nlohmann::json& p2p = nullptr) {
  Platform p = platform_of(m);
  Figures f = figures_of(runs);
  if (!p2p.is_null()) add_p2p_document(f, p2p, "p2p.json");
  return diagnose(&p, f);
}

inline const Finding* find_rule(const Diagnosis& d, const std::string& rule) {
  for (const auto& f : d.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// The first finding whose title contains needle (rules with several causes, as compat-mode).
inline const Finding* find_titled(const Diagnosis& d, const std::string& needle) {
  for (const auto& f : d.findings)
    if (contains(f.title, needle)) return &f;
  return nullptr;
}

inline bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (contains(s, needle)) return true;
  return false;
}

}  // namespace gdsb::doctor::testing
