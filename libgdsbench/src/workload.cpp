#include "gdsb/workload.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"

namespace gdsb {
namespace {

struct XferNames {
  XferType type;
  std::string_view label;
  std::string_view name;
};

constexpr std::array<XferNames, kXferTypeCount> kXferNames{{
    {XferType::GpuDirect, "GPUD", "gpu_direct"},
    {XferType::CpuOnly, "CPUONLY", "cpu_only"},
    {XferType::CpuGpu, "CPU_GPU", "cpu_gpu"},
    {XferType::CpuAsyncGpu, "CPU_ASYNC_GPU", "cpu_async_gpu"},
    {XferType::CpuCachedGpu, "CPU_CACHED_GPU", "cpu_cached_gpu"},
    {XferType::GpuDirectAsync, "GPUD_ASYNC", "gpu_direct_async"},
    {XferType::GpuBatch, "GPU_BATCH", "gpu_batch"},
    {XferType::GpuBatchStream, "GPU_BATCH_STREAM", "gpu_batch_stream"},
}};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

const XferNames& names_of(XferType t) { return kXferNames.at(static_cast<std::size_t>(t)); }

// Reads an enum stored as a number, refusing values outside [0, count).
template <typename Enum>
Enum enum_in_range(const nlohmann::json& j, const char* key, Enum fallback, int count) {
  if (!j.contains(key)) return fallback;
  const int v = j.at(key).get<int>();
  if (v < 0 || v >= count) {
    throw nlohmann::json::other_error::create(
        501, std::string("workload.") + key + " = " + std::to_string(v) + " is out of range",
        &j);
  }
  return static_cast<Enum>(v);
}

}  // namespace

std::string_view xfer_label(XferType t) { return names_of(t).label; }
std::string_view xfer_name(XferType t) { return names_of(t).name; }

std::optional<XferType> parse_xfer_type(std::string_view text) {
  if (text.size() == 1 && text[0] >= '0' && text[0] < '0' + kXferTypeCount) {
    return static_cast<XferType>(text[0] - '0');
  }
  for (const auto& n : kXferNames) {
    if (iequals(text, n.label) || iequals(text, n.name)) return n.type;
  }
  return std::nullopt;
}

bool xfer_uses_gpu(XferType t) { return t != XferType::CpuOnly; }

bool xfer_uses_cufile(XferType t) {
  return t == XferType::GpuDirect || t == XferType::GpuDirectAsync || t == XferType::GpuBatch ||
         t == XferType::GpuBatchStream;
}

std::string_view pattern_label(IoPattern p) {
  switch (p) {
    case IoPattern::Read: return "READ";
    case IoPattern::Write: return "WRITE";
    case IoPattern::RandRead: return "RANDREAD";
    case IoPattern::RandWrite: return "RANDWRITE";
  }
  return "?";
}

bool pattern_is_random(IoPattern p) { return p == IoPattern::RandRead || p == IoPattern::RandWrite; }
bool pattern_is_write(IoPattern p) { return p == IoPattern::Write || p == IoPattern::RandWrite; }

std::string_view mem_type_name(MemType m) {
  switch (m) {
    case MemType::CudaMalloc: return "cudaMalloc";
    case MemType::CuMem: return "cuMem";
    case MemType::CudaMallocHost: return "cudaMallocHost";
    case MemType::Malloc: return "malloc";
    case MemType::Mmap: return "mmap";
  }
  return "?";
}

std::string_view engine_name(SubmitEngine e) {
  return e == SubmitEngine::IoUring ? "io_uring" : "psync";
}

namespace {

std::vector<std::string> read_file_list(const std::string& list) {
  std::ifstream in(list);
  if (!in) {
    throw RuntimeError("cannot read file list " + list + " (filelist): " + std::strerror(errno));
  }
  const std::string::size_type slash = list.rfind('/');
  const std::string base = slash == std::string::npos ? "" : list.substr(0, slash + 1);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    out.push_back(line[0] == '/' ? line : base + line);
  }
  return out;
}

}  // namespace

std::vector<std::string> Workload::resolved_files() const {
  if (!file_list.empty()) return read_file_list(file_list);
  if (!file.empty()) return {file};
  std::vector<std::string> out;
  for (uint32_t i = 0; i < threads; ++i) out.push_back(directory + "/gdsio." + std::to_string(i));
  return out;
}

