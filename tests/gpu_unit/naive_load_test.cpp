// The naive checkpoint load (issue 14) on the fake GPU: what it issued is checked, not how
// fast it ran. Every byte of every shard read with buffered read(2), every tensor copied
// once with a pageable copy (the fake refuses a pageable copy from pinned or registered
// memory, and counts pageable copies apart from the others), nothing pinned, no
// asynchronous copy; -V checks the GPU's bytes; a file that is not safetensors goes as
// one block; without a GPU only the reads run, and say so.
#include "gdsb/gpu/naive_load.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "drive.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_service.hpp"
#include "gdsb/verify.hpp"

namespace gdsb::gpu {
namespace {

using testing::TempDir;

constexpr uint64_t kHeader = 4096;
constexpr uint64_t kSeed = 7;

// A safetensors shard: 8-byte length, JSON padded with spaces to kHeader, tensors of the
// given sizes back to back, holding the -V pattern of their file offsets.
uint64_t write_shard(const std::string& path, const std::vector<uint64_t>& tensors) {
  nlohmann::ordered_json j;
  j["__metadata__"] = {{"format", "pt"}};
  uint64_t at = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    j["t" + std::to_string(i)] = {
        {"dtype", "U8"}, {"shape", {tensors[i]}}, {"data_offsets", {at, at + tensors[i]}}};
    at += tensors[i];
  }
  std::string text = j.dump();
  text.append(kHeader - 8 - text.size(), ' ');
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b)
    out[static_cast<std::size_t>(b)] = static_cast<char>(((kHeader - 8) >> (8 * b)) & 0xff);
  std::vector<std::byte> data(at);
  fill_pattern(data, kHeader, kSeed);
  std::ofstream f(path, std::ios::binary);
  f << out << text;
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  return at;
}

struct Shards {
  TempDir dir;
  Workload w;
  uint64_t tensor_bytes = 0;
  uint64_t tensors = 0;
  uint64_t file_bytes = 0;
  explicit Shards(uint32_t threads = 2) {
    const std::vector<std::vector<uint64_t>> layout = {
        {4096, 100000, 7, 65536}, {300000, 1}, {12288, 12288, 0, 5000}};
    std::string list;
    for (std::size_t k = 0; k < layout.size(); ++k) {
      const std::string name = "shard" + std::to_string(k) + ".safetensors";
      tensor_bytes += write_shard(dir.path() + "/" + name, layout[k]);
      for (uint64_t t : layout[k]) {
        if (t > 0) ++tensors;
      }
      list += name + "\n";
    }
    file_bytes = tensor_bytes + layout.size() * kHeader;
    std::ofstream(dir.path() + "/shards.list") << list;
    w.name = "naive-gpu0";
    w.file_list = dir.path() + "/shards.list";
    w.xfer = XferType::CpuCachedGpu;
    w.odirect = false;
    w.naive_load = true;
    w.threads = threads;
    w.seed = kSeed;
    w.io_size = 4096;
  }
};

TEST(NaiveLoad, BufferedReadsOfEveryByteAndOnePageableCopyPerTensor) {
  Shards s;
  FakeGpuService gpu;
  const NaiveLoad n = naive_load(gpu, s.w);
  ASSERT_EQ(n.run.status, RunStatus::Ok) << n.run.reason;
  EXPECT_EQ(n.facts.files, 3U);
  EXPECT_EQ(n.facts.bytes_read, s.file_bytes);  // whole files, headers included
  EXPECT_EQ(n.facts.file_bytes, s.file_bytes);
  EXPECT_GE(n.facts.read_calls, 3U);
  EXPECT_TRUE(n.facts.buffered);
  EXPECT_EQ(n.facts.tensors, 10U);  // the empty tensor is counted, not copied
  EXPECT_EQ(n.facts.copies, s.tensors);
  EXPECT_EQ(n.facts.bytes_copied, s.tensor_bytes);
  EXPECT_EQ(n.facts.whole_files, 0U);
  const FakeGpuStats st = gpu.stats();
  EXPECT_EQ(st.pageable_copies, s.tensors);
  EXPECT_EQ(st.pageable_bytes_h2d, s.tensor_bytes);
  EXPECT_EQ(st.pageable_bytes_d2h, 0U);
  EXPECT_EQ(st.async_copies, 0U);  // never the pinned, asynchronous kind
  EXPECT_EQ(st.sync_copies, 0U);
  EXPECT_EQ(st.pinned_live, 0U);
  EXPECT_EQ(st.registered_live, 0U);
  EXPECT_EQ(st.allocations_live, 0U);  // device buffers released after the run
  EXPECT_EQ(n.run.result.bytes, s.tensor_bytes);
  EXPECT_GT(n.run.result.end_unix_s, 0.0);
  EXPECT_GE(n.run.result.end_unix_s, n.run.result.t0_unix_s);
  EXPECT_EQ(n.run.path.path_used, "page-cache-pageable");
  ASSERT_FALSE(n.run.path.evidence.empty());
  EXPECT_NE(n.run.path.evidence.front().find("pageable"), std::string::npos);
  if (n.facts.cached_known) {
    EXPECT_LE(n.facts.cached_before, n.facts.file_bytes);
  }
}

