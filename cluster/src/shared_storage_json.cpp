// The shared-storage phase's JSON: a rank's setup and samples (node reports, read back by
// --from with every bad field named) and rank 0's result (cluster.json's shared_storage).
#include <nlohmann/json.hpp>

#include "gdsb/cluster/shared_storage.hpp"
#include "gdsb/error.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::cluster {
namespace {

using nlohmann::json;

// A field of a storage object, named when it is missing or of the wrong type.
template <class T>
T field(const json& j, const char* key, const std::string& where, bool required, T fallback) {
  if (!j.contains(key)) {
    if (required) throw UsageError(where + "." + key + ": missing");
    return fallback;
  }
  const json& v = j.at(key);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw UsageError(where + "." + key + ": expected a string");
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      throw UsageError(where + "." + key + ": expected a whole number of bytes");
  } else if constexpr (std::is_same_v<T, int>) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1 << 30)
      throw UsageError(where + "." + key + ": expected a whole number from 0 to 2^30");
  } else {
    if (!v.is_number()) throw UsageError(where + "." + key + ": expected a number");
  }
  return v.get<T>();
}

// fs_type, source and mount_point, each where known (a directory's storage has all three).
json storage_json(const std::optional<RunStorage>& st) {
  if (!st) return json();
  json j = json::object();
  for (const auto& [key, value] : {std::pair{"fs_type", &st->fs_type}, std::pair{"source", &st->source},
                                   std::pair{"mount_point", &st->mount_point}})
    if (!value->empty()) j[key] = *value;
  return j;
}

std::optional<RunStorage> storage_from_json(const json& j, const std::string& where) {
  if (!j.contains("storage") || j.at("storage").is_null()) return std::nullopt;
  const json& st = j.at("storage");
  const std::string w = where + ".storage";
  if (!st.is_object()) throw UsageError(w + ": expected an object (fs_type, source, mount_point)");
  RunStorage s;
  s.fs_type = field<std::string>(st, "fs_type", w, false, "");
  s.source = field<std::string>(st, "source", w, false, "");
  s.mount_point = field<std::string>(st, "mount_point", w, false, "");
  return s;
}

}  // namespace

void to_json(json& j, const StorageSample& s) {
  j = {{"op", s.op},         {"nodes", s.nodes},   {"ranks", s.ranks},
       {"mode", s.mode},     {"status", s.status}, {"reason", s.reason},
       {"start_unix_s", s.start_unix_s}, {"end_unix_s", s.end_unix_s}, {"ready_unix_s", s.ready_unix_s},
       {"bytes", s.bytes},   {"stopped_by", s.stopped_by}, {"path_used", s.path_used}};
}

void to_json(json& j, const RankStorage& s) {
  j = {{"dir", s.dir},
       {"layout", s.layout},
       {"block_bytes", s.block_bytes},
       {"limit_bytes_per_rank", s.limit_bytes_per_rank},
       {"time_limit_s", s.time_limit_s},
       {"model_bytes", s.model_bytes},
       {"model_text", s.model_text},
       {"demand_per_gpu_gb_s", s.demand_per_gpu_gb_s ? json(*s.demand_per_gpu_gb_s) : json()},
       {"demand_restore_s", s.demand_restore_s ? json(*s.demand_restore_s) : json()},
       {"demand_text", s.demand_text},
       {"scale_gain_percent", s.scale_gain_percent},
       {"ceiling_gb_s", s.ceiling_gb_s ? json(*s.ceiling_gb_s) : json()},
       {"ceiling_text", s.ceiling_text},
       {"checkpoint_mode_text", s.checkpoint_mode_text},
       {"samples", s.samples}};
  if (s.storage) j["storage"] = storage_json(s.storage);
}

RankStorage rank_storage_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(where + ": expected an object");
  RankStorage s;
  s.dir = field<std::string>(j, "dir", where, true, "");
  s.storage = storage_from_json(j, where);
  s.layout = field<std::string>(j, "layout", where, false, s.layout);
  s.block_bytes = field<uint64_t>(j, "block_bytes", where, false, 0);
  s.limit_bytes_per_rank = field<uint64_t>(j, "limit_bytes_per_rank", where, false, 0);
  s.time_limit_s = field<double>(j, "time_limit_s", where, false, 0);
  s.model_bytes = field<uint64_t>(j, "model_bytes", where, false, 0);
  s.model_text = field<std::string>(j, "model_text", where, false, "");
  if (j.contains("demand_per_gpu_gb_s") && !j.at("demand_per_gpu_gb_s").is_null())
    s.demand_per_gpu_gb_s = field<double>(j, "demand_per_gpu_gb_s", where, true, 0);
  if (j.contains("demand_restore_s") && !j.at("demand_restore_s").is_null())
    s.demand_restore_s = field<double>(j, "demand_restore_s", where, true, 0);
  s.demand_text = field<std::string>(j, "demand_text", where, false, "");
  s.scale_gain_percent = field<double>(j, "scale_gain_percent", where, false, 50);
  if (j.contains("ceiling_gb_s") && !j.at("ceiling_gb_s").is_null())
    s.ceiling_gb_s = field<double>(j, "ceiling_gb_s", where, true, 0);
  s.ceiling_text = field<std::string>(j, "ceiling_text", where, false, "");
  s.checkpoint_mode_text = field<std::string>(j, "checkpoint_mode_text", where, false, "");
  if (j.contains("samples")) {
    if (!j.at("samples").is_array()) throw UsageError(where + ".samples: expected an array");
    for (const json& e : j.at("samples")) {
      const std::string w = where + ".samples[]";
      if (!e.is_object()) throw UsageError(w + ": expected an object");
      StorageSample x;
      x.op = field<std::string>(e, "op", w, true, "");
      x.nodes = field<int>(e, "nodes", w, true, 0);
      x.ranks = field<int>(e, "ranks", w, false, 0);
      x.mode = field<int>(e, "mode", w, true, 0);
      x.status = field<std::string>(e, "status", w, true, "");
      x.reason = field<std::string>(e, "reason", w, false, "");
      x.start_unix_s = field<double>(e, "start_unix_s", w, true, 0);
      x.end_unix_s = field<double>(e, "end_unix_s", w, true, 0);
      x.ready_unix_s = field<double>(e, "ready_unix_s", w, false, 0);
      x.bytes = field<uint64_t>(e, "bytes", w, true, 0);
      x.stopped_by = field<std::string>(e, "stopped_by", w, false, "");
      x.path_used = field<std::string>(e, "path_used", w, false, "");
      if (x.mode >= kXferTypeCount) throw UsageError(w + ".mode: expected a gdsio -x value 0..7");
      s.samples.push_back(std::move(x));
    }
  }
  return s;
}

