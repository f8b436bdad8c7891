#include "gdsb/cluster/summary.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <istream>
#include <thread>
#include <set>
#include <nlohmann/json.hpp>

#include "gdsb/error.hpp"
#include "gdsb/topo/hw_faults.hpp"
#include "gdsb/topo/model.hpp"
#include "gdsb/topo/collect.hpp"
#include "summary_fields.hpp"

namespace gdsb::cluster {
namespace {

using nlohmann::json;

std::optional<double> num_or_null(const json& v) {
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

// Per-GPU figures of a host series ("h2d": [{"gpu":0,"gb_s":..}] or {"waived": ".."}).
void host_series(const json& m, const char* key, const char* metric, NodeSummary& s) {
  if (!m.contains(key)) return;
  const json& v = m.at(key);
  if (v.is_object() && v.contains("waived")) {
    s.waived[metric] = v.at("waived").get<std::string>();
    return;
  }
  if (!v.is_array()) return;
  auto& out = s.gpu_metrics[metric];
  for (const json& item : v) {
    const json index = item.value("gpu", json());
    const int gpu = index.is_number() ? summary_fields::to_count(index.get<double>()).value_or(-1) : -1;
    if (gpu < 0 || gpu > 4096) continue;
    if (out.size() <= static_cast<std::size_t>(gpu)) out.resize(static_cast<std::size_t>(gpu) + 1);
    out[static_cast<std::size_t>(gpu)] = num_or_null(item.value("gb_s", json()));
  }
}

// The figure at cells[a][b] of a matrix, nullopt where it has none: no such matrix, a row
// shorter than the other matrix's (a corrupt report), or no number there.
std::optional<double> cell(const json* matrix, std::size_t a, std::size_t b) {
  if (matrix == nullptr) return std::nullopt;
  const json& rows = matrix->at("cells");
  if (!rows.is_array() || a >= rows.size() || !rows[a].is_array() || b >= rows[a].size())
    return std::nullopt;
  return num_or_null(rows[a][b]);
}

// d2d per GPU: the median over its peers of the unidirectional copies from it, peer access
// on where that matrix has the figure, otherwise the staged (peer access off) figure.
void d2d_series(const json& m, NodeSummary& s) {
  const json* on = m.contains("d2d_uni") && m.at("d2d_uni").contains("cells") ? &m.at("d2d_uni") : nullptr;
  const json* off = m.contains("d2d_uni_no_p2p") && m.at("d2d_uni_no_p2p").contains("cells")
                        ? &m.at("d2d_uni_no_p2p")
                        : nullptr;
  if (on == nullptr && off == nullptr) {
    for (const char* k : {"d2d_uni", "d2d_uni_no_p2p"})
      if (m.contains(k) && m.at(k).contains("waived")) s.waived["d2d_gb_s"] = m.at(k).at("waived");
    return;
  }
  const json& rows = (on != nullptr ? *on : *off).at("cells");
  if (!rows.is_array()) return;
  auto& out = s.gpu_metrics["d2d_gb_s"];
  for (std::size_t a = 0; a < rows.size(); ++a) {
    std::vector<double> peers;
    const std::size_t width = rows[a].is_array() ? rows[a].size() : 0;
    for (std::size_t b = 0; b < width; ++b) {
      std::optional<double> v = cell(on, a, b);
      if (!v) v = cell(off, a, b);
      if (v) peers.push_back(*v);
    }
    std::sort(peers.begin(), peers.end());
    std::optional<double> med;
    if (!peers.empty())
      med = peers.size() % 2 ? peers[peers.size() / 2]
                             : (peers[peers.size() / 2 - 1] + peers[peers.size() / 2]) / 2;
    out.push_back(med);
  }
}

void io_runs(const json& io, NodeSummary& s) {
  if (!io.contains("runs")) return;
  for (const json& r : io.at("runs")) {
    const json& w = r.at("workload");
    const json x = w.value("xfer_type", json());
    const int xfer = x.is_number() ? summary_fields::to_count(x.get<double>()).value_or(-1) : -1;
    const std::string metric = "io_x" + std::to_string(xfer) + "_read_gb_s";
    const std::string status = r.value("status", "");
    if (status == "ok" && r.contains("result")) {
      // gdsbench.io/1 reports GiB/s (base 1024); the cluster reports GB/s (base 1000).
      s.node_metrics[metric] = r.at("result").value("throughput_gib_s", 0.0) * 1.073741824;
    } else {
      s.waived[metric] = status + ": " + r.value("reason", "");
    }
  }
}

// The node's figure (node_figure_phase): per type, the node's aggregate and its share of the
// node ceiling compare nodes (node metrics), each GPU's rate while all read compares GPU
// positions (GPU metrics). GB/s = 1e9 bytes/s, as the node section writes them.
void node_figure(const json& doc, NodeSummary& s) {
  if (!doc.contains("node") || !doc.at("node").is_object() || !doc.at("node").contains("modes")) return;
  const json& node = doc.at("node");
  std::optional<double> ceiling;
  if (node.contains("ceiling") && node.at("ceiling").is_object() && node.at("ceiling").contains("gb_s") &&
      node.at("ceiling").at("gb_s").is_number())
    ceiling = node.at("ceiling").at("gb_s").get<double>();
  for (const json& m : node.at("modes")) {
    const json x = m.value("xfer_type", json());
    const int xfer = x.is_number() ? summary_fields::to_count(x.get<double>()).value_or(-1) : -1;
    const std::string metric = "node_x" + std::to_string(xfer) + "_read_gb_s";
    if (m.contains("waived")) {
      s.waived[metric] = "waived: " + m.at("waived").get<std::string>();
      continue;
    }
    const json agg = m.value("aggregate_gb_s", json());
    if (!agg.is_number()) {
      s.waived[metric] = "no GPU measured";
      continue;
    }
    s.node_metrics[metric] = agg.get<double>();
    if (ceiling && *ceiling > 0)
      s.node_metrics["node_x" + std::to_string(xfer) + "_ceiling_share"] = agg.get<double>() / *ceiling;
    auto& per = s.gpu_metrics["node_x" + std::to_string(xfer) + "_gpu_read_gb_s"];
    if (m.contains("per_gpu") && m.at("per_gpu").is_array())
      for (const json& g : m.at("per_gpu")) {
        const json gi = g.value("gpu", json());
        const int at = gi.is_number() ? summary_fields::to_count(gi.get<double>()).value_or(-1) : -1;
        if (at < 0 || at > 1024 || !g.contains("gb_s") || !g.at("gb_s").is_number()) continue;
        if (per.size() <= static_cast<std::size_t>(at)) per.resize(static_cast<std::size_t>(at) + 1);
        per[static_cast<std::size_t>(at)] = g.at("gb_s").get<double>();
      }
  }
}

// A JSON value's type in words, for messages ("a string", "an object").
std::string type_words(const json& v) {
  const std::string t = v.type_name();
  return (t == "null" ? "" : (t == "array" || t == "object") ? "an " : "a ") + t;
}

// The identity fields of a node document without a summary block (summary_fields.hpp: the
// same fields, at the same places, as in a summary). `origin` names the file in errors.
void read_identity(const json& doc, NodeSummary& s, const std::string& origin) {
  using namespace summary_fields;
  const auto bad = [&](const std::string& where, const std::string& wanted, const std::string& found) {
    return UsageError(origin + ": invalid gdsb-cluster node report: " + where + ": expected " + wanted +
                      ", found " + found);
  };
  if (!doc.contains(kRequired))
    throw UsageError(origin + ": invalid gdsb-cluster node report: no \"" + kRequired + "\"");
  const json* hardware = doc.contains(kHardware) ? &doc.at(kHardware) : nullptr;
  if (hardware != nullptr && !hardware->is_object())
    throw bad(kHardware, "an object", type_words(*hardware));
  for (const Field& f : kFields) {
    if (!f.identity) continue;
    const json* in = f.group == Group::Top ? &doc : hardware;
    if (in == nullptr || !in->contains(f.key)) continue;
    const json& v = in->at(f.key);
    const std::string where = f.group == Group::Top ? f.key : std::string(kHardware) + "." + f.key;
    if (f.text != nullptr) {
      if (!v.is_string()) throw bad(where, "a string", type_words(v));
      s.*f.text = v.get<std::string>();
    } else {
      if (!v.is_number()) throw bad(where, "a number", type_words(v));
      const auto n = to_count(v.get<double>());
      if (!n) throw bad(where, kCountWanted, number_words(v.get<double>()));
      s.*f.count = *n;
    }
  }
}

// The node's hardware faults: gdsb-topo's own judgement of the snapshot's fault facts
// (hw_faults.hpp), against the boot: a node report carries no known-good file.
std::vector<NodeFault> node_faults(const json& snapshot, const std::string& origin) {
  if (!snapshot.is_object() || !snapshot.contains("hw_faults")) return {};  // reports before issue 36
  const topo::Snapshot snap = topo::snapshot_from_json(snapshot, origin + ": topology.snapshot");
  std::vector<NodeFault> out;
  for (const topo::FaultFinding& f : topo::judge_faults(snap, topo::FaultBaseline{})) out.push_back(node_fault(f));
  return out;
}

json gpu_metrics_json(const std::map<std::string, std::vector<std::optional<double>>>& m) {
  json j = json::object();
  for (const auto& [k, values] : m) {
    json a = json::array();
    for (const auto& v : values) a.push_back(v ? json(*v) : json());
    j[k] = std::move(a);
  }
  return j;
}

}  // namespace

std::string_view node_status_name(NodeStatus s) {
  switch (s) {
    case NodeStatus::Ok: return "ok";
    case NodeStatus::Error: return "error";
    case NodeStatus::Missing: return "missing";
  }
  return "?";
}

std::string NodeSummary::class_key() const {
  return gpu_model + " | " + drive_model + " | " + nic_model;
}

void to_json(json& j, const NodeSummary& s) {
  j = summary_without_fingerprint(s);
  j[summary_fields::kFingerprint] = s.fingerprint.texts();
}

json summary_without_fingerprint(const NodeSummary& s) {
  using namespace summary_fields;
  json j = json::object();
  json& hardware = j[kHardware] = json::object();
  for (const Field& f : kFields) {
    if (f.omit_empty && f.text != nullptr && (s.*f.text).empty()) continue;
    json& into = f.group == Group::Top ? j : hardware;
    into[f.key] = f.text != nullptr ? json(s.*f.text) : json(s.*f.count);
  }
  if (s.ranks.size() > 1) j["ranks"] = s.ranks;  // the node's ranks, said once with it
  json checks = json::array();
  for (const auto& c : s.failing_checks) {
    json& check = checks.emplace_back(json::object());
    for (const CheckField& f : kCheckFields) check[f.key] = c.*f.text;
  }
  j[kStatus] = node_status_name(s.status);
  j[kErrors] = s.errors;
  j[kFailingChecks] = std::move(checks);
  j[kGpuMetrics] = gpu_metrics_json(s.gpu_metrics);
  j[kNodeMetrics] = s.node_metrics;
  j[kWaived] = s.waived;
  if (s.storage) j[kStorage] = *s.storage;
  if (!s.faults.empty()) {
    json& faults = j[kFaults] = json::array();
    for (const NodeFault& f : s.faults) {
      json& one = faults.emplace_back(json::object());
      for (const FaultField& ff : kFaultFields) one[ff.key] = ff.text != nullptr ? json(f.*ff.text) : json(f.*ff.count);
    }
  }
  return j;
}

void from_json(const json& j, NodeSummary& s) { s = summary_from_text(j.dump(), "summary"); }

NodeSummary summarize(const json& doc, const std::string& origin, const std::shared_ptr<TextTable>& table) {
  if (!doc.is_object() || doc.value("schema", "") != kNodeSchema)
    throw UsageError(origin + " is not a gdsb-cluster node report (schema " + kNodeSchema +
                     "); pass the files written under OUT/nodes/");
  try {
    // A summary block the reader did not take (the schema after it): read as one, named
    // with its file.
    if (doc.contains("summary")) return summary_from_text(doc.at("summary").dump(), origin, table);
    NodeSummary s;
    read_identity(doc, s, origin);
    for (const json& p : doc.value("phases", json::array()))
      if (p.value("status", "ok") == "waived")
        s.waived[p.value("name", "?")] = p.value("error", "");
      else if (p.value("status", "ok") != "ok")
        s.errors.push_back(p.value("name", "?") + ": " + p.value("error", p.value("status", "")));
    if (!s.errors.empty()) s.status = NodeStatus::Error;
    s.fingerprint = FingerprintTexts(doc.value("fingerprint", std::map<std::string, std::string>{}), table);
    static const json none;
    const json& topo = doc.contains("topology") ? doc.at("topology") : none;
    if (topo.is_object()) {
      s.topo_verdict = topo.value("verdict", "");
      if (!topo.value("gds_applicable", true)) s.applicability = topo.value("applicability", "");
      if (topo.contains("snapshot")) s.faults = node_faults(topo.at("snapshot"), origin);
      for (const json& c : topo.value("checks", json::array())) {
        const std::string v = c.value("verdict", "");
        if (v != "fail" && v != "warn") continue;
        const auto ev = c.value("evidence", std::vector<std::string>{});
        s.failing_checks.push_back({c.value("id", ""), v, ev.empty() ? c.value("title", "") : ev.front(),
                                    c.value("title", ""), c.value("consequence", "")});
      }
    }
    const json& p2p = doc.contains("p2p") ? doc.at("p2p") : none;
    if (p2p.is_object() && p2p.contains("measurements")) {
      const json& m = p2p.at("measurements");
      host_series(m, "h2d", "h2d_gb_s", s);
      host_series(m, "d2h", "d2h_gb_s", s);
      d2d_series(m, s);
    }
    const json& io = doc.contains("io") ? doc.at("io") : none;
    if (io.is_object()) io_runs(io, s);
    if (doc.contains(kNodeFigurePhase) && doc.at(kNodeFigurePhase).is_object())
      node_figure(doc.at(kNodeFigurePhase), s);
    if (doc.contains("storage") && doc.at("storage").is_object())
      s.storage = rank_storage_from_json(doc.at("storage"), origin + ": storage");
    return s;
  } catch (const json::exception& e) {
    throw UsageError(origin + ": invalid gdsb-cluster node report: " + e.what());
  } catch (const RuntimeError& e) {  // a damaged topology snapshot: the file is bad input
    throw UsageError(std::string(e.what()) + "; pass the files of OUT/nodes/");
  }
}

namespace {

// A report's summary from its head (`text`, the file's first bytes) and, when the block
// does not end there, from the whole file (`rest` appends the remaining bytes, false when
// the head was the whole file). Without a block (written by other means): the whole
// document, minus subtrees no summary reads (device lists, samples, time series,
// histograms, matrices of codes).
template <class Rest>
NodeSummary summary_of_head(std::string& text, Rest&& rest, const std::string& origin,
                            const std::shared_ptr<TextTable>& table, const FingerprintTexts* like) {
  if (auto s = read_summary_block(text, origin, table, like)) return std::move(*s);
  if (rest(text))
    if (auto s = read_summary_block(text, origin, table, like)) return std::move(*s);  // a summary larger than the head
  static const std::set<std::string> skip{"devices", "pairs", "ceilings", "samples_gb_s",
                                          "timeseries", "histogram", "repetitions", "matrices",
                                          "peers", "notes", "path_evidence", "context", "argv",
                                          "theoretical_gb_s", "percent", "latency_us"};
  // The topology snapshot's own devices and notes (depth 3: topology.snapshot.devices) are
  // kept: its fault facts are judged with them (node_faults: which address is a GPU here).
  static const std::set<std::string> snapshot_keeps{"devices", "notes"};
  const json::parser_callback_t keep = [](int depth, json::parse_event_t event, json& parsed) {
    if (event != json::parse_event_t::key || depth < 2 || !parsed.is_string()) return true;
    const auto& k = parsed.get_ref<const std::string&>();
    return !skip.contains(k) || (depth == 3 && snapshot_keeps.contains(k));
  };
  const json doc = json::parse(text, keep, false);
  if (doc.is_discarded()) throw UsageError(origin + ": not JSON; pass the files of OUT/nodes/");
  return summarize(doc, origin, table);
}

// Bytes of `fd` from `offset` appended to `text`, at most `limit` (all: SIZE_MAX); false
// at the end of the file before `limit`.
bool append_from(int fd, std::size_t offset, std::size_t limit, std::string& text, const std::string& origin) {
  const std::size_t at = text.size();
  std::size_t got = 0;
  for (std::size_t chunk = std::min<std::size_t>(limit, 1 << 16); got < limit; chunk = std::min(limit - got, chunk * 2)) {
    text.resize(at + got + chunk);
    const ssize_t n = ::pread(fd, text.data() + at + got, chunk, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(origin + ": cannot read the file: " + std::strerror(errno));
    got += static_cast<std::size_t>(n);
    if (static_cast<std::size_t>(n) < chunk) {
      text.resize(at + got);
      return false;
    }
  }
  text.resize(at + got);
  return true;
}

// The head a thread reads first; a report whose summary did not end there makes the
// thread's next heads larger (the files of one fleet are alike).
constexpr std::size_t kFirstHead = 16 * 1024, kLargestHead = 1 << 20;

}  // namespace

NodeSummary read_node_summary(std::istream& in, const std::string& origin,
                              const std::shared_ptr<TextTable>& table, const FingerprintTexts* like) {
  constexpr std::size_t kHead = 64 * 1024;
  std::string text(kHead, '\0');
  in.read(text.data(), static_cast<std::streamsize>(kHead));
  text.resize(static_cast<std::size_t>(in.gcount()));
  const auto rest = [&](std::string& t) {
    if (t.size() < kHead) return false;
    const std::size_t had = t.size();
    for (std::size_t got = kHead; got == kHead;) {
      t.resize(t.size() + kHead);
      in.read(t.data() + t.size() - kHead, static_cast<std::streamsize>(kHead));
      got = static_cast<std::size_t>(in.gcount());
      t.resize(t.size() - kHead + got);
    }
    return t.size() > had;
  };
  return summary_of_head(text, rest, origin, table, like);
}

std::vector<NodeSummary> read_node_reports(const std::vector<std::string>& paths) {
  std::vector<NodeSummary> nodes(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  std::atomic<std::size_t> next{0};
  const auto table = std::make_shared<TextTable>();
  // Each file is independent: the CPUs take files in turn (a shared counter, so one slow
  // file does not hold a whole slice back); errors are raised in the order of the paths.
  const auto work = [&] {
    const FingerprintTexts* previous = nullptr;  // this thread's last node: the next is likely alike
    std::string text;  // this thread's buffer, reused
    std::size_t head = kFirstHead;
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      try {
        const std::string origin = "--from " + paths[i];
        const int fd = ::open(paths[i].c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw UsageError(origin + ": cannot open the file");
        const struct Closer {
          int fd;
          ~Closer() { ::close(fd); }
        } closer{fd};
        // Only the pages asked for: the kernel's read-ahead would bring in (when the file is
        // not cached) up to a quarter of a megabyte of a report for its first 16 KB.
        (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
        text.clear();
        const bool longer = append_from(fd, 0, head, text, origin);
        const auto rest = [&](std::string& t) {
          if (!longer) return false;
          append_from(fd, t.size(), SIZE_MAX, t, origin);
          head = std::min(head * 4, kLargestHead);
          return true;
        };
        nodes[i] = summary_of_head(text, rest, origin, table, previous);
        previous = &nodes[i].fingerprint;
        nodes[i].origin = paths[i];
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), 16, paths.size()});
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return nodes;
}

NodeFault node_fault(const topo::FaultFinding& f) {
  NodeFault n;
  n.kind = topo::fault_kind_name(f.kind);
  n.severity = topo::fault_severity_name(f.severity);
  n.bdf = f.bdf;
  n.device = f.device;
  n.xid = f.xid;
  n.count = static_cast<int>(std::min<uint64_t>(f.count, 2147483647u));
  n.words = f.words;
  if (f.xid != 0) n.when = f.when;
  return n;
}

NodeSummary missing_node(int rank, const std::string& why) {
  NodeSummary s;
  s.node = "rank" + std::to_string(rank);
  s.rank = rank;
  s.status = NodeStatus::Missing;
  s.errors.push_back(why);
  return s;
}

}  // namespace gdsb::cluster
