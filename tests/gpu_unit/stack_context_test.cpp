// What gdsb-io records of the software stack (issue 37), read from the recorded nvidia-fs
// directory and cufile.json of this folder; NVML pointed at a library that does not exist,
// as on a machine without a driver: nothing about GPUs is then written, nothing guessed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gdsb/stack_context.hpp"

namespace gdsb {
namespace {

const std::string kFixtures = GDSB_GPU_FIXTURES;

TEST(StackContext, RecordsNvidiaFsAndTheCufileSettingsInEffect) {
  RunContext c;
  add_stack_context(c, {kFixtures + "/nvfs-after", kFixtures + "/cufile.json", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(c.versions.at("nvidia_fs"), "2.17.5");  // nvfs-after/version
  EXPECT_EQ(c.cufile_json, kFixtures + "/cufile.json");
  EXPECT_EQ(c.cufile.at("properties.max_direct_io_size_kb"), "16384");
  EXPECT_EQ(c.cufile.at("properties.allow_compat_mode"), "true");
  EXPECT_EQ(c.cufile.at("fs.generic.posix_unaligned_writes"), "false");
  EXPECT_EQ(c.cufile.count("logging.level"), 0U);  // where cuFile logs changes no figure
  EXPECT_EQ(c.versions.count("nvidia_driver"), 0U);  // no NVML: not recorded, not guessed
  EXPECT_TRUE(c.gpus.empty());
  const nlohmann::json j = c;
  EXPECT_EQ(j.at("cufile").at("properties.use_pci_p2pdma"), "false");
  EXPECT_FALSE(j.contains("gpus"));
}

TEST(StackContext, SaysNvidiaFsIsNotLoadedAndWritesNoCufileWithoutTheFile) {
  RunContext c;
  add_stack_context(c, {kFixtures + "/no-such-dir", kFixtures + "/no-such.json", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(c.versions.at("nvidia_fs"), "not loaded");
  EXPECT_TRUE(c.cufile_json.empty());
  const nlohmann::json j = c;
  EXPECT_FALSE(j.contains("cufile"));
}

}  // namespace
}  // namespace gdsb
