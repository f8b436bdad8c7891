// gdsb-gpu-ceiling: the reference figures bench/gpu-paths.sh compares the GPU paths with.
//   h2d BYTES            pinned host -> device and device -> host copy throughput (median of 5)
//   naive FILE IO_SIZE   what a user writes without gdsbench: buffered read into pageable
//                        memory, then a (synchronous, pageable) copy to the GPU
//   pread FILE IO_SIZE   O_DIRECT pread into aligned memory, no GPU: -x 1 with one thread
// Prints one JSON object per line; GB/s are base 1000, GiB/s base 1024.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gdsb/gpu/cuda_service.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void print(const char* what, double bytes, double seconds) {
  std::printf("{\"measure\": \"%s\", \"bytes\": %.0f, \"seconds\": %.6f, \"gb_s\": %.3f, \"gib_s\": %.3f}\n",
              what, bytes, seconds, bytes / seconds / 1e9, bytes / seconds / 1073741824.0);
}

int h2d(gdsb::gpu::GpuService& g, std::size_t bytes) {
  gdsb::gpu::DeviceBuffer dev(g, gdsb::MemType::CudaMalloc, bytes);
  void* host = g.alloc_pinned(bytes);
  std::memset(host, 1, bytes);
  for (auto dir : {gdsb::gpu::CopyDir::HostToDevice, gdsb::gpu::CopyDir::DeviceToHost}) {
    std::vector<double> t;
    for (int i = 0; i < 6; ++i) {
      const auto t0 = Clock::now();
      if (dir == gdsb::gpu::CopyDir::HostToDevice) {
        g.copy(dev.data(), host, bytes, dir);
      } else {
        g.copy(host, dev.data(), bytes, dir);
      }
      if (i > 0) t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    print(dir == gdsb::gpu::CopyDir::HostToDevice ? "h2d_pinned" : "d2h_pinned",
          static_cast<double>(bytes), t[t.size() / 2]);
  }
  g.free_pinned(host);
  return 0;
}

int file_pass(gdsb::gpu::GpuService* g, const char* file, std::size_t io, bool direct) {
  const int fd = ::open(file, O_RDONLY | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    std::perror(file);
    return 1;
  }
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, io) != 0) return 1;
  std::unique_ptr<gdsb::gpu::DeviceBuffer> dev;
  if (g != nullptr) dev = std::make_unique<gdsb::gpu::DeviceBuffer>(*g, gdsb::MemType::CudaMalloc, io);
  double total = 0;
  const auto t0 = Clock::now();
  for (off_t off = 0;; off += static_cast<off_t>(io)) {
    const ssize_t n = ::pread(fd, buf, io, off);
    if (n <= 0) break;
    if (g != nullptr) g->copy(dev->data(), buf, static_cast<std::size_t>(n), gdsb::gpu::CopyDir::HostToDevice);
    total += static_cast<double>(n);
  }
  print(g != nullptr ? "naive_pageable" : "pread_odirect", total,
        std::chrono::duration<double>(Clock::now() - t0).count());
  std::free(buf);
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s h2d BYTES | naive FILE IO_SIZE | pread FILE IO_SIZE\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "pread" && argc == 4) return file_pass(nullptr, argv[2], std::stoul(argv[3]), true);
  auto g = gdsb::gpu::make_cuda_service();
  if (const auto a = g->probe(); !a.ok) {
    std::fprintf(stderr, "waived: %s\n", a.reason.c_str());
    return 1;
  }
  g->use_device(0);
  try {
    if (mode == "h2d") return h2d(*g, std::stoul(argv[2]));
    if (mode == "naive" && argc == 4) return file_pass(g.get(), argv[2], std::stoul(argv[3]), false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
