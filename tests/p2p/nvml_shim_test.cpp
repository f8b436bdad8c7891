// The NVML shim's pure parts, and its behaviour where the library is absent.
#include <gtest/gtest.h>

#include "gdsb/error.hpp"
#include "gdsb/nvml.hpp"
#include "gdsb/p2p/layers.hpp"

namespace gdsb::nvml {
namespace {

TEST(NvmlShim, NormalizesBusIds) {
  EXPECT_EQ(normalize_bus_id("00000000:00:06.0"), "0000:00:06.0");
  EXPECT_EQ(normalize_bus_id("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_bus_id("3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_bus_id(std::string("00000001:c1:00.0\0\0", 19)), "0001:c1:00.0");
}

// NVML's own form (nvml.h NVML_DEVICE_PCI_BUS_ID_FMT, "%08X:%02X:%02X.0"), which
// dcgm-exporter's pci_bus_id label carries.
TEST(NvmlShim, WritesBusIdsAsNvml) {
  EXPECT_EQ(nvml_bus_id("0000:00:1b.0"), "00000000:00:1B.0");
  EXPECT_EQ(nvml_bus_id("0001:c1:00.0"), "00000001:C1:00.0");
  EXPECT_EQ(nvml_bus_id("00000000:19:00.0"), "00000000:19:00.0");
}

TEST(NvmlShim, StatusCodesAndLevelsMatchNvidiaSmi) {
  EXPECT_EQ(p2p_status_code(P2PStatus::ChipsetNotSupported), "CNS");
  EXPECT_EQ(p2p_status_code(P2PStatus::IohTopologyNotSupported), "TNS");
  EXPECT_EQ(p2p_status_code(P2PStatus::DisabledByRegkey), "DR");
  EXPECT_EQ(p2p_status_code(static_cast<P2PStatus>(6)), "U");
  EXPECT_EQ(topology_level_name(TopologyLevel::Multiple), "PXB");
  EXPECT_EQ(topology_level_name(static_cast<TopologyLevel>(40)), "NODE");
  EXPECT_EQ(return_name(kErrorDriverNotLoaded), "NVML_ERROR_DRIVER_NOT_LOADED");
  EXPECT_EQ(sizeof(PciInfo), 68u);  // nvmlPciInfo_t v3
}

TEST(NvmlShim, MissingLibraryIsARuntimeErrorNamingIt) {
  try {
    Library::open("/nonexistent/libnvidia-ml.so.1");
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  }
  auto layer = p2p::make_nvml_layer("/nonexistent/libnvidia-ml.so.1");
  const Availability a = layer->probe();
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("could not be loaded"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::nvml
