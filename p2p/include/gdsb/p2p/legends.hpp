// Legends of the gdsb-p2p matrices, shared by the capability pipeline and the reporters.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gdsb/nvml.hpp"

namespace gdsb::p2p {

using Legend = std::vector<std::pair<std::string, std::string>>;

Legend topology_legend();    // X, NV#, PIX, PXB, PHB, NODE, SYS, U
Legend p2p_status_legend();  // OK, CNS, GNS, TNS, NS, DR, U, X
Legend p2pdma_legend();      // BUS_ADDR, THRU_HOST_BRIDGE, NOT_SUPPORTED, -
Legend yes_no_legend(std::string_view what);
std::string_view p2p_status_meaning(nvml::P2PStatus s);

}  // namespace gdsb::p2p
