// Network storage in gdsb-topo's reports (issue 25): the JSON report's network_mounts and
// mount_ceilings, checked against docs/schema/gdsbench.topo-1.schema.json, and the HTML view
// of them. The node is the HGX recording with its network (hgx_recording.hpp); the mounts are
// issue 25's NFS v4.1 lines as /proc/mounts prints them (test_network_storage.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gdsb/report/html.hpp"
#include "gdsb/topo/render.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

const std::string kNfsOptions =
    "rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,proto=%,timeo=600,"
    "retrans=2,sec=sys,clientaddr=10.10.1.21,local_lock=none,addr=10.10.1.5";

// The HGX recording with one NFS mount of 10.10.1.5:/datasets at `target` over `proto`.
nlohmann::json report_with_nfs(const std::string& target, const std::string& proto) {
  Snapshot s = hgx_with_host_facts(true, offline());
  std::string options = kNfsOptions;
  options.replace(options.find('%'), 1, proto == "rdma" ? "rdma,port=20049" : proto);
  Mount m;
  m.source = "10.10.1.5:/datasets";
  m.target = target;
  m.fstype = "nfs4";
  m.options = options;
  s.machine.mounts.push_back(m);
  s.machine.network = hgx_network();
  const Outcome o = evaluate_snapshot(std::move(s));
  return to_json(o.snapshot, *o.view, o.report, RunContext{});
}

TEST(TopoNetworkReport, JsonCarriesEachNetworkMountAndItsCarriers) {
  const nlohmann::json j = report_with_nfs("/mnt/data", "rdma");
  ASSERT_EQ(j["network_mounts"].size(), 1U) << j["network_mounts"].dump(2);
  const auto& m = j["network_mounts"][0];
  EXPECT_EQ(m["target"], "/mnt/data");
  EXPECT_EQ(m["source"], "10.10.1.5:/datasets");
  EXPECT_EQ(m["fstype"], "nfs4");
  EXPECT_EQ(m["kind"], "NFS");
  EXPECT_EQ(m["transport"], "rdma");
  EXPECT_EQ(m["servers"], nlohmann::json::array({"10.10.1.5"}));
  // The route to 10.10.1.5 leaves through ib0: GPU0's ConnectX-7 (1a:00.0), mlx5_0 port 1.
  ASSERT_EQ(m["carriers"].size(), 1U) << m.dump(2);
  const auto& c = m["carriers"][0];
  EXPECT_EQ(c["netdev"], "ib0");
  EXPECT_EQ(c["bdf"], kHgx[0].nic);
  EXPECT_EQ(c["rdma_dev"], "mlx5_0");
  EXPECT_EQ(c["rdma_port"], 1);
  EXPECT_EQ(c["nearest_gpu"], kHgx[0].gpu);
  ASSERT_EQ(c["gpus"].size(), 8U);
  EXPECT_EQ(c["gpus"][0]["path"], "PIX");
  EXPECT_EQ(c["description"].get<std::string>().find("ib0 (0000:1a:00.0; mlx5_0 port 1"), 0U)
      << c["description"];
  ASSERT_EQ(j["mount_ceilings"].size(), 1U);
  EXPECT_EQ(j["mount_ceilings"][0]["target"], "/mnt/data");
  EXPECT_EQ(j["mount_ceilings"][0]["gpus"].size(), 8U);
}

// The schema describes the report with a network mount: validated by python3-jsonschema
// where it is installed (ci/install-deps.sh installs it), skipped visibly where not.
TEST(TopoNetworkReport, JsonWithANetworkMountFollowsTheSchema) {
  if (std::system("python3 -c 'import jsonschema' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no python3 with jsonschema (Debian: python3-jsonschema)";
  fixture::TempDir dir;
  for (const char* proto : {"rdma", "tcp"}) {
    const fs::path doc = dir.path() / (std::string(proto) + ".json");
    std::ofstream(doc) << report_with_nfs("/mnt/data", proto).dump();
    const std::string cmd =
        "python3 -c 'import json, sys, jsonschema; "
        "jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' " +
        doc.string() + " " + GDSB_TOPO_SCHEMA;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << proto;
  }
}

// The HTML page shows a TCP mount, that GDS does not engage on it and why, its carrier and its
// ceiling, with every text from the document escaped.
TEST(TopoNetworkReport, HtmlShowsTheMountItsVerdictAndEscapes) {
  const nlohmann::json j = report_with_nfs("/mnt/<data>&x", "tcp");
  const std::string html = report::render_html(j);
  const auto& m = j["network_mounts"].at(0);
  ASSERT_EQ(m["engage"], "no");
  EXPECT_NE(html.find("<section id=\"network\"><h2>Network storage</h2>"), std::string::npos);
  EXPECT_NE(html.find("<code>/mnt/&lt;data&gt;&amp;x</code>"), std::string::npos);
  EXPECT_EQ(html.find("/mnt/<data>"), std::string::npos);
  EXPECT_NE(html.find("GDS: no"), std::string::npos);
  const std::string why = m["why"];
  EXPECT_NE(why.find("GDS engages on NFS over RDMA only"), std::string::npos) << why;
  EXPECT_NE(html.find(report::html_escape(why)), std::string::npos);
  EXPECT_NE(html.find(report::html_escape(m["carriers"][0]["description"].get<std::string>())),
            std::string::npos);
  EXPECT_NE(html.find("Ceiling through its carriers"), std::string::npos);
  // The data NICs' RDMA ports (hgx_network: mlx5_0 .. on the ConnectX-7s).
  EXPECT_NE(html.find("RDMA ports of the data NICs"), std::string::npos);
  EXPECT_NE(html.find("<td>mlx5_0</td>"), std::string::npos);
}

// A node without network mounts or RDMA ports has no network section.
TEST(TopoNetworkReport, HtmlHasNoNetworkSectionWithoutNetworkStorage) {
  const Outcome o = evaluate_snapshot(hgx_with_host_facts(true, offline()));
  const nlohmann::json j = to_json(o.snapshot, *o.view, o.report, RunContext{});
  EXPECT_TRUE(j["network_mounts"].empty());
  EXPECT_EQ(report::render_html(j).find("id=\"network\""), std::string::npos);
}

}  // namespace
}  // namespace gdsb::topo::testing
