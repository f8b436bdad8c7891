#include "gdsb/report/gate.hpp"

#include <gtest/gtest.h>

#include "doc_builders.hpp"
#include "gdsb/error.hpp"

namespace gdsb::report {
namespace {

using test::run;

Document io(const std::vector<RunResult>& runs, const std::string& name) {
  return parse_document(test::io_doc(runs).dump(), name);
}

const GateCase* find_case(const GateResult& r, const std::string& name) {
  for (const auto& c : r.cases) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(Gate, ImprovementPasses) {
  const auto r = run_gate(io({run(XferType::GpuDirect, 10)}, "b"),
                          io({run(XferType::GpuDirect, 11)}, "c"), default_thresholds());
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(find_case(r, "throughput")->outcome, Outcome::Pass);
}

TEST(Gate, DropBeyondThresholdFails) {
  const auto r = run_gate(io({run(XferType::GpuDirect, 10)}, "b"),
                          io({run(XferType::GpuDirect, 9)}, "c"), default_thresholds());
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(find_case(r, "throughput")->outcome, Outcome::Fail);
  EXPECT_EQ(find_case(r, "p99")->outcome, Outcome::Fail);  // latency rose 11%
}

TEST(Gate, DropWithinThresholdPasses) {
  const auto r = run_gate(io({run(XferType::GpuDirect, 10)}, "b"),
                          io({run(XferType::GpuDirect, 9.7)}, "c"), default_thresholds());
  EXPECT_FALSE(r.failed());
}

TEST(Gate, ThresholdsCanBeLoosenedOrTurnedOff) {
  auto t = default_thresholds();
  apply_thresholds_json(t,
                        {{"max_throughput_drop", "15%"},
                         {"max_iops_drop", 15},
                         {"max_p50_rise", nullptr},
                         {"max_p99_rise", nullptr}},
                        "t.json");
  const auto r =
      run_gate(io({run(XferType::GpuDirect, 10)}, "b"), io({run(XferType::GpuDirect, 9)}, "c"), t);
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(find_case(r, "p99")->outcome, Outcome::Skip);
}

TEST(Gate, NoiseDoesNotFail) {
  // Medians differ by 8%, but the repetitions overlap: the U test finds no difference.
  const auto b = run(XferType::GpuDirect, 10, {10.0, 9.0, 11.0, 9.5, 10.5});
  const auto c = run(XferType::GpuDirect, 9.2, {9.2, 10.8, 8.9, 10.2, 9.4});
  const auto r = run_gate(io({b}, "b"), io({c}, "c"), default_thresholds());
  const auto* tc = find_case(r, "throughput");
  EXPECT_EQ(tc->outcome, Outcome::Pass) << tc->message;
  EXPECT_NE(tc->message.find("noise"), std::string::npos);
}

TEST(Gate, SignificantRepeatedDropFails) {
  const auto b = run(XferType::GpuDirect, 10, {10.0, 10.1, 9.9, 10.05, 9.95});
  const auto c = run(XferType::GpuDirect, 9, {9.0, 9.1, 8.9, 9.05, 8.95});
  const auto r = run_gate(io({b}, "b"), io({c}, "c"), default_thresholds());
  EXPECT_EQ(find_case(r, "throughput")->outcome, Outcome::Fail);
}

TEST(Gate, MissingRunFailsUnlessAllowed) {
  auto extra = run(XferType::CpuOnly, 5);
  const auto base = io({run(XferType::GpuDirect, 10), extra}, "b");
  const auto cur = io({run(XferType::GpuDirect, 10)}, "c");
  auto r = run_gate(base, cur, default_thresholds());
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(find_case(r, "presence")->outcome, Outcome::Fail);
  auto t = default_thresholds();
  t.allow_missing = true;
  EXPECT_FALSE(run_gate(base, cur, t).failed());
}

TEST(Gate, NothingMatchingIsAUsageError) {
  auto other = run(XferType::GpuDirect, 10);
  other.workload.io_size = 4096;
  EXPECT_THROW(
      run_gate(io({run(XferType::GpuDirect, 10)}, "b"), io({other}, "c"), default_thresholds()),
      UsageError);
}

TEST(Gate, MismatchedKindsAreAUsageError) {
  const auto topo = parse_document(test::topo_doc("pass").dump(), "t.json");
  EXPECT_THROW(run_gate(io({run(XferType::GpuDirect, 10)}, "b"), topo, default_thresholds()),
               UsageError);
}

TEST(Gate, FallingBackToCompatFails) {
  const auto r =
      run_gate(io({run(XferType::GpuDirect, 10, {}, "gds-nvfs")}, "b"),
               io({run(XferType::GpuDirect, 10, {}, "compat")}, "c"), default_thresholds());
  EXPECT_EQ(find_case(r, "path")->outcome, Outcome::Fail);
}

TEST(Gate, FailedCurrentRunFails) {
  auto c = run(XferType::GpuDirect, 0);
  c.status = RunStatus::Failed;
  c.reason = "cuFileRead: 5030 INTERNAL_ERROR";
  const auto r =
      run_gate(io({run(XferType::GpuDirect, 10)}, "b"), io({c}, "c"), default_thresholds());
  EXPECT_TRUE(r.failed());
}

TEST(Gate, TopologyCheckThatPassedAndNowFailsFails) {
  const auto base = parse_document(test::topo_doc("pass").dump(), "b.json");
  const auto cur = parse_document(test::topo_doc("fail").dump(), "c.json");
  const auto r = run_gate(base, cur, default_thresholds());
  EXPECT_TRUE(r.failed());
  EXPECT_FALSE(run_gate(base, base, default_thresholds()).failed());
  // A check that already failed in the baseline holds the current machine to nothing.
  EXPECT_FALSE(run_gate(cur, cur, default_thresholds()).failed());
}

TEST(Gate, PercentParsing) {
  EXPECT_DOUBLE_EQ(*parse_percent("5%", "x"), 5.0);
  EXPECT_DOUBLE_EQ(*parse_percent("0.5", "x"), 0.5);
  EXPECT_FALSE(parse_percent("off", "x").has_value());
  EXPECT_THROW(parse_percent("five", "x"), UsageError);
  EXPECT_THROW(parse_percent("-3%", "x"), UsageError);
  EXPECT_THROW(parse_percent("5%%", "x"), UsageError);
}

TEST(Gate, UnknownThresholdKeyIsAUsageError) {
  auto t = default_thresholds();
  EXPECT_THROW(apply_thresholds_json(t, {{"max_throughput_dorp", 5}}, "t.json"), UsageError);
  EXPECT_THROW(apply_thresholds_json(t, {{"alpha", 2}}, "t.json"), UsageError);
}

TEST(Gate, JunitAndMarkdownEscapeNames) {
  auto b = run(XferType::GpuDirect, 10);
  b.workload.name = "<job & \"x\">|*";
  auto c = b;
  c.result = test::measurement(8);
  const auto r = run_gate(io({b}, "b"), io({c}, "c"), default_thresholds());
  const auto xml = gate_junit(r);
  EXPECT_EQ(xml.find("<job"), std::string::npos);
  EXPECT_NE(xml.find("&lt;job &amp; &quot;x&quot;&gt;"), std::string::npos);
  EXPECT_NE(xml.find("<failure"), std::string::npos);
  EXPECT_NE(xml.find("failures=\""), std::string::npos);
  const auto md = gate_markdown(r);
  EXPECT_EQ(md.find("<job"), std::string::npos);
  EXPECT_NE(md.find("FAILED"), std::string::npos);
  EXPECT_NE(md.find("\\|"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::report

namespace gdsb::report {
namespace {

// A doctor document with these findings and no runs (only the findings are gated).
Document doctor_doc(const nlohmann::json& findings, const std::string& name) {
  nlohmann::json j = nlohmann::json::object();
  j["findings"] = findings;
  j["runs"] = nlohmann::json::array();
  return Document{name, DocKind::Doctor, j};
}

nlohmann::json compat_on(const std::vector<int>& gpus) {
  nlohmann::json per_gpu = nlohmann::json::array(), devices = nlohmann::json::array();
  for (const int g : gpus) {
    const std::string dev = "GPU" + std::to_string(g) + " 0000:00:0" + std::to_string(g) + ".0";
    per_gpu.push_back({{"gpu", "GPU" + std::to_string(g)}, {"devices", nlohmann::json::array({dev})}});
    devices.push_back(dev);
  }
  nlohmann::json f = nlohmann::json::object();
  f["rule"] = "compat-mode";
  f["confidence"] = "certain";
  f["title"] = "cuFile in compat mode: nvidia-fs is not loaded";
  f["devices"] = devices;
  f["per_gpu"] = gpus.size() > 1 ? per_gpu : nlohmann::json::array();
  return f;
}

// Issue 43: a cause on several GPUs is one finding; the gate still tells each GPU apart, so a
// GPU fixed is fixed and the others are still present, never a new finding.
TEST(GateDoctor, AFindingOnSeveralGpusIsGatedPerGpu) {
  const GateResult r = gate_doctor(doctor_doc(nlohmann::json::array({compat_on({0, 1, 2})}), "before.json"),
                                   doctor_doc(nlohmann::json::array({compat_on({1, 2})}), "after.json"), Thresholds{});
  int fixed = 0, still = 0, fresh = 0;
  for (const auto& c : r.cases) {
    if (c.group != "findings") continue;
    fixed += c.outcome == Outcome::Pass;
    still += c.outcome == Outcome::Skip;
    fresh += c.outcome == Outcome::Fail;
  }
  EXPECT_EQ(fixed, 1);
  EXPECT_EQ(still, 2);
  EXPECT_EQ(fresh, 0);
  // A GPU that newly has the cause is a new finding.
  const GateResult worse = gate_doctor(doctor_doc(nlohmann::json::array({compat_on({1, 2})}), "before.json"),
                                       doctor_doc(nlohmann::json::array({compat_on({1, 2, 3})}), "after.json"), Thresholds{});
  int fails = 0;
  for (const auto& c : worse.cases) fails += c.group == "findings" && c.outcome == Outcome::Fail;
  EXPECT_EQ(fails, 1);
}

}  // namespace
}  // namespace gdsb::report
