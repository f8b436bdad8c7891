// What a document adds to a history: its series points and the facts it depended on.
// Reads the documents as docs/io-schema.md, docs/gdsb-p2p.md and docs/gdsb-cluster.md
// describe them; every figure and fact comes from the document, none is derived here.
#include <algorithm>
#include <map>

#include "gdsb/error.hpp"
#include "gdsb/report/history.hpp"
#include "gdsb/report/metrics.hpp"
#include "sha256.hpp"

namespace gdsb::report::history {
namespace {

using nlohmann::json;

// The node of the series a cluster's shared-storage figures go to: a figure of the fleet
// and its storage, no single node's. No host name holds parentheses.
constexpr const char* kFleetNode = "(shared storage)";

std::string text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return {};
  const auto& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return {};
  return v.dump();
}

void put(Facts& f, const std::string& name, const std::string& value) {
  if (!value.empty()) f[name] = value;
}

// The context facts every document kind shares.
Facts context_facts(const json& doc) {
  Facts f;
  const json ctx = doc.value("context", json::object());
  put(f, "kernel", text(ctx, "kernel"));
  put(f, "os", text(ctx, "os"));
  put(f, "cpu_model", text(ctx, "cpu_model"));
  put(f, "cpus", text(ctx, "cpus"));
  put(f, "gdsbench", text(doc.value("tool", json::object()), "version"));
  if (ctx.contains("env") && ctx.at("env").is_object())
    for (const auto& [k, v] : ctx.at("env").items()) put(f, "env." + k, v.is_string() ? v.get<std::string>() : v.dump());
  // What gdsb-io records of the software a run depends on (docs/io-schema.md, context);
  // documents of older versions lack it. gdsb-p2p writes versions too.
  const json versions = ctx.value("versions", json::object());
  for (const auto& [k, v] : versions.items())
    if (v.is_string()) put(f, k == "nvidia_driver" ? "driver" : k, v.get<std::string>());
  put(f, "cufile_json", text(ctx, "cufile_json"));
  if (ctx.contains("cufile") && ctx.at("cufile").is_object())
    for (const auto& [k, v] : ctx.at("cufile").items()) put(f, "cufile." + k, v.is_string() ? v.get<std::string>() : v.dump());
  if (ctx.contains("gpus") && ctx.at("gpus").is_array()) {
    for (const auto& g : ctx.at("gpus")) {
      const std::string bus = text(g, "pci_bus_id");
      if (bus.empty()) continue;
      put(f, "gpu " + bus + " model", text(g, "name"));
      put(f, "gpu " + bus + " link", text(g, "max_link"));
      put(f, "gpu " + bus + " vbios", text(g, "vbios"));
    }
  }
  return f;
}

// The test of an io run: what it measures, without the settings a history attributes a
// change to (threads, engine, queue depth, memory type), which are the run's facts.
std::string test_name(const Workload& w) {
  std::string s;
  if (!w.preset.empty()) s.append(w.preset).append(" ").append(w.name).append(": ");
  s.append(xfer_label(w.xfer)).append(" ").append(pattern_label(w.pattern));
  if (w.mixed_read_percent) s.append(" ").append(std::to_string(*w.mixed_read_percent)).append("%read");
  s.append(" ").append(format_bytes(w.io_size));
  if (!w.odirect) s.append(" buffered");
  if (w.request_blocks > 1) s.append(" req").append(std::to_string(w.request_blocks));
  if (w.fsync) s.append(" fsync");
  if (w.preset.empty() && !w.name.empty()) s.append(" [").append(w.name).append("]");
  return s;
}

Facts run_facts(const RunResult& r) {
  Facts f;
  put(f, "path", r.path.path_used);
  put(f, "threads", std::to_string(r.workload.threads));
  put(f, "engine", std::string(engine_name(r.workload.engine)));
  put(f, "iodepth", std::to_string(r.workload.iodepth));
  if (xfer_uses_gpu(r.workload.xfer)) {
    put(f, "mem_type", std::string(mem_type_name(r.workload.mem_type)));
    put(f, "gpu", r.path.gpu_pci_bus_id);
  }
  // The rest of the storage (its type and source are the series key): a remount elsewhere,
  // a new device number, said where a change point falls on them.
  if (r.storage) {
    put(f, "mount_point", r.storage->mount_point);
    put(f, "dev", r.storage->dev);
  }
  return f;
}

// Where a run's data lay, in its series key: a series means one storage, and the same test
// on another file system is another series, not a change point. The storage gdsb-io records
// (docs/io-schema.md, storage): its file system and source, "on ext4 /dev/nvme0n1p1", "on
// nfs4 10.0.0.5:/export" (a source that only repeats the type, "tmpfs", is said once; a raw
// block device is its path). Not the directory: temporary directories under one mount are one
// storage (docs/gdsb-report.md, Series). Older documents lack it: the directory of the file
// (or the -D directory) stands for it, "in /mnt/data" (the survey's scratch file is
// <dir>/gdsb-survey.<pid>.tmp: its name changes every run, its directory does not).
std::string data_dir(const Workload& w) {
  if (!w.directory.empty()) return w.directory;
  const auto slash = w.file.rfind('/');
  if (slash == std::string::npos) return w.file.empty() ? std::string() : ".";
  return slash == 0 ? "/" : w.file.substr(0, slash);
}

// " on ext4 /dev/nvme0n1p1", " on nfs4 10.0.0.5:/export", " on tmpfs" (a source that only
// repeats the type is said once), " on /dev/nvme1n1" (a raw block device); "" when neither is
// known. The words of a storage in every series key that has one (io runs, shared storage).
std::string on_storage(const std::string& fs_type, const std::string& source) {
  std::string on = fs_type;
  if (!source.empty() && source != fs_type) on += (on.empty() ? "" : " ") + source;
  return on.empty() ? on : " on " + on;
}

std::string series_test(const std::string& test, const RunResult& r) {
  if (r.storage && (!r.storage->fs_type.empty() || !r.storage->source.empty()))
    return test + on_storage(r.storage->fs_type, r.storage->source);
  const std::string dir = data_dir(r.workload);
  return dir.empty() ? test : test + " in " + dir;
}

void add_io_runs(const Document& doc, const std::string& node, RunRecord& rec) {
  const auto runs = io_runs(doc);
  std::map<std::string, int> uses;
  for (const auto& r : runs)
    if (r.status == RunStatus::Ok) ++uses[test_name(r.workload)];
  for (const auto& r : runs) {
    // Two runs of one test in a document (a thread sweep) keep apart by their full label.
    std::string test = test_name(r.workload);
    if (r.status != RunStatus::Ok) {
      // Waived, failed, page cache: no figure to keep, but the run was asked for and gave
      // none, which the gate must see (a nightly run that failed is no pass).
      if (uses[test] > 0) test = run_label(r.workload);
      Facts f = run_facts(r);
      f[std::string(kNoFigureStatus)] = std::string(run_status_name(r.status));
      put(f, std::string(kNoFigureReason), r.reason);
      rec.test_facts.push_back({node, series_test(test, r), std::move(f)});
      continue;
    }
    if (uses[test] > 1) test = run_label(r.workload);
    test = series_test(test, r);
    rec.test_facts.push_back({node, test, run_facts(r)});
    rec.points.push_back({node, test, "throughput", r.result.throughput_gib_s});
    rec.points.push_back({node, test, "iops", r.result.iops});
    rec.points.push_back({node, test, "p99", r.result.latency.p99_us});
  }
  // gdsb-io's node mode: the node's aggregate per transfer type (gdsb/node_figure.hpp).
  const json node_section = doc.json.value("node", json::object());
  if (!node_section.contains("modes") || !node_section.at("modes").is_array()) return;
  for (const auto& m : node_section.at("modes")) {
    if (!m.contains("aggregate_gb_s") || !m.at("aggregate_gb_s").is_number()) continue;
    const int x = m.value("xfer_type", -1);
    if (x < 0 || x >= kXferTypeCount) continue;
    const std::string test = "node " + std::string(xfer_label(static_cast<XferType>(x)));
    Facts f;
    put(f, "threads", text(node_section, "threads_per_gpu"));
    put(f, "gpus", std::to_string(m.value("per_gpu", json::array()).size()));
    rec.test_facts.push_back({node, test, f});
    rec.points.push_back({node, test, "aggregate", m.at("aggregate_gb_s").get<double>()});
  }
}

void add_p2p(const Document& doc, const std::string& node, RunRecord& rec) {
  const json meas = doc.json.value("measurements", json::object());
  for (const auto& [key, label] : {std::pair{"h2d", "H2D"}, std::pair{"d2h", "D2H"}}) {
    if (!meas.contains(key) || !meas.at(key).is_array()) continue;
    for (const auto& g : meas.at(key)) {
      if (!g.contains("gb_s") || !g.at("gb_s").is_number()) continue;
      const std::string test = "GPU" + text(g, "gpu") + " " + label;
      rec.points.push_back({node, test, "gb_s", g.at("gb_s").get<double>()});
    }
  }
}

void add_cluster(const Document& doc, RunRecord& rec) {
  const std::string version = text(doc.json.value("tool", json::object()), "version");
  for (const auto& n : doc.json.at("nodes")) {
    const std::string node = text(n, "node");
    if (node.empty() || text(n, "status") != "ok") continue;
    Facts& f = rec.node_facts[node];
    put(f, "driver", text(n, "driver"));
    put(f, "kernel", text(n, "kernel"));
    put(f, "gdsbench", version);
    put(f, "topology", text(n, "topology_verdict"));
    const json hw = n.value("hardware", json::object());
    for (const char* k : {"gpu_model", "gpus", "drive_model", "drives", "nic_model", "nics"})
      put(f, k, text(hw, k));
    const json node_metrics = n.value("node_metrics", json::object());
    const json gpu_metrics = n.value("gpu_metrics", json::object());
    for (const auto& [key, v] : node_metrics.items())
      if (v.is_number()) rec.points.push_back({node, key, "gb_s", v.get<double>()});
    for (const auto& [key, per_gpu] : gpu_metrics.items()) {
      if (!per_gpu.is_array()) continue;
      for (std::size_t i = 0; i < per_gpu.size(); ++i)
        if (per_gpu.at(i).is_number())
          rec.points.push_back({node, "GPU" + std::to_string(i) + " " + key, "gb_s", per_gpu.at(i).get<double>()});
    }
  }
  const json ss = doc.json.value("shared_storage", json::object());
  if (ss.empty()) return;
  rec.node_facts[kFleetNode]["gdsbench"] = version;
  // What makes two shared-storage figures comparable, in the series key (docs/gdsb-cluster.md,
  // shared_storage): the directory on the shared mount, the layout, the block and the bytes a
  // rank moves; per point, the ranks a node; and the storage rank 0 saw holding the directory
  // (its file system and source), beside the directory: two mounts at one path are two
  // storages, and on a parallel file system the directory carries its own layout (Lustre's
  // stripes), so two directories on one mount may be two as well (docs/gdsb-report.md,
  // Series). Older documents lack the storage: the directory alone stands for it.
  const auto size = [&](const json& j, const char* key) {
    return j.contains(key) && j.at(key).is_number_unsigned() ? format_bytes(j.at(key).get<uint64_t>()) : std::string();
  };
  std::string setup;
  const auto with = [&](const std::string& part) {
    if (!part.empty()) setup += ", " + part;
  };
  with(text(ss, "layout"));
  with(size(ss, "block_bytes").empty() ? "" : size(ss, "block_bytes") + " blocks");
  with(size(ss, "limit_bytes_per_rank").empty() ? "" : size(ss, "limit_bytes_per_rank") + " a rank");
  std::string where = text(ss, "dir").empty() ? "" : " in " + text(ss, "dir");
  if (const json st = ss.value("storage", json::object()); st.is_object()) {
    where += on_storage(text(st, "fs_type"), text(st, "source"));
    put(rec.node_facts[kFleetNode], "mount_point", text(st, "mount_point"));
  }
  const auto mode_of = [](const json& p) {
    const int x = p.contains("mode") && p.at("mode").is_number_integer() ? p.at("mode").get<int>() : -1;
    return x >= 0 && x < kXferTypeCount ? std::string(xfer_label(static_cast<XferType>(x))) : text(p, "mode");
  };
  for (const auto& p : ss.value("points", json::array())) {
    if (text(p, "status") != "ok" || !p.contains("aggregate_gb_s") || !p.at("aggregate_gb_s").is_number()) continue;
    std::string test = text(p, "nodes") + " nodes " + mode_of(p) + " " + text(p, "op");
    const int nodes = p.value("nodes", 0), ranks = p.contains("ranks") && p.at("ranks").is_number_integer() ? p.at("ranks").get<int>() : 0;
    if (nodes > 0 && ranks > 0)
      test += ranks % nodes == 0 ? ", " + std::to_string(ranks / nodes) + (ranks == nodes ? " rank" : " ranks") + " a node"
                                 : ", " + std::to_string(ranks) + " ranks";
    rec.points.push_back({kFleetNode, test + setup + where, "aggregate", p.at("aggregate_gb_s").get<double>()});
  }
  const json cp = ss.value("checkpoint", json::object());
  std::string model;
  if (!size(cp, "model_bytes").empty()) model += " of " + size(cp, "model_bytes");
  if (cp.contains("ranks") && cp.at("ranks").is_number_integer()) model += " over " + text(cp, "ranks") + " ranks";
  if (cp.contains("mode")) model += " " + mode_of(cp);
  for (const char* step : {"save", "load"}) {
    const json s = cp.value(step, json::object());
    if (text(s, "status") == "ok" && s.contains("aggregate_gb_s") && s.at("aggregate_gb_s").is_number())
      rec.points.push_back({kFleetNode, std::string("checkpoint ") + step + model + where, "aggregate",
                            s.at("aggregate_gb_s").get<double>()});
  }
}

}  // namespace

