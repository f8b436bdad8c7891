// The PCIe topology seam: a gdsbench.topo/1 document read as GPU x NVMe/NIC pairs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/p2p/pcie_source.hpp"

namespace gdsb::p2p {
namespace {

TEST(P2pPcieSource, ReadsTheTopoDocumentFixture) {
  auto src = load_topo_document(GDSB_P2P_FIXTURES "/topo-pcie-box.json");
  ASSERT_TRUE(src->probe().ok);
  EXPECT_NE(src->description().find("topo-pcie-box.json"), std::string::npos);
  const auto pairs = src->pairs();
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].gpu, "0000:17:00.0");
  EXPECT_EQ(pairs[0].role, PeerRole::Nvme);
  EXPECT_EQ(pairs[0].p2pdma, MapType::BusAddr);
  EXPECT_EQ(pairs[0].peer_name, "nvme0n1");
  EXPECT_EQ(pairs[2].role, PeerRole::Nic);
  EXPECT_EQ(pairs[2].peer_name, "ens1f0np0");
  EXPECT_EQ(pairs[2].acs_redirect_ports, (std::vector<std::string>{"0000:16:01.0"}));
  EXPECT_EQ(pairs[1].distance, 10);
}

TEST(P2pPcieSource, RejectsOtherDocumentsNamingTheFile) {
  EXPECT_THROW(pairs_from_topo_json({{"schema", "gdsbench.io/1"}}), UsageError);
  const nlohmann::json bad_map = {
      {"schema", "gdsbench.topo/1"},
      {"pairs", {{{"gpu", "0000:01:00.0"}, {"peer", "0000:02:00.0"}, {"peer_role", "nvme"},
                  {"label", "PIX"}, {"p2pdma", "SOMETIMES"}}}}};
  EXPECT_THROW(pairs_from_topo_json(bad_map), UsageError);
  try {
    load_topo_document("/nonexistent/x.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.json"), std::string::npos);
  }
}

TEST(P2pPcieSource, MapTypesUseTheKernelNames) {
  EXPECT_EQ(map_type_name(MapType::ThruHostBridge), "THRU_HOST_BRIDGE");
  EXPECT_EQ(parse_map_type("BUS_ADDR"), MapType::BusAddr);
  EXPECT_FALSE(parse_map_type("bus_addr"));
}

}  // namespace
}  // namespace gdsb::p2p