TEST(NaiveLoad, VerifiesTheGpusBytesAndFindsACorruptByte) {
  Shards s(1);
  s.w.verify = true;
  {
    FakeGpuService gpu;
    const NaiveLoad n = naive_load(gpu, s.w);
    EXPECT_EQ(n.run.verify_errors, 0U);
    EXPECT_GT(gpu.stats().bytes_d2h, 0U);  // read back from the GPU after the clock
  }
  {
    std::fstream f(s.dir.path() + "/shard1.safetensors",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(kHeader + 1000));
    const auto c = static_cast<char>(f.get() ^ 0xff);  // certainly not the pattern's byte
    f.seekp(static_cast<std::streamoff>(kHeader + 1000));
    f.put(c);
  }
  FakeGpuService gpu;
  const NaiveLoad n = naive_load(gpu, s.w);
  EXPECT_EQ(n.run.verify_errors, 1U);
  bool named = false;
  for (const auto& m : n.run.path.warnings) named = named || m.find("shard1") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(NaiveLoad, AFileThatIsNotSafetensorsGoesAsOneCopyFromTheOffset) {
  TempDir dir;
  std::vector<std::byte> data(3 * 4096);
  fill_pattern(data, 0, kSeed);
  std::ofstream(dir.path() + "/blob.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  std::ofstream(dir.path() + "/l.list") << "blob.bin\n";
  Workload w;
  w.file_list = dir.path() + "/l.list";
  w.naive_load = true;
  w.start_offset = 4096;
  w.seed = kSeed;
  w.verify = true;
  FakeGpuService gpu;
  const NaiveLoad n = naive_load(gpu, w);
  EXPECT_EQ(n.facts.whole_files, 1U);
  EXPECT_EQ(n.facts.copies, 1U);
  EXPECT_EQ(gpu.stats().pageable_bytes_h2d, 2U * 4096);
  EXPECT_EQ(n.run.verify_errors, 0U);
}

TEST(NaiveLoad, WithoutAGpuOnlyTheReadsRunAndItSaysSo) {
  Shards s;
  s.w.verify = true;
  FakeGpuService gpu(FakeGpuOptions{.devices = 0});
  const NaiveLoad n = naive_load(gpu, s.w);
  EXPECT_EQ(n.run.status, RunStatus::Ok);
  EXPECT_FALSE(n.facts.gpu);
  EXPECT_EQ(n.facts.bytes_read, s.file_bytes);
  EXPECT_EQ(gpu.stats().pageable_copies, 0U);
  EXPECT_EQ(n.run.path.path_used, "page-cache-pageable (host only)");
  ASSERT_FALSE(n.run.path.warnings.empty());
  EXPECT_NE(n.run.path.warnings.front().find("no GPU"), std::string::npos);
  EXPECT_EQ(n.run.verify_errors, 0U);  // the host copy is checked instead
}

TEST(NaiveLoad, RefusesWhatItCannotModel) {
  FakeGpuService gpu;
  Workload w;
  w.naive_load = true;
  EXPECT_THROW((void)naive_load(gpu, w), UsageError);  // no file list
  Shards s;
  s.w.pattern = IoPattern::Write;
  EXPECT_THROW((void)naive_load(gpu, s.w), UsageError);
  s.w.pattern = IoPattern::Read;
  std::ofstream(s.w.file_list) << "missing.safetensors\n";
  EXPECT_THROW((void)naive_load(gpu, s.w), RuntimeError);
}

TEST(FakeGpuPageableCopy, RefusesPinnedOrRegisteredHostMemory) {
  FakeGpuService gpu;
  DeviceBuffer dev(gpu, MemType::CudaMalloc, 4096);
  void* pinned = gpu.alloc_pinned(4096);
  EXPECT_THROW(gpu.copy_pageable(dev.data(), pinned, 4096, CopyDir::HostToDevice), RuntimeError);
  gpu.free_pinned(pinned);
  std::vector<std::byte> host(4096);
  {
    HostRegistration reg(gpu, host.data(), host.size());
    EXPECT_THROW(gpu.copy_pageable(dev.data(), host.data(), 4096, CopyDir::HostToDevice),
                 RuntimeError);
  }
  gpu.copy_pageable(dev.data(), host.data(), 4096, CopyDir::HostToDevice);
  gpu.copy_pageable(host.data(), dev.data(), 4096, CopyDir::DeviceToHost);
  EXPECT_EQ(gpu.stats().pageable_copies, 2U);
  EXPECT_EQ(gpu.stats().pageable_bytes_h2d, 4096U);
  EXPECT_EQ(gpu.stats().pageable_bytes_d2h, 4096U);
  EXPECT_EQ(gpu.stats().sync_copies, 0U);
}

}  // namespace
}  // namespace gdsb::gpu
