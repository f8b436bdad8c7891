// The summary reader (SAX events straight into a NodeSummary), against nlohmann's own DOM
// parser as the oracle: what it reads must be what the document says, field by field; what
// it does not know is skipped; a malformed block is named with its place; a report without
// a summary block after its schema falls back to reading the whole document.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gdsb/cluster/summary.hpp"
#include "gdsb/error.hpp"

using namespace gdsb::cluster;
using nlohmann::json;

namespace {

// Every field, with what a lexer can get wrong: escapes, non-ASCII, exponents, negative and
// large numbers, nulls in a series, an empty series, an empty string.
NodeSummary rich() {
  NodeSummary s;
  s.node = "gpu-a17.rack\"3\"";
  s.host = "gpu-a17";
  s.rank = 41;
  s.status = NodeStatus::Error;
  s.errors = {"p2p: cudaErrorPeerAccessUnsupported", "io: \\\\dev\\\\nvme0n1 \xc3\xa9t\xc3\xa9"};
  s.gpu_model = "NVIDIA Corporation GH100[H100 SXM5 80GB]";
  s.drive_model = "Samsung PM1743";
  s.nic_model = "";
  s.gpus = 8;
  s.drives = 4;
  s.nics = 9;
  s.driver = "580.95.05";
  s.kernel = "6.8.0-45-generic";
  s.topo_verdict = "warn";
  s.failing_checks = {{"acs", "fail", "port 0000:17:02.0 ACS RR+CR"}, {"link", "warn", "x8\ttab"}};
  s.faults = {{"xid", "critical", "0000:cb:00.0", "GPU", 79, 2,
               "GPU 0000:cb:00.0 Xid 79 (fallen off the bus) at 11:43:14: drain, reboot"},
              {"aer_correctable_rate", "warning", "0000:18:00.0", "NVMe", 0, 2147483647, "\"BadTLP\""}};
  s.gpu_metrics["h2d_gb_s"] = {53.25, std::nullopt, 1.5e-3, 4.25e10};
  s.gpu_metrics["d2d_gb_s"] = {};
  s.node_metrics["io_x0_read_gb_s"] = 12.5;
  s.node_metrics["io_x5_read_gb_s"] = -0.0;
  s.waived["io_x2_read_gb_s"] = "waived: cuFile batch API absent";
  s.fingerprint = {{"GPU 0000:19:00.0", "present"},
                   {"GPU 0000:19:00.0 link", "Gen5 x16"},
                   {"kernel command line", "BOOT_IMAGE=/vmlinuz iommu=pt \u00fc"},
                   {"port 0000:17:00.0 ACS", "off"}};
  return s;
}

// A node report as ranks write it: schema, summary, then the full documents.
std::string report_text(const json& summary,
                        const std::string& tail = R"("topology": {"verdict": "pass"})") {
  return R"({"schema": "gdsbench.cluster-node/1", "summary": )" + summary.dump() + ", " + tail +
         "}";
}

std::string error_of(const std::string& text) {
  try {
    (void)read_summary_block(text, "--from n.json");
  } catch (const gdsb::UsageError& e) {
    return e.what();
  }
  return "";
}

json load(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// A node document from real recordings: the H100 VM's `gdsb-topo --json`
// (tests/doctor/fixtures/real/h100-vm) and the 2 x H200 machine's `gdsb-p2p --measure`
// (tests/p2p/fixtures/h200x2-measure.json), as a rank writes them, without a summary block.
json real_node_document() {
  return json{{"schema", kNodeSchema},
              {"node", "gpu-a17"},
              {"host", "gpu-a17"},
              {"rank", 3},
              {"hardware", {{"gpu_model", "NVIDIA H200"}, {"gpus", 2}}},
              {"topology", load(std::string(GDSB_H100_VM_REPORTS) + "/topo.json")},
              {"p2p", load(GDSB_H200X2_P2P_REPORT)}};
}

// What a reader of this text says is wrong with it ("" when nothing).
std::string node_error(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  try {
    (void)read_node_summary(in, origin);
  } catch (const gdsb::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SummaryReader, ReadsWhatNlohmannsParserReadsFieldByField) {
  const json written = rich();
  const auto s = read_summary_block(report_text(written), "t");
  ASSERT_TRUE(s.has_value());
  // The oracle: nlohmann's DOM parse of the same text.
  EXPECT_EQ(json(*s), json::parse(report_text(written)).at("summary"));
  EXPECT_EQ(s->rank, 41);
  EXPECT_EQ(s->status, NodeStatus::Error);
  EXPECT_FALSE(s->gpu_metrics.at("h2d_gb_s")[1].has_value());
  EXPECT_DOUBLE_EQ(*s->gpu_metrics.at("h2d_gb_s")[3], 4.25e10);
  EXPECT_TRUE(s->gpu_metrics.at("d2d_gb_s").empty());
  ASSERT_EQ(s->faults.size(), 2u);
  EXPECT_EQ(s->faults[0].xid, 79);
  EXPECT_EQ(s->faults[1].count, 2147483647);
  EXPECT_EQ(s->fingerprint.texts().at("kernel command line"), "BOOT_IMAGE=/vmlinuz iommu=pt \u00fc");
  // The route a rank's summary takes to rank 0, and nlohmann's get<>, read the same.
  EXPECT_EQ(json(summary_from_text(written.dump(), "rank 3")), written);
  EXPECT_EQ(json(written.get<NodeSummary>()), written);
}

TEST(SummaryReader, SkipsWhatItDoesNotKnowAndStopsAtTheEndOfTheBlock) {
  json j = rich();
  j["future_field"] = {{"nested", {1, 2, {{"deep", "x"}}}}, {"n", nullptr}};
  j["hardware"]["cpu_model"] = "EPYC";
  j["hardware"]["sockets"] = {{"list", {0, 1}}};
  j["failing_checks"][0]["evidence"] = {"a", "b"};
  j["gpu_metrics"]["h2d_gb_s"].push_back({{"not", "a figure"}});
  j["gpu_metrics"]["h2d_gb_s"].push_back("text");
  const auto s = read_summary_block(report_text(j, R"("topology": {"this is": not json)"), "t");
  ASSERT_TRUE(s.has_value());  // the broken tail after the block is never read
  EXPECT_EQ(s->gpu_model, "NVIDIA Corporation GH100[H100 SXM5 80GB]");
  EXPECT_EQ(s->failing_checks.size(), 2u);
  EXPECT_EQ(s->failing_checks[0].summary, "port 0000:17:02.0 ACS RR+CR");
  const auto& h2d = s->gpu_metrics.at("h2d_gb_s");
  ASSERT_EQ(h2d.size(), 6u);  // what is not a figure is a gap, in its place
  EXPECT_FALSE(h2d[4].has_value());
  EXPECT_FALSE(h2d[5].has_value());
  EXPECT_EQ(json(*s).contains("future_field"), false);
}

TEST(SummaryReader, ALaterDuplicateKeyWinsAsInNlohmannsDocument) {
  const std::string text =
      R"({"schema": "gdsbench.cluster-node/1", "summary": {"node": "a", "node": "b",
      "fingerprint": {"IOMMU": "identity", "IOMMU": "translated"}}})";
  const auto s = read_summary_block(text, "t");
  ASSERT_TRUE(s.has_value());
  const json dom = json::parse(text).at("summary");
  // Compared as strings: under C++20 with json 3.11.3 (Ubuntu 24.04) EXPECT_EQ finds no
  // operator== between std::string and json.
  EXPECT_EQ(s->node, dom.at("node").get<std::string>());
  EXPECT_EQ(s->fingerprint.texts().at("IOMMU"), dom.at("fingerprint").at("IOMMU").get<std::string>());
}