void to_json(nlohmann::json& j, const Workload& w) {
  j = nlohmann::json{
      {"name", w.name},
      {"file", w.file},
      {"directory", w.directory},
      {"gpu", w.gpu},
      {"numa_node", w.numa_node ? nlohmann::json(*w.numa_node) : nlohmann::json(nullptr)},
      {"mem_type", static_cast<int>(w.mem_type)},
      {"threads", w.threads},
      {"file_size", w.file_size},
      {"start_offset", w.start_offset},
      {"io_size", w.io_size},
      {"xfer_type", static_cast<int>(w.xfer)},
      {"xfer_name", xfer_name(w.xfer)},
      {"io_pattern", static_cast<int>(w.pattern)},
      {"io_pattern_name", pattern_label(w.pattern)},
      {"mixed_read_percent",
       w.mixed_read_percent ? nlohmann::json(*w.mixed_read_percent) : nlohmann::json(nullptr)},
      {"runtime_s", w.runtime_s},
      {"seed", w.seed},
      {"unaligned_random", w.unaligned_random},
      {"random_alignment", w.random_alignment},
      {"fill_random", w.fill_random},
      {"refill_every_write", w.refill_every_write},
      {"skip_buffer_register", w.skip_buffer_register},
      {"verify", w.verify},
      {"batch_size", w.batch_size},
      {"enable_nvlinks", w.enable_nvlinks},
      {"odirect", w.odirect},
      {"engine", engine_name(w.engine)},
      {"iodepth", w.iodepth},
      {"warmup_s", w.warmup_s},
      {"repeat", w.repeat},
      {"allow_overwrite", w.allow_overwrite},
      {"require_gds", w.require_gds},
      {"cufile_library", w.cufile_library},
      {"file_list", w.file_list},
      {"fsync", w.fsync},
      {"request_blocks", w.request_blocks},
      {"preset", w.preset},
      {"naive_load", w.naive_load},
      {"open_per_file", w.open_per_file},
  };
}

void from_json(const nlohmann::json& j, Workload& w) {
  Workload d;  // defaults for keys that are absent
  w.name = j.value("name", d.name);
  w.file = j.value("file", d.file);
  w.directory = j.value("directory", d.directory);
  w.gpu = j.value("gpu", d.gpu);
  if (j.contains("numa_node") && !j.at("numa_node").is_null()) {
    w.numa_node = j.at("numa_node").get<int>();
  } else {
    w.numa_node.reset();
  }
  w.mem_type = enum_in_range(j, "mem_type", d.mem_type, 5);
  w.threads = j.value("threads", d.threads);
  w.file_size = j.value("file_size", d.file_size);
  w.start_offset = j.value("start_offset", d.start_offset);
  w.io_size = j.value("io_size", d.io_size);
  w.xfer = enum_in_range(j, "xfer_type", d.xfer, kXferTypeCount);
  w.pattern = enum_in_range(j, "io_pattern", d.pattern, 4);
  if (j.contains("mixed_read_percent") && !j.at("mixed_read_percent").is_null()) {
    w.mixed_read_percent = j.at("mixed_read_percent").get<uint32_t>();
  } else {
    w.mixed_read_percent.reset();
  }
  w.runtime_s = j.value("runtime_s", d.runtime_s);
  w.seed = j.value("seed", d.seed);
  w.unaligned_random = j.value("unaligned_random", d.unaligned_random);
  w.random_alignment = j.value("random_alignment", d.random_alignment);
  w.fill_random = j.value("fill_random", d.fill_random);
  w.refill_every_write = j.value("refill_every_write", d.refill_every_write);
  w.skip_buffer_register = j.value("skip_buffer_register", d.skip_buffer_register);
  w.verify = j.value("verify", d.verify);
  w.batch_size = j.value("batch_size", d.batch_size);
  w.enable_nvlinks = j.value("enable_nvlinks", d.enable_nvlinks);
  w.odirect = j.value("odirect", d.odirect);
  w.engine = j.value("engine", std::string("psync")) == "io_uring" ? SubmitEngine::IoUring
                                                                   : SubmitEngine::Psync;
  w.iodepth = j.value("iodepth", d.iodepth);
  w.warmup_s = j.value("warmup_s", d.warmup_s);
  w.repeat = j.value("repeat", d.repeat);
  w.allow_overwrite = j.value("allow_overwrite", d.allow_overwrite);
  w.require_gds = j.value("require_gds", d.require_gds);
  w.cufile_library = j.value("cufile_library", d.cufile_library);
  w.file_list = j.value("file_list", d.file_list);
  w.fsync = j.value("fsync", d.fsync);
  w.request_blocks = j.value("request_blocks", d.request_blocks);
  w.preset = j.value("preset", d.preset);
  w.naive_load = j.value("naive_load", d.naive_load);
  w.open_per_file = j.value("open_per_file", d.open_per_file);
}

}  // namespace gdsb
