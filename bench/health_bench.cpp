// gdsb-topo --health on the real 8x H100 HGX recording (lspci -vvv, 517 devices): what one
// HealthCheckProgram run does between start and exit (read the known-good file, read the
// recording, name its devices from pci.ids, make the facts, compare, render the metrics).
// Target: < 200 ms. For contrast, the full check suite on the same input, which --health
// does not run. Results: docs/PERFORMANCE.md ("Health check").
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/health.hpp"

namespace {

using namespace gdsb::topo;
namespace fs = std::filesystem;

const fs::path kHgx = GDSB_HGX_LSPCI_TEXT;

CollectOptions options() {
  CollectOptions o;
  o.use_hwloc = false;  // a recording: nothing of this machine
  o.use_nvml = false;
  return o;  // names on, as gdsb-topo --health reads a recording without -nn
}

void BM_HealthCheckHgx(benchmark::State& state) {
  const fs::path expect = fs::temp_directory_path() / "gdsb-health-bench-good.json";
  {
    const Fingerprint good = make_fingerprint(collect_lspci_text(kHgx, options()), {});
    std::ofstream(expect) << fingerprint_document(good.facts, {}).dump(1);
  }
  std::size_t problems = 0;
  for (auto _ : state) {
    const FactMap expected = load_fingerprint(expect.string(), "--expect");
    const Fingerprint now = make_fingerprint(collect_lspci_text(kHgx, options()), {});
    const auto d = compare_with_expected(now, expected);
    const std::string prom = health_openmetrics(&now, &expected, d, {});
    problems += d.size();
    benchmark::DoNotOptimize(prom);
  }
  fs::remove(expect);
  if (problems != 0) state.SkipWithError("the recording differs from its own fingerprint");
}
BENCHMARK(BM_HealthCheckHgx)->Unit(benchmark::kMillisecond);

void BM_FullChecksHgx(benchmark::State& state) {
  for (auto _ : state) {
    const Snapshot s = collect_lspci_text(kHgx, options());
    const TopologyView view(s);
    const Report r = evaluate(s, view);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_FullChecksHgx)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
