// Brief deterministic fuzzing of the readers (config space decoder, libpci dump reader,
// sysfs reader, lspci text parser): random mutations of valid inputs must give a
// snapshot or a gdsb::Error, never a crash, and the checks must run on what comes back.
// Seeded, bounded, and small enough to run in CI under ASan+UBSan within seconds.
#include <fstream>
#include <random>

#include "gdsb/error.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

template <class Bytes>
void mutate(Bytes& b, std::mt19937& rng) {
  if (b.empty()) return;
  std::uniform_int_distribution<int> op(0, 9);
  int n = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < n && !b.empty(); ++i) {
    size_t pos = rng() % b.size();
    switch (op(rng)) {
      case 0:
        b.resize(pos);
        break;  // truncate
      case 1:
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(pos));
        break;  // delete
      case 2:
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pos),
                 static_cast<typename Bytes::value_type>(rng()));
        break;
      default:
        b[pos] = static_cast<typename Bytes::value_type>(rng());
        break;  // flip
    }
  }
}

void evaluate_all(Snapshot s) {
  finalize(s);
  rebuild_tree_from_bus_numbers(s);
  infer_port_types(s);
  auto o = evaluate_snapshot(std::move(s));
  EXPECT_FALSE(o.report.checks.empty());
}

TEST(TopoFuzz, ConfigSpaceDecoder) {
  std::mt19937 rng(1234);
  auto m = fixture::make_box(1, 1, 1, 1, 1);
  for (int iter = 0; iter < 300; ++iter) {
    Snapshot s;
    for (const auto& d : m.devs) {
      Device dev;
      dev.bdf = d.bdf;
      dev.config = fixture::config_bytes(d, 4096);
      // Bias the mutations towards the header and capability area where pointers live.
      std::vector<uint8_t> head(dev.config.begin(), dev.config.begin() + 0x160);
      mutate(head, rng);
      std::copy(head.begin(),
                head.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(head.size(), 0x160)),
                dev.config.begin());
      if (rng() % 4 == 0) dev.config.resize(rng() % 4097);
      s.devices.push_back(std::move(dev));
    }
    evaluate_all(std::move(s));
  }
}

TEST(TopoFuzz, DumpReader) {
  std::mt19937 rng(99);
  std::string base = fixture::lspci_dump(fixture::make_box(1, 1, 1, 1, 0), 4096);
  fixture::TempDir dir;
  int ok = 0, errors = 0;
  for (int iter = 0; iter < 120; ++iter) {
    std::string text = base;
    mutate(text, rng);
    fs::path p = dir.path() / "dump.txt";
    std::ofstream(p, std::ios::binary) << text;
    try {
      evaluate_snapshot(collect_pci_dump(p, offline()));
      ++ok;
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(ok, 0);  // most single-byte damage still parses
  EXPECT_EQ(ok + errors, 120);
}

TEST(TopoFuzz, SysfsReader) {
  std::mt19937 rng(7);
  auto m = fixture::make_box(1, 1, 1, 1, 1);
  fixture::TempDir dir;
  fixture::write_sysfs(m, dir.path());
  const char* files[] = {"config",         "resource", "numa_node", "current_link_speed",
                         "max_link_width", "class",    "vendor"};
  for (int iter = 0; iter < 40; ++iter) {
    for (const auto& d : m.devs) {
      fs::path f = dir.path() / "sys/bus/pci/devices" / d.bdf / files[rng() % std::size(files)];
      // Sized read: GCC 12 -O3 flags istreambuf_iterator with a false -Wnull-dereference.
      std::string bytes(4096, '\0');
      std::ifstream in(f, std::ios::binary);
      in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      bytes.resize(static_cast<size_t>(in.gcount()));
      mutate(bytes, rng);
      std::ofstream(f, std::ios::binary | std::ios::trunc) << bytes;
    }
    try {
      evaluate_snapshot(collect_sysfs_root(dir.path(), offline()));
    } catch (const Error&) {
    }
  }
}

TEST(TopoFuzz, LspciTextParser) {
  std::mt19937 rng(42);
  std::string base =
      "00:01.0 PCI bridge [0604]: Intel Corporation Device [8086:352a]\n"
      "\tBus: primary=00, secondary=01, subordinate=01, sec-latency=0\n"
      "\tCapabilities: [40] Express (v2) Root Port (Slot+), MSI 00\n"
      "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n\t\tLnkSta:\tSpeed 32GT/s, Width x16\n"
      "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- "
      "DirectTrans-\n"
      "01:00.0 3D controller [0302]: NVIDIA Corporation GH100 [10de:2330]\n"
      "\tRegion 1: Memory at 38000000000 (64-bit, prefetchable) [size=128G]\n\tNUMA node: 0\n";
  fixture::TempDir dir;
  for (int iter = 0; iter < 300; ++iter) {
    std::string text = base;
    mutate(text, rng);
    fs::path p = dir.path() / "t.txt";
    std::ofstream(p, std::ios::binary) << text;
    try {
      evaluate_snapshot(collect_lspci_text(p));
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace gdsb::topo::testing
