// make_topo_fixture: writes one of the test machines as a recorded tree (for
// `gdsb-topo --sysfs-root`) and as an `lspci -xxxx` dump, to explore and benchmark.
//   make_topo_fixture NAME DIR     NAME: healthy | acs | largest | flat-vm | nccl489
// (nccl489: the RDMA ports of NVIDIA/nccl#489, network_recordings.hpp)
#include <fstream>
#include <iostream>
#include <string>

#include "fixture_builder.hpp"
#include "network_recordings.hpp"

using namespace gdsb::topo::fixture;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_topo_fixture healthy|acs|largest|flat-vm|nccl489 DIR\n";
    return 2;
  }
  std::string name = argv[1];
  Machine m;
  if (name == "healthy")
    m = make_box(2, 1, 1, 2, 1);
  else if (name == "acs") {
    m = make_box(2, 1, 1, 2, 1);
    find(m, "0000:02:01.0")->acs_ctl = 0x001d;
  } else if (name == "largest")
    m = make_box(2, 2, 2, 2, 2);  // 8 GPUs, 8 NVMe, 8 NICs, 4 switches
  else if (name == "flat-vm")
    m = make_flat_vm();
  else if (name == "nccl489")
    m = nccl489_two_hdr_ports();
  else {
    std::cerr << "unknown fixture " << name << "\n";
    return 2;
  }
  // Absolute: write_sysfs makes the bus/pci/devices links point at the paths it is given.
  std::filesystem::path dir = std::filesystem::absolute(argv[2]);
  write_sysfs(m, dir / "root");
  std::ofstream(dir / "lspci-xxxx.txt") << lspci_dump(m, 4096);
  std::cout << dir.string() << "/root and " << dir.string() << "/lspci-xxxx.txt\n";
  return 0;
}
