#include "gdsb/report/document.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gdsb/error.hpp"

namespace gdsb::report {
namespace {

using nlohmann::json;

struct KindInfo {
  DocKind kind;
  std::string_view name;
  std::string_view family;  // schema without the version
};

constexpr std::array<KindInfo, 6> kKinds{{{DocKind::Io, "io", "gdsbench.io"},
                                          {DocKind::Topo, "topo", "gdsbench.topo"},
                                          {DocKind::P2p, "p2p", "gdsbench.p2p"},
                                          {DocKind::Compare, "compare", "gdsbench.compare"},
                                          {DocKind::Doctor, "doctor", "gdsbench.doctor"},
                                          {DocKind::Cluster, "cluster", "gdsbench.cluster"}}};
constexpr int kSupportedVersion = 1;

[[noreturn]] void invalid(const std::string& name, const std::string& where,
                          const std::string& what) {
  throw RuntimeError(name + ": invalid document: " + where + " " + what);
}

void need(const json& j, const char* key, json::value_t type, const std::string& name,
          const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    invalid(name, where, std::string("has no \"") + key + "\"");
  const auto& v = j.at(key);
  // number_float stands for any number, number_unsigned for a whole number >= 0.
  const bool ok = type == json::value_t::number_float      ? v.is_number()
                  : type == json::value_t::number_unsigned ? v.is_number_unsigned() ||
                                                                 (v.is_number_integer() && v.get<long long>() >= 0)
                                                           : v.type() == type;
  if (!ok) {
    const char* expected =
        type == json::value_t::number_unsigned ? "a whole number >= 0" : json(type).type_name();
    invalid(name, where + "." + key, std::string("is ") + v.type_name() + ", expected " + expected);
  }
}

void need_string(const json& j, const char* key, const std::string& name,
                 const std::string& where) {
  need(j, key, json::value_t::string, name, where);
}

std::string str_of(const json& j, const char* key) {
  return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : "";
}

void validate_common(const json& doc, const std::string& name) {
  if (doc.contains("context") && !doc.at("context").is_object()) {
    invalid(name, "context", "is not an object");
  }
  if (doc.contains("argv") && !doc.at("argv").is_array()) invalid(name, "argv", "is not an array");
}

void validate_topo(const json& doc, const std::string& name) {
  need(doc, "devices", json::value_t::array, name, "document");
  for (std::size_t i = 0; i < doc.at("devices").size(); ++i) {
    const auto& d = doc.at("devices").at(i);
    const std::string where = "devices[" + std::to_string(i) + "]";
    need_string(d, "bdf", name, where);
    need_string(d, "role", name, where);
    if (d.contains("parent") && !d.at("parent").is_null() && !d.at("parent").is_string()) {
      invalid(name, where + ".parent", "is neither a BDF string nor null");
    }
  }
  if (!doc.contains("checks")) return;
  need(doc, "checks", json::value_t::array, name, "document");
  for (std::size_t i = 0; i < doc.at("checks").size(); ++i) {
    const auto& c = doc.at("checks").at(i);
    const std::string where = "checks[" + std::to_string(i) + "]";
    need_string(c, "id", name, where);
    need_string(c, "verdict", name, where);
    const auto v = c.at("verdict").get<std::string>();
    if (v != "pass" && v != "warn" && v != "fail" && v != "waived") {
      invalid(name, where + ".verdict", "is \"" + v + "\", expected pass, warn, fail or waived");
    }
  }
}

void validate_matrix(const json& m, const std::string& name, const std::string& where) {
  need(m, "rows", json::value_t::array, name, where);
  need(m, "cols", json::value_t::array, name, where);
  need(m, "cells", json::value_t::array, name, where);
  const auto& cells = m.at("cells");
  if (cells.size() != m.at("rows").size()) {
    invalid(name, where + ".cells",
            "has " + std::to_string(cells.size()) + " rows but rows lists " +
                std::to_string(m.at("rows").size()));
  }
  for (const auto& row : cells) {
    if (!row.is_array() || row.size() != m.at("cols").size()) {
      invalid(name, where + ".cells", "has a row whose length differs from cols");
    }
  }
}

void validate_p2p(const json& doc, const std::string& name) {
  need(doc, "gpus", json::value_t::array, name, "document");
  if (doc.contains("matrices")) {
    need(doc, "matrices", json::value_t::object, name, "document");
    for (const auto& [key, m] : doc.at("matrices").items())
      validate_matrix(m, name, "matrices." + key);
  }
  if (doc.contains("measurements") && doc.at("measurements").is_object()) {
    for (const auto& [key, m] : doc.at("measurements").items()) {
      if (m.is_object() && m.contains("cells")) validate_matrix(m, name, "measurements." + key);
    }
  }
}

void validate_compare(const json& doc, const std::string& name) {
  need(doc, "matches", json::value_t::array, name, "document");
  for (std::size_t i = 0; i < doc.at("matches").size(); ++i) {
    need(doc.at("matches").at(i), "metrics", json::value_t::array, name,
         "matches[" + std::to_string(i) + "]");
  }
}

void validate_doctor(const json& doc, const std::string& name) {
  need(doc, "findings", json::value_t::array, name, "document");
  for (std::size_t i = 0; i < doc.at("findings").size(); ++i) {
    const auto& f = doc.at("findings").at(i);
    const std::string where = "findings[" + std::to_string(i) + "]";
    need_string(f, "rule", name, where);
    need_string(f, "confidence", name, where);
  }
}

// What the cluster page reads unconditionally, and the shared_storage object (issue 26)
// that compare and gate read: numbers where they compute, strings where they match.
void validate_cluster(const json& doc, const std::string& name) {
  for (const char* key : {"nodes", "classes", "findings", "odd_nodes"})
    need(doc, key, json::value_t::array, name, "document");
  if (!doc.contains("shared_storage")) return;
  need(doc, "shared_storage", json::value_t::object, name, "document");
  const auto& ss = doc.at("shared_storage");
  need(ss, "points", json::value_t::array, name, "shared_storage");
  const auto number_or_null = [&](const json& j, const char* key, const std::string& where) {
    if (j.contains(key) && !j.at(key).is_null() && !j.at(key).is_number())
      invalid(name, where + "." + key, std::string("is ") + j.at(key).type_name() +
                                           ", expected a number or null");
  };
  for (std::size_t i = 0; i < ss.at("points").size(); ++i) {
    const auto& p = ss.at("points").at(i);
    const std::string where = "shared_storage.points[" + std::to_string(i) + "]";
    need(p, "nodes", json::value_t::number_unsigned, name, where);
    need(p, "mode", json::value_t::number_float, name, where);
    need_string(p, "op", name, where);
    need_string(p, "status", name, where);
    number_or_null(p, "aggregate_gb_s", where);
    number_or_null(p, "window_s", where);
    if (str_of(p, "status") == "ok" && !(p.contains("aggregate_gb_s") && p.at("aggregate_gb_s").is_number()))
      invalid(name, where, "has status ok but no number \"aggregate_gb_s\"");
  }
  if (ss.contains("curves")) {
    need(ss, "curves", json::value_t::array, name, "shared_storage");
    for (std::size_t i = 0; i < ss.at("curves").size(); ++i) {
      const auto& c = ss.at("curves").at(i);
      const std::string where = "shared_storage.curves[" + std::to_string(i) + "]";
      need(c, "nodes", json::value_t::array, name, where);
      need(c, "aggregate_gb_s", json::value_t::array, name, where);
      if (c.at("nodes").size() != c.at("aggregate_gb_s").size())
        invalid(name, where + ".aggregate_gb_s", "has a length other than nodes'");
      if (c.contains("linear_gb_s") && (!c.at("linear_gb_s").is_array() ||
                                        c.at("linear_gb_s").size() != c.at("nodes").size()))
        invalid(name, where + ".linear_gb_s", "is not an array as long as nodes");
    }
  }
  if (ss.contains("gpus_fed")) {
    need(ss, "gpus_fed", json::value_t::object, name, "shared_storage");
    need(ss.at("gpus_fed"), "gpus", json::value_t::number_unsigned, name, "shared_storage.gpus_fed");
    number_or_null(ss.at("gpus_fed"), "demand_per_gpu_gb_s", "shared_storage.gpus_fed");
  }
  if (ss.contains("checkpoint")) {
    need(ss, "checkpoint", json::value_t::object, name, "shared_storage");
    const auto& cp = ss.at("checkpoint");
    for (const char* step : {"save", "load"}) {
      if (!cp.contains(step)) continue;
      const std::string where = std::string("shared_storage.checkpoint.") + step;
      need(cp, step, json::value_t::object, name, "shared_storage.checkpoint");
      need_string(cp.at(step), "status", name, where);
      number_or_null(cp.at(step), "seconds", where);
      number_or_null(cp.at(step), "aggregate_gb_s", where);
    }
  }
}

}  // namespace

bool has_io_runs(DocKind k) { return k == DocKind::Io || k == DocKind::Doctor; }

std::string_view kind_name(DocKind k) { return kKinds.at(static_cast<std::size_t>(k)).name; }

std::string_view schema_name(DocKind k) {
  switch (k) {
    case DocKind::Io:
      return "gdsbench.io/1";
    case DocKind::Topo:
      return "gdsbench.topo/1";
    case DocKind::P2p:
      return "gdsbench.p2p/1";
    case DocKind::Compare:
      return "gdsbench.compare/1";
    case DocKind::Doctor:
      return "gdsbench.doctor/1";
    case DocKind::Cluster:
      return "gdsbench.cluster/1";
  }
  return "?";
}

DocKind detect_kind(const json& doc, const std::string& name) {
  if (!doc.is_object()) {
    throw UsageError(name + ": not a gdsbench document (the top level is " +
                     std::string(doc.type_name()) + ", expected an object with \"schema\")");
  }
  if (!doc.contains("schema") || !doc.at("schema").is_string()) {
    throw UsageError(name +
                     ": not a gdsbench document (no \"schema\" string; expected one of "
                     "gdsbench.io/1, gdsbench.topo/1, gdsbench.p2p/1, gdsbench.compare/1, "
                     "gdsbench.doctor/1, gdsbench.cluster/1)");
  }
  const auto schema = doc.at("schema").get<std::string>();
  const auto slash = schema.rfind('/');
  const std::string family = schema.substr(0, slash);
  for (const auto& k : kKinds) {
    if (family != k.family) continue;
    int version = 0;
    try {
      version = slash == std::string::npos ? 0 : std::stoi(schema.substr(slash + 1));
    } catch (const std::exception&) {
      version = 0;
    }
    if (version == kSupportedVersion) return k.kind;
    throw UsageError(name + ": schema \"" + schema +
                     "\" is a version this gdsb-report does not read (it reads " +
                     std::string(k.family) + "/" + std::to_string(kSupportedVersion) +
                     "); use the gdsb-report that came with the tool that wrote it");
  }
  throw UsageError(
      name + ": unknown schema \"" + schema +
      "\" (expected gdsbench.io/1, gdsbench.topo/1, gdsbench.p2p/1, gdsbench.compare/1, "
      "gdsbench.doctor/1 or gdsbench.cluster/1)");
}

void validate_document(const Document& doc) {
  validate_common(doc.json, doc.path);
  switch (doc.kind) {
    case DocKind::Io:
      (void)io_runs(doc);
      break;
    case DocKind::Topo:
      validate_topo(doc.json, doc.path);
      break;
    case DocKind::P2p:
      validate_p2p(doc.json, doc.path);
      break;
    case DocKind::Compare:
      validate_compare(doc.json, doc.path);
      break;
    case DocKind::Doctor:
      validate_doctor(doc.json, doc.path);
      (void)io_runs(doc);
      break;
    case DocKind::Cluster:
      validate_cluster(doc.json, doc.path);
      break;
  }
}

std::vector<RunResult> io_runs(const Document& doc) {
  need(doc.json, "runs", json::value_t::array, doc.path, "document");
  std::vector<RunResult> runs;
  const auto& arr = doc.json.at("runs");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string where = "runs[" + std::to_string(i) + "]";
    try {
      runs.push_back(arr.at(i).get<RunResult>());
    } catch (const json::exception& e) {
      invalid(doc.path, where, std::string("cannot be read: ") + e.what());
    }
    const auto& r = runs.back();
    if (r.status == RunStatus::Ok && !arr.at(i).contains("result")) {
      invalid(doc.path, where, "has status ok but no \"result\"");
    }
  }
  return runs;
}

Document parse_document(std::string_view text, const std::string& name) {
  Document d;
  d.path = name;
  try {
    d.json = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    throw RuntimeError(name + ": not valid JSON" +
                       (truncated ? " (the file ends too early: truncated?)" : "") + ": " +
                       e.what());
  }
  d.kind = detect_kind(d.json, name);
  validate_document(d);
  return d;
}

Document load_document(const std::string& path) {
  std::error_code ec;
  // An ifstream opens a directory and reads nothing: it would pass for an empty file.
  if (std::filesystem::is_directory(path, ec))
    throw UsageError(path + ": is a directory, not a document (give one of its .json files)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw RuntimeError(path + ": read error: " + std::strerror(errno));
  const std::string text = buf.str();
  if (text.empty()) throw RuntimeError(path + ": the file is empty (an interrupted run?)");
  return parse_document(text, path);
}

void require_kind(const Document& doc, DocKind wanted, std::string_view command) {
  if (doc.kind == wanted || (wanted == DocKind::Io && doc.kind == DocKind::Doctor)) return;
  throw UsageError(doc.path + ": is a " + std::string(schema_name(doc.kind)) + " document; " +
                   std::string(command) + " needs " + std::string(schema_name(wanted)));
}

}  // namespace gdsb::report