TEST(SummaryReader, NamesTheOriginAndThePlaceOfAMalformedField) {
  const auto with = [](const std::string& summary) {
    return R"({"schema": "gdsbench.cluster-node/1", "summary": )" + summary + "}";
  };
  EXPECT_EQ(
      error_of(with(R"({"node": "a", "fingerprint": {"GPU 0000:19:00.0": 5}})")),
      "--from n.json: invalid gdsb-cluster node report: summary.fingerprint.GPU 0000:19:00.0: "
      "expected a string, found a number");
  EXPECT_EQ(
      error_of(with(R"({"node": "a", "hardware": []})")),
      "--from n.json: invalid gdsb-cluster node report: summary.hardware: expected an object, "
      "found an array");
  EXPECT_EQ(
      error_of(with(R"({"node": "a", "failing_checks": [1]})")),
      "--from n.json: invalid gdsb-cluster node report: summary.failing_checks[]: expected an "
      "object, found a number");
  EXPECT_EQ(error_of(with(R"({"node": "a", "hardware": {"gpus": "eight"}})")),
            "--from n.json: invalid gdsb-cluster node report: summary.hardware.gpus: expected a "
            "number, found a string");
  EXPECT_EQ(error_of(with(R"({"node": "a", "hardware": {"gpus": {"n": 8}}})")),
            "--from n.json: invalid gdsb-cluster node report: summary.hardware.gpus: expected a "
            "number, found an object");
  EXPECT_EQ(error_of(with(R"({"node": "a", "gpu_metrics": {"h2d_gb_s": {"0": 1}}})")),
            "--from n.json: invalid gdsb-cluster node report: summary.gpu_metrics.h2d_gb_s: "
            "expected an array, found an object");
  EXPECT_EQ(error_of(with(R"({"node": 7})")),
            "--from n.json: invalid gdsb-cluster node report: summary.node: expected a string, "
            "found a number");
  EXPECT_EQ(
      error_of(with(R"({"node": "a", "node_metrics": {"io_x0_read_gb_s": null}})")),
      "--from n.json: invalid gdsb-cluster node report: summary.node_metrics.io_x0_read_gb_s: "
      "expected a number, found null");
  EXPECT_EQ(error_of(with(R"({"host": "a"})")),
            "--from n.json: invalid gdsb-cluster node report: the summary has no \"node\"");
  EXPECT_EQ(error_of(with("[1]")),
            "--from n.json: invalid gdsb-cluster node report: summary: expected an object, found "
            "an array");
}

