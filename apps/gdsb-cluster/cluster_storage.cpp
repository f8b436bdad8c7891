// The shared-storage phase (issue 26): every point (op, mode, k nodes) runs on ranks 0..k-1 at
// once between a barrier and a stonewall (mpi::Session::stonewall_point), each rank timing its
// own I/O; rank 0 (or --from) adds them up (gdsb/cluster/shared_storage.hpp).
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "cluster_app.hpp"
#include "gdsb/error.hpp"
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

StoragePlan storage_plan(const Options& o, int ranks) {
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
    for (int k = 1; k < ranks; k *= 2) p.scale.push_back(k);
    p.scale.push_back(ranks);
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
      if (k > ranks)
        throw UsageError("--scale " + o.scale + ": " + std::to_string(k) + " nodes, but this run has " +
                         std::to_string(ranks) + " rank(s); ask the launcher for more ranks or lower --scale");
      ks.insert(k);
    }
    p.scale.assign(ks.begin(), ks.end());
  } else {
    p.scale = {ranks};
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
  const uint64_t need = static_cast<uint64_t>(p.scale.back()) * parse_size(o.io_size, "--io-size") + p.model_bytes;
  if (need > free_bytes)
    throw UsageError("--io-dir " + dir + ": the shared-storage phase writes " + format_bytes_iec(static_cast<double>(need)) +
                     " (" + std::to_string(p.scale.back()) + " x --io-size " + o.io_size +
                     (p.model_bytes ? " and the checkpoint" : "") + "), " + format_bytes_iec(static_cast<double>(free_bytes)) +
                     " is free there; lower --io-size or --model-bytes, or free space");
  return p;
}

