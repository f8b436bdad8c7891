#include "gdsb/gpu/naive_load.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "gdsb/error.hpp"
#include "gdsb/gpu/cufile_session.hpp"
#include "gdsb/histogram.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/verify.hpp"
#include "../worker_loop.hpp"  // gdsb::detail::unix_now_s, the runner's wall clock

namespace gdsb::gpu {
namespace {

constexpr std::size_t kReadChunk = std::size_t{1} << 30;     // one read(2) asks at most this
constexpr std::size_t kVerifyChunk = std::size_t{64} << 20;  // device bytes checked at a time

struct Span {
  uint64_t begin = 0;  // offset in the tensor data (= in the device buffer)
  uint64_t end = 0;
};

// The tensors of a safetensors file held in memory: data starts after the 8-byte length and
// the JSON header; nullopt when the bytes are not a well-formed safetensors file.
std::optional<std::pair<uint64_t, std::vector<Span>>> safetensors_tensors(const std::byte* data,
                                                                          uint64_t size) {
  if (size < 8) return std::nullopt;
  uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = (n << 8) | static_cast<uint8_t>(data[b]);
  if (n > size - 8) return std::nullopt;
  const auto* text = reinterpret_cast<const char*>(data + 8);
  const auto j = nlohmann::json::parse(text, text + n, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const uint64_t start = 8 + n;
  std::vector<Span> spans;
  for (const auto& [name, t] : j.items()) {
    if (name == "__metadata__") continue;
    if (!t.is_object() || !t.contains("data_offsets")) return std::nullopt;
    const auto& o = t.at("data_offsets");
    if (!o.is_array() || o.size() != 2 || !o[0].is_number_unsigned() || !o[1].is_number_unsigned())
      return std::nullopt;
    const Span s{o[0].get<uint64_t>(), o[1].get<uint64_t>()};
    if (s.begin > s.end || s.end > size - start) return std::nullopt;
    spans.push_back(s);
  }
  return std::make_pair(start, std::move(spans));
}

// One file as loaded: where its tensor data sits, on the GPU or (host only) in memory.
struct Loaded {
  std::string path;
  uint64_t data_start = 0;  // file offset of the data's first byte
  uint64_t data_bytes = 0;
  DeviceBuffer device;
  std::unique_ptr<std::byte[]> host;  // kept only without a GPU
};

class Loader {
 public:
  Loader(GpuService& svc, const Workload& w, bool gpu, const std::atomic<bool>* stop)
      : svc_(svc), w_(w), gpu_(gpu), stop_(stop) {}

  // Reads one whole file into new pageable memory and copies its tensors to the GPU.
  void load(Loaded& f, NaiveLoadFacts& facts) {
    const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw RuntimeError("cannot open " + f.path + ": " + std::strerror(errno));
    struct stat st {};
    const int flags = ::fcntl(fd, F_GETFL);
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      throw RuntimeError("cannot stat " + f.path + ": " + std::strerror(err));
    }
    if (flags < 0 || (flags & O_DIRECT) != 0) facts.buffered = false;
    const auto size = static_cast<uint64_t>(st.st_size);
    // new[] without value-initialisation: the pages are faulted in by read(2), as a
    // framework's fresh CPU tensor storage is.
    std::unique_ptr<std::byte[]> host(new std::byte[std::max<uint64_t>(size, 1)]);
    uint64_t got = 0;
    while (got < size) {
      const ssize_t r = ::read(fd, host.get() + got, std::min<uint64_t>(size - got, kReadChunk));
      ++facts.read_calls;
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        const int err = r < 0 ? errno : EIO;
        ::close(fd);
        throw RuntimeError("cannot read " + f.path + ": " +
                           (r < 0 ? std::strerror(err) : "file shorter than its size"));
      }
      got += static_cast<uint64_t>(r);
    }
    ::close(fd);
    facts.bytes_read += size;
    ++facts.files;
    facts.file_bytes += size;

    auto tensors = safetensors_tensors(host.get(), size);
    if (!tensors) {
      // Not safetensors: one copy of the job's range, as a framework's single blob.
      const uint64_t from = std::min(w_.start_offset, size);
      const uint64_t bytes = w_.file_size != 0 ? std::min(w_.file_size, size - from) : size - from;
      tensors.emplace(from, std::vector<Span>{{0, bytes}});
      ++facts.whole_files;
    } else {
      facts.tensors += tensors->second.size();
    }
    f.data_start = tensors->first;
    for (const Span& s : tensors->second) f.data_bytes = std::max(f.data_bytes, s.end);
    if (!gpu_) {
      facts.bytes_copied += f.data_bytes;
      f.host = std::move(host);
      return;
    }
    for (const Span& s : tensors->second) {
      if (s.end == s.begin) continue;
      svc_.copy_pageable(f.device.data() + s.begin, host.get() + f.data_start + s.begin,
                         s.end - s.begin, CopyDir::HostToDevice);
      ++facts.copies;
      facts.bytes_copied += s.end - s.begin;
    }
  }

