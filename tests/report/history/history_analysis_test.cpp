// The history's analysis and gate (issue 37) on synthetic series whose answer is known: steps
// of 3%, 10% and 40% in noise of 2-10%, a variance change, an outlier, a slow drift, noise a
// fixed 5% threshold fails on, series of 1, 2 and 3 runs; attribution of a change to the
// facts that changed with it, and to none where older documents did not record them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <numbers>
#include <random>

#include "gdsb/error.hpp"
#include "gdsb/report/history_analysis.hpp"
#include "gdsb/report/html.hpp"

namespace gdsb::report::history {
namespace {

// Normal noise from mt19937's raw output (specified by the standard, unlike
// std::normal_distribution) through Box-Muller: the same series under GCC and clang.
class Noise {
 public:
  explicit Noise(uint32_t seed) : gen_(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(gen_()) + 1.0) / 4294967297.0;
    const double u2 = static_cast<double>(gen_()) / 4294967296.0;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }

 private:
  std::mt19937 gen_;
};

// level(i) with relative noise sd(i): the i-th run's value.
std::vector<double> series(std::size_t n, uint32_t seed, const std::function<double(std::size_t)>& level,
                           const std::function<double(std::size_t)>& sd) {
  Noise noise(seed);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(level(i) * (1 + sd(i) * noise()));
  return v;
}

std::string time_of(std::size_t i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2026-%02zu-%02zuT02:00:00Z", 1 + i / 28, 1 + i % 28);  // one run a night
  return buf;
}


// One node's series of `metric`; facts(i) are the node facts of run i.
History history_of(const std::vector<double>& values, const std::function<Facts(std::size_t)>& facts = nullptr,
                   const std::string& metric = "throughput", const std::string& node = "n1") {
  History h;
  h.path = "test.db";
  SeriesData s{node, "CPUONLY READ 1 MiB", metric, {}};
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int64_t id = static_cast<int64_t>(i) + 1;
    h.runs.push_back({id, "k" + std::to_string(id), "io", time_of(i), "run" + std::to_string(id) + ".json"});
    h.node_facts[id][node] = facts ? facts(i) : Facts{{"kernel", "6.1.0"}};
    s.points.emplace_back(id, values[i]);
  }
  h.series.push_back(s);
  return h;
}

Outcome gate_of(const History& h) {
  const auto r = gate_history(analyse(h, {}));
  EXPECT_EQ(r.cases.size(), h.series.size());
  return r.failed() ? Outcome::Fail : r.count(Outcome::Pass) > 0 ? Outcome::Pass : Outcome::Skip;
}

auto flat(double v) { return [v](std::size_t) { return v; }; }
auto step_at(std::size_t at, double before, double after) {
  return [=](std::size_t i) { return i < at ? before : after; };
}

TEST(HistoryGate, StepsInNoise) {
  struct Case {
    const char* name;
    double step;   // relative change at run 31 of 60
    double noise;  // relative sd
    Outcome expected;
  };
  // A 3% step is real in 2% noise (t about 5.8 over 30 + 30 runs) and not in 10% (t about 1.2).
  const Case cases[] = {{"-40% in 5%", -0.40, 0.05, Outcome::Fail}, {"-40% in 10%", -0.40, 0.10, Outcome::Fail},
                        {"-10% in 2%", -0.10, 0.02, Outcome::Fail}, {"-10% in 5%", -0.10, 0.05, Outcome::Fail},
                        {"-3% in 2%", -0.03, 0.02, Outcome::Fail},  {"-3% in 10%", -0.03, 0.10, Outcome::Pass},
                        {"+40% in 5%", 0.40, 0.05, Outcome::Pass},  {"+10% in 2%", 0.10, 0.02, Outcome::Pass}};
  for (const auto& c : cases) {
    for (const uint32_t seed : {1U, 2U, 3U}) {
      const auto v = series(60, seed, step_at(30, 10.0, 10.0 * (1 + c.step)), flat(c.noise));
      EXPECT_EQ(gate_of(history_of(v)), c.expected) << c.name << ", seed " << seed;
    }
  }
}

TEST(HistoryGate, ALatencyRiseIsARegression) {
  const auto v = series(60, 4, step_at(30, 100.0, 140.0), flat(0.05));
  EXPECT_EQ(gate_of(history_of(v, nullptr, "p99")), Outcome::Fail);
  const auto down = series(60, 4, step_at(30, 100.0, 60.0), flat(0.05));
  EXPECT_EQ(gate_of(history_of(down, nullptr, "p99")), Outcome::Pass);
}

