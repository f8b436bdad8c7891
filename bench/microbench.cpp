// Hot-path costs of the engine: one histogram record per I/O, one offset per I/O, and the
// -V pattern fill/check per byte. Run: build/release/bench/gdsb-microbench
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "gdsb/histogram.hpp"
#include "gdsb/offsets.hpp"
#include "gdsb/verify.hpp"

namespace {

void BM_HistogramRecord(benchmark::State& state) {
  gdsb::LatencyHistogram h;
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> ln(11.0, 1.0);  // ~60 us typical latencies
  std::vector<uint64_t> values(4096);
  for (auto& v : values) v = static_cast<uint64_t>(ln(rng));
  std::size_t i = 0;
  for (auto _ : state) {
    h.record(values[i++ & 4095]);
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HistogramRecord);

void BM_HistogramMergeAndSummary(benchmark::State& state) {
  gdsb::LatencyHistogram a, b;
  for (uint64_t v = 1; v < 1000000; v += 7) b.record(v);
  for (auto _ : state) {
    a.merge(b);
    benchmark::DoNotOptimize(a.summary());
  }
}
BENCHMARK(BM_HistogramMergeAndSummary);

void BM_Offsets(benchmark::State& state) {
  gdsb::OffsetPlan plan;
  plan.region = {0, 0, uint64_t{1} << 40};  // 1 TiB region: 2^28 blocks of 4 KiB
  plan.io_size = 4096;
  plan.random = state.range(0) != 0;
  plan.seed = 7;
  gdsb::OffsetGenerator gen(plan);
  uint64_t off = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    if (!gen.next(off)) gen.start_pass(gen.pass() + 1);
    sum += off;
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(plan.random ? "random (Feistel permutation)" : "sequential");
}
BENCHMARK(BM_Offsets)->Arg(0)->Arg(1);

void BM_PatternFillAndCheck(benchmark::State& state) {
  std::vector<std::byte> buf(static_cast<std::size_t>(state.range(0)));
  uint64_t off = 0;
  for (auto _ : state) {
    gdsb::fill_pattern(buf, off, 3);
    benchmark::DoNotOptimize(gdsb::find_pattern_mismatch(buf, off, 3));
    off += buf.size();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PatternFillAndCheck)->Arg(4096)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