TEST(SummaryReader, NoBlockAfterTheSchemaIsNotAnError) {
  const json summary = rich();
  // Another schema's "summary" is not read as a node's.
  EXPECT_FALSE(read_summary_block(R"({"schema": "gdsbench.io/1", "summary": {"node": 1}})", "t")
                   .has_value());
  // The schema after the block, no schema, a text cut inside the block, not JSON at all.
  EXPECT_FALSE(
      read_summary_block(
          R"({"summary": )" + summary.dump() + R"(, "schema": "gdsbench.cluster-node/1"})", "t")
          .has_value());
  EXPECT_FALSE(read_summary_block(R"({"summary": )" + summary.dump() + "}", "t").has_value());
  const std::string whole = report_text(summary);
  EXPECT_FALSE(read_summary_block(whole.substr(0, whole.size() / 2), "t").has_value());
  EXPECT_FALSE(read_summary_block("not json", "t").has_value());
  EXPECT_FALSE(read_summary_block("[1, 2]", "t").has_value());
}

TEST(SummaryReader, AReportIsReadUpToItsSummaryBlockElseWhole) {
  std::istringstream first(report_text(rich(), R"("topology": {"this is": not json)"));
  EXPECT_EQ(json(read_node_summary(first, "t")), json(rich()));
  // The schema after the block: the whole document is read, and its block used.
  std::istringstream late(R"({"summary": )" + json(rich()).dump() +
                          R"(, "schema": "gdsbench.cluster-node/1"})");
  EXPECT_EQ(json(read_node_summary(late, "t")), json(rich()));
  // No block at all: the summary is made from the documents (summarize()).
  std::istringstream whole(R"({"schema": "gdsbench.cluster-node/1", "node": "n2",
      "topology": {"devices": [1, 2], "verdict": "pass", "checks": [{"id": "acs", "verdict": "fail",
      "evidence": ["port 0000:17:00.0 ACS RR+CR"]}]}})");
  const NodeSummary s = read_node_summary(whole, "t");
  EXPECT_EQ(s.node, "n2");
  EXPECT_EQ(s.topo_verdict, "pass");
  ASSERT_EQ(s.failing_checks.size(), 1u);
  EXPECT_EQ(s.failing_checks[0].summary, "port 0000:17:00.0 ACS RR+CR");
  // A summary larger than the 64 KB head is read whole.
  NodeSummary big = rich();
  for (int i = 0; i < 4000; ++i)
    big.fingerprint.set("GPU 0000:" + std::to_string(10000 + i) + " link", "Gen5 x16");
  std::istringstream large(report_text(big));
  ASSERT_GT(large.str().size(), 64u * 1024);
  EXPECT_EQ(read_node_summary(large, "t").fingerprint.size(), big.fingerprint.size());
  std::istringstream junk("not json");
  try {
    (void)read_node_summary(junk, "--from junk.json");
    FAIL() << "no error";
  } catch (const gdsb::UsageError& e) {
    EXPECT_STREQ(e.what(), "--from junk.json: not JSON; pass the files of OUT/nodes/");
  }
}

