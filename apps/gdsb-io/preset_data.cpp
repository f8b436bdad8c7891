// The preset's data set: file lists, the files (written through the runner, so that
// creation, the gdsbench mark and the refusal to replace a user's file are the runner's),
// safetensors headers, and the manifest that makes the set reusable.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/page_cache.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/units.hpp"
#include "presets.hpp"

namespace gdsb::io {
namespace {

constexpr const char* kManifestSchema = "gdsbench.workload-data/1";

std::string manifest_path(const PresetParams& p) { return p.dir + "/gdsb-workload.json"; }

void make_dir(const std::string& d) {
  if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
    throw RuntimeError("cannot create directory " + d + ": " + std::strerror(errno));
  }
}

// Names relative to p.dir, one list per GPU (checkpoint) or one for all (dataset).
struct Layout {
  std::vector<std::pair<std::string, std::vector<std::string>>> lists;  // list file, names
  std::vector<std::string> data;  // files the preparation writes (relative)
  uint64_t offset = 0;            // where their written data begins
  uint64_t bytes = 0;             // bytes written per file after offset
  uint64_t file_bytes = 0;        // expected size of each file
};

std::string padded(uint64_t v, int width) {
  std::string s = std::to_string(v);
  return std::string(static_cast<std::size_t>(std::max<int>(0, width - static_cast<int>(s.size()))), '0') + s;
}

Layout layout_of(const PresetParams& p) {
  Layout l;
  switch (p.preset) {
    case Preset::CheckpointLoad:
    case Preset::CheckpointSave: {
      const bool load = p.preset == Preset::CheckpointLoad;
      for (int g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) {
        std::vector<std::string> names;
        for (uint32_t k = 0; k < p.shards; ++k) {
          const std::string gpu = "gpu" + std::to_string(g);
          names.push_back(load ? "model-" + gpu + "-" + padded(k + 1, 5) + "-of-" +
                                     padded(p.shards, 5) + ".safetensors"
                               : "save-" + gpu + "-" + padded(k + 1, 5) + ".bin");
          if (load) l.data.push_back(names.back());
        }
        l.lists.emplace_back("gpu" + std::to_string(g) + ".list", std::move(names));
      }
      l.offset = p.header_bytes;
      l.bytes = p.shard_data;
      l.file_bytes = p.header_bytes + p.shard_data;
      break;
    }
    case Preset::KvOffload:
      break;  // the job file's first job writes the cache file
    case Preset::Dataset: {
      std::vector<std::string> names;
      for (uint64_t i = 0; i < p.files; ++i) {
        names.push_back("d" + padded(i / 1000, 4) + "/f" + padded(i, 7) + ".bin");
      }
      l.data = names;
      l.lists.emplace_back("files.list", std::move(names));
      l.bytes = p.file_size;
      l.file_bytes = p.file_size;
      break;
    }
  }
  return l;
}

nlohmann::json manifest_of(const PresetParams& p, const Layout& l) {
  // Only the checkpoint sets have files per GPU: a dataset made for GPU 0 serves GPU 1.
  const bool per_gpu = p.preset == Preset::CheckpointLoad || p.preset == Preset::CheckpointSave;
  return {{"schema", kManifestSchema},
          {"preset", preset_name(p.preset)},
          {"layout",
           {{"first_gpu", per_gpu ? p.first_gpu : 0}, {"gpus", per_gpu ? p.gpus : 1}, {"shards", p.shards},
            {"shard_data", p.shard_data}, {"header_bytes", p.header_bytes},
            {"files", l.data.size()}, {"file_bytes", l.file_bytes}, {"seed", p.seed}}}};
}

bool file_has_size(const std::string& path, uint64_t bytes) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<uint64_t>(st.st_size) == bytes;
}

// True when the manifest describes this very data set and every file is there.
bool reusable(const PresetParams& p, const Layout& l, const nlohmann::json& want,
              bool allow_overwrite) {
  std::ifstream in(manifest_path(p));
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  const auto have = nlohmann::json::parse(text.str(), nullptr, false);
  if (have.is_discarded() || !have.is_object() || have.value("schema", "") != kManifestSchema) {
    if (allow_overwrite) return false;
    throw UsageError("refusing to overwrite " + manifest_path(p) +
                     ": it is not a gdsbench workload manifest; pass --allow-overwrite or "
                     "choose another -D");
  }
  if (have != want) return false;
  for (const auto& name : l.data) {
    if (!file_has_size(p.dir + "/" + name, l.file_bytes)) return false;
  }
  for (const auto& [list, names] : l.lists) {
    uint64_t list_bytes = 0;  // one name a line
    for (const auto& s : names) list_bytes += s.size() + 1;
    if (!file_has_size(p.dir + "/" + list, list_bytes)) return false;
  }
  return true;
}

