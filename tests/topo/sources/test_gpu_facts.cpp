// GPU facts (the NVML provider's data) through a fake provider: BAR1 size from the
// driver, the idle-GPU link note, NUMA fallback, and their round trip through a snapshot.
#include <nlohmann/json.hpp>

#include "gdsb/topo/nvml_facts.hpp"
#include "gdsb/topo/render.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

constexpr const char* kGpu = "0000:03:00.0";

GpuFacts nvml_like(uint64_t memory, uint64_t bar1) {
  GpuFacts f;
  f.source = "nvml";
  f.name = "NVIDIA H100 80GB HBM3";
  f.memory_bytes = memory;
  f.bar1_total_bytes = bar1;
  f.bar1_used_bytes = 32ULL << 20;
  f.pcie_cur_gen = 5;
  f.pcie_cur_width = 16;
  f.pcie_max_gen = 5;
  f.pcie_max_width = 16;
  return f;
}

Outcome run_with(const fixture::Machine& m, const GpuFacts& f) {
  fixture::TempDir dir;
  fixture::write_sysfs(m, dir.path());
  Snapshot s = collect_sysfs_root(dir.path(), offline());
  apply_gpu_facts(s, FixedFacts(f));
  return evaluate_snapshot(std::move(s));
}

TEST(TopoGpuFacts, SmallBar1FromTheDriverFailsWithTheRemedy) {
  // The PCI resource says 128 GiB, but the driver maps 256 MiB: NVML's figure counts.
  auto o = run_with(fixture::make_box(1, 1, 1, 1, 0), nvml_like(80ULL << 30, 256ULL << 20));
  ASSERT_EQ(o.results("bar1").size(), 1U);
  const CheckResult* r = o.results("bar1").front();
  EXPECT_EQ(r->verdict, Verdict::Fail);
  EXPECT_NE(r->remedy.find("Resizable BAR"), std::string::npos) << r->remedy;
  EXPECT_NE(r->consequence.find("256 MiB"), std::string::npos) << r->consequence;
  EXPECT_TRUE(any_contains(r->evidence, "BAR1 256 MiB, 32 MiB used (nvml, NVIDIA H100"));
  EXPECT_TRUE(any_contains(r->evidence, "GPU memory 81920 MiB (nvml)"));
  EXPECT_EQ(o.report.verdict, Verdict::Fail);
}

TEST(TopoGpuFacts, LargeBar1Passes) {
  auto o = run_with(fixture::make_box(1, 1, 1, 1, 0), nvml_like(80ULL << 30, 128ULL << 30));
  EXPECT_EQ(o.worst("bar1"), Verdict::Pass);
  EXPECT_TRUE(any_contains(o.results("bar1").front()->evidence, "BAR1 131072 MiB"));
  // BAR1 below memory is the warning case.
  auto small = run_with(fixture::make_box(1, 1, 1, 1, 0), nvml_like(80ULL << 30, 64ULL << 30));
  EXPECT_EQ(small.worst("bar1"), Verdict::Warn);
}

TEST(TopoGpuFacts, Bar1FromNvmlEvenWhenTheInputHasNoBars) {
  fixture::TempDir dir;
  fixture::write_sysfs(fixture::make_box(1, 1, 1, 1, 0), dir.path());
  Snapshot s = collect_sysfs_root(dir.path(), offline());
  for (auto& d : s.devices) d.bars_known = false;  // like an input without BAR sizes
  auto without = evaluate_snapshot(s);
  EXPECT_EQ(without.worst("bar1"), Verdict::Waived);
  EXPECT_NE(without.results("bar1").front()->reason.find("NVML"), std::string::npos);
  apply_gpu_facts(s, FixedFacts(nvml_like(80ULL << 30, 128ULL << 30)));
  EXPECT_EQ(evaluate_snapshot(std::move(s)).worst("bar1"), Verdict::Pass);
}