// read_node_reports reads the first 16 KB of a file, and the rest only when the block goes
// on: files of every size around that head, a summary larger than the head (the thread's
// heads grow after it), a report without a block and one that is the summary alone, in one
// call, each as read_node_summary reads it from a stream.
TEST(SummaryReader, FilesAreReadAsTheirStreamsAre) {
  const std::string dir = testing::TempDir() + "/read_node_reports";
  std::filesystem::create_directories(dir);
  NodeSummary big = rich();
  for (int i = 0; i < 1000; ++i) big.fingerprint.set("GPU 0000:" + std::to_string(10000 + i) + " link", "Gen5 x16");
  const std::string filler(16 * 1024, 'x');
  std::vector<std::string> texts = {report_text(big), report_text(rich()),
                                    report_text(rich(), R"("topology": {"pad": ")" + filler + R"("})"),
                                    R"({"summary": )" + json(big).dump() + R"(, "schema": "gdsbench.cluster-node/1"})",
                                    R"({"schema": "gdsbench.cluster-node/1", "node": "n2", "pad": ")" + filler + R"("})"};
  ASSERT_GT(texts[0].size(), 32u * 1024);
  const std::string plain = report_text(rich(), R"("pad": "")");
  for (std::size_t cut : {16u * 1024 - 1, 16u * 1024, 16u * 1024 + 1})  // the file ends at the head, or a byte either side
    texts.push_back(plain.substr(0, plain.size() - 1) + std::string(cut - plain.size(), ' ') + "}");
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    paths.push_back(dir + "/n" + std::to_string(i) + ".json");
    std::ofstream(paths.back(), std::ios::binary) << texts[i];
  }
  const std::vector<NodeSummary> read = read_node_reports(paths);
  ASSERT_EQ(read.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::istringstream in(texts[i]);
    NodeSummary want = read_node_summary(in, "t");
    want.origin = paths[i];
    EXPECT_EQ(json(read[i]), json(want)) << paths[i];
    EXPECT_EQ(read[i].fingerprint.size(), want.fingerprint.size()) << paths[i];
  }
  EXPECT_EQ(read[0].fingerprint.size(), big.fingerprint.size());
  EXPECT_EQ(read[4].node, "n2");
  try {
    (void)read_node_reports({dir + "/absent.json"});
    FAIL() << "no error";
  } catch (const gdsb::UsageError& e) {
    EXPECT_STREQ(e.what(), ("--from " + dir + "/absent.json: cannot open the file").c_str());
  }
}

// The H200 report's d2d matrices, read off it: GPU0 -> GPU1 395.0624407985687 GB/s and GPU1
// -> GPU0 395.0950196205712 GB/s with peer access; 37.86 and 37.83 staged. A corrupt report
// whose staged row is shorter than the peer-access row (GPU0 -> GPU1 missing in both) has
// no figure for GPU0: it was read past the end of the row (undefined behaviour, which ASan
// in the asan preset and libstdc++'s _GLIBCXX_ASSERTIONS stop at).
TEST(SummaryReader, AShortRowOfACorruptMatrixIsNoFigure) {
  json doc = real_node_document();
  const NodeSummary recorded = summarize(doc, "n.json");
  const auto& d2d = recorded.gpu_metrics.at("d2d_gb_s");
  ASSERT_EQ(d2d.size(), 2u);
  EXPECT_DOUBLE_EQ(d2d[0].value(), 395.0624407985687);
  EXPECT_DOUBLE_EQ(d2d[1].value(), 395.0950196205712);
  json& m = doc["p2p"]["measurements"];
  m["d2d_uni"]["cells"][0] = {nullptr, nullptr};
  m["d2d_uni_no_p2p"]["cells"][0] = {nullptr};
  const NodeSummary corrupt = summarize(doc, "n.json");
  const auto& d2d_corrupt = corrupt.gpu_metrics.at("d2d_gb_s");
  ASSERT_EQ(d2d_corrupt.size(), 2u);
  EXPECT_FALSE(d2d_corrupt[0].has_value());
  EXPECT_DOUBLE_EQ(d2d_corrupt[1].value(), 395.0950196205712);
  // A staged matrix with fewer rows, or rows that are no arrays: no figure, no error.
  m["d2d_uni_no_p2p"]["cells"] = {{nullptr}};
  m["d2d_uni"]["cells"][1] = 7;
  // A copy: a reference into the temporary summary would dangle (GCC 13 says so).
  const auto short_rows = summarize(doc, "n.json").gpu_metrics.at("d2d_gb_s");
  ASSERT_EQ(short_rows.size(), 2u);
  EXPECT_FALSE(short_rows[0].has_value());
  EXPECT_FALSE(short_rows[1].has_value());
}

