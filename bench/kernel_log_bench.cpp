// The kernel log reader (issue 36) on logs of 16 MiB to 1 GiB: one pass, linear in the size
// (Complexity(oN)), bounded memory (the log is fed in 1 MiB chunks, as a file is read).
// The text repeats real records: gpud's dmesg -T with Xid 119 and its GSP dump
// (tests/topo/fixtures/real/kernel-logs/gpud-xid119-dmesg-T.log), one NVRM Xid record every
// few lines, as on a node whose GPU is failing.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "gdsb/topo/kernel_log.hpp"

namespace {

std::string one_mib_of_log() {
  std::ifstream in(GDSB_XID_LOG);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string rec = ss.str();
  std::string out;
  while (out.size() + rec.size() <= (1u << 20)) out += rec;
  return out;
}

void BM_KernelLogRead(benchmark::State& state) {
  static const std::string chunk = one_mib_of_log();
  const auto mib = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    gdsb::topo::KernelLogReader r("bench");
    for (size_t i = 0; i < mib; ++i) r.feed(chunk);
    benchmark::DoNotOptimize(r.finish());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(mib * chunk.size()));
  state.SetComplexityN(static_cast<int64_t>(mib));
}
BENCHMARK(BM_KernelLogRead)->RangeMultiplier(4)->Range(16, 1024)->Unit(benchmark::kMillisecond)->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
