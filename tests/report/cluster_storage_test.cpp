// The shared-storage phase of cluster documents (issue 26) in gdsb-report: the cluster.html
// section, compare and gate. fixtures/cluster_storage.json is the baseline and
// cluster_storage_regressed.json the current run; the expected outcomes, by hand, with the
// default 5% throughput threshold:
//   1 node CPUONLY read   2.0 -> 1.96 GB/s  (-2%)   pass
//   2 nodes CPUONLY read  4.0 -> 4.0               pass
//   4 nodes CPUONLY read  5.6 -> 5.04     (-10%)   FAIL
//   1 node CPUONLY write  1.0 -> 1.0               pass
//   2 nodes CPUONLY write ok -> clock              FAIL (status)
//   4 nodes CPUONLY write ok -> absent             FAIL (presence), skip with allow_missing
//   4 nodes GPUD read     waived in the baseline   skip
//   GPUs fed              3 -> 2          (-33%)   FAIL
//   checkpoint save       2.147 -> 2.095  (-2.4%)  pass (2 s -> 2.05 s, not gated)
//   checkpoint load       4.295 -> 4.295           pass
#include <gtest/gtest.h>

#include "gdsb/error.hpp"
#include "gdsb/report/cluster_storage.hpp"
#include "gdsb/report/gate.hpp"
#include "gdsb/report/html.hpp"

namespace gdsb::report {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  return std::string(GDSB_REPORT_FIXTURES) + "/" + name;
}

Document base() { return load_document(fixture("cluster_storage.json")); }
Document regressed() { return load_document(fixture("cluster_storage_regressed.json")); }
Document plain() { return load_document(fixture("cluster_plain.json")); }

// The baseline with an edit, as a document named `name`.
template <typename Edit>
Document edited(Edit edit, const std::string& name = "current.json") {
  json j = base().json;
  edit(j);
  return parse_document(j.dump(), name);
}

const GateCase* find_case(const GateResult& r, const std::string& group, const std::string& name) {
  for (const auto& c : r.cases)
    if (c.group == group && c.name == name) return &c;
  return nullptr;
}

Outcome outcome(const GateResult& r, const std::string& group, const std::string& name) {
  const auto* c = find_case(r, group, name);
  EXPECT_NE(c, nullptr) << group << " / " << name << "\n" << gate_text(r);
  return c ? c->outcome : Outcome::Skip;
}

TEST(ClusterStorage, LoadsAsAClusterDocument) {
  EXPECT_EQ(base().kind, DocKind::Cluster);
  EXPECT_EQ(plain().kind, DocKind::Cluster);
  EXPECT_TRUE(has_shared_storage(base()));
  EXPECT_FALSE(has_shared_storage(plain()));
}

TEST(ClusterStorage, HtmlHasTheSectionWithItsChart) {
  const auto html = render_html(base().json);
  const auto at = html.find("<section id=\"storage\"><h2>Shared storage</h2>");
  ASSERT_NE(at, std::string::npos);
  const auto section = html.substr(at, html.find("</section>", at) - at);
  EXPECT_NE(section.find("<svg"), std::string::npos);
  EXPECT_NE(section.find("stroke-dasharray"), std::string::npos);  // the linear references
  EXPECT_NE(section.find("CPUONLY read linear"), std::string::npos);
  EXPECT_NE(section.find("Where scaling stops"), std::string::npos);
  EXPECT_NE(section.find("40% of linear"), std::string::npos);  // the bound text
  EXPECT_NE(section.find("the shared storage feeds 3 GPUs"), std::string::npos);
  EXPECT_NE(section.find("Checkpoint"), std::string::npos);
  EXPECT_NE(section.find("4 GiB"), std::string::npos);
  EXPECT_NE(section.find("libcufile.so.0 not found"), std::string::npos);  // the waived reason
  EXPECT_NE(html.find("href=\"#storage\""), std::string::npos);
}