TEST(TopoGpuFacts, WithoutNvmlALargeBar1PassesNamingNvml) {
  auto o = run_sysfs(fixture::make_box(1, 1, 1, 1, 0));
  EXPECT_EQ(o.worst("bar1"), Verdict::Pass);
  EXPECT_NE(o.results("bar1").front()->evidence.back().find("without NVML"), std::string::npos);
  // No driver on this machine (or a wrong path): no provider, a reason naming NVML.
  const NvmlFactsOpening nv = open_nvml_gpu_facts("/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(nv.provider, nullptr);
  EXPECT_NE(nv.unavailable_reason.find("NVML"), std::string::npos) << nv.unavailable_reason;
}

TEST(TopoGpuFacts, NvmlMaximumGenerationRefinesTheIdleGpuLinkNote) {
  auto m = fixture::make_box(1, 1, 1, 1, 0);
  fixture::find(m, kGpu)->cur_speed = 1;  // idle: Gen1 of Gen5
  auto plain = run_sysfs(m);
  const CheckResult* r = plain.titled("link", kGpu);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->verdict, Verdict::Warn);
  EXPECT_NE(r->consequence.find("NVML not available"), std::string::npos) << r->consequence;

  GpuFacts idle = nvml_like(80ULL << 30, 128ULL << 30);
  idle.pcie_cur_gen = 1;
  auto downclocked = run_with(m, idle);
  r = downclocked.titled("link", kGpu);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->verdict, Verdict::Warn);
  EXPECT_NE(r->consequence.find("idle power saving"), std::string::npos) << r->consequence;
  EXPECT_TRUE(any_contains(r->evidence, "nvml: PCIe Gen1 x16 now, Gen5 x16 max"));

  GpuFacts capped = idle;
  capped.pcie_max_gen = 3;  // the driver says it can never reach Gen5 here
  auto limited = run_with(m, capped);
  r = limited.titled("link", kGpu);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->verdict, Verdict::Fail);
  EXPECT_NE(r->remedy.find("BIOS PCIe speed"), std::string::npos) << r->remedy;
}

TEST(TopoGpuFacts, NvmlNumaNodeFillsAnUnknownSysfsNode) {
  auto m = fixture::make_box(1, 1, 1, 1, 0);
  for (auto& d : m.devs) d.numa = -1;
  GpuFacts f = nvml_like(80ULL << 30, 128ULL << 30);
  f.numa_node = 1;
  auto o = run_with(m, f);
  const Device* gpu = o.snapshot.find(kGpu);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(o.view->numa_of(*gpu), 1);
  EXPECT_EQ(run_sysfs(m).view->numa_of(*gpu), std::nullopt);
}

TEST(TopoGpuFacts, RecordedInputsNeverAskNvmlAndSnapshotsReplayTheFacts) {
  fixture::TempDir dir;
  fixture::write_sysfs(fixture::make_box(1, 1, 1, 1, 0), dir.path() / "tree");
  InputSources in;
  in.sysfs_root = (dir.path() / "tree").string();
  CollectOptions co = offline();
  co.use_nvml = true;
  co.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
  Snapshot s = collect_from(in, co);
  EXPECT_TRUE(s.gpu_facts.empty());
  EXPECT_TRUE(std::none_of(s.notes.begin(), s.notes.end(), [](const std::string& n) {
    return n.find("NVML") != std::string::npos;
  }));

  GpuFacts f = nvml_like(80ULL << 30, 256ULL << 20);
  f.numa_node = 0;
  apply_gpu_facts(s, FixedFacts(f));
  save_snapshot(s, dir.path() / "snap");
  InputSources replay;
  replay.from_snapshot = (dir.path() / "snap").string();
  Snapshot r = collect_from(replay, co);
  ASSERT_EQ(r.gpu_facts.count(kGpu), 1U);
  const GpuFacts& g = r.gpu_facts.at(kGpu);
  EXPECT_EQ(g.name, f.name);
  EXPECT_EQ(g.bar1_total_bytes, f.bar1_total_bytes);
  EXPECT_EQ(g.bar1_used_bytes, f.bar1_used_bytes);
  EXPECT_EQ(g.pcie_max_gen, 5);
  EXPECT_EQ(g.pcie_cur_width, 16);
  EXPECT_EQ(g.numa_node, 0);

  RunContext ctx;
  Outcome a = evaluate_snapshot(s);
  Outcome b = evaluate_snapshot(r);
  auto ja = to_json(a.snapshot, *a.view, a.report, ctx);
  auto jb = to_json(b.snapshot, *b.view, b.report, ctx);
  for (const char* k : {"devices", "checks", "pairs", "ceilings", "verdict"})
    EXPECT_EQ(ja[k], jb[k]) << k;
  EXPECT_EQ(jb["verdict"], "fail");  // the 256 MiB BAR1 came back from the snapshot
}

}  // namespace
}  // namespace gdsb::topo::testing
