// A report recorded on 2 x H200 (tests/p2p/fixtures/h200x2-*): it conforms to the schema,
// and its matrices say what nvidia-smi topo said on the same machine in the same run.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "mini_schema.hpp"

namespace gdsb::p2p {
namespace {

nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The GPU rows of one nvidia-smi matrix that follows the line `marker` ("" = from the top).
std::vector<std::vector<std::string>> smi_matrix(const std::string& marker, std::size_t gpus) {
  std::ifstream in(GDSB_P2P_FIXTURES "/h200x2-nvidia-smi-topo.txt");
  std::string line;
  bool armed = marker.empty();
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line) && rows.size() < gpus) {
    if (!armed) {
      armed = line == marker;
      continue;
    }
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first.rfind("GPU", 0) != 0 || first.size() > 5) continue;  // skip header/legend
    std::vector<std::string> cells;
    std::string w;
    while (cells.size() < gpus && words >> w) cells.push_back(w);
    // The header row lists GPUs where a data row has cells.
    if (cells.size() == gpus && cells[0].rfind("GPU", 0) != 0) rows.push_back(cells);
  }
  return rows;
}

TEST(P2pRecorded, H200ReportConformsToTheSchema) {
  const auto doc = load(GDSB_P2P_FIXTURES "/h200x2-measure.json");
  const auto errors = testing::validate(load(GDSB_P2P_SCHEMA), doc);
  EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST(P2pRecorded, H200MatricesMatchNvidiaSmi) {
  const auto doc = load(GDSB_P2P_FIXTURES "/h200x2-measure.json");
  const std::size_t n = doc["gpus"].size();
  ASSERT_EQ(n, 2u);
  const auto topo = smi_matrix("", n);
  ASSERT_EQ(topo.size(), n);
  EXPECT_EQ(doc["matrices"]["topology"]["cells"].get<std::vector<std::vector<std::string>>>(), topo);
  const std::pair<const char*, const char*> caps[] = {
      {"r", "nvml_read"}, {"w", "nvml_write"}, {"n", "nvml_nvlink"}, {"a", "nvml_atomics"}, {"p", "nvml_pci"}};
  for (const auto& [flag, name] : caps) {
    const auto smi = smi_matrix(std::string("== nvidia-smi topo -p2p ") + flag, n);
    ASSERT_EQ(smi.size(), n) << flag;
    EXPECT_EQ(doc["matrices"][name]["cells"].get<std::vector<std::vector<std::string>>>(), smi) << name;
  }
}

TEST(P2pRecorded, H200HostFiguresWithinFivePercentOfPlainCudaMemcpy) {
  const auto doc = load(GDSB_P2P_FIXTURES "/h200x2-measure.json");
  for (const char* dir : {"h2d", "d2h"}) {
    for (const auto& f : doc["measurements"][dir]) {
      EXPECT_NEAR(f["reference_ratio"].get<double>(), 1.0, 0.05) << dir << " GPU" << f["gpu"];
    }
  }
}

}  // namespace
}  // namespace gdsb::p2p
