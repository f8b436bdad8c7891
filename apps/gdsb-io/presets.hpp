// Workload presets (--workload): AI I/O patterns expressed as gdsio-style job files on the
// same runner. A preset is (1) a data set under -D DIR/<preset>, created once and reused
// (manifest gdsb-workload.json), and (2) a job file that `--dry-run` prints and that
// `gdsb-io FILE` runs unchanged. The summary (time to result per GPU and for the node)
// is computed from the runs' results. docs/gdsb-io.md, "Workload presets".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gdsb/gpu/naive_load.hpp"
#include "gdsb/result.hpp"
#include "gdsb/runner.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/workload.hpp"
#include "options.hpp"

namespace gdsb::io {

enum class Preset { CheckpointLoad, CheckpointSave, KvOffload, Dataset };
std::string_view preset_name(Preset p);

struct PresetParams {
  Preset preset = Preset::CheckpointLoad;
  std::string dir;  // DIR/<preset name>
  XferType xfer = XferType::CpuOnly;
  int first_gpu = 0;
  int gpus = 1;
  uint32_t threads = 0;  // 0: the preset's default
  uint64_t io_size = 0;
  bool verify = false;
  double runtime_s = 0;
  uint64_t seed = 0;
  SubmitEngine engine = SubmitEngine::Psync;
  uint32_t iodepth = 1;
  // checkpoint-*: shards per GPU and tensor bytes per shard (a whole number of -i).
  uint32_t shards = 4;
  uint64_t shard_data = 0;
  uint64_t header_bytes = 0;  // checkpoint-load: 8-byte length + JSON, padded to 4 KiB
  // kv-offload
  uint32_t layers = 32;
  uint64_t block_size = 64 * 1024;
  uint64_t kv_blocks = 512;
  uint32_t write_share = 10;
  // dataset
  uint64_t files = 100000;
  uint64_t file_size = 128 * 1024;
};

// Checks the options for --workload before anything is created. Throws UsageError naming
// the option. gpu_count: GPUs usable here (0 when none).
PresetParams preset_params(const Options& opt, int gpu_count);

// The job file: gdsio keys plus gdsbench's (filelist, fsync, request_blocks, workload,
// phase), with comments saying what each job models.
std::string preset_job_file(const PresetParams& p);

// Creates the data set once (files written through the runner, which refuses to replace a
// file gdsbench did not create unless allow_overwrite), or reuses it when the manifest
// matches. Prints one line on stderr when it creates something.
void prepare_preset_data(const PresetParams& p, const Runner& runner, bool allow_overwrite);

// Before a checkpoint-load: asks the kernel to drop the shards' cached pages, so the load
// and the naive load both start from storage (posix_fadvise DONTNEED; best effort; a
// RAM-backed file system keeps them: the naive load reports what was resident).
void drop_cached_pages(const PresetParams& p);

// The platform ceiling per GPU, as {source, per_gpu: [{gpu, gb_s, limited_by, peers}]}, or
// {source?, note} saying why there is no figure: from a gdsb-topo --json report when
// topo_json is given, else from the topology collected with gdsb-topo's collector (live,
// or the recording `sources` names) and gdsb-topo's ceilings. Never throws.
nlohmann::json platform_ceiling(const std::string& topo_json, const topo::InputSources& sources);

// A naive-load job's facts (gdsb/gpu/naive_load.hpp), by job name.
using NaiveFacts = std::vector<std::pair<std::string, gpu::NaiveLoadFacts>>;

// Time to result first, then GB/s and latencies, with the platform ceiling next to them
// (ceiling: platform_ceiling's answer).
nlohmann::json preset_summary(const PresetParams& p, std::span<const RunResult> runs,
                              const NaiveFacts& naive, const nlohmann::json& ceiling);
std::string preset_summary_text(const nlohmann::json& summary);

// The safetensors header of one shard (8-byte little-endian length, then JSON padded with
// spaces to `header_bytes`), its tensors filling exactly shard_data bytes. Exposed for tests.
std::string safetensors_header(uint64_t shard_data, uint64_t header_bytes, uint32_t shard);
// Bytes of the header block for a shard of shard_data tensor bytes (a multiple of 4 KiB).
uint64_t safetensors_header_bytes(uint64_t shard_data);

}  // namespace gdsb::io