void write_list(const PresetParams& p, const std::string& list,
                const std::vector<std::string>& names, bool allow_overwrite) {
  std::string text;
  for (const auto& n : names) text += n + "\n";
  report::write_output_atomic({p.dir + "/" + list, "--workload"}, text, allow_overwrite);
}

// Files written by one run of the runner: it holds every file of its run open, so a large
// set is written in runs of at most 4,096 files, fewer where the hard descriptor limit is
// low (128 kept for the process's own), so that the defaults' 100,000 files are made under
// a limit of 20,000 (issue 43) and a small set under any limit that can read it.
std::size_t files_per_prepare_run() {
  constexpr rlim_t kMost = 4096, kKept = 128;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max == RLIM_INFINITY) return kMost;
  return static_cast<std::size_t>(std::clamp<rlim_t>(rl.rlim_max > kKept ? rl.rlim_max - kKept : 1, 1, kMost));
}

// The data: the pattern of -V (derived from file offset and seed) written by the runner,
// buffered, then read back and checked (-V), so that later -V reads can check it.
void write_data(const PresetParams& p, const Layout& l, const Runner& runner,
                bool allow_overwrite) {
  const std::string all = p.dir + "/.prepare.list";
  const std::size_t per_run = files_per_prepare_run();
  for (std::size_t first = 0; first < l.data.size(); first += per_run) {
    const auto last = std::min(l.data.size(), first + per_run);
    const std::vector<std::string> part(l.data.begin() + static_cast<std::ptrdiff_t>(first),
                                        l.data.begin() + static_cast<std::ptrdiff_t>(last));
    write_list(p, ".prepare.list", part, true);  // internal, rewritten for every run
    Workload w;
    w.name = "prepare";
    w.file_list = all;
    w.pattern = IoPattern::Write;
    w.xfer = XferType::CpuOnly;
    w.odirect = false;
    w.verify = true;
    w.fsync = true;
    w.seed = p.seed;
    w.start_offset = l.offset;
    w.file_size = l.bytes;
    w.io_size = std::min<uint64_t>(l.bytes, 4 << 20);
    while (l.bytes % w.io_size != 0) w.io_size /= 2;
    w.threads = static_cast<uint32_t>(std::min<std::size_t>(part.size(), 4));
    w.allow_overwrite = allow_overwrite;
    const RunResult r = runner.run(w);
    ::unlink(all.c_str());
    if (r.status != RunStatus::Ok) {
      throw RuntimeError("cannot prepare the data set in " + p.dir + ": " + r.reason);
    }
  }
}

void write_headers(const PresetParams& p, const Layout& l) {
  if (p.preset != Preset::CheckpointLoad) return;
  uint32_t shard = 0;
  for (const auto& name : l.data) {
    const std::string path = p.dir + "/" + name;
    const std::string header = safetensors_header(p.shard_data, p.header_bytes, shard++ % p.shards);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    // Durable and out of the page cache, as the runner leaves the data it wrote.
    const bool ok = fd >= 0 && ::pwrite(fd, header.data(), header.size(), 0) ==
                                   static_cast<ssize_t>(header.size()) &&
                    drop_from_page_cache(fd, 0, header.size(), /*sync=*/true);
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (!ok) throw RuntimeError("cannot write the header of " + path + ": " + std::strerror(err));
  }
}

}  // namespace

void prepare_preset_data(const PresetParams& p, const Runner& runner, bool allow_overwrite) {
  make_dir(p.dir);
  const Layout l = layout_of(p);
  const nlohmann::json want = manifest_of(p, l);
  if (reusable(p, l, want, allow_overwrite)) return;
  ::unlink(manifest_path(p).c_str());  // a half-made set never looks complete
  for (const auto& name : l.data) {
    const auto slash = name.rfind('/');
    if (slash != std::string::npos) make_dir(p.dir + "/" + name.substr(0, slash));
  }
  for (const auto& [list, names] : l.lists) write_list(p, list, names, allow_overwrite);
  if (!l.data.empty()) {
    (void)std::fprintf(stderr, "gdsb-io: creating %zu files of %s in %s (once; reused after)\n",
                       l.data.size(), format_size(l.file_bytes).c_str(), p.dir.c_str());
  }
  write_data(p, l, runner, allow_overwrite);
  write_headers(p, l);
  report::write_output_atomic({manifest_path(p), "--workload"}, want.dump(2) + "\n",
                             allow_overwrite);
}

void drop_cached_pages(const PresetParams& p) {
  if (p.preset != Preset::CheckpointLoad) return;
  for (const auto& name : layout_of(p).data) {
    const int fd = ::open((p.dir + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    (void)drop_from_page_cache(fd, 0, 0, /*sync=*/false);
    ::close(fd);
  }
}

}  // namespace gdsb::io
