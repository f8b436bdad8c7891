#include "gdsb/cluster/node_report.hpp"

#include <filesystem>
#include <fstream>
#include <map>

#include "gdsb/cluster/fingerprint.hpp"
#include "gdsb/cluster/summary.hpp"
#include "gdsb/error.hpp"
#include "gdsb/gpu/fake_gpu_spec.hpp"
#include "gdsb/gpu/gpu_paths.hpp"
#include "gdsb/cpu_paths.hpp"
#include "gdsb/nvml.hpp"
#include "gdsb/p2p/report.hpp"
#include "gdsb/p2p/service_layers.hpp"
#include "gdsb/p2p/topo_source.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/report/io_document.hpp"
#include "gdsb/runner.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/fingerprint.hpp"
#include "gdsb/topo/fingerprint_file.hpp"
#include "gdsb/topo/mounts.hpp"
#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/render.hpp"

namespace gdsb::cluster {
namespace {

using nlohmann::json;

// The model of a kind of device: the most common name among them (pci.ids), else its ids.
std::string model_of(const std::vector<const topo::Device*>& devs) {
  std::map<std::string, int> seen;
  for (const topo::Device* d : devs) ++seen[d->name.empty() ? topo::pci_ids_text(*d) : d->name];
  std::string best;
  int n = 0;
  for (const auto& [name, c] : seen)
    if (c > n) best = name, n = c;
  return best;
}

// The transfer paths a rank's io runs use: the CPU paths, the GPU paths through CUDA or the
// fake GPU service (no cuFile there).
void add_paths(const NodeOptions& o, PathRegistry& paths) {
  paths.add(make_cpu_only_path());
  if (o.fake_gpu) {
    gpu::add_gpu_paths(paths, gpu::fake_gpu_path_deps(*o.fake_gpu));
  } else {
    gpu::add_gpu_paths(paths);
  }
}

// The node's own ceiling for reading `dir`: a network mount's carriers (issue 25), else every
// data NIC at once into its nearest GPU.
void storage_ceiling(const topo::Snapshot& snap, const topo::Report& report, const std::string& dir, NodeFacts& facts) {
  facts.storage_ceiling_gb_s.reset();
  if (dir.empty()) {
    facts.storage_ceiling_text = "no --io-dir";
    return;
  }
  std::error_code ec;
  const std::string abs = std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec).string();
  const topo::Mount* m = topo::mount_holding(snap.machine.mounts, abs.empty() ? dir : abs);
  if (m != nullptr)
    for (const auto& mc : report.mount_ceilings)
      if (mc.target == m->target) {
        facts.storage_ceiling_gb_s = mc.node.gb_s;
        facts.storage_ceiling_text = mc.kind + " mount " + mc.target + ": " +
                                     (mc.node.limited_by.empty() ? "its carriers" : mc.node.limited_by);
        if (!mc.node.gb_s) facts.storage_ceiling_text += " (no figure)";
        return;
      }
  if (report.node_nic.gb_s && !report.node_nic.peers.empty()) {
    facts.storage_ceiling_gb_s = report.node_nic.gb_s;
    facts.storage_ceiling_text = (m ? m->target + " (" + m->fstype + ")" : dir) +
                                 " is not a network mount this node's model knows: every data NIC at once, " +
                                 report.node_nic.limited_by;
    return;
  }
  facts.storage_ceiling_text = "not known: " + (m ? m->target + " (" + m->fstype + ")" : dir) +
                               " is not a network mount and the node has no data NIC with a known rate";
}

}  // namespace

StorageRunner::StorageRunner(const NodeOptions& o)
    : paths_(std::make_unique<PathRegistry>()), allow_overwrite_(o.allow_overwrite), user_stop_(o.stop) {
  add_paths(o, *paths_);
  runner_ = std::make_unique<Runner>(*paths_);
}
StorageRunner::~StorageRunner() = default;

namespace {
Workload storage_workload(const StorageIo& io, bool allow_overwrite) {
  Workload w;
  w.name = io.op + "-x" + std::to_string(io.mode) + "-n" + std::to_string(io.nodes);
  w.file = io.file;
  w.start_offset = io.offset;
  w.file_size = io.bytes;
  w.io_size = io.block;
  w.threads = 1;
  w.xfer = static_cast<XferType>(io.mode);
  w.pattern = io.op == "write" || io.op == "fill" || io.op == "checkpoint-save" ? IoPattern::Write : IoPattern::Read;
  w.runtime_s = io.time_s;
  w.fsync = io.fsync;
  // Without --allow-overwrite only this job's files (io.job_file) and files gdsbench marked
  // in an earlier job are written (run_files.hpp decides whose a file is).
  w.allow_overwrite = allow_overwrite;
  return w;
}
}  // namespace

Availability StorageRunner::probe(int mode, const std::string& file) const {
  StorageIo io;
  io.mode = mode;
  io.file = file;
  io.bytes = 1 << 20;
  io.block = 1 << 20;
  io.op = "read";
  return runner_->probe(storage_workload(io, allow_overwrite_));
}