  // After the clock: the bytes the GPU holds against the -V pattern. Returns the files
  // that differ, with the first differing file offset in words.
  std::vector<std::string> verify(const Loaded& f) {
    std::vector<std::string> bad;
    std::vector<std::byte> back;
    for (uint64_t at = 0; at < f.data_bytes; at += kVerifyChunk) {
      const uint64_t n = std::min<uint64_t>(kVerifyChunk, f.data_bytes - at);
      const std::byte* data = nullptr;
      if (gpu_) {
        back.resize(n);
        svc_.copy(back.data(), f.device.data() + at, n, CopyDir::DeviceToHost);
        data = back.data();
      } else {
        data = f.host.get() + f.data_start + at;
      }
      const std::size_t m = find_pattern_mismatch({data, n}, f.data_start + at, w_.seed);
      if (m != kNoMismatch) {
        bad.push_back(f.path + " differs from the -V pattern at file offset " +
                      std::to_string(f.data_start + at + m));
        break;
      }
    }
    return bad;
  }

  bool stopped() const { return stop_ != nullptr && stop_->load(); }
  GpuService& svc() { return svc_; }
  bool gpu() const { return gpu_; }

 private:
  GpuService& svc_;
  const Workload& w_;
  bool gpu_;
  const std::atomic<bool>* stop_;
};

std::vector<std::string> evidence(const NaiveLoadFacts& f, const Workload& w) {
  std::vector<std::string> e;
  e.push_back(
      "buffered read(2) of each whole file into pageable host memory (new[], neither "
      "pinned nor registered), " +
      std::string(f.buffered ? "no O_DIRECT on any descriptor (F_GETFL)"
                             : "O_DIRECT found on a descriptor") +
      ": " + std::to_string(f.read_calls) + " read calls, " + std::to_string(f.bytes_read) +
      " bytes of " + std::to_string(f.files) + " files");
  if (f.gpu) {
    e.push_back("one synchronous pageable copy per tensor to GPU " + std::to_string(w.gpu) +
                " (cudaMemcpy; CUDA stages it through its own pinned buffers): " +
                std::to_string(f.copies) + " copies, " + std::to_string(f.bytes_copied) + " bytes" +
                (f.whole_files > 0 ? "; " + std::to_string(f.whole_files) +
                                         " files were not safetensors and went as one copy"
                                   : std::string()));
  }
  e.push_back(f.cached_known
                  ? "page cache before the load: " + std::to_string(f.cached_before) + " of " +
                        std::to_string(f.file_bytes) + " bytes of the files resident (mincore)"
                  : "page cache before the load: unknown for some files (mincore)");
  return e;
}

}  // namespace

void accumulate(NaiveLoadFacts& into, const NaiveLoadFacts& f) {
  into.files += f.files;
  into.bytes_read += f.bytes_read;
  into.read_calls += f.read_calls;
  into.buffered = into.buffered && f.buffered;
  into.copies += f.copies;
  into.bytes_copied += f.bytes_copied;
  into.tensors += f.tensors;
  into.whole_files += f.whole_files;
  into.file_bytes += f.file_bytes;
  into.cached_before += f.cached_before;
  into.cached_known = into.cached_known && f.cached_known;
  into.gpu = into.gpu && f.gpu;
}

