#include "options.hpp"

#include <array>

#include "gdsb/cli/tool_flags.hpp"
#include "gdsb/error.hpp"
#include "gdsb/topo/source_options.hpp"
#include "gdsb/units.hpp"
#include "validate.hpp"
#include "values.hpp"

namespace gdsb::io {
namespace {

// Long names of the options that describe a workload; with a job file they conflict.
constexpr std::array<const char*, 24> kWorkloadOptions = {
    "--file",       "--dir",       "--gpu",         "--numa-node",  "--mem-type",  "--threads",
    "--size",       "--offset",    "--io-size",     "--xfer-type",  "--io-type",   "--duration",
    "--seed",       "--unaligned", "--random-fill", "--refill",     "--alignment", "--mixed-read",
    "--batch-size", "--verify",    "--no-register", "--no-odirect", "--nvlinks",   "--rdma-url"};

}  // namespace

void setup_io(CLI::App& app, Options& opt) {
  app.description(
      "gdsb-io: storage <-> memory transfer benchmark, gdsio-compatible.\n"
      "  gdsb-io                      survey this machine (report in gdsb-report/io.json)\n"
      "  gdsb-io -f FILE -x 1 -I 0 -s 1G -i 1M -w 2 [-T 10]\n"
      "  gdsb-io JOBFILE.gdsio        run a gdsio job file");
  cli::add_tool_flags(app, "gdsb-io");
  app.add_option("jobfile", opt.job_file, "gdsio job file (INI: [global], [job1], ...)");

  auto* g = "gdsio options";
  app.add_option("-f,--file", opt.file, "file to test, shared by all threads")->group(g);
  app.add_option("-D,--dir", opt.dir, "directory: one file per thread, DIR/gdsio.N")->group(g);
  app.add_option("-d,--gpu", opt.gpu, "GPU index")->group(g);
  app.add_option("-n,--numa-node", opt.numa_node, "NUMA node for host memory and threads")
      ->group(g);
  app.add_option("-m,--mem-type", opt.mem_type,
                 "GPU memory: 0 cudaMalloc, 1 cuMem, 2 cudaMallocHost, 3 malloc, 4 mmap")
      ->group(g);
  app.add_option("-w,--threads", opt.threads, "worker threads")->group(g);
  app.add_option("-s,--size", opt.size, "file size (K/M/G/T, base 1024)")->group(g);
  app.add_option("-o,--offset", opt.offset, "start offset in the file")->group(g);
  app.add_option("-i,--io-size", opt.io_size, "I/O size, or min:max:step for one job per size")
      ->group(g);
  app.add_option("-x,--xfer-type", opt.xfer,
                 "transfer type: 0 gpu_direct, 1 cpu_only, 2 cpu_gpu, 3 cpu_async_gpu, "
                 "4 cpu_cached_gpu, 5 gpu_direct_async, 6 gpu_batch, 7 gpu_batch_stream")
      ->group(g);
  app.add_option("-I,--io-type", opt.io_type, "0 read, 1 write, 2 randread, 3 randwrite")->group(g);
  app.add_option("-T,--duration", opt.duration_s, "run for SECONDS (default: one pass)")->group(g);
  app.add_option("-k,--seed", opt.seed, "seed for random offsets and data")->group(g);
  app.add_flag("-U,--unaligned", opt.unaligned, "unaligned random offsets (buffered I/O only)")
      ->group(g);
  app.add_flag("-R,--random-fill", opt.random_fill, "fill write buffers with random data")
      ->group(g);
  app.add_flag("-F,--refill", opt.refill, "refill the buffer before every write")->group(g);
  app.add_option("-a,--alignment", opt.alignment, "alignment of random offsets")->group(g);
  app.add_option("-M,--mixed-read", opt.mixed_read, "percent of operations that read (0-100)")
      ->group(g);
  app.add_option("-B,--batch-size", opt.batch_size, "cuFile batch size (-x 6, 7)")->group(g);
  app.add_flag("-V,--verify", opt.verify, "write a known pattern and check it on read")->group(g);
  app.add_flag("-b,--no-register", opt.no_register, "skip cuFile buffer registration")->group(g);
  app.add_flag("-J,--per-job-stats", opt.per_job_stats, "print per-job statistics under each line")
      ->group(g);
  app.add_option("-O,--no-odirect", opt.no_odirect,
                 "1: buffered I/O instead of O_DIRECT (gdsio: -O 1)")
      ->expected(0, 1)
      ->group(g);
  app.add_flag("-p,--nvlinks", opt.nvlinks, "enable NVLinks")->group(g);
  app.add_option("-P,--rdma-url", opt.rdma_url, "RDMA URL (not supported by gdsbench)")->group(g);

  auto* x = "gdsbench options";
  app.add_option("--engine", opt.engine, "CPU submission engine: psync or io_uring")
      ->check(CLI::IsMember({"psync", "io_uring"}))
      ->group(x);
  app.add_option("--iodepth", opt.iodepth,
                 "I/Os in flight per thread: the io_uring queue (psync keeps 1), the slots of "
                 "-x 0/2/3/5, the batch of -x 6/7 (docs/gpu-paths.md)")
      ->group(x);
  app.add_option("--warmup", opt.warmup_s, "seconds of unmeasured I/O before measuring")->group(x);
  app.add_option("--repeat", opt.repeat, "run N times; report each and the median")->group(x);
  app.add_option("--format", opt.format, "text output: gdsio (one line per job) or table")
      ->check(CLI::IsMember({"gdsio", "table"}))
      ->group(x);
  app.add_option("--json", opt.json_file, "write the gdsbench.io/1 JSON report to FILE")->group(x);
  app.add_option("--html", opt.html_file, "write the report as a self-contained HTML page to FILE")
      ->group(x);
  app.add_flag("-q,--quiet", opt.quiet, "no live progress")->group(x);
  app.add_flag("--allow-overwrite", opt.allow_overwrite,
               "allow replacing files gdsbench did not create")
      ->group(x);
  app.add_flag("--require-gds", opt.require_gds, "fail instead of accepting cuFile compat mode")
      ->group(x);
  app.add_option("--cufile-lib", opt.cufile_lib, "path of libcufile.so to load")->group(x);

  auto* p = "workload presets (docs/gdsb-io.md)";
  app.add_option("--workload", opt.workload,
                 "checkpoint-load, checkpoint-save, kv-offload or dataset (files under -D DIR)")
      ->group(p);
  app.add_flag("--dry-run", opt.dry_run, "print the preset's job file and run nothing")->group(p);
  app.add_option("--gpus", opt.gpus_text,
                 "GPUs that take part: all, a count from -d, or a list such as 0,2 (presets: default all; "
                 "without --workload: the node mode, every GPU reading at once)")
      ->group(p);
  app.add_option("--fake-gpu", opt.fake_gpu,
                 "Tests: the node mode on the host-memory fake GPU service described by FILE "
                 "({\"devices\":8,\"copy_delay_us\":500})")
      ->group(p);
  app.add_option("--shards", opt.shards, "checkpoint shard files per GPU (default 4)")->group(p);
  app.add_option("--shard-size", opt.shard_size, "checkpoint bytes per shard (default 1G)")
      ->group(p);
  app.add_option("--layers", opt.layers, "kv-offload: layers = blocks per request (default 32)")
      ->group(p);
  app.add_option("--block-size", opt.block_size, "kv-offload: block per layer, 16K-2M (default 64K)")
      ->group(p);
  app.add_option("--kv-blocks", opt.kv_blocks, "kv-offload: requests the cache file holds (default 512)")
      ->group(p);
  app.add_option("--write-share", opt.write_share,
                 "kv-offload: percent of requests that write back (eviction, default 10)")
      ->group(p);
  app.add_option("--files", opt.files, "dataset: number of files (default 100000)")->group(p);
  app.add_option("--file-size", opt.file_size, "dataset: bytes per file (default 128K)")->group(p);
  auto* topo_json = app.add_option("--topo-json", opt.topo_json,
                                   "gdsb-topo --json report whose per-GPU ceiling is shown next "
                                   "to the results (default: the topology collected live)")
                        ->group(p);
  // gdsb-topo's recorded inputs, for the ceiling: the same options, wired the same way.
  for (auto* o : topo::add_source_options(app, opt.topo_sources)) {
    o->group(p);
    o->excludes(topo_json);
    topo_json->excludes(o);
  }
}

void record_given(const CLI::App& app, Options& opt) {
  opt.given.clear();
  for (const char* name : kWorkloadOptions) {
    if (app.count(name) > 0) opt.given.emplace_back(name);
  }
  opt.no_odirect_given = app.count("--no-odirect") > 0;
  opt.preset_options.clear();
  for (const char* name : {"--shards", "--shard-size", "--layers", "--block-size",
                           "--kv-blocks", "--write-share", "--files", "--file-size", "--topo-json",
                           "--sysfs-root", "--pci-dump", "--lspci-text", "--hwloc-xml",
                           "--from-snapshot"}) {
    if (app.count(name) > 0) opt.preset_options.emplace_back(name);
  }
}

void apply_extras(const Options& opt, Workload& w) {
  w.engine = parse_engine(opt.engine, "--engine");
  w.iodepth = opt.iodepth;
  w.warmup_s = opt.warmup_s;
  w.repeat = opt.repeat;
  w.allow_overwrite = opt.allow_overwrite;
  w.require_gds = opt.require_gds;
  w.cufile_library = opt.cufile_lib;
}

std::vector<Workload> workloads_from(const Options& opt) {
  if (!opt.rdma_url.empty()) {
    throw UsageError("-P/--rdma-url: not available: RDMA is not supported by gdsbench");
  }
  Workload base;
  base.file = opt.file;
  base.directory = opt.dir;
  base.gpu = opt.gpu;
  if (opt.numa_node >= 0) base.numa_node = opt.numa_node;
  base.mem_type = parse_mem(opt.mem_type, "-m/--mem-type");
  base.threads = opt.threads;
  base.file_size = opt.size.empty() ? 0 : parse_size(opt.size, "-s/--size");
  base.start_offset = parse_size(opt.offset, "-o/--offset");
  base.xfer = parse_xfer(opt.xfer, "-x/--xfer-type");
  base.pattern = parse_pattern(opt.io_type, "-I/--io-type");
  if (opt.mixed_read >= 0) base.mixed_read_percent = static_cast<uint32_t>(opt.mixed_read);
  if (opt.mixed_read < -1 || opt.mixed_read > 100) {
    throw UsageError("-M/--mixed-read: " + std::to_string(opt.mixed_read) +
                     " is not a percentage (0-100)");
  }
  if (opt.duration_s < 0) throw UsageError("-T/--duration: must not be negative");
  if (opt.warmup_s < 0) throw UsageError("--warmup: must not be negative");
  if (opt.numa_node < -1) throw UsageError("-n/--numa-node: must not be negative");
  base.runtime_s = opt.duration_s;
  base.seed = opt.seed;
  base.unaligned_random = opt.unaligned;
  if (!opt.alignment.empty()) base.random_alignment = parse_size(opt.alignment, "-a/--alignment");
  if (opt.unaligned && !opt.alignment.empty()) {
    throw UsageError("-U/--unaligned and -a/--alignment contradict each other: choose one");
  }
  base.fill_random = opt.random_fill;
  base.refill_every_write = opt.refill;
  base.skip_buffer_register = opt.no_register;
  base.verify = opt.verify;
  base.batch_size = opt.batch_size;
  base.enable_nvlinks = opt.nvlinks;
  // gdsio takes "-O 1"; "--no-odirect" alone means the same; "-O 0" keeps O_DIRECT.
  if (!opt.no_odirect_given) {
    base.odirect = true;
  } else {
    base.odirect = !(opt.no_odirect.empty() || parse_bool(opt.no_odirect, "-O/--no-odirect"));
  }
  apply_extras(opt, base);

  std::vector<Workload> jobs;
  for (const uint64_t size : expand_size_range(parse_size_range(opt.io_size, "-i/--io-size"))) {
    Workload w = base;
    w.io_size = size;
    size_from_existing_file(w);
    validate_workload(w, cli_name);
    jobs.push_back(std::move(w));
  }
  return jobs;
}

}  // namespace gdsb::io