TEST(ClusterStorage, HtmlShowsClockSuspects) {
  const auto html = render_html(regressed().json);
  EXPECT_NE(html.find("h.1&#39;s clock is 2.5 s ahead"), std::string::npos);
}

TEST(ClusterStorage, NoSectionWithoutTheKey) {
  const auto html = render_html(plain().json);
  EXPECT_EQ(html.find("Shared storage"), std::string::npos);
  EXPECT_EQ(html.find("id=\"storage\""), std::string::npos);
  // The page of the baseline less its shared_storage is the plain page's layout.
  json j = base().json;
  j.erase("shared_storage");
  EXPECT_EQ(render_html(j).find("storage"), std::string::npos);
}

TEST(ClusterStorage, HtmlWithoutCurvesDrawsThePoints) {
  const auto d = edited([](json& j) { j["shared_storage"].erase("curves"); });
  const auto html = render_html(d.json);
  EXPECT_NE(html.find("<section id=\"storage\">"), std::string::npos);
  EXPECT_NE(html.find("CPUONLY write"), std::string::npos);
  EXPECT_EQ(html.find("Where scaling stops"), std::string::npos);
}

// What gdsb-cluster itself wrote (main at 4ff40a5: mpirun -np 4 on one ext4 directory,
// --scale auto --io-modes 1 --demand-per-gpu 100MB/s --model-bytes 64M, as
// tests/cluster/storage_mpi_test.sh step 1): read, drawn, compared and gated as written.
TEST(ClusterStorage, ReadsWhatGdsbClusterWrites) {
  const auto d = load_document(fixture("cluster_storage_mpirun.json"));
  ASSERT_TRUE(has_shared_storage(d));
  const auto html = render_html(d.json);
  EXPECT_NE(html.find("<section id=\"storage\">"), std::string::npos);
  EXPECT_NE(html.find("this storage feeds 9 GPUs"), std::string::npos);
  // The read curve: 0.32, 0.418 and 0.868 GB/s at 1, 2 and 4 nodes.
  EXPECT_NE(html.find("2 -&gt; 0.418 GB/s (65.2% of linear; the added node added 30.4% of a node&#39;s figure)"),
            std::string::npos);
  EXPECT_NE(html.find("<td>2 nodes</td>"), std::string::npos);
  const auto r = run_gate(d, d, default_thresholds());
  EXPECT_FALSE(r.failed()) << gate_text(r);
  EXPECT_EQ(outcome(r, "4 nodes CPUONLY read", "aggregate"), Outcome::Pass);
  EXPECT_EQ(outcome(r, "checkpoint load", "rate"), Outcome::Pass);
  EXPECT_EQ(outcome(r, "GPUs fed", "gpus"), Outcome::Pass);
}

TEST(ClusterStorage, GpusFedWithoutTextSaysAtLeast) {
  const auto d = edited([](json& j) {
    j["shared_storage"]["gpus_fed"].erase("text");
    j["shared_storage"]["gpus_fed"]["at_least"] = true;
  });
  EXPECT_NE(render_html(d.json).find("At least 3 GPUs fed at 2 GB/s each."), std::string::npos);
}

TEST(ClusterStorage, WideNodeRangesUseLogAxes) {
  EXPECT_EQ(render_html(base().json).find("nodes (log)"), std::string::npos);  // 1 to 4
  const auto d = edited([](json& j) {
    auto& c = j["shared_storage"]["curves"][1];
    c["nodes"] = json::array({1, 2, 4, 8, 16, 32, 64});
    c["aggregate_gb_s"] = json::array({2, 4, 7.5, 12, 14, 14.5, 14.6});
    c["linear_gb_s"] = json::array({2, 4, 8, 16, 32, 64, 128});
    c["gain_percent"] = json::array({nullptr, 100, 87.5, 56, 25, 3, 0.3});
    c["scaling_stops_at"] = 16;
  });
  const auto html = render_html(d.json);
  EXPECT_NE(html.find("nodes (log)"), std::string::npos);
  EXPECT_NE(html.find("aggregate GB/s (log)"), std::string::npos);
  EXPECT_NE(html.find("the 8 added nodes added 25% of a node&#39;s figure each"), std::string::npos);
  EXPECT_NE(html.find("<td>16 nodes</td>"), std::string::npos);
}