NaiveLoad naive_load(GpuService& svc, const Workload& w, const std::atomic<bool>* stop) {
  if (w.file_list.empty()) throw UsageError("naive_load=1 needs filelist: the shards to load");
  if (w.pattern != IoPattern::Read) throw UsageError("naive_load=1 models a load: rw=read only");
  NaiveLoad out;
  RunResult& run = out.run;
  run.workload = w;
  run.started_at = utc_now_iso8601();
  const Availability gpu = svc.probe();
  const uint32_t threads = std::max<uint32_t>(1, w.threads);
  std::vector<Loaded> files;
  for (auto& p : w.resolved_files()) {
    files.emplace_back();
    files.back().path = std::move(p);
  }

  // Before the clock: the page-cache state of each file, and the device memory that will
  // hold it (the chosen path also allocates its buffers before its clock).
  NaiveLoadFacts& facts = out.facts;
  facts.gpu = gpu.ok;
  if (gpu.ok) svc.use_device(w.gpu);
  for (auto& f : files) {
    const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw RuntimeError("cannot open " + f.path + ": " + std::strerror(errno));
    struct stat st {};
    const bool sized = ::fstat(fd, &st) == 0;
    const auto cached = page_cache_bytes(fd);
    ::close(fd);
    if (!sized) throw RuntimeError("cannot stat " + f.path);
    if (cached) {
      // Whole pages are counted; the last one may hold less of the file.
      facts.cached_before += std::min(*cached, static_cast<uint64_t>(st.st_size));
    } else if (st.st_size > 0) {
      facts.cached_known = false;
    }
    if (gpu.ok) {
      f.device = DeviceBuffer(svc, MemType::CudaMalloc,
                              std::max<std::size_t>(1, static_cast<std::size_t>(st.st_size)));
    }
  }

  Loader loader(svc, w, gpu.ok, stop);
  std::vector<NaiveLoadFacts> per_thread(threads);
  std::vector<LatencyHistogram> per_file(threads);  // one file's read and copies
  std::vector<std::exception_ptr> errors(threads);
  std::atomic<bool> interrupted{false};
  const auto t0 = std::chrono::steady_clock::now();
  run.result.t0_unix_s = detail::unix_now_s();
  {
    std::vector<std::jthread> pool;
    for (uint32_t t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        try {
          if (loader.gpu()) loader.svc().use_device(w.gpu);
          for (std::size_t i = t; i < files.size(); i += threads) {
            if (loader.stopped()) {
              interrupted = true;
              return;
            }
            const auto start = std::chrono::steady_clock::now();
            loader.load(files[i], per_thread[t]);
            per_file[t].record(
                static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now() - start)
                                          .count()));
          }
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.result.end_unix_s = detail::unix_now_s();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (const auto& f : per_thread) accumulate(facts, f);

  Measurement& m = run.result;
  m.seconds = seconds;
  m.bytes = facts.bytes_copied;
  // An op is one file loaded (read whole, its tensors copied); its latency is that time.
  LatencyHistogram all;
  for (const auto& h : per_file) all.merge(h);
  m.ops = facts.files;
  m.read_ops = facts.files;
  m.latency = all.summary();
  m.histogram = all.buckets();
  m.throughput_gib_s = seconds > 0 ? static_cast<double>(m.bytes) / seconds / (1ULL << 30) : 0.0;
  m.iops = seconds > 0 ? static_cast<double>(m.ops) / seconds : 0.0;
  run.interrupted = interrupted;
  run.setup.files = files.size();
  run.path.path_used = path_used_name(gpu.ok ? PathUsed::PageCachePageable
                                               : PathUsed::PageCachePageableHostOnly);
  run.path.evidence = evidence(facts, w);
  if (gpu.ok) run.path.gpu_pci_bus_id = svc.properties(w.gpu).pci_bus_id;
  if (!gpu.ok) {
    run.path.warnings.push_back("no GPU usable (" + gpu.reason +
                                "): only the buffered reads into pageable memory ran, no copies");
  }
  if (w.verify && !interrupted) {
    if (gpu.ok) svc.use_device(w.gpu);
    for (const auto& f : files) {
      for (auto& msg : loader.verify(f)) {
        ++run.verify_errors;
        run.path.warnings.push_back("verification: " + msg);
      }
    }
  }
  run.ended_at = utc_now_iso8601();
  return out;
}

}  // namespace gdsb::gpu
