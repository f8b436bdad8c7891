// gdsb-topo --save-fingerprint / --health on the RDMA ports of real nodes' recordings
// (network_recordings.hpp): a port at a lower rate, or gone DOWN, in a copy of the recording is
// named, with its NIC's PCI address and RDMA device; the unchanged recording passes; a
// fingerprint saved before port facts existed is still accepted. Expected values are read
// off the pastes (NVIDIA/nccl#489: mlx5_0 port 1 ACTIVE, LinkUp, 200 Gb/sec (4X HDR);
// mlx5_1 port 1 DOWN, Disabled, 10 Gb/sec (4X)).
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/topo/fingerprint_file.hpp"
#include "network_recordings.hpp"
#include "topo_cli_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

std::string fact(const FactMap& f, const std::string& key) {
  for (const auto& [k, v] : f)
    if (key_text(k) == key) return value_text(v);
  return "";
}

fixture::IbPort& port_of(fixture::Machine& m, const std::string& ibdev) {
  for (auto& d : m.host.network.ibdevs)
    if (d.name == ibdev) return d.ports.at(0);
  throw std::runtime_error("no " + ibdev);
}

class TopoHealthRdma : public ::testing::Test {
 protected:
  fixture::TempDir dir;
  fixture::Machine rec = fixture::nccl489_two_hdr_ports();
  fs::path good_json = dir.path() / "good.json";
  int trees = 0;
  fs::path tree(const fixture::Machine& m) {
    const fs::path root = dir.path() / ("tree" + std::to_string(trees++));
    fixture::write_sysfs(m, root);
    return root;
  }
  void SetUp() override {
    const CliRun r = cli({"--sysfs-root", tree(rec).string(), "--save-fingerprint", good_json.string()});
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  CliRun health(const fixture::Machine& m, const fs::path& expect) {
    return cli({"--sysfs-root", tree(m).string(), "--health", "--expect", expect.string()});
  }
};

TEST_F(TopoHealthRdma, TheFingerprintHoldsEachPortAndTheRecordingMatchesIt) {
  const FactMap f = load_fingerprint(good_json.string(), "--expect");
  EXPECT_EQ(fact(f, "NIC 0000:1b:00.0 (mlx5_0) port 1 link layer"), "InfiniBand");
  EXPECT_EQ(fact(f, "NIC 0000:1b:00.0 (mlx5_0) port 1 state"), "ACTIVE");
  EXPECT_EQ(fact(f, "NIC 0000:1b:00.0 (mlx5_0) port 1 rate"), "200 Gb/s");
  EXPECT_EQ(fact(f, "NIC 0000:1c:00.0 (mlx5_1) port 1 state"), "DOWN");
  EXPECT_EQ(fact(f, "NIC 0000:1c:00.0 (mlx5_1) port 1 rate"), "10 Gb/s");
  const auto rate = f.at(FactKey{FactKind::Nic, *PciAddress::parse("0000:1b:00.0"), Fact::RdmaRate, 1});
  EXPECT_EQ(std::get<Gbps>(rate), Gbps{200});
  // gdsb-cluster's node reports carry facts as texts: the port facts read back the same.
  const FactMap back = facts_from_texts(fact_texts(f), "node report");
  EXPECT_EQ(back, f);
  EXPECT_EQ(fact(back, "NIC 0000:1c:00.0 (mlx5_1) port 1 state"), "DOWN");
  const CliRun r = health(rec, good_json);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("as expected"), std::string::npos) << r.out;
}

TEST_F(TopoHealthRdma, APortAtALowerRateIsOneLineNamingIt) {
  port_of(rec, "mlx5_0").rate = "100 Gb/sec (4X EDR)";
  const CliRun r = health(rec, good_json);
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_EQ(r.out, "gdsb: NIC 0000:1b:00.0 (mlx5_0) port 1 rate 100 Gb/s, expected 200 Gb/s\n");
}

TEST_F(TopoHealthRdma, APortGoneDownIsOneLineNamingIt) {
  // As the recording's other port reads while down.
  fixture::IbPort& p = port_of(rec, "mlx5_0");
  p.state = "1: DOWN";
  p.phys_state = "3: Disabled";
  p.rate = "10 Gb/sec (4X)";
  const CliRun r = health(rec, good_json);
  EXPECT_EQ(r.rc, 3) << r.err;
  EXPECT_EQ(r.out, "gdsb: NIC 0000:1b:00.0 (mlx5_0) port 1 state DOWN, expected ACTIVE\n");
}

