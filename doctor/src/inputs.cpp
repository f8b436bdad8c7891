#include "gdsb/doctor/inputs.hpp"

#include "gdsb/error.hpp"

namespace gdsb::doctor {

std::vector<const topo::CheckResult*> Platform::checks_with(const std::string& id) const {
  std::vector<const topo::CheckResult*> out;
  for (const auto& c : checks)
    if (c.id == id) out.push_back(&c);
  return out;
}

Platform platform_from_snapshot(topo::Snapshot s, std::string source) {
  Platform p;
  p.snapshot = std::make_unique<topo::Snapshot>(std::move(s));
  p.view = std::make_unique<topo::TopologyView>(*p.snapshot);
  p.model = std::make_unique<topo::PathModel>(*p.view);
  topo::Report r = topo::evaluate(*p.snapshot, *p.view, *p.model);
  p.checks = std::move(r.checks);
  p.source = std::move(source);
  return p;
}

double gib_to_gb(double gib_s) { return gib_s * 1073741824.0 / 1e9; }

std::optional<double> run_gb_s(const RunResult& r) {
  if (r.status != RunStatus::Ok || r.result.seconds <= 0) return std::nullopt;
  return gib_to_gb(r.result.throughput_gib_s);
}

bool is_read(const Workload& w) {
  if (w.mixed_read_percent) return *w.mixed_read_percent > 0;
  return !pattern_is_write(w.pattern);
}

bool measures_storage_alone(const RunResult& r) {
  return r.workload.xfer == XferType::CpuOnly && r.workload.odirect && is_read(r.workload) &&
         path_used_of(r.path.path_used) == PathUsed::Posix && run_gb_s(r).has_value();
}

void add_io_document(Figures& f, const nlohmann::json& doc, const std::string& name) {
  if (!doc.contains("runs") || !doc.at("runs").is_array())
    throw RuntimeError(name + ": invalid document: no \"runs\" array (expected gdsbench.io/1)");
  const auto& runs = doc.at("runs");
  std::map<std::string, std::string> env;
  if (doc.contains("context") && doc.at("context").is_object() &&
      doc.at("context").contains("env") && doc.at("context").at("env").is_object())
    for (const auto& [k, v] : doc.at("context").at("env").items())
      if (v.is_string()) env.emplace(k, v.get<std::string>());
  const CudaOrdering ordering = cuda_ordering_of(env);
  // A node read (gdsb-io --gpus): each run read for the GPU of its -d, named in node.gpus[].
  std::map<int, std::string> node_gpus;
  if (doc.contains("node") && doc.at("node").is_object() && doc.at("node").contains("gpus") &&
      doc.at("node").at("gpus").is_array())
    for (const auto& g : doc.at("node").at("gpus"))
      if (g.is_object() && g.contains("gpu") && g.at("gpu").is_number_integer() && g.contains("pci_bus_id") &&
          g.at("pci_bus_id").is_string())
        node_gpus[g.at("gpu").get<int>()] = g.at("pci_bus_id").get<std::string>();
  f.run_gpus.resize(f.runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    try {
      f.runs.push_back(runs.at(i).get<RunResult>());
    } catch (const nlohmann::json::exception& e) {
      throw RuntimeError(name + ": invalid document: runs[" + std::to_string(i) +
                         "] cannot be read: " + e.what());
    }
    f.run_sources.push_back(name + " runs[" + std::to_string(i) + "]");
    f.run_ordering.push_back(ordering);
    const auto at = node_gpus.find(f.runs.back().workload.gpu);
    f.run_gpus.push_back(at == node_gpus.end() ? std::string() : at->second);
  }
}

CudaOrdering cuda_ordering_of(const std::map<std::string, std::string>& env) {
  CudaOrdering o;
  if (auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end()) o.visible_devices = it->second;
  if (auto it = env.find("CUDA_DEVICE_ORDER"); it != env.end()) o.device_order = it->second;
  return o;
}

namespace {

void read_series(Figures& f, const nlohmann::json& m, const char* key, const std::string& name,
                 bool h2d) {
  if (!m.contains(key)) return;
  const auto& s = m.at(key);
  if (s.is_object() && s.contains("waived")) {
    if (f.host_link_waived.empty())
      f.host_link_waived = std::string(key) + " waived in " + name + ": " +
                           s.at("waived").get<std::string>();
    return;
  }
  if (!s.is_array())
    throw RuntimeError(name + ": invalid document: measurements." + key + " is not a list");
  for (const auto& item : s) {
    if (!item.is_object() || !item.contains("gpu") || !item.contains("gb_s") ||
        !item.at("gb_s").is_number())
      throw RuntimeError(name + ": invalid document: measurements." + key +
                         "[] needs numeric \"gpu\" and \"gb_s\"");
    const int gpu = item.at("gpu").get<int>();
    HostLink* hl = nullptr;
    for (auto& x : f.host_links)
      if (x.gpu == gpu) hl = &x;
    if (!hl) hl = &f.host_links.emplace_back(HostLink{gpu, "", std::nullopt, std::nullopt});
    (h2d ? hl->h2d_gb_s : hl->d2h_gb_s) = item.at("gb_s").get<double>();
  }
}

}  // namespace

void add_p2p_document(Figures& f, const nlohmann::json& doc, const std::string& name) {
  if (!doc.contains("measurements") || !doc.at("measurements").is_object()) {
    if (f.host_link_waived.empty())
      f.host_link_waived = name + " has no measurements (gdsb-p2p was run without --measure)";
    return;
  }
  const auto& m = doc.at("measurements");
  read_series(f, m, "h2d", name, true);
  read_series(f, m, "d2h", name, false);
  if (doc.contains("gpus") && doc.at("gpus").is_array())
    for (const auto& g : doc.at("gpus"))
      for (auto& hl : f.host_links)
        if (g.is_object() && g.value("index", -1) == hl.gpu && g.contains("bdf") &&
            g.at("bdf").is_string())
          hl.bdf = g.at("bdf").get<std::string>();
}

}  // namespace gdsb::doctor
