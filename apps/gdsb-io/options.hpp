// gdsb-io's command line: gdsio's options with the same meaning, a readable long form for
// each, and gdsbench's extras. setup_io() declares them on a CLI::App; workloads_from()
// turns the parsed values into validated Workloads (one per -i size).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "gdsb/topo/collect.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::io {

struct Options {
  // Positional: a gdsio job file (INI). Without it and without -f/-D: the survey.
  std::string job_file;

  // gdsio options, kept as text where the value needs our own parsing and message.
  std::string file;            // -f
  std::string dir;             // -D
  int gpu = 0;                 // -d
  int numa_node = -1;          // -n (-1: not set)
  std::string mem_type = "0";  // -m
  uint32_t threads = 1;        // -w
  std::string size;            // -s
  std::string offset = "0";    // -o
  std::string io_size = "1M";  // -i (size or min:max:step)
  std::string xfer = "1";      // -x
  std::string io_type = "0";   // -I
  double duration_s = 0;       // -T
  uint64_t seed = 0;           // -k
  bool unaligned = false;      // -U
  bool random_fill = false;    // -R
  bool refill = false;         // -F
  std::string alignment;       // -a
  int mixed_read = -1;         // -M (-1: not set)
  uint32_t batch_size = 0;     // -B
  bool verify = false;         // -V
  bool no_register = false;    // -b
  bool per_job_stats = false;  // -J
  std::string no_odirect;      // -O (gdsio writes "-O 1"; the bare long form means 1)
  bool no_odirect_given = false;
  bool nvlinks = false;  // -p
  std::string rdma_url;  // -P (refused: RDMA is not supported)

  // gdsbench extras.
  std::string engine = "psync";
  uint32_t iodepth = 1;
  double warmup_s = 0;
  uint32_t repeat = 1;
  std::string format = "gdsio";  // gdsio | table
  std::string json_file;
  std::string html_file;  // --html: the same document as a self-contained HTML page
  bool quiet = false;
  bool allow_overwrite = false;
  bool require_gds = false;
  std::string cufile_lib;

  // Workload presets (presets.hpp): --workload NAME and its sizes and counts.
  std::string workload;      // checkpoint-load | checkpoint-save | kv-offload | dataset
  bool dry_run = false;      // print the preset's job file, run nothing, create nothing
  // --gpus: all, a count or a list (node_mode.hpp parse_gpus); "" when not given. With a
  // preset it is a count; without one it asks for the node mode.
  std::string gpus_text;
  std::string fake_gpu;      // tests: --fake-gpu FILE, the fake GPU service (node mode)
  uint32_t shards = 4;       // shard files per GPU
  std::string shard_size = "1G";
  uint32_t layers = 32;      // kv-offload: blocks per request
  std::string block_size = "64K";
  uint64_t kv_blocks = 512;  // kv-offload: cached tokens blocks (requests) in the file
  uint32_t write_share = 10; // kv-offload: percent of requests that write (eviction)
  uint64_t files = 100000;   // dataset
  std::string file_size = "128K";
  std::string topo_json;     // gdsb-topo --json report: the platform ceiling next to results
  // Without --topo-json the topology is collected here (live), or from a recording given
  // with gdsb-topo's source options (--sysfs-root, --lspci-text, ...).
  topo::InputSources topo_sources;

  // Which options the user gave (CLI11 counts), for conflicts and defaults.
  std::vector<std::string> given;  // long names of workload options that were set
  std::vector<std::string> preset_options;  // preset options given (need --workload)
  bool any_argument = false;       // false: plain `gdsb-io`, the survey
  std::vector<std::string> argv;   // as typed, for the report
};

// Declares every option on app, storing into opt (which must outlive parsing).
void setup_io(CLI::App& app, Options& opt);

// Fills opt.given / opt.any_argument after a successful parse.
void record_given(const CLI::App& app, Options& opt);

// The command-line job(s): one Workload per -i size. Throws UsageError naming the option.
std::vector<Workload> workloads_from(const Options& opt);

// Applies the extras (--engine, --iodepth, --warmup, --repeat, --allow-overwrite,
// --require-gds, --cufile-lib) to w; used for command-line jobs and job-file defaults.
void apply_extras(const Options& opt, Workload& w);

}  // namespace gdsb::io
