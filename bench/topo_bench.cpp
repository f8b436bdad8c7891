// gdsb-topo collector + checks on the largest fixture: 2 sockets, 4 PCIe switches,
// 8 GPUs, 8 NVMe drives, 8 NICs (make_box(2, 2, 2, 2, 2)). Target: < 50 ms per run.
// The recorded tree is written once; each iteration reads it from scratch, as
// `gdsb-topo --sysfs-root` does, then runs every check and builds the JSON report.
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "fixture_builder.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/render.hpp"

namespace {

using namespace gdsb::topo;

// Argument 1: look device names up in pci.ids (what gdsb-topo does); 0: skip that.
CollectOptions bench_options(const benchmark::State& state) {
  CollectOptions o;
  o.use_hwloc = false;  // hwloc would describe this machine, not the fixture
  o.lookup_names = state.range(0) != 0;
  return o;
}

void BM_TopoSysfsCollectAndCheck(benchmark::State& state) {
  fixture::TempDir dir;
  fixture::write_sysfs(fixture::make_box(2, 2, 2, 2, 2), dir.path());
  for (auto _ : state) {
    Snapshot s = collect_sysfs_root(dir.path(), bench_options(state));
    TopologyView view(s);
    Report r = evaluate(s, view);
    auto j = to_json(s, view, r, RunContext{});
    benchmark::DoNotOptimize(j);
  }
}
BENCHMARK(BM_TopoSysfsCollectAndCheck)
    ->ArgName("names")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond);

void BM_TopoPciDumpCollectAndCheck(benchmark::State& state) {
  fixture::TempDir dir;
  auto path = dir.path() / "lspci-xxxx.txt";
  std::ofstream(path) << fixture::lspci_dump(fixture::make_box(2, 2, 2, 2, 2), 4096);
  for (auto _ : state) {
    Snapshot s = collect_pci_dump(path, bench_options(state));
    TopologyView view(s);
    Report r = evaluate(s, view);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_TopoPciDumpCollectAndCheck)
    ->ArgName("names")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond);

void BM_TopoChecksOnly(benchmark::State& state) {
  fixture::TempDir dir;
  fixture::write_sysfs(fixture::make_box(2, 2, 2, 2, 2), dir.path());
  Snapshot s = collect_sysfs_root(dir.path(), bench_options(state));
  for (auto _ : state) {
    TopologyView view(s);
    Report r = evaluate(s, view);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_TopoChecksOnly)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