// A count out of an int's range (1e300 cast to int is undefined behaviour), or not whole, is
// a malformed field, named with its file: in a summary block, in a node document without
// one, and in the gdsb-p2p GPU index and gdsb-io transfer type (no figure, then).
TEST(SummaryReader, ACountOutOfRangeIsMalformedNotCast) {
  json doc = real_node_document();
  const NodeSummary recorded = summarize(doc, "n.json");
  EXPECT_EQ(recorded.rank, 3);
  json summary = recorded;
  summary["rank"] = 1e300;
  EXPECT_EQ(error_of(report_text(summary)),
            "--from n.json: invalid gdsb-cluster node report: summary.rank: expected a whole "
            "number from -2147483648 to 2147483647, found 1e+300");
  summary["rank"] = 3;
  summary["hardware"]["gpus"] = 2147483648.0;
  EXPECT_EQ(error_of(report_text(summary)),
            "--from n.json: invalid gdsb-cluster node report: summary.hardware.gpus: expected a "
            "whole number from -2147483648 to 2147483647, found 2147483648");
  summary["hardware"]["gpus"] = 2.5;
  EXPECT_NE(error_of(report_text(summary)).find("summary.hardware.gpus: expected a whole number"),
            std::string::npos);
  summary["hardware"]["gpus"] = -2147483648.0;  // the ends of the range are counts
  EXPECT_EQ(error_of(report_text(summary)), "");
  // The document without a summary block.
  doc["rank"] = -1e300;
  EXPECT_EQ(node_error(doc.dump(), "--from n.json"),
            "--from n.json: invalid gdsb-cluster node report: rank: expected a whole number from "
            "-2147483648 to 2147483647, found -1e+300");
  doc["rank"] = 3;
  doc["hardware"]["gpus"] = "two";
  EXPECT_EQ(node_error(doc.dump(), "--from n.json"),
            "--from n.json: invalid gdsb-cluster node report: hardware.gpus: expected a number, "
            "found a string");
  doc["hardware"]["gpus"] = 2;
  doc["p2p"]["measurements"]["h2d"][0]["gpu"] = 1e300;
  const auto h2d = summarize(doc, "n.json").gpu_metrics.at("h2d_gb_s");
  ASSERT_EQ(h2d.size(), 2u);  // GPU1's figure in its place; GPU0's index is no index
  EXPECT_FALSE(h2d[0].has_value());
  EXPECT_DOUBLE_EQ(h2d[1].value(), 55.425818737848026);
}

// A summary block that only the whole-document reader takes (the schema after it) names
// its file in errors, as the block reader does: it said "summary: ..." without the file.
TEST(SummaryReader, AMalformedLateSummaryNamesItsFile) {
  json summary = summarize(real_node_document(), "n.json");
  summary["hardware"]["gpus"] = "two";
  const std::string late = R"({"summary": )" + summary.dump() + R"(, "schema": "gdsbench.cluster-node/1"})";
  EXPECT_EQ(node_error(late, "--from nodes/gpu-a17.json"),
            "--from nodes/gpu-a17.json: invalid gdsb-cluster node report: summary.hardware.gpus: "
            "expected a number, found a string");
}