TEST(ClusterStorage, InvalidFieldNamesFileAndField) {
  json j = base().json;
  j["shared_storage"]["points"][2]["nodes"] = "four";
  try {
    parse_document(j.dump(), "bad.json");
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shared_storage.points[2].nodes"), std::string::npos)
        << e.what();
  }
  j = base().json;
  j["shared_storage"]["points"][0].erase("aggregate_gb_s");
  EXPECT_THROW(parse_document(j.dump(), "bad.json"), RuntimeError);  // ok without a figure
  j = base().json;
  j["shared_storage"]["gpus_fed"]["gpus"] = -1;
  EXPECT_THROW(parse_document(j.dump(), "bad.json"), RuntimeError);
  j = base().json;
  j["shared_storage"]["curves"][0]["aggregate_gb_s"] = json::array({1.0});
  EXPECT_THROW(parse_document(j.dump(), "bad.json"), RuntimeError);
}

TEST(ClusterStorage, SameRunPassesTheGate) {
  const auto r = run_gate(base(), edited([](json&) {}), default_thresholds());
  EXPECT_FALSE(r.failed()) << gate_text(r);
  EXPECT_EQ(r.kind, "cluster");
  EXPECT_EQ(outcome(r, "4 nodes CPUONLY read", "aggregate"), Outcome::Pass);
  EXPECT_EQ(outcome(r, "GPUs fed", "gpus"), Outcome::Pass);
  EXPECT_EQ(outcome(r, "checkpoint load", "rate"), Outcome::Pass);
  EXPECT_EQ(outcome(r, "4 nodes GPUD read", "status"), Outcome::Skip);  // waived in both
}

TEST(ClusterStorage, RegressedFixtureFailsWhereExpected) {
  const auto r = run_gate(base(), regressed(), default_thresholds());
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.count(Outcome::Fail), 4u) << gate_text(r);
  EXPECT_EQ(outcome(r, "1 node CPUONLY read", "aggregate"), Outcome::Pass);   // -2%
  EXPECT_EQ(outcome(r, "2 nodes CPUONLY read", "aggregate"), Outcome::Pass);
  EXPECT_EQ(outcome(r, "4 nodes CPUONLY read", "aggregate"), Outcome::Fail);  // -10%
  EXPECT_EQ(outcome(r, "1 node CPUONLY write", "aggregate"), Outcome::Pass);
  EXPECT_EQ(outcome(r, "2 nodes CPUONLY write", "status"), Outcome::Fail);    // clock
  EXPECT_EQ(outcome(r, "4 nodes CPUONLY write", "presence"), Outcome::Fail);
  EXPECT_EQ(outcome(r, "4 nodes GPUD read", "status"), Outcome::Skip);
  EXPECT_EQ(outcome(r, "GPUs fed", "gpus"), Outcome::Fail);                   // 3 -> 2
  EXPECT_EQ(outcome(r, "checkpoint save", "rate"), Outcome::Pass);            // -2.4%
  EXPECT_EQ(outcome(r, "checkpoint save", "seconds"), Outcome::Skip);
  EXPECT_NE(find_case(r, "2 nodes CPUONLY write", "status")->message.find("clock suspects h.1"),
            std::string::npos);
  // Every output keeps working.
  EXPECT_NE(gate_junit(r).find("classname=\"gdsb.cluster.4 nodes CPUONLY read\""), std::string::npos);
  EXPECT_NE(gate_markdown(r).find("gdsbench cluster gate: FAILED"), std::string::npos);
}