TEST(HistoryGate, VarianceChangeOutlierAndDrift) {
  // The spread grows from 2% to 10% at the same level: no regression of the level.
  const auto variance = series(60, 5, flat(10.0), step_at(30, 0.02, 0.10));
  EXPECT_EQ(gate_of(history_of(variance)), Outcome::Pass);
  // One run at half the level in the middle: an outlier, not a change.
  auto outlier = series(60, 6, flat(10.0), flat(0.02));
  outlier[30] = 5.0;
  EXPECT_EQ(gate_of(history_of(outlier)), Outcome::Pass);
  // A slow slide of 15% over 60 runs (0.25% a run, below any nightly threshold) in 2% noise.
  const auto drift = series(60, 7, [](std::size_t i) { return 10.0 * (1 - 0.15 * static_cast<double>(i) / 59); },
                            flat(0.02));
  EXPECT_LT(drift[59] / drift[58], 1.05);
  EXPECT_EQ(gate_of(history_of(drift)), Outcome::Fail);
}

TEST(HistoryGate, PassesOnNoiseThatAFixedThresholdFails) {
  // 8% noise, no change: find a seed whose newest run is more than 5% below the one before,
  // which `gate --max-throughput-drop 5%` of the two documents would fail.
  for (uint32_t seed = 1; seed < 200; ++seed) {
    const auto v = series(40, seed, flat(10.0), flat(0.08));
    if (v[39] > 0.95 * v[38]) continue;
    EXPECT_EQ(gate_of(history_of(v)), Outcome::Pass) << "seed " << seed;
    return;
  }
  FAIL() << "no seed gave a newest run 5% below the one before";
}

TEST(HistoryGate, SeriesOfOneTwoAndThreeRunsGiveAClearAnswer) {
  for (const std::size_t n : {1U, 2U}) {
    const auto r = gate_history(analyse(history_of(std::vector<double>(n, 10.0)), {}));
    ASSERT_EQ(r.cases.size(), 1U);
    EXPECT_EQ(r.cases[0].outcome, Outcome::Skip);
    EXPECT_NE(r.cases[0].message.find("too few to judge"), std::string::npos) << r.cases[0].message;
    EXPECT_FALSE(r.failed());
  }
  const auto three = gate_history(analyse(history_of({10.0, 10.1, 9.9}), {}));
  EXPECT_EQ(three.cases[0].outcome, Outcome::Pass);
  EXPECT_NE(three.cases[0].message.find("no change point in 3 runs"), std::string::npos) << three.cases[0].message;
  History empty;
  empty.path = "empty.db";
  EXPECT_THROW(gate_history(analyse(empty, {})), UsageError);
}

TEST(HistoryAttribution, NamesTheFactThatChangedWithTheStep) {
  const auto v = series(60, 8, step_at(30, 10.0, 6.2), flat(0.03));
  const auto h = history_of(v, [](std::size_t i) {
    return Facts{{"kernel", "6.1.0"}, {"nvidia_fs", i < 30 ? "2.20.5" : "absent"}, {"driver", "570.86.15"}};
  });
  const auto a = analyse(h, {});
  ASSERT_EQ(a.series.size(), 1U);
  ASSERT_EQ(a.series[0].changes.size(), 1U);
  const auto& c = a.series[0].changes[0];
  EXPECT_EQ(c.run, 31);
  EXPECT_TRUE(c.worse);
  ASSERT_EQ(c.changed.size(), 1U);
  EXPECT_EQ(c.changed[0].name, "nvidia_fs");
  EXPECT_EQ(c.changed[0].before, "2.20.5");
  EXPECT_EQ(c.changed[0].after, "absent");
  EXPECT_TRUE(c.not_compared.empty());
  EXPECT_NE(c.sentence.find("CPUONLY READ 1 MiB throughput on n1 -3"), std::string::npos) << c.sentence;
  EXPECT_NE(c.sentence.find("at run 31 (2026-02-03), when nvidia-fs went from 2.20.5 to absent"), std::string::npos)
      << c.sentence;
  const auto g = gate_history(a);
  ASSERT_TRUE(g.failed());
  EXPECT_NE(g.cases[0].message.find("nvidia-fs went from 2.20.5 to absent"), std::string::npos);
  EXPECT_NE(gate_markdown(g).find("nvidia-fs went from 2.20.5 to absent"), std::string::npos);
  EXPECT_NE(gate_junit(g).find("nvidia-fs went from 2.20.5 to absent"), std::string::npos);
}