StorageSample StorageRunner::run(const StorageIo& io, const std::atomic<bool>& stop, bool& reached_limit) const {
  StorageSample s;
  s.op = io.op;
  s.mode = io.mode;
  s.nodes = io.nodes;
  reached_limit = false;
  RunOptions ro;
  ro.stop = &stop;
  if (io.job_file) ro.job_files = {io.file};
  try {
    const RunResult r = runner_->run(storage_workload(io, allow_overwrite_), ro);
    s.path_used = r.path.path_used;
    if (r.status == RunStatus::Waived) {
      s.status = "waived";
      s.reason = r.reason;
      reached_limit = true;  // it ends at once; the others are not held back for it
      return s;
    }
    if (r.status == RunStatus::Failed) {
      s.status = "error";
      s.reason = r.reason;
      reached_limit = true;
      return s;
    }
    s.start_unix_s = r.result.t0_unix_s;
    s.end_unix_s = r.result.end_unix_s;
    s.bytes = r.result.bytes;
    reached_limit = !r.interrupted;
    const bool by_user = user_stop_ != nullptr && user_stop_->load();
    s.stopped_by = r.interrupted ? (by_user ? "interrupted" : "stonewall")
                   : io.op.rfind("checkpoint", 0) == 0 ? "complete"
                   : io.time_s > 0                     ? "time"
                                                       : "limit";
  } catch (const std::exception& e) {
    s.status = "error";
    s.reason = e.what();
    reached_limit = true;
  }
  return s;
}

json topology_phase(const NodeOptions& o, NodeFacts& facts) {
  topo::CollectOptions co;
  if (const char* e = std::getenv("CUFILE_ENV_PATH_JSON")) co.cufile_env_path = e;
  co.use_hwloc = !o.no_hwloc;
  co.use_nvml = !o.no_nvml && !o.fake_gpu;
  co.nvml_lib = o.nvml_lib;
  const topo::Snapshot snap = topo::collect_from(o.sources, co);
  const topo::TopologyView view(snap);
  const topo::Report report = topo::evaluate(snap, view);
  topo::RunContext ctx{facts.version, facts.argv, collect_context()};
  ctx.run.ended_at = utc_now_iso8601();
  const auto gpus = snap.with_role(topo::Role::Gpu);
  const auto drives = snap.with_role(topo::Role::Nvme);
  // Data NICs make the class, as in the fingerprint; a gigabit or BMC port is listed apart,
  // so adding one changes neither the class nor its NIC count.
  std::vector<const topo::Device*> nics, management_nics;
  for (const topo::Device* d : snap.with_role(topo::Role::Nic))
    (topo::is_data_nic(*d) ? nics : management_nics).push_back(d);
  facts.gpus = static_cast<int>(gpus.size());
  facts.drives = static_cast<int>(drives.size());
  facts.nics = static_cast<int>(nics.size());
  facts.management_nics = static_cast<int>(management_nics.size());
  facts.gpu_model = model_of(gpus);
  facts.drive_model = model_of(drives);
  facts.nic_model = model_of(nics);
  facts.management_nic_model = model_of(management_nics);
  facts.kernel = snap.machine.proc_known ? snap.machine.kernel_release : ctx.run.kernel;
  topo::GpuSoftware nv;
  try {
    if (!o.fake_gpu && !o.no_nvml) nv = topo::read_gpu_software(o.nvml_lib);
  } catch (const topo::NvmlFault& e) {
    // A sick GPU leaves its NVML facts out of this node's fingerprint: the fleet diff names
    // the node by them, instead of the node having no report at all.
    nv.unavailable = topo::Unreadable{e.what(), false};
  }
  facts.driver = o.fake_gpu ? "fake GPU service" : nv.driver;
  facts.cuda_driver = nv.cuda_driver.empty() ? "not available" : nv.cuda_driver;
  // The fake GPU service is no driver fact: the fingerprint stays what gdsb-topo --health
  // makes of the same input, so a class's reference file checks its nodes.
  for (const auto& [k, v] : topo::fact_texts(topo::make_fingerprint(snap, nv).facts)) facts.fingerprint[k] = v;
  storage_ceiling(snap, report, o.io_dir, facts);
  return topo::to_json(snap, view, report, ctx);
}

