#include <gtest/gtest.h>

#include <set>

#include "gdsb/gpu/cufile_errors.hpp"

namespace gdsb::gpu::cufile {
namespace {

bool has_hint(const std::vector<Hint>& hints, const std::string& id) {
  return std::any_of(hints.begin(), hints.end(), [&](const Hint& h) { return h.id == id; });
}

TEST(CufileErrorTable, CoversEveryCodeOfTheReferenceOnce) {
  std::set<int> codes;
  for (const auto& e : error_table()) {
    EXPECT_TRUE(codes.insert(e.code).second) << e.code;
    EXPECT_EQ(e.name.rfind("CU_FILE_", 0), 0U) << e.name;
    EXPECT_FALSE(e.cause.empty());
  }
  // 5001..5049 without the two numbers cufile.h leaves unused (5021, 5032).
  for (int c = 5001; c <= 5049; ++c) {
    if (c == 5021 || c == 5032) continue;
    EXPECT_TRUE(codes.count(c)) << "missing " << c;
  }
  EXPECT_EQ(codes.size(), 47U);
}

TEST(CufileErrorTable, LabelsByNameAndNumber) {
  EXPECT_EQ(error_label(5027), "CU_FILE_HANDLE_NOT_REGISTERED (5027)");
  EXPECT_EQ(error_label(27), "CU_FILE_HANDLE_NOT_REGISTERED (5027)");
  EXPECT_EQ(error_label(5099), "unknown cuFile error 5099");
  EXPECT_EQ(io_result_label(-5044), "CU_FILE_IO_ERROR (5044)");
  EXPECT_EQ(io_result_label(-5), "EIO (Input/output error)");
  EXPECT_EQ(io_result_label(4096), "4096 bytes");
}

TEST(CufileHints, NoUdevDatabaseOnHandleRegistration) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5027;
  c.udev_database_present = false;
  c.udev_record_present = false;
  c.udev_record = "/run/udev/data/b254:0";
  const auto h = select_hints(c);
  ASSERT_TRUE(has_hint(h, "no-udev"));
  EXPECT_NE(h[0].text.find("/run/udev/data/b254:0 is missing: this machine has no udev database"),
            std::string::npos) << h[0].text;
  // The same error with a udev record present and nothing in the log: no udev hint.
  c.udev_database_present = c.udev_record_present = true;
  EXPECT_FALSE(has_hint(select_hints(c), "no-udev"));
  // ... unless cuFile's log talks about udev.
  c.log_lines = {"ERROR cufio-udev:132 udev property not found: ID_FS_USAGE vda"};
  EXPECT_TRUE(has_hint(select_hints(c), "no-udev"));
}

TEST(CufileHints, FileSystemNotSupported) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5008;
  c.fs_type = "btrfs";
  EXPECT_TRUE(has_hint(select_hints(c), "fs-not-supported"));
  c.fs_type = "ext4";
  EXPECT_FALSE(has_hint(select_hints(c), "fs-not-supported"));
}

TEST(CufileHints, ODirectRefused) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5020;
  EXPECT_TRUE(has_hint(select_hints(c), "odirect-refused"));
  FailureContext t;
  t.call = "cuFileRead";
  t.errno_value = 22;
  t.fs_type = "tmpfs";
  EXPECT_TRUE(has_hint(select_hints(t), "odirect-refused"));
}

TEST(CufileHints, Bar1GpuMemoryAndDriver) {
  FailureContext c;
  c.call = "cuFileBufRegister";
  c.code = 5036;
  EXPECT_TRUE(has_hint(select_hints(c), "bar1-exhausted"));
  c.code = 5043;
  EXPECT_TRUE(has_hint(select_hints(c), "gpu-oom"));
  c.code = 5011;
  c.cu_err = 2;
  EXPECT_TRUE(has_hint(select_hints(c), "gpu-oom"));
  c.cu_err = 803;
  EXPECT_TRUE(has_hint(select_hints(c), "cuda-driver-too-old"));
  c.cu_err = 0;
  c.code = 5004;
  EXPECT_TRUE(has_hint(select_hints(c), "nvfs-driver"));
}

TEST(CufileHints, DescribeFailureQuotesTheLog) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.file = "/data/f";
  c.code = 5027;
  c.udev_database_present = false;
  c.log_lines = {"udev property not found: ID_FS_USAGE vda"};
  const std::string m = describe_failure(c);
  EXPECT_EQ(m.rfind("cuFileHandleRegister on /data/f failed: CU_FILE_HANDLE_NOT_REGISTERED (5027): ", 0), 0U) << m;
  EXPECT_NE(m.find("\n  hint: cuFile identifies the file system through the udev database"), std::string::npos);
  EXPECT_NE(m.find("\n  cuFile log:\n    udev property not found: ID_FS_USAGE vda"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::gpu::cufile
