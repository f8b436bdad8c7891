// The shared-storage phase (issue 26): every point (op, mode, k nodes) runs on ranks 0..k-1 at
// once between a barrier and a stonewall (mpi::Session::stonewall_point), each rank timing its
// own I/O; rank 0 (or --from) adds them up (gdsb/cluster/shared_storage.hpp).
#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include "cluster_app.hpp"
#include "gdsb/error.hpp"
#include "gdsb/topo/mounts.hpp"
#include "gdsb/topo/run_storage.hpp"
#include "gdsb/units.hpp"
#include "gdsb/workload.hpp"

namespace fs = std::filesystem;

namespace gdsb::cluster_app {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= text.size();) {
    const auto comma = std::min(text.find(',', at), text.size());
    out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace

StoragePlan storage_plan(const Options& o, const cluster::RankLayout& layout) {
  const int nodes = layout.nodes(), ranks = layout.ranks();
  StoragePlan p;
  p.enabled = !o.scale.empty() || o.aggregate || !o.demand_per_gpu.empty() || !o.model_bytes.empty();
  if (!p.enabled) return p;
  if (o.io_dir.empty())
    throw UsageError("--scale, --aggregate, --demand-per-gpu and --model-bytes measure the shared storage at "
                     "--io-dir: give --io-dir DIR (a directory every rank sees)");
  if (o.stagger)
    throw UsageError("--stagger runs one node at a time; the shared-storage phase runs them together: "
                     "drop one of the two");
  if (o.scale == "auto") {
    for (int k = 1; k < nodes; k *= 2) p.scale.push_back(k);
    p.scale.push_back(nodes);
  } else if (!o.scale.empty()) {
    std::set<int> ks;
    for (const std::string& t : split(o.scale)) {
      std::size_t used = 0;
      int k = 0;
      try {
        k = std::stoi(t, &used);
      } catch (...) {
        used = 0;
      }
      if (used == 0 || used != t.size() || k < 1)
        throw UsageError("--scale " + o.scale + ": expected node counts such as 1,2,4 or auto");
      if (k > nodes)
        throw UsageError("--scale " + o.scale + ": " + std::to_string(k) + " nodes, but this run has " +
                         layout.words() + "; ask the launcher for ranks on more nodes or lower --scale");
      ks.insert(k);
    }
    p.scale.assign(ks.begin(), ks.end());
  } else {
    p.scale = {nodes};
  }
  for (const std::string& op : split(o.storage_ops)) {
    if (op != "read" && op != "write")
      throw UsageError("--storage-ops " + o.storage_ops + ": expected read, write or both (write,read)");
    if (std::find(p.ops.begin(), p.ops.end(), op) == p.ops.end()) p.ops.push_back(op);
  }
  if (o.storage_layout != "file-per-process" && o.storage_layout != "shared-file")
    throw UsageError("--storage-layout " + o.storage_layout + ": expected file-per-process or shared-file");
  p.shared_file = o.storage_layout == "shared-file";
  p.time_s = o.storage_time_s < 0 ? o.io_time_s : o.storage_time_s;
  if (!o.demand_per_gpu.empty()) {
    const cluster::Demand d = cluster::parse_demand(o.demand_per_gpu, "--demand-per-gpu");
    p.demand_gb_s = d.gb_s;
    p.demand_restore_s = d.restore_s;
    p.demand_text = d.text;
    if (d.restore_s && o.model_bytes.empty())
      throw UsageError("--demand-per-gpu " + o.demand_per_gpu + ": checkpoint-load's demand is the model's shard "
                       "per GPU; give --model-bytes too");
  }
  if (!o.model_bytes.empty()) {
    std::tie(p.model_bytes, p.model_text) = cluster::parse_model_bytes(o.model_bytes, "--model-bytes");
    const uint64_t block = parse_size(o.io_block, "--io-block");
    if (p.model_bytes / block < static_cast<uint64_t>(ranks))
      throw UsageError("--model-bytes " + o.model_bytes + ": less than one --io-block (" + o.io_block +
                       ") a rank for " + std::to_string(ranks) + " ranks; give a larger model or a smaller --io-block");
  }
  // Room for every rank's region and the checkpoint, checked before anything is written: a
  // shared file system that fills up half way through would leave a run without figures.
  // Every rank asks the same directory, so every rank stops alike.
  const std::string dir = with_rank(o.io_dir, 0);
  struct statvfs fsinfo {};
  if (::statvfs(dir.c_str(), &fsinfo) != 0)
    throw UsageError("--io-dir " + dir + ": " + std::strerror(errno) + " (a directory every rank sees)");
  const uint64_t free_bytes = static_cast<uint64_t>(fsinfo.f_bavail) * fsinfo.f_frsize;
  const auto regions = layout.ranks_of_first(p.scale.back()).size();
  const uint64_t need = regions * parse_size(o.io_size, "--io-size") + p.model_bytes;
  if (need > free_bytes)
    throw UsageError("--io-dir " + dir + ": the shared-storage phase writes " + format_bytes_iec(static_cast<double>(need)) +
                     " (" + std::to_string(regions) + " x --io-size " + o.io_size +
                     (p.model_bytes ? " and the checkpoint" : "") + "), " + format_bytes_iec(static_cast<double>(free_bytes)) +
                     " is free there; lower --io-size or --model-bytes, or free space");
  return p;
}

namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What this rank's part of the phase works on: its region of the ladder's file(s).
struct Region {
  std::string file;
  uint64_t offset = 0;
  int most = 1;                // the nodes of the largest point
  std::vector<int> ranks;      // its ranks, ascending
  bool takes_part = false;     // this rank is one of them
};

Region region_of(const StoragePlan& plan, const cluster::NodeOptions& rank_opts, const cluster::RankLayout& layout, int rank) {
  const fs::path dir(rank_opts.io_dir);
  Region r;
  r.file = plan.shared_file ? (dir / "gdsb-cluster.storage.shared.dat").string()
                            : (dir / ("gdsb-cluster.storage." + std::to_string(rank) + ".dat")).string();
  r.offset = plan.shared_file ? static_cast<uint64_t>(rank) * rank_opts.io_file_size : 0;
  r.most = plan.scale.back();
  r.ranks = layout.ranks_of_first(r.most);
  r.takes_part = std::binary_search(r.ranks.begin(), r.ranks.end(), rank);
  return r;
}

// How the phase was run and this node's ceiling: the setup half of this rank's storage record.
cluster::RankStorage storage_setup(const Options& o, const StoragePlan& plan, const cluster::NodeOptions& rank_opts,
                                   const cluster::NodeFacts& facts) {
  cluster::RankStorage st;
  st.dir = rank_opts.io_dir;
  // Which storage the figures are of, as this rank sees it: rank 0's goes into cluster.json.
  st.storage = topo::path_storage(rank_opts.io_dir, topo::read_mounts("/"));
  if (st.storage) st.storage->dev.clear();  // the client's own number for a network mount
  st.layout = plan.shared_file ? "shared-file" : "file-per-process";
  st.block_bytes = rank_opts.io_block;
  st.limit_bytes_per_rank = rank_opts.io_file_size;
  st.time_limit_s = plan.time_s;
  st.model_bytes = plan.model_bytes;
  st.model_text = plan.model_text;
  st.demand_per_gpu_gb_s = plan.demand_gb_s;
  st.demand_restore_s = plan.demand_restore_s;
  st.demand_text = plan.demand_text;
  st.scale_gain_percent = o.scale_gain_percent;
  st.ceiling_gb_s = facts.storage_ceiling_gb_s;
  st.ceiling_text = facts.storage_ceiling_text;
  return st;
}

// One point's work on this rank: the runner's sample (a mode whose path cannot run is
// waived there, with the runner's reason), or a waived sample with `waived` as its reason.
std::function<bool(const std::atomic<bool>&)> point_work(std::vector<cluster::StorageSample>& samples,
                                                         const cluster::StorageRunner& runner,
                                                         const cluster::StorageIo& io, const std::string& waived) {
  return [&samples, &runner, io, waived](const std::atomic<bool>& stop) {
    const double ready = unix_now();  // this rank left the point's barrier
    cluster::StorageSample s;
    bool reached = true;
    if (!waived.empty()) {
      s.op = io.op, s.mode = io.mode, s.nodes = io.nodes, s.status = "waived", s.reason = waived;
    } else {
      s = runner.run(io, stop, reached);
    }
    s.ranks = io.ranks;
    s.ready_unix_s = ready;
    samples.push_back(s);
    return reached;
  };
}

// The data every read point reads, written once untimed (-x 1): a stonewalled write point
// may leave part of a region unwritten, and a hole reads back without any I/O. In one
// shared file rank 0 creates the file before the others write their parts into it. A fill
// that fails on any rank stops the phase on every rank (nothing would be measured); once
// filled, the file is this job's own (StorageIo::job_file), xattrs or not (issue 34).
struct Fill {
  bool answered = true;  // false: a rank did not answer within --phase-timeout
  bool filled = false;   // this rank's fill wrote its region
  int failed_rank = -1;  // the lowest rank whose fill failed, -1 none
};
Fill fill_regions(const StoragePlan& plan, const cluster::NodeOptions& rank_opts, const cluster::StorageRunner& runner,
                  const Region& region, cluster::mpi::Session& mpi, double timeout, const std::atomic<bool>& user_stop,
                  std::string& error) {
  Fill f;
  bool fill_failed = false;
  const auto fill = [&](bool job_file) {
    return [&, job_file](const std::atomic<bool>& stop) {
      if (!region.takes_part || f.filled) return true;  // a shared file's rank 0 filled in the first step
      const cluster::StorageIo io{"fill", 1, region.most, region.file, region.offset, rank_opts.io_file_size,
                                  rank_opts.io_block, 0, false, job_file, static_cast<int>(region.ranks.size())};
      bool reached = false;
      const cluster::StorageSample s = runner.run(io, stop, reached);
      f.filled = s.status == "ok";
      fill_failed = !f.filled;
      if (fill_failed && error.empty()) error = "the untimed fill could not write " + region.file + ": " + s.reason;
      return true;
    };
  };
  const auto agree = [&] {
    const std::optional<int> first = mpi.first_failed_rank(fill_failed, timeout);
    if (first) f.failed_rank = *first;
    return first.has_value();
  };
  if (plan.shared_file) {
    f.answered = mpi.stonewall_point({0}, false, timeout, fill(false), &user_stop) && agree();
    if (f.answered && f.failed_rank < 0)
      f.answered = mpi.stonewall_point(region.ranks, false, timeout, fill(true), &user_stop) && agree();
  } else {
    f.answered = mpi.stonewall_point(region.ranks, false, timeout, fill(false), &user_stop) && agree();
  }
  if (f.failed_rank >= 0 && error.empty())
    error = "the untimed fill failed on rank " + std::to_string(f.failed_rank) +
            " (its node report says why); the shared-storage phase stopped before its points";
  return f;
}

// The ladder: each op, mode and node count of the plan, one stonewalled point each.
bool run_points(const StoragePlan& plan, const cluster::NodeOptions& rank_opts, const cluster::StorageRunner& runner,
                const Region& region, const cluster::RankLayout& layout, cluster::mpi::Session& mpi, double timeout,
                const std::atomic<bool>& user_stop, std::vector<cluster::StorageSample>& samples) {
  bool ok = true;
  for (const std::string& op : plan.ops) {
    for (int mode : rank_opts.io_modes) {
      for (int k : plan.scale) {
        if (!ok || user_stop.load()) break;
        const std::vector<int> ranks = layout.ranks_of_first(k);  // every rank of the first k nodes
        const cluster::StorageIo io{op, mode, k, region.file, region.offset, rank_opts.io_file_size, rank_opts.io_block, plan.time_s, false,
                                    true, static_cast<int>(ranks.size())};
        ok = mpi.stonewall_point(ranks, true, timeout, point_work(samples, runner, io, ""), &user_stop);
      }
    }
  }
  return ok;
}

// The modes the checkpoint may take, in the order it prefers them: GDS, the bounce path, the
// CPU path, those --io-modes lists.
std::vector<int> checkpoint_candidates(const cluster::NodeOptions& rank_opts) {
  std::vector<int> out;
  for (int want : {0, 2, 1})
    if (std::find(rank_opts.io_modes.begin(), rank_opts.io_modes.end(), want) != rank_opts.io_modes.end()) out.push_back(want);
  return out;
}

// The checkpoint's mode, chosen once for every rank: the first candidate every rank can run,
// so a mixed fleet does not split its samples between modes. Each rank probes; the answers
// (mode -> why not, "" when it runs) travel to every rank, and every rank chooses alike.
// mode -1 when no candidate runs everywhere; nullopt when a rank did not answer in time.
struct CheckpointMode {
  int mode = -1;
  std::string text;  // the mode and why, or why none
};
std::optional<CheckpointMode> checkpoint_mode(const cluster::NodeOptions& rank_opts, const cluster::StorageRunner& runner,
                                              const std::string& file, const cluster::RankLayout& layout,
                                              cluster::mpi::Session& mpi, double timeout) {
  const std::vector<int> candidates = checkpoint_candidates(rank_opts);
  nlohmann::json mine = nlohmann::json::object();
  for (int want : candidates) {
    const Availability a = runner.probe(want, file);
    mine[std::to_string(want)] = a.ok ? "" : a.reason;
  }
  const auto all = mpi.all_gather(mine.dump(), timeout);
  if (!all) return std::nullopt;
  CheckpointMode m;
  std::string skipped;
  for (int want : candidates) {
    std::string why_not;  // the first rank that cannot, and why
    for (std::size_t r = 0; r < all->size() && why_not.empty(); ++r) {
      const auto answer = nlohmann::json::parse((*all)[r], nullptr, false);
      const std::string reason = answer.is_object() ? answer.value(std::to_string(want), std::string("no answer")) : "no answer";
      if (!reason.empty())
        why_not = "-x " + std::to_string(want) + " not on " +
                  layout.name_of_node[static_cast<std::size_t>(layout.node_of_rank[r])] + " (rank " + std::to_string(r) +
                  ": " + reason + ")";
    }
    if (why_not.empty()) {
      m.mode = want;
      break;
    }
    skipped += (skipped.empty() ? "" : "; ") + why_not;
  }
  if (m.mode < 0) {
    m.text = "no mode of --io-modes runs on every rank: " + skipped;
    return m;
  }
  m.text = "-x " + std::to_string(m.mode) + " (" + std::string(xfer_label(static_cast<XferType>(m.mode))) +
           ") on every rank, the first of -x 0, 2 and 1 that --io-modes lists and every rank runs" +
           (skipped.empty() ? "" : "; " + skipped);
  return m;
}

// The cluster-wide checkpoint: every rank saves its shard (fsync'd), then restores it, in one
// mode. No stonewall: the time to checkpoint is the last rank's end.
bool run_checkpoint(const StoragePlan& plan, const cluster::NodeOptions& rank_opts, const cluster::StorageRunner& runner,
                    const cluster::RankLayout& layout, cluster::mpi::Session& mpi, int rank, double timeout,
                    const std::atomic<bool>& user_stop, cluster::RankStorage& st) {
  const int n = mpi.size();
  const uint64_t block = rank_opts.io_block;
  const uint64_t blocks = (plan.model_bytes + block - 1) / block;
  const uint64_t mine = blocks / static_cast<uint64_t>(n) + (static_cast<uint64_t>(rank) < blocks % static_cast<uint64_t>(n) ? 1 : 0);
  const std::string ckpt = (fs::path(rank_opts.io_dir) / ("gdsb-cluster.ckpt." + std::to_string(rank) + ".dat")).string();
  std::error_code ec;
  const bool ckpt_was_there = fs::exists(ckpt, ec);
  const std::optional<CheckpointMode> mode = checkpoint_mode(rank_opts, runner, ckpt, layout, mpi, timeout);
  if (!mode) return false;
  st.checkpoint_mode_text = mode->text;
  std::vector<int> everyone(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) everyone[static_cast<std::size_t>(r)] = r;
  bool ok = true;
  for (const char* op : {"checkpoint-save", "checkpoint-load"}) {
    if (!ok || user_stop.load()) break;
    const cluster::StorageIo io{op, mode->mode < 0 ? 1 : mode->mode, layout.nodes(), ckpt, 0, mine * block, block, 0,
                                std::string(op) == "checkpoint-save", false, n};
    ok = mpi.stonewall_point(everyone, false, timeout,
                             point_work(st.samples, runner, io, mode->mode < 0 ? mode->text : ""), &user_stop);
  }
  // A file this job did not make is never removed: a checkpoint file that was there and
  // that no save wrote is the user's.
  const bool saved = std::any_of(st.samples.begin(), st.samples.end(), [](const cluster::StorageSample& s) {
    return s.op == "checkpoint-save" && s.status == "ok";
  });
  if (saved || !ckpt_was_there) fs::remove(ckpt, ec);
  return ok;
}

// The phase's error in one line: a rank that did not answer, else the first failed sample.
void fold_errors(bool answered, const std::vector<cluster::StorageSample>& samples, std::string& error) {
  if (!answered && error.empty()) error = "a rank did not answer within --phase-timeout during the shared-storage phase";
  for (const cluster::StorageSample& s : samples)
    if (s.status == "error" && error.empty()) error = s.op + " -x " + std::to_string(s.mode) + ": " + s.reason;
}

}  // namespace

