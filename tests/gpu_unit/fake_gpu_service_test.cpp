// The fake itself must behave like a GPU where the paths depend on it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_service.hpp"

namespace gdsb::gpu {
namespace {

// Node mode, the doctor and gdsb-cluster key GPUs by bus id and sort by it, and a fake may
// have 64 (--fake-gpu's limit). Every id must be a PCI address (device number 0x00-0x1f),
// distinct, and in index order as text; GPU 10 once read "0000:00:010.0".
std::vector<std::string> fake_bus_ids(int devices) {
  FakeGpuService g(FakeGpuOptions{.devices = devices});
  std::vector<std::string> ids;
  for (int i = 0; i < devices; ++i) ids.push_back(g.properties(i).pci_bus_id);
  return ids;
}

TEST(FakeGpu, SixteenGpusHaveDistinctOrderedPciAddresses) {
  const std::vector<std::string> ids = fake_bus_ids(16);
  const std::regex pci(R"(0000:[0-9a-f]{2}:[01][0-9a-f]\.0)");
  for (const auto& id : ids) EXPECT_TRUE(std::regex_match(id, pci)) << id;
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(ids[3], "0000:00:03.0");  // what the 4- and 8-GPU CLI tests have always seen
  EXPECT_EQ(ids[9], "0000:00:09.0");
  EXPECT_EQ(ids[10], "0000:00:0a.0");
  EXPECT_EQ(ids[15], "0000:00:0f.0");
}

TEST(FakeGpu, SixtyFourGpusSpillToTheNextBus) {
  const std::vector<std::string> ids = fake_bus_ids(64);
  EXPECT_EQ(ids[31], "0000:00:1f.0");
  EXPECT_EQ(ids[32], "0000:01:00.0");
  EXPECT_EQ(ids[63], "0000:01:1f.0");
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 64U);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
}

TEST(FakeGpu, AsyncCopiesRunLaterInStreamOrder) {
  FakeGpuService g(FakeGpuOptions{.copy_delay = std::chrono::milliseconds(5)});
  DeviceBuffer dev(g, MemType::CudaMalloc, 8);
  void* host1 = g.alloc_pinned(8);
  void* host2 = g.alloc_pinned(8);
  std::memset(host1, 1, 8);
  std::memset(host2, 2, 8);
  Stream s(g);
  Event e(g);
  g.copy_async(dev.data(), host1, 8, CopyDir::HostToDevice, s.handle());
  g.copy_async(dev.data(), host2, 8, CopyDir::HostToDevice, s.handle());
  g.record(e.handle(), s.handle());
  EXPECT_FALSE(g.query(e.handle())) << "the copy ran synchronously";
  EXPECT_TRUE(g.host_range_busy(host1, 8));
  g.wait(e.handle());
  EXPECT_FALSE(g.host_range_busy(host1, 8));
  unsigned char out[8];
  g.copy(out, dev.data(), 8, CopyDir::DeviceToHost);
  EXPECT_EQ(out[0], 2) << "copies ran out of order";
  g.free_pinned(host1);
  g.free_pinned(host2);
}

TEST(FakeGpu, CatchesWrongDirectionsAndPageableAsyncCopies) {
  FakeGpuService g;
  DeviceBuffer dev(g, MemType::CudaMalloc, 64);
  std::vector<char> pageable(64);
  EXPECT_THROW(g.copy(dev.data(), pageable.data(), 64, CopyDir::DeviceToHost), RuntimeError);
  Stream s(g);
  EXPECT_THROW(g.copy_async(dev.data(), pageable.data(), 64, CopyDir::HostToDevice, s.handle()),
               RuntimeError);
  g.register_host(pageable.data(), 64);
  EXPECT_NO_THROW(g.copy_async(dev.data(), pageable.data(), 64, CopyDir::HostToDevice, s.handle()));
  g.sync(s.handle());
  g.unregister_host(pageable.data());
}

TEST(FakeGpu, InjectedFailuresSurfaceWhereCudaWouldReportThem) {
  FakeGpuService g(FakeGpuOptions{.fail_async_copy_at = 0, .fail_allocation_at = 1});
  DeviceBuffer dev(g, MemType::CudaMalloc, 64);
  EXPECT_THROW(DeviceBuffer(g, MemType::CudaMalloc, 64), RuntimeError);
  void* host = g.alloc_pinned(64);
  Stream s(g);
  Event e(g);
  g.copy_async(dev.data(), host, 64, CopyDir::HostToDevice, s.handle());  // no throw at enqueue
  g.record(e.handle(), s.handle());
  EXPECT_THROW(g.wait(e.handle()), RuntimeError);
  EXPECT_THROW(g.sync(s.handle()), RuntimeError);
  g.free_pinned(host);
}

// Timing events, as cudaEventElapsedTime: only between completed timing events; the copy
// recorded between them lies inside the interval (no assertion on its length).
TEST(FakeGpu, ElapsedTimeOnlyBetweenCompletedTimingEvents) {
  FakeGpuService g(FakeGpuOptions{.copy_delay = std::chrono::milliseconds(2)});
  DeviceBuffer dev(g, MemType::CudaMalloc, 8);
  void* host = g.alloc_pinned(8);
  Stream s(g);
  Event start(g, EventWait::Spin, EventTiming::On);
  Event end(g, EventWait::Spin, EventTiming::On);
  Event plain(g);
  EXPECT_EQ(g.stats().timing_events_live, 2U);
  EXPECT_THROW((void)g.elapsed_us(start.handle(), end.handle()), RuntimeError) << "never recorded";
  g.record(start.handle(), s.handle());
  g.copy_async(dev.data(), host, 8, CopyDir::HostToDevice, s.handle());
  g.record(end.handle(), s.handle());
  g.record(plain.handle(), s.handle());
  g.wait(plain.handle());
  const auto us = g.elapsed_us(start.handle(), end.handle());
  ASSERT_TRUE(us.has_value());
  EXPECT_GE(*us, 0.0);
  EXPECT_THROW((void)g.elapsed_us(start.handle(), plain.handle()), RuntimeError)
      << "an event without timing cannot be timed";
  EXPECT_EQ(g.stats().elapsed_queries, 1U);
  g.free_pinned(host);
}

}  // namespace
}  // namespace gdsb::gpu