json to_json(const SharedStorageResult& r) {
  json j;
  j["dir"] = r.dir;
  if (r.storage) j["storage"] = storage_json(r.storage);
  j["layout"] = r.layout;
  j["block_bytes"] = r.block_bytes;
  j["limit_bytes_per_rank"] = r.limit_bytes_per_rank;
  j["time_limit_s"] = r.time_limit_s;
  j["scale_gain_percent"] = r.scale_gain_percent;
  j["points"] = json::array();
  for (const StoragePoint& p : r.points) {
    j["points"].push_back(
        {{"nodes", p.nodes},
         {"mode", p.mode},
         {"mode_label", std::string(xfer_label(static_cast<XferType>(p.mode)))},
         {"op", p.op},
         {"status", p.status},
         {"reason", p.reason},
         {"ranks", p.ranks},
         {"start_unix_s", p.start_unix_s},
         {"end_unix_s", p.end_unix_s},
         {"window_s", p.window_s},
         {"bytes", p.bytes},
         {"aggregate_gb_s", p.aggregate_gb_s ? json(*p.aggregate_gb_s) : json()},
         {"per_node_gb_s", {{"min", p.share_min_gb_s}, {"median", p.share_median_gb_s}, {"max", p.share_max_gb_s}}},
         {"fairness", p.fairness},
         {"slowest_node", p.slowest_node},
         {"stopped_by", p.stopped_by},
         {"paths_used", p.paths_used},
         {"clock_suspects", p.clock_suspects}});
  }
  j["curves"] = json::array();
  for (const ScalingCurve& c : r.curves) {
    json gains = json::array();
    for (const auto& g : c.gain_percent) gains.push_back(g ? json(*g) : json());
    j["curves"].push_back({{"mode", c.mode},
                           {"mode_label", std::string(xfer_label(static_cast<XferType>(c.mode)))},
                           {"op", c.op},
                           {"nodes", c.nodes},
                           {"aggregate_gb_s", c.aggregate_gb_s},
                           {"linear_gb_s", c.linear_gb_s},
                           {"gain_percent", gains},
                           {"scaling_stops_at", c.scaling_stops_at ? json(*c.scaling_stops_at) : json()},
                           {"bound", c.bound},
                           {"bound_text", c.bound_text},
                           {"node_ceiling_gb_s", c.node_ceiling_gb_s ? json(*c.node_ceiling_gb_s) : json()}});
  }
  if (r.gpus_fed) {
    const GpusFed& g = *r.gpus_fed;
    j["gpus_fed"] = {{"demand_per_gpu_gb_s", g.demand_per_gpu_gb_s}, {"demand_text", g.demand_text},
                     {"busy_percent", g.busy_percent}, {"mode", g.mode}, {"op", g.op}, {"gpus", g.gpus},
                     {"at_least", g.at_least}, {"gpus_measured", g.gpus_measured}, {"bound", g.bound},
                     {"text", g.text}};
  }
  if (r.checkpoint) {
    const CheckpointResult& c = *r.checkpoint;
    const auto op = [](const CheckpointOp& o) {
      return json{{"status", o.status},
                  {"reason", o.reason},
                  {"seconds", o.seconds},
                  {"bytes", o.bytes},
                  {"aggregate_gb_s", o.aggregate_gb_s ? json(*o.aggregate_gb_s) : json()},
                  {"slowest_node", o.slowest_node},
                  {"clock_suspects", o.clock_suspects}};
    };
    j["checkpoint"] = {{"model_bytes", c.model_bytes}, {"model_text", c.model_text}, {"ranks", c.ranks},
                       {"shard_bytes", c.shard_bytes}, {"modes", c.modes}, {"mode", c.modes.empty() ? 1 : c.modes.front()},
                       {"mode_text", c.mode_text},     {"save", op(c.save)},           {"load", op(c.load)}};
  }
  if (r.interrupted) j["interrupted"] = true;
  return j;
}

}  // namespace gdsb::cluster