nlohmann::json storage_phase(const Options& o, const StoragePlan& plan, const cluster::NodeOptions& rank_opts,
                             const cluster::NodeFacts& facts, const cluster::RankLayout& layout,
                             cluster::mpi::Session& mpi, int rank, const std::atomic<bool>& user_stop,
                             std::string& error) {
  cluster::RankStorage st = storage_setup(o, plan, rank_opts, facts);
  const cluster::StorageRunner runner(rank_opts);
  const Region region = region_of(plan, rank_opts, layout, rank);
  const double timeout = o.phase_timeout_s;
  std::error_code ec;
  const bool file_was_there = fs::exists(region.file, ec);  // a file this job did not make is never removed
  const Fill fill = fill_regions(plan, rank_opts, runner, region, mpi, timeout, user_stop, error);
  bool ok = fill.answered;
  if (fill.failed_rank < 0) ok = ok && run_points(plan, rank_opts, runner, region, layout, mpi, timeout, user_stop, st.samples);
  if (plan.model_bytes > 0 && ok && fill.failed_rank < 0 && !user_stop.load())
    ok = run_checkpoint(plan, rank_opts, runner, layout, mpi, rank, timeout, user_stop, st);
  if (ok) ok = mpi.barrier(timeout);  // every rank is done with the files
  if ((fill.filled || !file_was_there) && (!plan.shared_file || rank == 0)) fs::remove(region.file, ec);
  fold_errors(ok, st.samples, error);
  nlohmann::json j;
  to_json(j, st);
  return j;
}

}  // namespace gdsb::cluster_app