const std::vector<MetricDef>& metric_defs() {
  static const std::vector<MetricDef> kDefs{
      {"throughput", "throughput", "GiB/s", true},  // result.throughput_gib_s, base 1024
      {"iops", "IOPS", "IOPS", true},               // result.iops
      {"p99", "p99 latency", "us", false},          // result.latency_us.p99
      {"aggregate", "aggregate", "GB/s", true},     // node figure, shared storage (base 1000)
      {"gb_s", "rate", "GB/s", true},               // copies and cluster figures (base 1000)
  };
  return kDefs;
}

const MetricDef* find_metric(std::string_view key) {
  for (const auto& m : metric_defs())
    if (m.key == key) return &m;
  return nullptr;
}

std::string fact_label(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> kLabels{
      {"kernel", "kernel"},           {"os", "OS"},
      {"cpu_model", "CPU"},           {"cpus", "online CPUs"},
      {"gdsbench", "gdsbench version"}, {"gdsbench_revision", "gdsbench revision"},
      {"driver", "NVIDIA driver"},    {"cuda_driver", "CUDA (driver)"},
      {"cuda_runtime", "CUDA runtime"}, {"nvidia_fs", "nvidia-fs"},
      {"cufile_library", "libcufile"}, {"cufile_json", "cufile.json"},
      {"path", "cuFile path"},        {"threads", "thread count"},
      {"engine", "I/O engine"},       {"iodepth", "queue depth"},
      {"mem_type", "GPU memory type"}, {"gpu", "GPU"},
      {"gpus", "GPUs"},               {"topology", "topology verdict"},
      {"gpu_model", "GPU model"},     {"drive_model", "drive model"},
      {"drives", "drives"},           {"nic_model", "NIC model"},
      {"nics", "data NICs"},          {"mount_point", "mount point"},
      {"dev", "device number"}};
  const auto it = kLabels.find(name);
  return it == kLabels.end() ? std::string(name) : it->second;
}