TEST_F(TopoHealthRdma, AFingerprintSavedBeforePortFactsIsStillAccepted) {
  auto doc = nlohmann::json::parse(std::ifstream(good_json));
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& f : doc["facts"])
    if (!f.contains("port")) kept.push_back(f);
  ASSERT_LT(kept.size(), doc["facts"].size());
  doc["facts"] = kept;
  const fs::path older = dir.path() / "older.json";
  std::ofstream(older) << doc.dump(1);
  port_of(rec, "mlx5_0").rate = "100 Gb/sec (4X EDR)";  // not judged: the file holds no port facts
  const CliRun r = health(rec, older);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
}

TEST_F(TopoHealthRdma, APortFactWithoutItsPortNumberIsAUsageErrorNamingTheFile) {
  auto doc = nlohmann::json::parse(std::ifstream(good_json));
  for (auto& f : doc["facts"])
    if (f.contains("port")) f.erase("port");
  const fs::path bad = dir.path() / "bad.json";
  std::ofstream(bad) << doc.dump(1);
  const CliRun r = health(rec, bad);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("port number"), std::string::npos) << r.err;
}

TEST_F(TopoHealthRdma, TheH100NodesPortsKeepTheirLinkLayers) {
  const fixture::Machine h100 = fixture::imbue_h100_ibdev2netdev();
  const fs::path h100_json = dir.path() / "h100.json";
  ASSERT_EQ(cli({"--sysfs-root", tree(h100).string(), "--save-fingerprint", h100_json.string()}).rc, 0);
  const FactMap f = load_fingerprint(h100_json.string(), "--expect");
  EXPECT_EQ(fact(f, "NIC 0000:1a:00.0 (mlx5_0) port 1 link layer"), "InfiniBand");
  EXPECT_EQ(fact(f, "NIC 0000:9d:00.1 (mlx5_8) port 1 link layer"), "Ethernet");
  EXPECT_EQ(fact(f, "NIC 0000:1a:00.0 (mlx5_0) port 1 state"), "");  // ibdev2netdev without -v: not recorded
  EXPECT_EQ(health(h100, h100_json).rc, 0);
}

// The text report (-v) and the JSON report show each data NIC's RDMA ports and net devices.
TEST_F(TopoHealthRdma, TheReportsListEachDataNicsPorts) {
  const fs::path root = tree(rec);
  const CliRun text = cli({"--sysfs-root", root.string(), "-v"});
  EXPECT_NE(text.out.find("DATA NICS"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" NIC 0000:1c:00.0 ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("     port 1: InfiniBand, DOWN, Disabled, 10 Gb/sec (4X)\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("     port 1: InfiniBand, ACTIVE, LinkUp, 200 Gb/sec (4X HDR)\n"), std::string::npos) << text.out;
  EXPECT_EQ(cli({"--sysfs-root", root.string()}).out.find("DATA NICS"), std::string::npos);  // -v only
  const fs::path report = dir.path() / "topo.json";
  ASSERT_EQ(cli({"--sysfs-root", root.string(), "--json", report.string()}).rc, 0);
  const auto j = nlohmann::json::parse(std::ifstream(report));
  int nics = 0;
  for (const auto& d : j["devices"]) {
    if (d["bdf"] != "0000:1b:00.0") continue;
    ++nics;
    ASSERT_EQ(d["rdma_devices"].size(), 1u) << d.dump();
    EXPECT_EQ(d["rdma_devices"][0]["name"], "mlx5_0");
    EXPECT_EQ(d["rdma_devices"][0]["ports"][0]["state"], "ACTIVE");
    EXPECT_EQ(d["rdma_devices"][0]["ports"][0]["rate_gbps"], 200.0);
    EXPECT_EQ(d["rdma_devices"][0]["ports"][0]["link_layer"], "InfiniBand");
  }
  EXPECT_EQ(nics, 1);
}

TEST_F(TopoHealthRdma, TheTextReportShowsANetDevicesStateAndAddresses) {
  const fs::path root = tree(fixture::stepmesh_two_roce_ports());
  const CliRun text = cli({"--sysfs-root", root.string(), "-v"});
  EXPECT_NE(text.out.find("   net ens108np0: up, no link speed, 172.31.31.1/24 fe80::966d:aeff:feeb:f05e/64\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("     port 1: Ethernet, state unknown, rate unknown, net device ens108np0\n"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace gdsb::topo::testing
