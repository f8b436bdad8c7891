// Unit tests of config-space decoding and the small parsers.
#include <gtest/gtest.h>

#include "fixture_builder.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/fingerprint.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {
namespace {

fixture::Dev switch_port() {
  fixture::Dev d;
  d.bdf = "0000:02:01.0";
  d.vendor = 0x1000;
  d.device = 0xc030;
  d.class_code = 0x060400;
  d.port_type = 6;
  d.max_speed = 5;
  d.max_width = 16;
  d.cur_speed = 4;
  d.cur_width = 8;
  d.acs_cap = 0x007f;
  d.acs_ctl = 0x001d;
  d.secondary = d.subordinate = 4;
  return d;
}

TEST(PciConfig, DecodesCapabilityChainsLinkAndAcs) {
  Device d;
  d.config = fixture::config_bytes(switch_port(), 4096);
  decode_config(d);
  EXPECT_EQ(d.vendor, 0x1000);
  EXPECT_EQ(d.class_id(), 0x0604);
  EXPECT_EQ(d.port_type, kPortDownstream);
  ASSERT_TRUE(d.link.has_value());
  EXPECT_DOUBLE_EQ(d.link->max_speed_gts, 32.0);
  EXPECT_EQ(d.link->max_width, 16);
  EXPECT_DOUBLE_EQ(d.link->cur_speed_gts, 16.0);
  EXPECT_EQ(d.link->cur_width, 8);
  ASSERT_TRUE(d.acs.has_value());
  EXPECT_EQ(d.acs->cap, 0x007f);
  EXPECT_EQ(d.acs->ctl, 0x001d);
  EXPECT_EQ(d.acs->offset, 0x148);
  EXPECT_TRUE(d.ext_config_readable);
  EXPECT_EQ(d.secondary_bus, 4);
  EXPECT_EQ(classify_role(d), Role::SwitchDownstream);
}

TEST(PciConfig, ShortConfigLeavesAcsUnknown) {
  for (size_t size : {64U, 256U}) {
    Device d;
    d.config = fixture::config_bytes(switch_port(), size);
    decode_config(d);
    EXPECT_FALSE(d.ext_config_readable) << size;
    EXPECT_FALSE(d.acs.has_value()) << size;
    EXPECT_EQ(d.link.has_value(), size == 256) << size;
  }
}

TEST(PciConfig, ConventionalFunctionHasKnownNoAcs) {
  fixture::Dev v;
  v.bdf = "0000:00:02.0";
  v.vendor = 0x1af4;
  v.class_code = 0x018000;
  Device d;
  d.config = fixture::config_bytes(v, 4096);
  ASSERT_EQ(d.config.size(), 256U);
  decode_config(d);
  EXPECT_TRUE(d.ext_config_readable);
  EXPECT_FALSE(d.acs.has_value());
  EXPECT_EQ(d.port_type, -1);
}

TEST(PciConfig, CapabilityLoopsTerminate) {
  std::vector<uint8_t> cfg(4096, 0);
  cfg[0x06] = 0x10;
  cfg[0x34] = 0x40;
  cfg[0x40] = 0x05;
  cfg[0x41] = 0x40;  // points at itself
  EXPECT_FALSE(find_capability(cfg, kCapIdExp).has_value());
  cfg[0x100] = 0x01;
  cfg[0x103] = 0x10;  // next = 0x100: itself
  EXPECT_FALSE(find_ext_capability(cfg, kExtCapIdAcs).has_value());
}

TEST(PciConfig, BandwidthTable) {
  EXPECT_NEAR(link_gb_s(32, 16), 63.0, 0.1);
  EXPECT_NEAR(link_gb_s(16, 4), 7.876, 0.01);
  EXPECT_EQ(gts_to_generation(8.0), 3);
  EXPECT_EQ(link_text(16, 8), "Gen4 x8");
  EXPECT_EQ(acs_bits_text(0x001d),
            "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-");
}

// Issue 24: one table; a code, generation or rate it does not hold is unknown, never 0 GB/s
// read as a speed, and never "Gen0".
TEST(PciConfig, OneGenerationTableAndUnknownIsUnknown) {
  for (int gen = 1; gen <= 6; ++gen) {
    const auto g = pcie_generation(gen);
    ASSERT_TRUE(g) << gen;
    EXPECT_EQ(pcie_generation_at(g->gts)->generation, gen);
    EXPECT_EQ(speed_code_to_gts(gen), g->gts);
    EXPECT_EQ(lane_gb_s(g->gts), g->lane_gb_s);
  }
  EXPECT_EQ(pcie_generation(5)->gts, 32.0);
  EXPECT_FALSE(pcie_generation(0));
  EXPECT_FALSE(pcie_generation(7));  // a reserved code, or a generation newer than the table
  EXPECT_FALSE(pcie_generation_at(0));
  EXPECT_FALSE(pcie_generation_at(128));
  EXPECT_EQ(link_text(0, 16), "unknown speed x16");
  EXPECT_EQ(link_text(2.7, 4), "2.7GT/s x4");
  EXPECT_EQ(link_words(LinkFact{std::nullopt, 16, 16}), "unknown speed x16");
  EXPECT_EQ(link_words(LinkFact{32.0, 8, 16}), "Gen5 x8 of x16");
  EXPECT_EQ(link_words(LinkFact{32.0, 0, 16}), "down");
}

TEST(CufileJson, StripsCommentsButNotStrings) {
  std::string in = "{ // c1\n \"a\": \"x//y\", /* c2 */ \"b\": 1 }";
  auto out = strip_json_comments(in);
  EXPECT_EQ(out.find("c1"), std::string::npos);
  EXPECT_EQ(out.find("c2"), std::string::npos);
  EXPECT_NE(out.find("x//y"), std::string::npos);
}

TEST(Model, RoleAndSourceNamesRoundTrip) {
  for (auto r : {Role::Gpu, Role::Nvme, Role::Nic, Role::RootPort, Role::SwitchUpstream,
                 Role::SwitchDownstream, Role::Bridge, Role::HostBridge, Role::Other})
    EXPECT_EQ(role_from_name(role_name(r)), r);
  for (auto k : {SourceKind::Live, SourceKind::Snapshot, SourceKind::SysfsRoot, SourceKind::PciDump,
                 SourceKind::LspciText, SourceKind::HwlocXml})
    EXPECT_EQ(source_kind_from_name(source_kind_name(k)), k);
}

}  // namespace
}  // namespace gdsb::topo
