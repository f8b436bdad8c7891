#include "values.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "gdsb/error.hpp"

namespace gdsb::io {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  out.erase(std::remove(out.begin(), out.end(), '_'), out.end());
  return out;
}

[[noreturn]] void bad(std::string_view what, std::string_view text, std::string_view accepted) {
  throw UsageError(std::string(what) + ": '" + std::string(text) + "' is not valid; expected " +
                   std::string(accepted));
}

}  // namespace

XferType parse_xfer(std::string_view text, std::string_view what) {
  if (auto t = parse_xfer_type(text)) return *t;
  bad(what, text,
      "0-7 or a name: gpu_direct (GPUD), cpu_only (CPUONLY), cpu_gpu, cpu_async_gpu, "
      "cpu_cached_gpu, gpu_direct_async (GPUD_ASYNC), gpu_batch, gpu_batch_stream");
}

IoPattern parse_pattern(std::string_view text, std::string_view what) {
  const std::string t = lower(text);
  if (t == "0" || t == "read" || t == "seqread") return IoPattern::Read;
  if (t == "1" || t == "write" || t == "seqwrite") return IoPattern::Write;
  if (t == "2" || t == "randread" || t == "randomread") return IoPattern::RandRead;
  if (t == "3" || t == "randwrite" || t == "randomwrite") return IoPattern::RandWrite;
  bad(what, text, "0 (read), 1 (write), 2 (randread) or 3 (randwrite)");
}

MemType parse_mem(std::string_view text, std::string_view what) {
  const std::string t = lower(text);
  if (t == "0" || t == "cudamalloc") return MemType::CudaMalloc;
  if (t == "1" || t == "cumem") return MemType::CuMem;
  if (t == "2" || t == "cudamallochost") return MemType::CudaMallocHost;
  if (t == "3" || t == "malloc") return MemType::Malloc;
  if (t == "4" || t == "mmap") return MemType::Mmap;
  bad(what, text, "0 (cudaMalloc), 1 (cuMem), 2 (cudaMallocHost), 3 (malloc) or 4 (mmap)");
}

SubmitEngine parse_engine(std::string_view text, std::string_view what) {
  const std::string t = lower(text);
  if (t == "psync") return SubmitEngine::Psync;
  if (t == "iouring") return SubmitEngine::IoUring;
  bad(what, text, "psync or io_uring");
}

bool parse_bool(std::string_view text, std::string_view what) {
  const std::string t = lower(text);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  bad(what, text, "1/0, true/false, yes/no or on/off");
}

uint64_t parse_uint(std::string_view text, std::string_view what, uint64_t max) {
  uint64_t v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) bad(what, text, "a whole number");
  if (v > max) bad(what, text, "a whole number up to " + std::to_string(max));
  return v;
}

double parse_seconds(std::string_view text, std::string_view what) {
  std::string t(text);
  if (!t.empty() && (t.back() == 's' || t.back() == 'S')) t.pop_back();
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v < 0) {
    bad(what, text, "a number of seconds (e.g. 10 or 2.5)");
  }
  return v;
}

}  // namespace gdsb::io
