// The preset's answer: time to result first (per GPU and for the node: from the first
// job's start to the last job's end on one wall clock), then GB/s and latencies, and the
// platform ceiling from a gdsb-topo report when one was given.
#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gdsb/naive_comparison.hpp"
#include "gdsb/node_figure.hpp"
#include "gdsb/units.hpp"
#include "presets.hpp"

namespace gdsb::io {
namespace {

using nlohmann::json;

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

json latency(const LatencySummary& l) {
  return {{"p50_us", l.p50_us}, {"p99_us", l.p99_us}, {"p999_us", l.p999_us}, {"max_us", l.max_us}};
}

// The jobs whose names start with prefix (e.g. "load-gpu"), as one group that ran together:
// the node's figure (gdsb/node_figure.hpp) of those jobs.
json group(std::span<const RunResult> runs, const std::string& prefix) {
  std::vector<RunResult> members;
  for (const auto& r : runs)
    if (starts_with(r.workload.name, prefix)) members.push_back(r);
  const NodeFigure f = node_figure(members);
  json per_gpu = json::array();
  for (const GpuFigure& g : f.per_gpu) {
    const auto run = std::find_if(members.begin(), members.end(), [&](const RunResult& r) {
      return r.status == RunStatus::Ok && r.workload.gpu == g.gpu;
    });
    per_gpu.push_back({{"gpu", g.gpu},
                       {"seconds", g.seconds},
                       {"bytes", g.bytes},
                       {"gb_s", g.gb_s},
                       {"fsync_s", run->result.fsync_s},
                       {"path_used", g.path_used}});
  }
  json g = {{"per_gpu", per_gpu}};
  if (per_gpu.empty() || !f.missing.empty()) {
    g["node_s"] = nullptr;
    json missing = json::array();
    for (const MissingRun& m : f.missing) missing.push_back("GPU " + std::to_string(m.gpu) + ": " + m.reason);
    g["missing"] = missing;
    return g;
  }
  g["node_s"] = *f.window_s;
  g["bytes"] = f.bytes;
  g["gb_s"] = *f.gb_s;
  return g;
}

const RunResult* named(std::span<const RunResult> runs, const std::string& name) {
  for (const auto& r : runs) {
    if (r.workload.name == name && r.status == RunStatus::Ok) return &r;
  }
  return nullptr;
}

json request_figures(const RunResult& r) {
  const Measurement& m = r.result;
  return {{"job", r.workload.name},
          {"seconds", m.seconds},
          {"requests", m.requests},
          {"requests_per_s", m.seconds > 0 ? static_cast<double>(m.requests) / m.seconds : 0.0},
          {"request_latency", latency(m.request_latency)},
          {"block_latency", latency(m.latency)},
          {"gb_s", m.seconds > 0 ? static_cast<double>(m.bytes) / m.seconds / 1e9 : 0.0},
          {"read_ops", m.read_ops},
          {"write_ops", m.write_ops}};
}

std::string group_text(const json& g, const std::string& label) {
  std::string out;
  if (g.at("node_s").is_null()) {
    out += "  " + label + ": not measured on every GPU\n";
    for (const auto& m : g.value("missing", json::array()))
      out += "    " + m.get<std::string>() + "\n";
    return out;
  }
  out += "  " + label + ": " + (format_fixed(g.at("node_s").get<double>(), 3) + " s") + " for the node, " +
         (format_fixed(g.at("gb_s").get<double>(), 2) + " GB/s") + "\n";
  for (const auto& e : g.at("per_gpu")) {
    out += "    GPU " + std::to_string(e.at("gpu").get<int>()) + ": " +
           (format_fixed(e.at("seconds").get<double>(), 3) + " s") + ", " +
           (format_fixed(e.at("gb_s").get<double>(), 2) + " GB/s");
    if (e.at("fsync_s").get<double>() > 0) out += (std::string(" (fsync ") + format_fixed(e.at("fsync_s").get<double>(), 3) + " s)");
    out += " [" + e.at("path_used").get<std::string>() + "]\n";
  }
  return out;
}

std::string naive_text(const json& f) {
  if (!f.is_object()) return {};
  std::string out = "    models: " + f.at("models").get<std::string>() + "\n";
  out += "    " + std::to_string(f.at("read_calls").get<uint64_t>()) + " read calls, " +
         std::to_string(f.at("bytes_read").get<uint64_t>()) + " bytes of " +
         std::to_string(f.at("files").get<uint64_t>()) + " shards (" +
         (f.at("buffered").get<bool>() ? "buffered" : "O_DIRECT found") + "); " +
         (f.at("gpu_copies_done").get<bool>()
              ? std::to_string(f.at("pageable_copies").get<uint64_t>()) + " pageable copies, " +
                    std::to_string(f.at("bytes_copied").get<uint64_t>()) + " bytes"
              : "no copies (no GPU: copies not done) of " +
                    std::to_string(f.at("bytes_copied").get<uint64_t>()) + " tensor bytes") +
         "\n";
  if (f.at("cached_share").is_number()) {
    const double share = f.at("cached_share").get<double>();
    out += "    page cache before the naive load: " + format_fixed(100 * share, 0) + "% of the shards resident" +
           (share >= 0.99   ? " (cached: a RAM-backed file system, or a warm cache)"
            : share <= 0.01 ? " (cold: read from storage)"
                            : " (partly cached)") +
           "\n";
  } else {
    out += "    page cache before the naive load: unknown (mincore refused)\n";
  }
  return out;
}

// What the naive load modelled and the state it started from, summed over its GPUs.
json naive_facts(const NaiveFacts& naive) {
  gpu::NaiveLoadFacts t;
  bool any = false;
  for (const auto& [name, f] : naive) {
    if (!starts_with(name, "naive-gpu")) continue;
    any = true;
    gpu::accumulate(t, f);
  }
  if (!any) return nullptr;
  return {{"models", "buffered read(2) of each whole shard into pageable host memory, then one "
                     "synchronous pageable cudaMemcpy per tensor (torch.load(...).cuda())"},
          {"files", t.files},
          {"bytes_read", t.bytes_read},
          {"read_calls", t.read_calls},
          {"buffered", t.buffered},
          {"pageable_copies", t.copies},
          {"bytes_copied", t.bytes_copied},
          {"tensors", t.tensors},
          {"gpu_copies_done", t.gpu},
          {"page_cache_before", t.cached_known ? json(t.cached_before) : json(nullptr)},
          {"file_bytes", t.file_bytes},
          {"cached_share", t.cached_known && t.file_bytes > 0
                               ? json(static_cast<double>(t.cached_before) /
                                      static_cast<double>(t.file_bytes))
                               : json(nullptr)}};
}

// The naive comparison's explanation (gdsb/naive_comparison.hpp), as the summary's JSON.
json slower_than_naive_json(std::span<const RunResult> runs, const json& naive_facts,
                            double naive_over_load) {
  std::vector<RunResult> load;
  for (const RunResult& r : runs)
    if (starts_with(r.workload.name, "load-gpu")) load.push_back(r);
  std::optional<double> cached;
  if (naive_facts.is_object() && naive_facts.at("cached_share").is_number())
    cached = naive_facts.at("cached_share").get<double>();
  const auto s = slower_than_naive(load, cached, naive_over_load);
  if (!s) return nullptr;
  return {{"naive_over_load", s->naive_over_load},
          {"storage_share", s->storage_share ? json(*s->storage_share) : json(nullptr)},
          {"cause", s->cause},
          {"why", s->why}};
}

}  // namespace

json preset_summary(const PresetParams& p, std::span<const RunResult> runs,
                    const NaiveFacts& naive, const json& ceiling) {
  json s = {{"preset", preset_name(p.preset)},
            {"xfer_type", static_cast<int>(p.xfer)},
            {"xfer_name", xfer_name(p.xfer)},
            {"gpus", p.gpus},
            {"directory", p.dir},
            {"ceiling", ceiling}};
  switch (p.preset) {
    case Preset::CheckpointLoad: {
      s["parameters"] = {{"shards_per_gpu", p.shards}, {"shard_bytes", p.header_bytes + p.shard_data},
                         {"tensor_bytes_per_shard", p.shard_data}, {"io_size", p.io_size}};
      s["time_to_result"] = group(runs, "load-gpu");
      s["naive"] = group(runs, "naive-gpu");
      s["naive"]["facts"] = naive_facts(naive);
      const auto& a = s["time_to_result"]["node_s"];
      const auto& b = s["naive"]["node_s"];
      s["speedup_vs_naive"] =
          a.is_number() && b.is_number() && a.get<double>() > 0 ? json(b.get<double>() / a.get<double>())
                                                                 : json(nullptr);
      s["slower_than_naive"] =
          s["speedup_vs_naive"].is_number()
              ? slower_than_naive_json(runs, s["naive"]["facts"], s["speedup_vs_naive"].get<double>())
              : json(nullptr);
      break;
    }
    case Preset::CheckpointSave:
      s["parameters"] = {{"shards_per_gpu", p.shards}, {"shard_bytes", p.shard_data}, {"io_size", p.io_size}};
      s["time_to_result"] = group(runs, "save-gpu");
      break;
    case Preset::KvOffload: {
      s["parameters"] = {{"layers", p.layers}, {"block_size", p.block_size}, {"kv_blocks", p.kv_blocks},
                         {"write_share_percent", p.write_share}};
      json jobs = json::array();
      for (const char* name : {"offload", "restore", "evict-mix"}) {
        if (const RunResult* r = named(runs, name)) jobs.push_back(request_figures(*r));
      }
      s["requests"] = jobs;
      if (const RunResult* r = named(runs, "restore")) {
        s["time_to_result"] = {{"what", "restore request p99 (delays the first token)"},
                               {"request_p99_us", r->result.request_latency.p99_us}};
      }
      break;
    }
    case Preset::Dataset: {
      s["parameters"] = {{"files", p.files}, {"file_size", p.file_size}, {"threads", p.threads}};
      if (const RunResult* r = named(runs, "read")) {
        const Measurement& m = r->result;
        const double files_read = p.file_size > 0 ? static_cast<double>(m.bytes) / static_cast<double>(p.file_size) : 0.0;
        s["time_to_result"] = {{"seconds", m.seconds},
                               {"files_per_s", m.seconds > 0 ? files_read / m.seconds : 0.0},
                               {"gb_s", m.seconds > 0 ? static_cast<double>(m.bytes) / m.seconds / 1e9 : 0.0}};
        // What each file cost inside that time (open_per_file, PerFileCosts): mean and p99.
        if (m.per_file) {
          const PerFileCosts& c = *m.per_file;
          const auto cost = [](const LatencySummary& l) { return json{{"mean_us", l.mean_us}, {"p99_us", l.p99_us}}; };
          s["per_file"] = {{"files", c.files},
                           {"open", cost(c.open)},
                           {"register", cost(c.registration)},
                           {"read", cost(c.read)},
                           {"deregister", cost(c.deregistration)},
                           {"close", cost(c.close)},
                           {"registers", xfer_uses_cufile(p.xfer)},
                           {"path_used", r->path.path_used}};
        }
      }
      break;
    }
  }
  return s;
}

namespace {

// One line: each file's costs inside the figure above, mean (p99), register and deregister
// only where the path registers files (cuFile).
std::string per_file_text(const json& f) {
  const bool registers = f.value("registers", false);
  std::string out = "  per file (mean, p99 us): ";
  bool first = true;
  for (const char* k : {"open", "register", "read", "deregister", "close"}) {
    if (!registers && (std::string_view(k) == "register" || std::string_view(k) == "deregister")) continue;
    const json& c = f.at(k);
    out += std::string(first ? "" : ", ") + k + " " + format_fixed(c.at("mean_us").get<double>(), 1) + " (" +
           format_fixed(c.at("p99_us").get<double>(), 1) + ")";
    first = false;
  }
  return out + "\n";
}

}  // namespace

std::string preset_summary_text(const json& s) {
  std::string out = "\nworkload " + s.at("preset").get<std::string>() + " (-x " +
                    std::to_string(s.at("xfer_type").get<int>()) + " " +
                    s.at("xfer_name").get<std::string>() + ", " +
                    std::to_string(s.at("gpus").get<int>()) + " GPU(s)):\n";
  const std::string preset = s.at("preset").get<std::string>();
  if (preset == "checkpoint-load") {
    out += group_text(s.at("time_to_result"), "time until the last GPU holds its shards");
    out += group_text(s.at("naive"), "naive load (buffered read into pageable memory, then "
                                     "a cudaMemcpy per tensor)");
    out += naive_text(s.at("naive").value("facts", json()));
    if (s.at("speedup_vs_naive").is_number())
      out += "  the naive load takes " + format_fixed(s.at("speedup_vs_naive").get<double>(), 2) + "x as long\n";
    if (s.contains("slower_than_naive") && s.at("slower_than_naive").is_object())
      out += "  slower than the naive load: " + s.at("slower_than_naive").at("why").get<std::string>() + "\n";
  } else if (preset == "checkpoint-save") {
    out += group_text(s.at("time_to_result"), "time until every GPU's shards are durable");
  } else if (preset == "kv-offload") {
    for (const auto& j : s.at("requests")) {
      out += "  " + j.at("job").get<std::string>() + ": request p50 " +
             (format_fixed(j.at("request_latency").at("p50_us").get<double>(), 1) + " us") + ", p99 " +
             (format_fixed(j.at("request_latency").at("p99_us").get<double>(), 1) + " us") + "; block p50 " +
             (format_fixed(j.at("block_latency").at("p50_us").get<double>(), 1) + " us") + ", p99 " +
             (format_fixed(j.at("block_latency").at("p99_us").get<double>(), 1) + " us") + "; " +
             (format_fixed(j.at("requests_per_s").get<double>(), 0) + " requests/s, ") +
             (format_fixed(j.at("gb_s").get<double>(), 2) + " GB/s\n");
    }
  } else if (preset == "dataset" && s.contains("time_to_result")) {
    const auto& t = s.at("time_to_result");
    out += (std::string("  ") + format_fixed(t.at("seconds").get<double>(), 3) + " s: ") +
           (format_fixed(t.at("files_per_s").get<double>(), 0) + " files/s, ") +
           (format_fixed(t.at("gb_s").get<double>(), 2) + " GB/s\n");
    if (s.contains("per_file")) out += per_file_text(s.at("per_file"));
  }
  const auto& c = s.at("ceiling");
  if (c.is_object() && c.contains("per_gpu")) {
    out += "  platform ceiling (" + c.value("source", std::string()) + "):\n";
    // GPUs with the same figure and reason are said once ("GPU a, b, c: ..."): on a node of
    // virtual disks every GPU has the same "no figure" reason (issue 35).
    std::vector<std::pair<std::string, std::string>> lines;  // text, GPUs
    for (const auto& e : c.at("per_gpu")) {
      const bool figure = e.contains("gb_s") && e.at("gb_s").is_number();
      const std::string text = (figure ? format_fixed(e.at("gb_s").get<double>(), 1) + " GB/s (" : std::string("no figure (")) +
                               e.value("limited_by", std::string()) + ")";
      const std::string gpu = e.value("gpu", std::string("?"));
      auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == text; });
      if (it == lines.end()) {
        lines.emplace_back(text, gpu);
      } else {
        it->second += ", " + gpu;
      }
    }
    for (const auto& [text, gpus] : lines)
      out += std::string("    GPU") + (gpus.find(',') == std::string::npos ? " " : "s ") + gpus + ": " + text + "\n";
  } else if (c.is_object()) {
    const std::string source = c.value("source", std::string());
    out += "  platform ceiling" + (source.empty() ? std::string() : " (" + source + ")") +
           ": no figure: " + c.value("note", std::string()) + "\n";
  } else {
    out += "  platform ceiling: not known\n";
  }
  return out;
}

}  // namespace gdsb::io
