#include "gdsb/p2p/legends.hpp"

namespace gdsb::p2p {

Legend topology_legend() {
  return {{"X", "self"},
          {"NV#", "joined by a bonded set of # NVLinks"},
          {"PIX", "at most one PCIe bridge between them"},
          {"PXB", "several PCIe bridges, no host bridge"},
          {"PHB", "through a PCIe host bridge (the CPU's root complex)"},
          {"NODE", "between host bridges within one NUMA node"},
          {"SYS", "across the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)"},
          {"U", "unknown: the query failed"}};
}

Legend p2p_status_legend() {
  return {{"X", "self"},
          {"OK", "supported"},
          {"CNS", "chipset not supported"},
          {"GNS", "GPU not supported"},
          {"TNS", "topology not supported"},
          {"NS", "not supported"},
          {"DR", "disabled by regkey"},
          {"U", "unknown"}};
}

Legend p2pdma_legend() {
  return {{"BUS_ADDR", "direct by bus address, below a common switch, no ACS redirect"},
          {"THRU_HOST_BRIDGE", "peer traffic goes through the host bridge (root complex P2P)"},
          {"NOT_SUPPORTED", "the kernel refuses P2PDMA between them"},
          {"-", "no such pair in the topology"}};
}

Legend yes_no_legend(std::string_view what) {
  return {{"X", "self"}, {"Y", std::string(what) + " = 1"}, {"N", std::string(what) + " = 0"}};
}

std::string_view p2p_status_meaning(nvml::P2PStatus s) {
  switch (s) {
    case nvml::P2PStatus::Ok: return "supported";
    case nvml::P2PStatus::ChipsetNotSupported: return "the chipset does not support P2P";
    case nvml::P2PStatus::GpuNotSupported: return "the GPU does not support P2P";
    case nvml::P2PStatus::IohTopologyNotSupported: return "the topology does not support P2P";
    case nvml::P2PStatus::DisabledByRegkey: return "P2P is disabled by a driver regkey";
    case nvml::P2PStatus::NotSupported: return "P2P is not supported";
    case nvml::P2PStatus::Unknown: return "P2P support is unknown";
  }
  return "unknown";
}

}  // namespace gdsb::p2p
