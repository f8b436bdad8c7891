#include "presets.hpp"
#include "node_mode.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"
#include "values.hpp"

namespace gdsb::io {
namespace {

constexpr uint64_t kPage = 4096;

// Options a preset sets itself; given with --workload they are a usage error.
constexpr std::array<const char*, 8> kPresetAccepts = {
    "--dir", "--gpu", "--threads", "--io-size", "--xfer-type", "--duration", "--seed", "--verify"};

uint64_t size_option(const std::string& text, const char* what, uint64_t min, uint64_t max) {
  const uint64_t v = parse_size(text, what);
  if (v < min || v > max || v % kPage != 0) {
    throw UsageError(std::string(what) + " " + text + ": must be a multiple of 4K between " +
                     format_size(min) + " and " + format_size(max));
  }
  return v;
}

void in_range(uint64_t v, uint64_t min, uint64_t max, const char* what) {
  if (v < min || v > max) {
    throw UsageError(std::string(what) + " " + std::to_string(v) + ": must be between " +
                     std::to_string(min) + " and " + std::to_string(max));
  }
}

std::string seconds_text(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

std::string engine_line(const PresetParams& p) {
  std::string s = "engine=" + std::string(engine_name(p.engine)) + "\n";
  if (p.iodepth > 1) s += "iodepth=" + std::to_string(p.iodepth) + "\n";
  return s;
}

std::string global_section(const PresetParams& p) {
  std::string s = "[global]\nworkload=" + std::string(preset_name(p.preset)) + "\n";
  s += "seed=" + std::to_string(p.seed) + "\n";
  s += "do_verify=" + std::string(p.verify ? "1" : "0") + "\n";
  s += engine_line(p);
  return s;
}

std::string gpu_list(const PresetParams& p, int g) {
  return p.dir + "/gpu" + std::to_string(g) + ".list";
}

std::string checkpoint_load_jobs(const PresetParams& p) {
  std::ostringstream o;
  o << "# checkpoint-load: every GPU reads its " << p.shards << " safetensors shards at once\n"
    << "# (phase 1; tensor data only: each shard's " << p.header_bytes
    << "-byte header block is skipped by offset),\n"
    << "# then the same shards are loaded the naive way a framework does (phase 2,\n"
    << "# naive_load=1): one thread per GPU reads each whole shard with buffered read(2)\n"
    << "# into pageable memory, then one synchronous cudaMemcpy per tensor.\n"
    << global_section(p) << "bs=" << format_size(p.io_size) << "\noffset=" << p.header_bytes
    << "\nsize=" << p.shard_data << "\nnum_threads=" << p.threads << "\n";
  int job = 1;
  for (int phase = 1; phase <= 2; ++phase) {
    for (int g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) {
      o << "\n[job" << job++ << "]\nname=" << (phase == 1 ? "load" : "naive") << "-gpu" << g
        << "\nphase=" << phase << "\ngpu_dev_id=" << g << "\nfilelist=" << gpu_list(p, g)
        << "\nxfer_type=" << (phase == 1 ? static_cast<int>(p.xfer) : 4) << "\n";
      if (phase == 2) o << "odirect=0\nnaive_load=1\nnum_threads=1\n";
    }
  }
  return o.str();
}

std::string checkpoint_save_jobs(const PresetParams& p) {
  std::ostringstream o;
  o << "# checkpoint-save: every GPU writes its " << p.shards << " shards at once, then\n"
    << "# fsyncs them; a job ends when its data is durable.\n"
    << global_section(p) << "rw=write\nfsync=1\nbs=" << format_size(p.io_size)
    << "\nsize=" << p.shard_data << "\nnum_threads=" << p.threads
    << "\nxfer_type=" << static_cast<int>(p.xfer) << "\n";
  int job = 1;
  for (int g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) {
    o << "\n[job" << job++ << "]\nname=save-gpu" << g << "\nphase=1\ngpu_dev_id=" << g
      << "\nfilelist=" << gpu_list(p, g) << "\n";
  }
  return o.str();
}

std::string kv_offload_jobs(const PresetParams& p) {
  std::ostringstream o;
  const uint64_t size = p.kv_blocks * p.layers * p.block_size;
  o << "# kv-offload: a KV cache of " << p.kv_blocks << " requests x " << p.layers
    << " layers x " << format_size(p.block_size) << " blocks in one file;\n"
    << "# a request is one block per layer (request_blocks). job1 offloads every block,\n"
    << "# job2 restores at random, job3 mixes restores with write-backs (eviction).\n"
    << global_section(p) << "filename=" << p.dir << "/kv-cache.bin\nsize=" << size
    << "\nbs=" << format_size(p.block_size) << "\nrequest_blocks=" << p.layers
    << "\nnum_threads=" << p.threads << "\ngpu_dev_id=" << p.first_gpu
    << "\nxfer_type=" << static_cast<int>(p.xfer) << "\n";
  const std::string runtime =
      p.runtime_s > 0 ? "runtime=" + seconds_text(p.runtime_s) + "\n" : std::string();
  o << "\n[job1]\nname=offload\nrw=randwrite\n";
  o << "\n[job2]\nname=restore\nrw=randread\n" << runtime;
  if (p.write_share > 0) {
    o << "\n[job3]\nname=evict-mix\nrw=randread\nrwmixread=" << (100 - p.write_share)
      << "\ndo_verify=0\n" << runtime;
  }
  return o.str();
}

std::string dataset_jobs(const PresetParams& p) {
  std::ostringstream o;
  o << "# dataset: " << p.files << " files of " << format_size(p.file_size) << " read whole by "
    << p.threads << " threads into GPU " << p.first_gpu << ", as a data loader reads\n"
    << "# them (open_per_file=1): each thread opens, registers (cuFile handle), reads,\n"
    << "# deregisters and closes one file after another, all inside the measured time.\n"
    << global_section(p) << "\n[job1]\nname=read\nopen_per_file=1\nfilelist=" << p.dir
    << "/files.list\nbs=" << format_size(p.io_size) << "\nnum_threads=" << p.threads
    << "\ngpu_dev_id=" << p.first_gpu << "\nxfer_type=" << static_cast<int>(p.xfer) << "\n";
  if (p.runtime_s > 0) o << "runtime=" << seconds_text(p.runtime_s) << "\n";
  return o.str();
}

}  // namespace

std::string_view preset_name(Preset p) {
  switch (p) {
    case Preset::CheckpointLoad: return "checkpoint-load";
    case Preset::CheckpointSave: return "checkpoint-save";
    case Preset::KvOffload: return "kv-offload";
    case Preset::Dataset: return "dataset";
  }
  return "?";
}

PresetParams preset_params(const Options& opt, int gpu_count) {
  PresetParams p;
  if (opt.workload == "checkpoint-load") {
    p.preset = Preset::CheckpointLoad;
  } else if (opt.workload == "checkpoint-save") {
    p.preset = Preset::CheckpointSave;
  } else if (opt.workload == "kv-offload") {
    p.preset = Preset::KvOffload;
  } else if (opt.workload == "dataset") {
    p.preset = Preset::Dataset;
  } else {
    throw UsageError("--workload: '" + opt.workload +
                     "' is not a preset; expected checkpoint-load, checkpoint-save, kv-offload "
                     "or dataset");
  }
  if (!opt.job_file.empty()) {
    throw UsageError("--workload cannot be combined with a job file: the preset is one "
                     "(print it with --dry-run)");
  }
  for (const auto& g : opt.given) {
    if (std::find(kPresetAccepts.begin(), kPresetAccepts.end(), g) == kPresetAccepts.end()) {
      throw UsageError(g + " cannot be combined with --workload: the preset sets it (print the "
                           "job file with --dry-run, edit it and run it as gdsb-io FILE)");
    }
  }
  if (opt.dir.empty()) {
    throw UsageError("--workload needs -D/--dir DIR: the directory where its files are "
                     "created once and reused");
  }
  struct stat st {};
  if (::stat(opt.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw UsageError("-D/--dir " + opt.dir + ": not an existing directory; create it first");
  }
  p.dir = opt.dir;
  while (p.dir.size() > 1 && p.dir.back() == '/') p.dir.pop_back();
  p.dir += "/" + std::string(preset_name(p.preset));
  p.xfer = parse_xfer(opt.xfer, "-x/--xfer-type");
  p.first_gpu = opt.gpu;
  const GpuSelection gpus = parse_gpus(opt.gpus_text);
  if (!gpus.list.empty())
    throw UsageError("--gpus " + opt.gpus_text + ": a preset takes all or a count of GPUs from -d, not a list");
  p.gpus = gpus.count > 0 ? gpus.count : std::max(1, gpu_count - opt.gpu);
  in_range(static_cast<uint64_t>(p.gpus), 1, 64, "--gpus");
  if (gpu_count > 0 && xfer_uses_gpu(p.xfer) && p.first_gpu + p.gpus > gpu_count) {
    throw UsageError("--gpus " + std::to_string(p.gpus) + " from -d " +
                     std::to_string(p.first_gpu) + ": this machine has " +
                     std::to_string(gpu_count) + " GPUs");
  }
  p.verify = opt.verify;
  p.runtime_s = opt.duration_s;
  if (p.runtime_s < 0) throw UsageError("-T/--duration: must not be negative");
  p.seed = opt.seed;
  p.engine = parse_engine(opt.engine, "--engine");
  p.iodepth = opt.iodepth;
  in_range(p.iodepth, 1, 4096, "--iodepth");
  in_range(opt.threads, 1, 4096, "-w/--threads");
  const bool threads_given =
      std::find(opt.given.begin(), opt.given.end(), "--threads") != opt.given.end();
  const bool io_given =
      std::find(opt.given.begin(), opt.given.end(), "--io-size") != opt.given.end();
  const auto io_option = [&](uint64_t fallback) {
    return io_given ? size_option(opt.io_size, "-i/--io-size", kPage, uint64_t{1} << 30)
                    : fallback;
  };

  switch (p.preset) {
    case Preset::CheckpointLoad:
    case Preset::CheckpointSave: {
      in_range(opt.shards, 1, 4096, "--shards");
      p.shards = opt.shards;
      const uint64_t shard = size_option(opt.shard_size, "--shard-size", kPage, uint64_t{1} << 40);
      p.io_size = io_option(std::min<uint64_t>(shard, 4 << 20));
      if (p.io_size > shard) {
        throw UsageError("-i/--io-size " + format_size(p.io_size) + " is larger than --shard-size " +
                         opt.shard_size);
      }
      p.shard_data = shard / p.io_size * p.io_size;
      p.threads = threads_given ? opt.threads : p.shards;
      if (p.threads > p.shards) {
        throw UsageError("-w/--threads " + std::to_string(p.threads) + " is more than --shards " +
                         std::to_string(p.shards) + ": each thread reads whole shards");
      }
      if (p.preset == Preset::CheckpointLoad) p.header_bytes = safetensors_header_bytes(p.shard_data);
      break;
    }
    case Preset::KvOffload: {
      if (io_given) throw UsageError("-i/--io-size: kv-offload's I/O is one block (--block-size)");
      p.block_size = size_option(opt.block_size, "--block-size", 16 * 1024, 2 << 20);
      in_range(opt.layers, 1, 4096, "--layers");
      p.layers = opt.layers;
      p.threads = threads_given ? opt.threads : 4;
      in_range(opt.kv_blocks, p.threads, uint64_t{1} << 24, "--kv-blocks");
      p.kv_blocks = opt.kv_blocks;
      in_range(opt.write_share, 0, 99, "--write-share");
      p.write_share = opt.write_share;
      p.io_size = p.block_size;
      break;
    }
    case Preset::Dataset: {
      in_range(opt.files, 1, 10000000, "--files");
      p.files = opt.files;
      p.file_size = size_option(opt.file_size, "--file-size", kPage, uint64_t{1} << 30);
      p.io_size = io_option(p.file_size);
      if (p.file_size % p.io_size != 0) {
        throw UsageError("-i/--io-size " + format_size(p.io_size) + " does not divide --file-size " +
                         opt.file_size + ": each file is read whole");
      }
      p.threads = threads_given ? opt.threads : 8;
      if (p.threads > p.files) p.threads = static_cast<uint32_t>(p.files);
      break;
    }
  }
  return p;
}

std::string preset_job_file(const PresetParams& p) {
  std::string head = "# gdsb-io workload preset " + std::string(preset_name(p.preset)) +
                     ": run with `gdsb-io THIS_FILE`.\n# Data set: " + p.dir +
                     " (manifest gdsb-workload.json), created by the first\n# `gdsb-io "
                     "--workload " +
                     std::string(preset_name(p.preset)) + " -D ...` run and reused after.\n";
  switch (p.preset) {
    case Preset::CheckpointLoad: return head + checkpoint_load_jobs(p);
    case Preset::CheckpointSave: return head + checkpoint_save_jobs(p);
    case Preset::KvOffload: return head + kv_offload_jobs(p);
    case Preset::Dataset: return head + dataset_jobs(p);
  }
  return head;
}

namespace {

// A transformer-like mix: attention projections, a norm vector, MLP matrices, in BF16,
// the last tensor taking what is left so that the tensors fill shard_data exactly.
std::string header_json(uint64_t shard_data, uint32_t shard) {
  const uint64_t hidden = shard_data >= (uint64_t{256} << 20) ? 4096 : 256;
  const uint64_t mlp = hidden * 11008 / 4096;
  const std::array<std::pair<const char*, std::vector<uint64_t>>, 5> kinds = {{
      {"self_attn.q_proj.weight", {hidden, hidden}},
      {"self_attn.k_proj.weight", {hidden / 4, hidden}},
      {"input_layernorm.weight", {hidden}},
      {"mlp.up_proj.weight", {mlp, hidden}},
      {"mlp.down_proj.weight", {hidden, mlp}},
  }};
  nlohmann::ordered_json j;
  j["__metadata__"] = {{"format", "pt"}, {"producer", "gdsbench"}, {"shard", std::to_string(shard)}};
  uint64_t at = 0;
  for (uint64_t layer = 0;; ++layer) {
    for (const auto& [kind, shape] : kinds) {
      uint64_t bytes = 2;
      for (const uint64_t d : shape) bytes *= d;
      const std::string name = "model.layers." + std::to_string(layer) + "." + kind;
      if (at + bytes >= shard_data) {
        j[name] = {{"dtype", "BF16"}, {"shape", {(shard_data - at) / 2}},
                   {"data_offsets", {at, shard_data}}};
        return j.dump();
      }
      j[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {at, at + bytes}}};
      at += bytes;
    }
  }
}

}  // namespace

std::string safetensors_header(uint64_t shard_data, uint64_t header_bytes, uint32_t shard) {
  std::string text = header_json(shard_data, shard);
  const uint64_t len = header_bytes - 8;
  if (text.size() > len) throw RuntimeError("safetensors header does not fit (internal error)");
  text.append(len - text.size(), ' ');  // the format allows trailing spaces in the header
  std::string out(8, '\0');
  for (int b = 0; b < 8; ++b) out[static_cast<std::size_t>(b)] = static_cast<char>((len >> (8 * b)) & 0xff);
  return out + text;
}

uint64_t safetensors_header_bytes(uint64_t shard_data) {
  // Room for the shard number's digits, rounded up so that the tensors start on 4 KiB.
  const uint64_t json = header_json(shard_data, 0).size() + 16;
  return (8 + json + kPage - 1) / kPage * kPage;
}

}  // namespace gdsb::io
