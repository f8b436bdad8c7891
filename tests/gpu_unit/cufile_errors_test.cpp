#include <gtest/gtest.h>

#include <cerrno>
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
  EXPECT_EQ(error_label(-22), "EINVAL (-22)");  // an errno cuFile passed through, negated
  EXPECT_EQ(io_result_label(-5044), "CU_FILE_IO_ERROR (5044)");
  EXPECT_EQ(io_result_label(-5), "EIO (Input/output error)");
  EXPECT_EQ(io_result_label(4096), "4096 bytes");
}

// cuFileDriverOpen gave -22 on 4 x H100 (CUDA 13.0) for a cufile.json with
// max_direct_io_size_kb 64, its log saying "directIO size should be greater than or equal to
// PerBufferCacheSize" (docs/PERFORMANCE.md, 2026-11-27).
TEST(CufileHints, ConfigurationCuFileRefuses) {
  FailureContext c;
  c.call = "cuFileDriverOpen";
  c.code = -EINVAL;
  c.config_path = "/tmp/cufile-b.json";
  c.max_direct_io_size_kb = 64;
  const std::string msg = describe_failure(c);
  EXPECT_NE(msg.find("cuFileDriverOpen failed: EINVAL (-22)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/tmp/cufile-b.json: properties.max_direct_io_size_kb is 64, below "
                     "properties.per_buffer_cache_size_kb (1024, cuFile's default)"),
            std::string::npos)
      << msg;
  c.per_buffer_cache_size_kb = 64;  // consistent sizes: refused for another reason
  EXPECT_TRUE(has_hint(select_hints(c), "config-refused"));
  EXPECT_FALSE(has_hint(select_hints(c), "config-direct-io-below-cache"));
  c.code = 5030;  // another failure of the call: no configuration hint
  EXPECT_FALSE(has_hint(select_hints(c), "config-refused"));
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
  // Nor when cuFile's log reports its own udev lookup failing (a device-mapper volume
  // without ID_FS_USAGE, LMCache/LMCache#795): the record exists, the hint would be false.
  c.log_lines = {" 09-06-2025 07:01:23:837 [pid=276 tid=454] ERROR  cufio-udev:67 udev property "
                 "not found: ID_FS_USAGE dm-0"};
  EXPECT_FALSE(has_hint(select_hints(c), "no-udev"));
  // A log line about udev with the record unchecked-missing still gives it.
  c.udev_record_present = false;
  EXPECT_TRUE(has_hint(select_hints(c), "no-udev"));
}

// cuFile's own words on 4 x H100 (issue 35, bench/gpu-all.sh node, 2026-11-27): a 9,950-file
// list under a hard limit of 20,000 descriptors ran out at registration.
TEST(CufileHints, OutOfDescriptorsAtRegistration) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5031;
  c.log_lines = {"27-11-2026 14:34:43:434 [pid=3700 tid=3700] ERROR  cufio-obj:178 open call failed for file "
                 "/work/main/build/gpu-test-files/dataset/d0009/f0009947.bin Too many open files",
                 "27-11-2026 14:34:43:434 [pid=3700 tid=3700] ERROR  cufio-obj:431 fd create failed, cannot "
                 "support unaligned access for fd: 9975"};
  c.descriptors_open = 19998;
  c.descriptor_limit = 20000;
  auto h = select_hints(c);
  ASSERT_TRUE(has_hint(h, "descriptors"));
  const std::string text = describe_failure(c);
  EXPECT_NE(text.find("ran out of file descriptors (19998 open of a limit of 20000)"), std::string::npos) << text;
  EXPECT_NE(text.find("ulimit -Hn"), std::string::npos);
  // The log line alone (another code) gives it too; an unrelated failure does not.
  c.code = 5030;
  EXPECT_TRUE(has_hint(select_hints(c), "descriptors"));
  c.log_lines.clear();
  EXPECT_FALSE(has_hint(select_hints(c), "descriptors"));
}

