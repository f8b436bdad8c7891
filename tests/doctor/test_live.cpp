// The live ladder on this machine (no GPU here): the storage step runs, the GPU steps are
// listed as not run with the reason, and the storage side is still diagnosed.
#include "doctor_test_util.hpp"
#include "gdsb/doctor/live.hpp"
#include "gdsb/doctor/render.hpp"

namespace gdsb::doctor::testing {
namespace {

TEST(DoctorLive, LadderOnThisMachineRunsStorageAndSaysWhatItCouldNot) {
  fx::TempDir dir;
  const PathRegistry registry = make_default_registry();
  const auto timer = p2p::make_unavailable_copy_timer("no GPU on this machine (test)");
  LiveDeps deps{registry, *timer, [] { return topo::collect_live({}); }, nullptr};
  LiveOptions o;
  o.io_dir = dir.path().string();
  o.budget_s = 6;
  o.file_size = 16ULL << 20;
  std::vector<std::string> progress;
  o.progress = [&](const std::string& l) { progress.push_back(l); };
  const LiveResult live = run_live(o, deps);
  ASSERT_GE(live.steps.size(), 6U);
  EXPECT_FALSE(live.steps[1].ran);
  EXPECT_TRUE(contains(live.steps[1].reason, "no GPU on this machine"));
  const Step& storage = live.steps[2];
  EXPECT_TRUE(contains(storage.name, "storage alone"));
  EXPECT_TRUE(storage.ran) << storage.reason;
  ASSERT_TRUE(storage.gb_s.has_value());
  EXPECT_GT(*storage.gb_s, 0);
  const bool gpu_here = registry.find(XferType::CpuGpu)->probe(Workload{}).ok;
  if (!gpu_here) {
    EXPECT_FALSE(live.steps[3].ran);
    EXPECT_FALSE(live.steps[3].reason.empty());
    EXPECT_FALSE(live.steps[4].ran);
  }
  EXPECT_GE(progress.size(), 5U);
  // Nothing left behind in the I/O directory.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  Diagnosis d = diagnose(live.platform ? &*live.platform : nullptr, live.figures);
  d.steps = live.steps;
  std::ostringstream text;
  render_text(text, d);
  EXPECT_TRUE(contains(text.str(), "ran     [4/6] storage alone (-x 1, O_DIRECT)"));
  EXPECT_TRUE(contains(text.str(), "not run [5/6] CPU bounce (-x 2)") || gpu_here);
  // The scratch file is the doctor's own: every read of it starts out of the page cache
  // (the temporary directory is on this machine's disk).
  for (const RunResult& r : live.figures.runs) {
    if (r.status != RunStatus::Ok) continue;
    ASSERT_TRUE(r.page_cache_resident_at_start.has_value()) << xfer_label(r.workload.xfer);
    EXPECT_EQ(*r.page_cache_resident_at_start, 0.0) << xfer_label(r.workload.xfer);
  }
}

TEST(DoctorLive, StepSecondsStayWithinTheBudget) {
  EXPECT_DOUBLE_EQ(step_seconds(60), 10);
  EXPECT_DOUBLE_EQ(step_seconds(30), 4);
  EXPECT_DOUBLE_EQ(step_seconds(5), 1);
}

}  // namespace
}  // namespace gdsb::doctor::testing