TEST(ClusterStorage, TenPercentDropAloneFails) {
  const auto cur = edited([](json& j) {
    j["shared_storage"]["points"][5]["aggregate_gb_s"] = 5.04;  // 4 nodes read, 5.6 before
  });
  const auto r = run_gate(base(), cur, default_thresholds());
  EXPECT_EQ(r.count(Outcome::Fail), 1u) << gate_text(r);
  EXPECT_EQ(outcome(r, "4 nodes CPUONLY read", "aggregate"), Outcome::Fail);
  auto loose = default_thresholds();
  loose.max_worse_percent[static_cast<std::size_t>(Metric::Throughput)] = 12.0;
  EXPECT_FALSE(run_gate(base(), cur, loose).failed());
  auto off = default_thresholds();
  off.max_worse_percent[static_cast<std::size_t>(Metric::Throughput)].reset();
  const auto r_off = run_gate(base(), cur, off);
  EXPECT_FALSE(r_off.failed());
  EXPECT_EQ(outcome(r_off, "4 nodes CPUONLY read", "aggregate"), Outcome::Skip);
}

TEST(ClusterStorage, FewerGpusFedFails) {
  const auto r = run_gate(
      base(), edited([](json& j) { j["shared_storage"]["gpus_fed"]["gpus"] = 2; }),
      default_thresholds());
  EXPECT_EQ(r.count(Outcome::Fail), 1u) << gate_text(r);
  EXPECT_EQ(outcome(r, "GPUs fed", "gpus"), Outcome::Fail);
  // A drop within the threshold passes: 100 -> 96 GPUs is 4%, 100 -> 94 is 6%.
  const auto b100 = edited([](json& j) { j["shared_storage"]["gpus_fed"]["gpus"] = 100; }, "b.json");
  const auto c96 = edited([](json& j) { j["shared_storage"]["gpus_fed"]["gpus"] = 96; });
  const auto c94 = edited([](json& j) { j["shared_storage"]["gpus_fed"]["gpus"] = 94; });
  EXPECT_FALSE(run_gate(b100, c96, default_thresholds()).failed());
  EXPECT_TRUE(run_gate(b100, c94, default_thresholds()).failed());
  // Another demand per GPU counts other GPUs: not gated.
  const auto other = edited([](json& j) {
    j["shared_storage"]["gpus_fed"]["gpus"] = 1;
    j["shared_storage"]["gpus_fed"]["demand_per_gpu_gb_s"] = 4.0;
  });
  const auto r_other = run_gate(base(), other, default_thresholds());
  EXPECT_EQ(outcome(r_other, "GPUs fed", "gpus"), Outcome::Skip) << gate_text(r_other);
}

TEST(ClusterStorage, MissingPointFailsUnlessAllowed) {
  const auto cur = edited([](json& j) { j["shared_storage"]["points"].erase(2); });  // 4 write
  const auto r = run_gate(base(), cur, default_thresholds());
  EXPECT_EQ(r.count(Outcome::Fail), 1u) << gate_text(r);
  EXPECT_EQ(outcome(r, "4 nodes CPUONLY write", "presence"), Outcome::Fail);
  auto t = default_thresholds();
  t.allow_missing = true;
  const auto allowed = run_gate(base(), cur, t);
  EXPECT_FALSE(allowed.failed());
  EXPECT_EQ(outcome(allowed, "4 nodes CPUONLY write", "presence"), Outcome::Skip);
  // The checkpoint (and GPUs fed) are held the same way.
  const auto no_cp = edited([](json& j) { j["shared_storage"].erase("checkpoint"); });
  const auto r_cp = run_gate(base(), no_cp, default_thresholds());
  EXPECT_EQ(outcome(r_cp, "checkpoint save", "presence"), Outcome::Fail);
  EXPECT_EQ(outcome(r_cp, "checkpoint load", "presence"), Outcome::Fail);
}