TEST(CufileHints, FileSystemNotSupported) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5008;
  c.fs_type = "btrfs";
  EXPECT_TRUE(has_hint(select_hints(c), "fs-not-supported"));
  c.fs_type = "ext4";
  EXPECT_FALSE(has_hint(select_hints(c), "fs-not-supported"));
  for (const char* fs : {"xfs", "nfs4", "lustre", "wekafs", "gpfs", "beegfs"}) {
    c.fs_type = fs;
    EXPECT_FALSE(has_hint(select_hints(c), "fs-not-supported")) << fs;
  }
  // The hint names what GDS needs, from the one table of file systems (gdsb/gds_storage.hpp).
  c.fs_type = "btrfs";
  const std::vector<Hint> hints = select_hints(c);
  ASSERT_FALSE(hints.empty());
  EXPECT_NE(hints.front().text.find("supported: ext4 (data=ordered), xfs, nfs (over RDMA)"),
            std::string::npos)
      << hints.front().text;
}

TEST(CufileHints, ODirectRefusedOnlyWhereAnOpenOfTheFileWasRefused) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5020;
  c.file = "/data/f";
  // Neither cuFile's code nor a file system's name says the file system refuses O_DIRECT.
  EXPECT_FALSE(has_hint(select_hints(c), "odirect-refused"));
  c.odirect_open_errno = 0;
  EXPECT_FALSE(has_hint(select_hints(c), "odirect-refused"));
  ASSERT_TRUE(has_hint(select_hints(c), "odirect-accepted"));
  c.odirect_open_errno = EINVAL;
  ASSERT_TRUE(has_hint(select_hints(c), "odirect-refused"));
  EXPECT_NE(select_hints(c)[0].text.find("an O_DIRECT open of /data/f failed here with EINVAL"),
            std::string::npos);
  FailureContext t;
  t.call = "cuFileRead";
  t.errno_value = EINVAL;
  t.fs_type = "tmpfs";  // accepts O_DIRECT on newer kernels (6.18 on the test VMs)
  EXPECT_FALSE(has_hint(select_hints(t), "odirect-refused"));
  t.odirect_open_errno = 0;
  EXPECT_EQ(describe_failure(t).find("refuses O_DIRECT"), std::string::npos);
  FailureContext o;  // the failed call was itself the O_DIRECT open
  o.call = "open";
  o.errno_value = EINVAL;
  EXPECT_TRUE(has_hint(select_hints(o), "odirect-refused"));
}

TEST(CufileHints, FileOnNoBlockDeviceIsNamedInsteadOfTheUdevDatabase) {
  FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5027;
  c.file = "/mnt/ram/f";
  c.fs_type = "tmpfs";
  c.device = "0:45";
  c.block_device = false;
  c.odirect_open_errno = 0;
  c.udev_record = "/run/udev/data/b0:45";
  c.udev_record_present = false;
  c.log_lines = {"ERROR cufio-fs:441 unable to get volume attributes"};
  const auto h = select_hints(c);
  ASSERT_TRUE(has_hint(h, "no-block-device"));
  EXPECT_FALSE(has_hint(h, "no-udev"));
  EXPECT_FALSE(has_hint(h, "odirect-refused"));
  EXPECT_NE(h[0].text.find("/mnt/ram/f lies on device 0:45 (tmpfs), which is no block device"),
            std::string::npos)
      << h[0].text;
}

TEST(CufileHints, Bar1GpuMemoryAndDriver) {
  FailureContext c;
  c.call = "cuFileBufRegister";
  c.code = 5036;
  EXPECT_TRUE(has_hint(select_hints(c), "bar1-exhausted"));
  // Issue 24: a log line that only mentions BAR1 is no evidence; nvidia-fs's record of the
  // failed accounting is (tests/doctor/fixtures/cufile-log/inc-bar-usage.log, SOURCES.md).
  c.code = 5011;
  c.log_lines = {"cuFile log: \"properties\": {\"max_device_pinned_mem_size_kb\": 33554432, "
                 "\"bar1\": \"see nvidia-smi\"}"};
  EXPECT_FALSE(has_hint(select_hints(c), "bar1-exhausted"));
  c.log_lines = {" 11-10-2023 15:49:51:316 [pid=1502618 tid=1503329] ERROR  0:1072 Inc-bar-usage "
                 "failed: size 524288000 remaining bytes 281018368"};
  EXPECT_TRUE(has_hint(select_hints(c), "bar1-exhausted"));
  c.log_lines.clear();
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
