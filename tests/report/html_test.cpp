#include "gdsb/report/html.hpp"

#include <gtest/gtest.h>

#include "doc_builders.hpp"
#include "gdsb/error.hpp"

namespace gdsb::report {
namespace {

using test::run;

const std::string kEvil =
    "</script><script>alert(1)</script><img src=x onerror=alert(2)>x\" onmouseover=\"alert(3)'&";

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// The only executable script is ours: one <script nonce=...> and the data block.
void expect_no_injection(const std::string& page) {
  EXPECT_EQ(count(page, "<script"), 2u);
  // The embedded JSON holds the strings JSON-escaped; check it, then the markup without it.
  const std::string open = "<script type=\"application/json\" id=\"gdsb-data\">";
  const auto a = page.find(open);
  ASSERT_NE(a, std::string::npos);
  const auto b = page.find("</script>", a);
  const std::string data = page.substr(a + open.size(), b - a - open.size());
  EXPECT_EQ(data.find('<'), std::string::npos);
  const std::string html = page.substr(0, a) + page.substr(b);
  EXPECT_EQ(count(html, "</script>"), 2u);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  // Attribute break-out: a quote from the data never ends an attribute value.
  EXPECT_EQ(html.find("\" onmouseover="), std::string::npos);
  EXPECT_EQ(html.find("' onmouseover="), std::string::npos);
}

TEST(HtmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("plain ü"), "plain ü");
}

TEST(HtmlEscape, JsonForScriptCannotCloseTheElement) {
  const nlohmann::json j{{"host", kEvil}};
  const auto s = json_for_script(j);
  EXPECT_EQ(s.find('<'), std::string::npos);
  EXPECT_EQ(s.find('>'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(s), j);  // the same value once parsed
}

TEST(Html, IoReportEscapesHostPathsAndNames) {
  auto r = run(XferType::GpuDirect, 10, {}, kEvil);
  r.workload.file = kEvil;
  r.workload.name = kEvil;
  r.path.evidence = {kEvil};
  r.path.warnings = {kEvil};
  auto doc = test::io_doc({r}, kEvil);
  doc["context"]["env"]["CUFILE_ENV_PATH_JSON"] = kEvil;
  doc["context"]["cufile"] = {{kEvil, kEvil}};
  doc["argv"] = {"gdsb-io", kEvil};
  const auto html = render_html(doc);
  expect_no_injection(html);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
}

TEST(Html, TopoAndP2pReportsEscapeToo) {
  auto topo = test::topo_doc("fail", kEvil);
  topo["checks"][0]["remedy"] = kEvil;
  topo["checks"][0]["evidence"] = {kEvil};
  expect_no_injection(render_html(topo));
  const nlohmann::json p2p{{"schema", "gdsbench.p2p/1"},
                           {"context", {{"host", kEvil}}},
                           {"gpus", {{{"index", 0}, {"bdf", kEvil}, {"name", kEvil}}}},
                           {"matrices",
                            {{"topology",
                              {{"legend", {{"X", kEvil}}},
                               {"rows", {kEvil}},
                               {"cols", {kEvil}},
                               {"cells", {{kEvil}}}}}}},
                           {"expectations", {{{"expr", kEvil}, {"ok", false}, {"detail", kEvil}}}}};
  expect_no_injection(render_html(p2p));
}

TEST(Html, IoReportHasChartsTablesAndData) {
  auto compat = run(XferType::GpuBatch, 2, {}, "compat");
  const auto html = render_html(
      test::io_doc({run(XferType::GpuDirect, 10, {10, 11, 9}), run(XferType::CpuGpu, 7), compat}));
  EXPECT_GE(count(html, "<svg"), 5u);
  EXPECT_GE(count(html, "<table"), 3u);
  EXPECT_NE(html.find("id=\"gdsb-data\""), std::string::npos);
  EXPECT_NE(html.find("compat mode"), std::string::npos);
  EXPECT_NE(html.find("class=\"compat\""), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
}

// A bounce run's phases (through the JSON document) appear in its run section, escaped.
TEST(Html, IoReportShowsTheBouncePhases) {
  RunResult r = run(XferType::CpuGpu, 7);
  IoPhases p;
  p.storage.count = p.copy.count = 3;
  p.storage.us.mean_us = 157;
  p.copy.us.mean_us = 19;
  p.storage_gib_s = 6.2206;
  p.sync_ceiling_gib_s = 5.5491;
  r.result.phases = p;
  const auto html = render_html(test::io_doc({r, run(XferType::CpuOnly, 9)}));
  EXPECT_NE(html.find("phases: storage 157.0 us, copy 19.0 us (DMA not timed) per I/O"),
            std::string::npos);
  EXPECT_NE(html.find("<br>synchronous ceiling: storage 157.0 / (157.0 + 19.0) us"), std::string::npos);
  EXPECT_EQ(count(html, "phases: storage"), 1u) << "only the bounce run has phases";
}

TEST(Html, NoncesMatchBetweenPolicyAndScript) {
  // std::regex trips GCC 12's -Wmaybe-uninitialized under -O1/-O2; plain searches suffice.
  const auto html = render_html(test::io_doc({run(XferType::GpuDirect, 10)}));
  const std::string key = "'nonce-";
  const auto a = html.find(key);
  ASSERT_NE(a, std::string::npos);
  const auto b = html.find('\'', a + key.size());
  const std::string nonce = html.substr(a + key.size(), b - a - key.size());
  EXPECT_GE(nonce.size(), 8u);
  EXPECT_NE(html.find("<script nonce=\"" + nonce + "\">"), std::string::npos);
}

TEST(Html, TopoReportMarksProblemsOnNodes) {
  const auto html = render_html(test::topo_doc("fail"));
  EXPECT_NE(html.find("p-fail"), std::string::npos);
  EXPECT_NE(html.find("acs-redirect"), std::string::npos);
  EXPECT_GE(count(html, "<svg"), 1u);
}

TEST(Html, TopoReportShowsPerGpuAndNodeWideCeilings) {
  auto doc = test::topo_doc("pass");
  doc["ceilings"] = {{{"gpu", "0000:01:00.0"}, {"gb_s", 7.876}, {"limited_by", "1 nearest NVMe"}}};
  doc["nic_ceilings"] = {{{"gpu", "0000:01:00.0"}, {"gb_s", 63.0}, {"limited_by", "1 NIC"}}};
  doc["node_ceilings"] = {{"nvme", {{"gb_s", 63.008}, {"limited_by", "8 NVMe drives"}}},
                          {"nic", {{"gb_s", nullptr}, {"limited_by", "no NIC"}}}};
  const auto html = render_html(doc);
  EXPECT_NE(html.find("all NVMe drives</td><td>63.0</td>"), std::string::npos);
  EXPECT_NE(html.find("remote GDS through NICs"), std::string::npos);
  EXPECT_NE(html.find("<td>7.9</td>"), std::string::npos);
  EXPECT_EQ(html.find("all NICs"), std::string::npos);  // unknown node NIC figure: left out
  doc["virtual_devices"] = {{{"bdf", "0000:00:02.0"}, {"reason", "virtio-blk disk (1af4:1042)"}}};
  EXPECT_NE(render_html(doc).find("virtio-blk disk (1af4:1042)"), std::string::npos);
}

TEST(Html, UnknownSchemaIsAUsageError) {
  EXPECT_THROW(render_html({{"schema", "gdsbench.io/9"}}), UsageError);
  EXPECT_THROW(render_html({{"no", "schema"}}), UsageError);
}

TEST(Html, InvalidFieldsAreARuntimeError) {
  EXPECT_THROW(render_html({{"schema", "gdsbench.io/1"}, {"runs", 5}}), RuntimeError);
}

}  // namespace
}  // namespace gdsb::report