TEST(HistoryAttribution, FactsOlderDocumentsLackAreNotCompared) {
  const auto v = series(60, 9, step_at(30, 10.0, 6.0), flat(0.03));
  const auto h = history_of(v, [](std::size_t i) {
    Facts f{{"kernel", "6.1.0"}};
    if (i >= 30) f["driver"] = "580.65";  // the newer gdsbench records the driver
    f["env.CUFILE_ENV_PATH_JSON"] = "/etc/cufile.json";
    if (i >= 30) f.erase("env.CUFILE_ENV_PATH_JSON");  // unset now: that is a change, not unknown
    return f;
  });
  const auto a = analyse(h, {});
  ASSERT_EQ(a.series.at(0).changes.size(), 1U);
  const auto& c = a.series[0].changes[0];
  EXPECT_EQ(c.not_compared, std::vector<std::string>{"driver"});
  ASSERT_EQ(c.changed.size(), 1U);
  EXPECT_EQ(c.changed[0].after, "unset");
  EXPECT_NE(c.sentence.find("not recorded on both sides, so not compared: NVIDIA driver"), std::string::npos)
      << c.sentence;
}

TEST(HistoryFleet, NodesThatChangedAtTheSameRun) {
  auto h = history_of(series(40, 10, step_at(20, 10.0, 6.0), flat(0.02)), nullptr, "throughput", "n1");
  auto other = history_of(series(40, 11, step_at(20, 8.0, 4.0), flat(0.02)), nullptr, "throughput", "n2");
  h.series.push_back(other.series[0]);
  for (auto& [run, nodes] : other.node_facts) h.node_facts[run]["n2"] = nodes.at("n2");
  const auto a = analyse(h, {});
  const auto events = fleet_events(a);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].run, 21);
  EXPECT_EQ(events[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  const auto doc = analysis_to_json(a, {{"tool", {{"name", "gdsb-report"}, {"version", "0"}}}, {"context", {{"host", "ci"}}}});
  EXPECT_EQ(doc.at("schema"), kHistorySchema);
  EXPECT_EQ(doc.at("fleet").size(), 1U);
  EXPECT_EQ(doc.at("fleet")[0].at("night").get<std::string>(), "2026-01-21");
  EXPECT_EQ(doc.at("fleet")[0].at("fact").get<std::string>(), "");  // no fact differed
  const std::string page = render_html(doc);
  EXPECT_NE(page.find("Nodes that changed on the same night"), std::string::npos);
  EXPECT_NE(page.find(">run 21</text>"), std::string::npos);  // the change point marked on the chart
}

// Issue 41: the kernel changed at run 26 with no effect, the driver at run 41 with a -20%
// step. The majority of each segment named both; the boundary names the driver alone.
TEST(HistoryAttribution, NamesOnlyWhatChangedAtTheBoundary) {
  const auto v = series(60, 13, step_at(40, 10.0, 8.0), flat(0.02));
  const auto h = history_of(v, [](std::size_t i) {
    return Facts{{"kernel", i < 25 ? "6.5.0" : "6.8.0"}, {"driver", i < 40 ? "570.86.15" : "580.65.06"}};
  });
  const auto a = analyse(h, {});
  const Change* at41 = nullptr;
  for (const auto& c : a.series.at(0).changes) {
    EXPECT_NE(c.run, 26) << "the kernel's change had no effect: " << c.sentence;
    if (c.run == 41) at41 = &c;
  }
  ASSERT_NE(at41, nullptr) << "no change point at run 41";
  ASSERT_EQ(at41->changed.size(), 1U) << at41->sentence;
  EXPECT_EQ(at41->changed[0].name, "driver");
  EXPECT_EQ(at41->changed[0].before, "570.86.15");
  EXPECT_EQ(at41->changed[0].after, "580.65.06");
  EXPECT_EQ(at41->changed[0].at_run, 0);
  EXPECT_EQ(at41->sentence.find("kernel"), std::string::npos) << at41->sentence;
}

// The step shows at run 41, the driver changed one run before it: nothing differs between
// runs 40 and 41, so the neighbouring pairs name the driver, with the run it changed at.
TEST(HistoryAttribution, AFactThatChangedNextToTheBoundaryIsNamedWithItsRun) {
  const auto v = series(60, 14, step_at(40, 10.0, 7.0), flat(0.01));
  const auto h = history_of(v, [](std::size_t i) {
    return Facts{{"kernel", i < 10 ? "6.5.0" : "6.8.0"}, {"driver", i < 39 ? "570.86.15" : "580.65.06"}};
  });
  const auto a = analyse(h, {});
  ASSERT_EQ(a.series.at(0).changes.size(), 1U);
  const auto& c = a.series[0].changes[0];
  ASSERT_EQ(c.run, 41);
  ASSERT_EQ(c.changed.size(), 1U) << c.sentence;
  EXPECT_EQ(c.changed[0].name, "driver");
  EXPECT_EQ(c.changed[0].at_run, 40);
  EXPECT_NE(c.sentence.find("NVIDIA driver went from 570.86.15 to 580.65.06 (at run 40, near the change point)"),
            std::string::npos)
      << c.sentence;
}

// Per-node documents: each node's nightly run is a run of its own (n1: odd ids, n2: even).
// The same driver update on the same night on both is one fleet event naming the fact.
TEST(HistoryFleet, PerNodeRunsOfOneNightAndOneFactAreOneEvent) {
  History h;
  h.path = "fleet.db";
  Noise noise(15);
  for (const std::string node : {"n1", "n2"}) h.series.push_back({node, "CPUONLY READ 1 MiB", "throughput", {}});
  for (std::size_t night = 0; night < 40; ++night) {
    for (std::size_t k = 0; k < 2; ++k) {
      const int64_t id = static_cast<int64_t>(night * 2 + k + 1);
      char time[64];
      std::snprintf(time, sizeof time, "2026-%02zu-%02zuT0%zu:00:00Z", 1 + night / 28, 1 + night % 28, 1 + k);
      h.runs.push_back({id, "k" + std::to_string(id), "io", time, "run" + std::to_string(id) + ".json"});
      const std::string node = k == 0 ? "n1" : "n2";
      h.node_facts[id][node] = Facts{{"driver", night < 30 ? "570.86.15" : "580.65.06"}, {"kernel", "6.8.0"}};
      h.series[k].points.emplace_back(id, (night < 30 ? 10.0 : 7.0) * (1 + 0.01 * noise()));
    }
  }
  const auto a = analyse(h, {});
  const auto events = fleet_events(a);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].night, "2026-02-03");  // night 30: day 3 of the second 28-day block
  EXPECT_EQ(events[0].fact, "driver");
  EXPECT_EQ(events[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(events[0].values, std::vector<std::string>{"570.86.15 -> 580.65.06"});
  EXPECT_EQ(events[0].run, 61);
  EXPECT_EQ(events[0].changes, 2U);
  EXPECT_NE(analysis_text(a).find("fleet: 2026-02-03: 2 nodes changed when NVIDIA driver changed (570.86.15 -> "
                                  "580.65.06): n1 n2"),
            std::string::npos)
      << analysis_text(a);
}

TEST(HistoryShow, NotSignificantPointsAndFailedRunsAreSaid) {
  auto h = history_of(series(12, 3, flat(10.0), flat(0.02)));
  h.runs.push_back({13, "k13", "io", time_of(12), "run13.json"});
  h.node_facts[13]["n1"] = Facts{{"kernel", "6.1.0"}};
  h.test_facts[13][{"n1", "CPUONLY READ 1 MiB"}] = Facts{{std::string(kNoFigureStatus), "failed"},
                                                        {std::string(kNoFigureReason), "cuFile refused\nits log"}};
  const auto a = analyse(h, {});
  const auto text = analysis_text(a);
  EXPECT_NE(text.find("failed CPUONLY READ 1 MiB on n1 in 1 run (run 13): cuFile refused\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("13 runs (1 with a failed test)"), std::string::npos) << text;
  const auto doc = analysis_to_json(a, {{"tool", {{"name", "gdsb-report"}, {"version", "0"}}}});
  const auto& run13 = doc.at("runs").back();
  EXPECT_EQ(run13.at("status").get<std::string>(), "failed");
  EXPECT_EQ(run13.at("no_figure")[0].at("reason").get<std::string>(), "cuFile refused");
  EXPECT_EQ(run13.at("newest_of")[0].get<std::string>(), "n1");
  EXPECT_EQ(doc.at("runs")[0].at("status").get<std::string>(), "ok");
  const std::string page = render_html(doc);
  // The badge is red over a failing newest run, though no change point is worse.
  EXPECT_NE(page.find("<span class=\"badge b-bad\">0 change points, 0 worse; newest run failed: CPUONLY READ 1 MiB on "
                      "n1 (run 13)</span>"),
            std::string::npos);
  EXPECT_NE(page.find("<span class=\"badge b-bad\">failed</span><br>CPUONLY READ 1 MiB on n1: failed: cuFile refused"),
            std::string::npos);
}

// A point the search kept whose final segments differ at p = 0.036 (on 4 x H100 one was kept
// at 0.21) is said as not significant in the text, the JSON and the page; only the writers
// are judged here, so the point's p-value is set by hand.
TEST(HistoryShow, APointAboveMaxPvalueIsMarkedNotSignificant) {
  const auto h = history_of(series(60, 16, step_at(30, 10.0, 9.0), flat(0.02)));  // outlives the analysis
  auto a = analyse(h, {});
  ASSERT_EQ(a.series.at(0).changes.size(), 1U);
  a.series[0].changes[0].point.p_value = 0.036;
  const auto text = analysis_text(a);
  EXPECT_NE(text.find("worse  (not significant) CPUONLY READ 1 MiB throughput on n1 -1"), std::string::npos) << text;
  EXPECT_NE(text.find("p=0.036 > --max-pvalue 0.001]"), std::string::npos) << text;
  EXPECT_NE(text.find("1 change points (1 not significant at --max-pvalue 0.001)"), std::string::npos) << text;
  const auto doc = analysis_to_json(a, {{"tool", {{"name", "gdsb-report"}, {"version", "0"}}}});
  EXPECT_FALSE(doc.at("series")[0].at("change_points")[0].at("significant").get<bool>());
  const std::string page = render_html(doc);
  EXPECT_NE(page.find("<span class=\"badge b-muted\">worse, not significant</span>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"badge b-ok\">1 change points, 0 worse</span>"), std::string::npos);
}

TEST(HistoryGate, ASeriesNoLongerMeasuredIsSkipped) {
  auto h = history_of(series(30, 12, step_at(15, 10.0, 5.0), flat(0.02)));
  SeriesData newer{"n1", "GPUD READ 1 MiB", "throughput", {}};
  for (int64_t id = 1; id <= 31; ++id) newer.points.emplace_back(id, 5.0 + 0.01 * static_cast<double>(id % 3));
  h.runs.push_back({31, "k31", "io", time_of(30), "run31.json"});
  h.series.push_back(newer);
  const auto r = gate_history(analyse(h, {}));
  ASSERT_EQ(r.cases.size(), 2U);
  EXPECT_EQ(r.cases[0].outcome, Outcome::Skip);
  EXPECT_NE(r.cases[0].message.find("not measured in the node's newest night (its newest run 31"), std::string::npos);
}

// The newest run of the node failed the test (a cufile.json cuFile refused, on 4 x H100):
// before, the gate judged the last run with a figure and passed.
TEST(HistoryGate, ANewestRunThatGaveNoFigureFails) {
  auto h = history_of(series(12, 3, flat(10.0), flat(0.02)));
  h.runs.push_back({13, "k13", "io", time_of(12), "run13.json"});
  h.node_facts[13]["n1"] = Facts{{"kernel", "6.1.0"}};
  h.test_facts[13][{"n1", "CPUONLY READ 1 MiB"}] = Facts{{std::string(kNoFigureStatus), "failed"},
                                                        {std::string(kNoFigureReason), "cuFile refused\nits log"}};
  const auto r = gate_history(analyse(h, {}));
  ASSERT_EQ(r.cases.size(), 1U);
  EXPECT_EQ(r.cases[0].outcome, Outcome::Fail);
  EXPECT_EQ(r.cases[0].message, "no figure in the node's newest run 13: failed: cuFile refused (last figure in run 12)");
  // The same night without the test at all: not measured, skipped.
  h.test_facts.erase(13);
  EXPECT_EQ(gate_of(h), Outcome::Skip);
  // A p2p document of the node after the io runs is no newer io run: the io series is judged.
  h.runs.back().kind = "p2p";
  EXPECT_EQ(gate_of(h), Outcome::Pass);
}

}  // namespace
}  // namespace gdsb::report::history