TEST(ClusterStorage, NewPointsAreNotedAndCheckpointErrorFails) {
  const auto cur = edited([](json& j) {
    json p = j["shared_storage"]["points"][5];
    p["nodes"] = 8;
    j["shared_storage"]["points"].push_back(p);
    j["shared_storage"]["checkpoint"]["load"]["status"] = "error";
    j["shared_storage"]["checkpoint"]["load"]["reason"] = "h.2: ENOSPC";
    j["shared_storage"]["checkpoint"]["load"]["aggregate_gb_s"] = nullptr;
  });
  const auto r = run_gate(base(), cur, default_thresholds());
  EXPECT_EQ(outcome(r, "checkpoint load", "status"), Outcome::Fail);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("8 nodes CPUONLY read") != std::string::npos;
  EXPECT_TRUE(noted) << gate_text(r);
}

TEST(ClusterStorage, InterruptedCurrentFails) {
  const auto cur = edited([](json& j) { j["interrupted"] = true; });
  EXPECT_EQ(outcome(run_gate(base(), cur, default_thresholds()), "document", "complete"),
            Outcome::Fail);
}

TEST(ClusterStorage, NothingToGateIsAUsageError) {
  EXPECT_THROW(run_gate(plain(), plain(), default_thresholds()), UsageError);
  EXPECT_THROW(run_gate(plain(), base(), default_thresholds()), UsageError);
  EXPECT_THROW(run_gate(base(), plain(), default_thresholds()), UsageError);
  try {
    run_gate(plain(), plain(), default_thresholds());
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to gate"), std::string::npos) << e.what();
  }
  // No point of the same nodes, mode and op at all: documents of different benchmarks.
  const auto other = edited([](json& j) {
    for (auto& p : j["shared_storage"]["points"]) p["nodes"] = p["nodes"].get<int>() * 16;
    j["shared_storage"].erase("gpus_fed");
    j["shared_storage"].erase("checkpoint");
  });
  EXPECT_THROW(run_gate(base(), other, default_thresholds()), UsageError);
  // A cluster document gated against an io one: documents of different kinds.
  EXPECT_THROW(run_gate(base(), load_document(fixture("io_dgx.json")), default_thresholds()),
               UsageError);
}

TEST(ClusterStorage, CompareListsEveryPointAndPart) {
  const auto c = compare_cluster(base(), regressed());
  // points matched ok on both sides: 1/2/4 read, 1 write; plus GPUs fed, checkpoint save, load
  ASSERT_EQ(c.matches.size(), 7u);
  const StorageMatch* read4 = nullptr;
  for (const auto& m : c.matches)
    if (m.label == "4 nodes CPUONLY read") read4 = &m;
  ASSERT_NE(read4, nullptr);
  EXPECT_DOUBLE_EQ(read4->metrics.at(0).before, 5.6);
  EXPECT_DOUBLE_EQ(read4->metrics.at(0).after, 5.04);
  EXPECT_NEAR(read4->metrics.at(0).delta_percent, -10.0, 1e-9);
  EXPECT_EQ(read4->metrics.at(0).change, Change::Worse);
  EXPECT_EQ(c.not_comparable.size(), 2u);  // 2 nodes write (clock), 4 nodes GPUD (waived)
  EXPECT_EQ(c.unmatched.size(), 1u);       // 4 nodes write
  const auto text = storage_comparison_text(c);
  EXPECT_NE(text.find("GPUs fed"), std::string::npos);
  EXPECT_NE(text.find("checkpoint save"), std::string::npos);
  EXPECT_NE(text.find("seconds"), std::string::npos);
  EXPECT_NE(text.find("aggregate GB/s"), std::string::npos);
  const auto j = storage_comparison_to_json(c, json::object());
  EXPECT_EQ(j.at("schema"), "gdsbench.compare/1");
  EXPECT_EQ(j.at("compared"), "cluster");
  // The comparison document reloads and renders.
  const auto doc = parse_document(j.dump(), "cmp.json");
  EXPECT_EQ(doc.kind, DocKind::Compare);
  const auto html = render_html(doc.json);
  EXPECT_NE(html.find("gdsbench cluster comparison"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_THROW(compare_cluster(plain(), plain()), UsageError);
}

}  // namespace
}  // namespace gdsb::report