json p2p_phase(const NodeOptions& o, NodeFacts& facts) {
  struct {
    std::unique_ptr<p2p::CudaLayer> cuda;
    std::unique_ptr<p2p::NvmlLayer> nvml;
    std::unique_ptr<p2p::PcieTopologySource> pcie;
    std::unique_ptr<p2p::CopyTimer> timer;
  } b;
  std::shared_ptr<gpu::GpuService> service;
  if (o.fake_gpu) {
    service = gpu::fake_gpu_path_deps(*o.fake_gpu).service;
    b.cuda = p2p::make_service_cuda_layer(service);
    b.nvml = p2p::make_unavailable_nvml_layer("fake GPU service (--fake-gpu)");
    b.timer = p2p::make_service_copy_timer(service);
  } else {
    b.cuda = o.no_cuda ? p2p::make_unavailable_cuda_layer("disabled by --no-cuda") : p2p::make_cuda_layer();
    b.nvml = o.no_nvml ? p2p::make_unavailable_nvml_layer("disabled by --no-nvml")
                       : p2p::make_nvml_layer(o.nvml_lib);
    b.timer = o.no_cuda ? p2p::make_unavailable_copy_timer("disabled by --no-cuda")
                        : p2p::make_cuda_copy_timer();
  }
  topo::CollectOptions co;
  co.use_hwloc = !o.no_hwloc;
  co.lookup_names = false;
  co.use_nvml = false;
  b.pcie = p2p::collect_topology_source(o.sources, co);
  p2p::P2PDocument doc;
  doc.argv = facts.argv;
  doc.context = collect_context();
  doc.caps = p2p::collect_capabilities(*b.cuda, *b.nvml, *b.pcie);
  p2p::MeasureOptions mo = o.measure;
  mo.stop = o.stop;
  doc.measurements = p2p::run_measurements(*b.timer, doc.caps, mo);
  doc.interrupted = doc.measurements->interrupted;
  doc.context.ended_at = utc_now_iso8601();
  // The topology phase's count (what gdsb-topo --health reads) wins; this fills it where
  // the snapshot had no NVLink facts.
  for (const p2p::GpuInfo& g : doc.caps.gpus)
    if (const auto bdf = topo::PciAddress::parse(g.bdf); bdf && g.nvlinks) {
      const topo::FactKey key{topo::FactKind::Gpu, *bdf, topo::Fact::NvlinkLinks};
      if (!facts.fingerprint.contains(topo::key_text(key)))
        facts.fingerprint[topo::key_text(key)] = topo::value_text(int64_t{*g.nvlinks});
    }
  return p2p::to_json(doc);
}

json io_phase(const NodeOptions& o, const NodeFacts& facts) {
  PathRegistry paths;
  add_paths(o, paths);
  const Runner runner(paths);
  RunContext ctx = collect_context();
  std::vector<RunResult> runs;
  const std::string file = (std::filesystem::path(o.io_dir) / ("gdsb-cluster." + o.file_tag + ".dat")).string();
  Workload base;
  base.file = file;
  base.file_size = o.io_file_size;
  base.io_size = o.io_block;
  base.threads = o.io_threads;
  base.allow_overwrite = o.allow_overwrite;
  // The file the reads use, written once through the runner (-x 1 write, one pass).
  Workload fill = base;
  fill.name = "fill";
  fill.xfer = XferType::CpuOnly;
  fill.pattern = IoPattern::Write;
  RunOptions ro;
  ro.stop = o.stop;
  const RunResult filled = runner.run(fill, ro);
  if (filled.status != RunStatus::Ok)
    throw RuntimeError("could not write the test file " + file + ": " + filled.reason);
  for (int mode : o.io_modes) {
    Workload w = base;
    w.xfer = static_cast<XferType>(mode);
    w.name = "x" + std::to_string(mode) + "-read";
    w.pattern = IoPattern::Read;
    w.runtime_s = o.io_time_s;
    runs.push_back(runner.run(w, ro));
  }
  std::error_code ec;
  std::filesystem::remove(file, ec);
  ctx.ended_at = utc_now_iso8601();
  const auto doc = report::io_document({"gdsb-cluster", facts.version}, facts.argv, ctx, runs, false);
  return json::parse(doc.dump());
}

json node_document(const std::string& node, const std::string& host, int rank,
                   const NodeFacts& facts, const std::vector<PhaseRecord>& phases, const std::string& node_id) {
  json j;
  j["schema"] = kNodeSchema;
  j["tool"] = {{"name", "gdsb-cluster"}, {"version", facts.version}};
  j["argv"] = facts.argv;
  j["node"] = node;
  j["host"] = host;
  j["rank"] = rank;
  if (!node_id.empty()) j["node_id"] = node_id;
  j["hardware"] = {{"gpu_model", facts.gpu_model}, {"gpus", facts.gpus},
                   {"drive_model", facts.drive_model}, {"drives", facts.drives},
                   {"nic_model", facts.nic_model}, {"nics", facts.nics},
                   {"management_nic_model", facts.management_nic_model},
                   {"management_nics", facts.management_nics}};
  j["driver"] = facts.driver;
  j["cuda_driver"] = facts.cuda_driver;
  j["kernel"] = facts.kernel;
  j["fingerprint"] = facts.fingerprint;
  j["phases"] = json::array();
  for (const auto& p : phases) {
    j["phases"].push_back({{"name", p.name}, {"status", p.status}, {"error", p.error},
                           {"seconds", p.seconds}});
    j[p.name] = p.document;
  }
  return j;
}

}  // namespace gdsb::cluster