nlohmann::json storage_phase(const Options& o, const StoragePlan& plan, const cluster::NodeOptions& node,
                             const cluster::NodeFacts& facts, cluster::mpi::Session& mpi, int rank,
                             const std::atomic<bool>& user_stop, std::string& error) {
  const int n = mpi.size();
  cluster::NodeStorage st;
  st.dir = node.io_dir;
  st.layout = plan.shared_file ? "shared-file" : "file-per-process";
  st.block_bytes = node.io_block;
  st.limit_bytes_per_rank = node.io_file_size;
  st.time_limit_s = plan.time_s;
  st.model_bytes = plan.model_bytes;
  st.model_text = plan.model_text;
  st.demand_per_gpu_gb_s = plan.demand_gb_s;
  st.demand_restore_s = plan.demand_restore_s;
  st.demand_text = plan.demand_text;
  st.scale_gain_percent = o.scale_gain_percent;
  st.ceiling_gb_s = facts.storage_ceiling_gb_s;
  st.ceiling_text = facts.storage_ceiling_text;

  const cluster::StorageRunner runner(node);
  const fs::path dir(node.io_dir);
  const std::string file = plan.shared_file ? (dir / "gdsb-cluster.storage.shared.dat").string()
                                            : (dir / ("gdsb-cluster.storage." + std::to_string(rank) + ".dat")).string();
  const uint64_t offset = plan.shared_file ? static_cast<uint64_t>(rank) * node.io_file_size : 0;
  const int most = plan.scale.back();
  const bool takes_part = rank < most;
  const double timeout = o.phase_timeout_s;
  bool ok = true;

  // The data every read point reads, written once untimed (-x 1): a stonewalled write point
  // may leave part of a region unwritten, and a hole reads back without any I/O. In one
  // shared file rank 0 creates the file before the others write their parts into it. A fill
  // that fails on any rank stops the phase on every rank (nothing would be measured); once
  // filled, the file is this job's own (StorageIo::job_file), xattrs or not (issue 34).
  bool filled = false, fill_failed = false;
  int failed_rank = -1;
  std::error_code ec;
  const bool file_was_there = fs::exists(file, ec);  // a file this job did not make is never removed
  const auto fill = [&](bool job_file) {
    return [&, job_file](const std::atomic<bool>& stop) {
      if (!takes_part || filled) return true;  // a shared file's rank 0 filled in the first step
      const cluster::StorageIo io{"fill", 1, most, file, offset, node.io_file_size, node.io_block, 0, false, job_file};
      bool reached = false;
      const cluster::StorageSample s = runner.run(io, stop, reached);
      filled = s.status == "ok";
      fill_failed = !filled;
      if (fill_failed && error.empty()) error = "the untimed fill could not write " + file + ": " + s.reason;
      return true;
    };
  };
  const auto agree = [&] {
    const std::optional<int> first = mpi.first_failed_rank(fill_failed, timeout);
    if (first) failed_rank = *first;
    return first.has_value();
  };
  if (plan.shared_file) {
    ok = mpi.stonewall_point(1, false, timeout, fill(false), &user_stop) && agree();
    if (ok && failed_rank < 0)
      ok = mpi.stonewall_point(most, false, timeout, fill(true), &user_stop) && agree();
  } else {
    ok = mpi.stonewall_point(most, false, timeout, fill(false), &user_stop) && agree();
  }
  if (failed_rank >= 0 && error.empty())
    error = "the untimed fill failed on rank " + std::to_string(failed_rank) +
            " (its node report says why); the shared-storage phase stopped before its points";

  // One point's work on this rank: the runner's sample (a mode whose path cannot run is
  // waived there, with the runner's reason), or a waived sample with `waived` as its reason.
  const auto point_work = [&](const cluster::StorageIo& io, const std::string& waived) {
    return [&st, &runner, io, waived](const std::atomic<bool>& stop) {
      if (!waived.empty()) {
        cluster::StorageSample s;
        s.op = io.op, s.mode = io.mode, s.nodes = io.nodes, s.status = "waived", s.reason = waived;
        st.samples.push_back(s);
        return true;
      }
      bool reached = false;
      st.samples.push_back(runner.run(io, stop, reached));
      return reached;
    };
  };

  for (const std::string& op : plan.ops) {
    for (int mode : node.io_modes) {
      for (int k : plan.scale) {
        if (!ok || failed_rank >= 0 || user_stop.load()) break;
        const cluster::StorageIo io{op, mode, k, file, offset, node.io_file_size, node.io_block, plan.time_s, false, true};
        ok = mpi.stonewall_point(k, true, timeout, point_work(io, ""), &user_stop);
      }
    }
  }

  // The cluster-wide checkpoint: every rank saves its shard (fsync'd), then restores it; the
  // mode is the first of GDS, the bounce path and the CPU path that --io-modes lists and this
  // rank can run. No stonewall: the time to checkpoint is the last rank's end.
  if (plan.model_bytes > 0 && ok && failed_rank < 0 && !user_stop.load()) {
    const uint64_t block = node.io_block;
    const uint64_t blocks = (plan.model_bytes + block - 1) / block;
    const uint64_t mine = blocks / static_cast<uint64_t>(n) + (static_cast<uint64_t>(rank) < blocks % static_cast<uint64_t>(n) ? 1 : 0);
    const std::string ckpt = (dir / ("gdsb-cluster.ckpt." + std::to_string(rank) + ".dat")).string();
    const bool ckpt_was_there = fs::exists(ckpt, ec);
    int mode = -1;
    std::string why;
    for (int want : {0, 2, 1}) {
      if (std::find(node.io_modes.begin(), node.io_modes.end(), want) == node.io_modes.end()) continue;
      const Availability a = runner.probe(want, ckpt);
      if (a.ok) {
        mode = want;
        break;
      }
      why += (why.empty() ? "" : "; ") + ("-x " + std::to_string(want) + ": " + a.reason);
    }
    for (const char* op : {"checkpoint-save", "checkpoint-load"}) {
      if (!ok) break;
      const cluster::StorageIo io{op, mode < 0 ? 1 : mode, n, ckpt, 0, mine * block, block, 0,
                                  std::string(op) == "checkpoint-save"};
      ok = mpi.stonewall_point(n, false, timeout,
                               point_work(io, mode < 0 ? "no mode of --io-modes runs here (" + why + ")" : ""),
                               &user_stop);
    }
    const bool saved = std::any_of(st.samples.begin(), st.samples.end(), [](const cluster::StorageSample& s) {
      return s.op == "checkpoint-save" && s.status == "ok";
    });
    if (saved || !ckpt_was_there) fs::remove(ckpt, ec);
  }
  if (ok) ok = mpi.barrier(timeout);  // every rank is done with the files
  if ((filled || !file_was_there) && (!plan.shared_file || rank == 0)) fs::remove(file, ec);
  if (!ok && error.empty()) error = "a rank did not answer within --phase-timeout during the shared-storage phase";
  for (const cluster::StorageSample& s : st.samples)
    if (s.status == "error" && error.empty()) error = s.op + " -x " + std::to_string(s.mode) + ": " + s.reason;
  nlohmann::json j;
  to_json(j, st);
  return j;
}

}  // namespace gdsb::cluster_app
