// An independent cross-check for gdsb-p2p --measure where nvbandwidth and the cuda-samples
// p2pBandwidthLatencyTest are not installed: synchronous cudaMemcpy / cudaMemcpyPeer of one
// buffer, timed with the wall clock, median of N. Deliberately a different method from
// gdsb-p2p's (events around back-to-back async copies), so agreement means something.
// Build: nvcc -O2 -o peer_reference peer_reference.cu ; run: ./peer_reference [MiB] [reps]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s: %s at line %d\n", #x, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

static double median_gb_s(size_t bytes, int reps, const std::function<void()>& copy) {
  copy();  // warm-up
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    copy();
    const auto t1 = std::chrono::steady_clock::now();
    v.push_back(static_cast<double>(bytes) / std::chrono::duration<double>(t1 - t0).count() / 1e9);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256) << 20;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 11;
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  void* host = nullptr;
  CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocPortable));
  std::vector<void*> dev(n), dev2(n);
  for (int i = 0; i < n; ++i) {
    CHECK(cudaSetDevice(i));
    CHECK(cudaMalloc(&dev[i], bytes));
    CHECK(cudaMalloc(&dev2[i], bytes));
  }
  std::printf("reference: %zu bytes, median of %d synchronous copies, wall clock, GB/s = 1e9 B/s\n",
              bytes, reps);
  for (int i = 0; i < n; ++i) {
    CHECK(cudaSetDevice(i));
    const double h2d = median_gb_s(bytes, reps, [&] { CHECK(cudaMemcpy(dev[i], host, bytes, cudaMemcpyHostToDevice)); });
    const double d2h = median_gb_s(bytes, reps, [&] { CHECK(cudaMemcpy(host, dev[i], bytes, cudaMemcpyDeviceToHost)); });
    std::printf("GPU%d h2d %.2f d2h %.2f\n", i, h2d, d2h);
  }
  for (int pass = 0; pass < 2; ++pass) {
    const bool peer = pass == 1;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        int can = 0;
        CHECK(cudaDeviceCanAccessPeer(&can, i, j));
        if (peer && !can) continue;
        if (peer) {
          CHECK(cudaSetDevice(i));
          CHECK(cudaDeviceEnablePeerAccess(j, 0));
          CHECK(cudaSetDevice(j));
          CHECK(cudaDeviceEnablePeerAccess(i, 0));
        }
        CHECK(cudaSetDevice(i));
        // cudaMemcpyPeer returns before a device-to-device copy ends: wait for it.
        const double uni = median_gb_s(bytes, reps, [&] {
          CHECK(cudaMemcpyPeer(dev[j], j, dev[i], i, bytes));
          CHECK(cudaDeviceSynchronize());
        });
        // 8-byte copies waited for one by one: an upper bound on latency (API round trip included).
        std::vector<double> lat;
        for (int r = 0; r < 1000; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          CHECK(cudaMemcpyPeer(dev[j], j, dev[i], i, 8));
          CHECK(cudaDeviceSynchronize());
          lat.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(lat.begin(), lat.end());
        std::printf("GPU%d -> GPU%d peer access %s: cudaMemcpyPeer %.2f GB/s, 8-byte sync copy %.2f us\n", i, j,
                    peer ? "on " : "off", uni, lat[lat.size() / 2]);
        if (peer) {
          CHECK(cudaSetDevice(i));
          CHECK(cudaDeviceDisablePeerAccess(j));
          CHECK(cudaSetDevice(j));
          CHECK(cudaDeviceDisablePeerAccess(i));
        }
      }
    }
  }
  return 0;
}