RunRecord extract_run(const Document& doc) {
  RunRecord rec;
  rec.kind = std::string(kind_name(doc.kind));
  rec.source = doc.path;
  // nlohmann's dump sorts object keys: the same document, however indented, hashes alike.
  rec.key = sha256_hex(doc.json.dump());
  rec.time = text(doc.json.value("context", json::object()), "started_at");
  const std::string host = text(doc.json.value("context", json::object()), "host");
  switch (doc.kind) {
    case DocKind::Io:
    case DocKind::Doctor:
      rec.node_facts[host] = context_facts(doc.json);
      add_io_runs(doc, host, rec);
      break;
    case DocKind::P2p:
      rec.node_facts[host] = context_facts(doc.json);
      add_p2p(doc, host, rec);
      break;
    case DocKind::Cluster:
      add_cluster(doc, rec);
      break;
    case DocKind::Topo:
    case DocKind::Compare:
      throw UsageError(doc.path + ": a " + std::string(schema_name(doc.kind)) +
                       " document has no figures to keep; history add takes io, doctor, p2p and "
                       "cluster documents");
  }
  if (host.empty() && doc.kind != DocKind::Cluster)
    throw UsageError(doc.path + ": context.host is missing, so the runs cannot be put on a node's series");
  return rec;
}

const RunInfo* History::run(int64_t id) const {
  for (const auto& r : runs)
    if (r.id == id) return &r;
  return nullptr;
}

Facts History::facts_of(int64_t run_id, const std::string& node, const std::string& test) const {
  Facts f;
  if (const auto it = node_facts.find(run_id); it != node_facts.end())
    if (const auto n = it->second.find(node); n != it->second.end()) f = n->second;
  if (const auto it = test_facts.find(run_id); it != test_facts.end())
    if (const auto t = it->second.find({node, test}); t != it->second.end())
      for (const auto& [k, v] : t->second) f[k] = v;
  return f;
}

}  // namespace gdsb::report::history
