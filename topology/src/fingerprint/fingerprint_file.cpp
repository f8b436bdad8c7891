// The fingerprint file (fingerprint_file.hpp): typed facts to JSON and back, and the key and
// value texts of /1 files and gdsb-cluster node reports.
#include "gdsb/topo/fingerprint_file.hpp"

#include <array>
#include <cstdio>
#include <fstream>

#include "gdsb/error.hpp"
#include "gdsb/topo/pci_config.hpp"

namespace gdsb::topo {
namespace {

using nlohmann::json;

// The names facts and kinds have in the file (never display words).
constexpr std::array<std::pair<Fact, const char*>, 18> kFactNames{{{Fact::Present, "present"},
                                                                  {Fact::Device, "device"},
                                                                  {Fact::Link, "link"},
                                                                  {Fact::Acs, "acs"},
                                                                  {Fact::NumaNode, "numa_node"},
                                                                  {Fact::Driver, "driver"},
                                                                  {Fact::Bar1, "bar1"},
                                                                  {Fact::Vbios, "vbios"},
                                                                  {Fact::NvlinkLinks, "nvlink_links"},
                                                                  {Fact::Iommu, "iommu"},
                                                                  {Fact::Kernel, "kernel"},
                                                                  {Fact::KernelCommandLine, "kernel_command_line"},
                                                                  {Fact::NvidiaFs, "nvidia_fs"},
                                                                  {Fact::NvidiaDriver, "nvidia_driver"},
                                                                  {Fact::CudaDriver, "cuda_driver"},
                                                                  {Fact::RdmaLinkLayer, "rdma_link_layer"},
                                                                  {Fact::RdmaState, "rdma_state"},
                                                                  {Fact::RdmaRate, "rdma_rate"}}};
constexpr std::array<std::pair<FactKind, const char*>, 5> kKindNames{
    {{FactKind::Node, "node"}, {FactKind::Gpu, "gpu"}, {FactKind::Nvme, "nvme"}, {FactKind::Nic, "nic"}, {FactKind::Port, "port"}}};

template <class E, size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [v, name] : table)
    if (v == e) return name;
  return "";
}
template <class E, size_t N>
std::optional<E> from_name(const std::array<std::pair<E, const char*>, N>& table, std::string_view name) {
  for (const auto& [v, n] : table)
    if (name == n) return v;
  return std::nullopt;
}

// Which value type each fact has.
enum class ValueType { Text, Integer, Presence, Ids, Link, Acs, Mebibytes, Gbps };
ValueType value_type(Fact f) {
  switch (f) {
    case Fact::Present: return ValueType::Presence;
    case Fact::Device: return ValueType::Ids;
    case Fact::Link: return ValueType::Link;
    case Fact::Acs: return ValueType::Acs;
    case Fact::NumaNode:
    case Fact::NvlinkLinks: return ValueType::Integer;
    case Fact::Bar1: return ValueType::Mebibytes;
    case Fact::RdmaRate: return ValueType::Gbps;
    default: return ValueType::Text;
  }
}

json value_json(const FactValue& v) {
  struct ToJson {
    json operator()(const std::string& s) const { return s; }
    json operator()(int64_t n) const { return n; }
    json operator()(const Presence&) const { return true; }
    json operator()(const PciIds& p) const { return {{"vendor", hex4(p.vendor)}, {"device", hex4(p.device)}}; }
    json operator()(const LinkFact& l) const {
      json j{{"width", l.width}, {"max_width", l.max_width}};
      if (l.gts) j["gts"] = *l.gts;
      return j;
    }
    json operator()(const AcsControl& a) const { return {{"ctl", a.ctl}}; }
    json operator()(const Mebibytes& m) const { return {{"mib", m.mib}}; }
    json operator()(const Gbps& g) const { return {{"gbps", g.gbps}}; }
  };
  return std::visit(ToJson{}, v);
}

std::optional<uint16_t> hex16_of(const json& j) {
  if (!j.is_string()) return std::nullopt;
  const std::string s = j.get<std::string>();
  unsigned v = 0;
  char tail = 0;
  if (s.size() != 4 || std::sscanf(s.c_str(), "%4x%c", &v, &tail) != 1) return std::nullopt;
  return static_cast<uint16_t>(v);
}

std::optional<FactValue> value_from_json(Fact f, const json& j) {
  switch (value_type(f)) {
    case ValueType::Text:
      if (j.is_string()) return j.get<std::string>();
      break;
    case ValueType::Integer:
      if (j.is_number_integer()) return j.get<int64_t>();
      break;
    case ValueType::Presence:
      if (j == true) return Presence{};
      break;
    case ValueType::Ids:
      if (j.is_object()) {
        const auto v = hex16_of(j.value("vendor", json())), d = hex16_of(j.value("device", json()));
        if (v && d) return PciIds{*v, *d};
      }
      break;
    case ValueType::Link:
      if (j.is_object() && j.value("width", json()).is_number_integer() &&
          j.value("max_width", json()).is_number_integer()) {
        LinkFact l;
        l.width = j["width"].get<int>();
        l.max_width = j["max_width"].get<int>();
        if (j.contains("gts")) {
          if (!j["gts"].is_number()) break;
          l.gts = j["gts"].get<double>();
        }
        return l;
      }
      break;
    case ValueType::Acs:
      if (j.is_object() && j.value("ctl", json()).is_number_unsigned() && j["ctl"].get<uint64_t>() <= 0xffff)
        return AcsControl{j["ctl"].get<uint16_t>()};
      break;
    case ValueType::Mebibytes:
      if (j.is_object() && j.value("mib", json()).is_number_unsigned()) return Mebibytes{j["mib"].get<uint64_t>()};
      break;
    case ValueType::Gbps:
      if (j.is_object() && j.value("gbps", json()).is_number() && j["gbps"].get<double>() > 0)
        return Gbps{j["gbps"].get<double>()};
      break;
  }
  return std::nullopt;
}

bool is_port_fact(Fact f) { return f == Fact::RdmaLinkLayer || f == Fact::RdmaState || f == Fact::RdmaRate; }

json key_json(const FactKey& k) {
  json j{{"kind", name_of(kKindNames, k.kind)}, {"fact", name_of(kFactNames, k.fact)}};
  if (k.bdf.set) j["bdf"] = k.bdf.text();
  if (k.port > 0) {
    j["port"] = k.port;
    if (!k.rdma_dev.empty()) j["rdma_dev"] = k.rdma_dev;
  }
  return j;
}

FactKey key_from_json(const json& j, const std::string& what) {
  const auto kind = from_name(kKindNames, j.value("kind", ""));
  const auto fact = from_name(kFactNames, j.value("fact", ""));
  if (!kind || !fact) throw UsageError(what + ": unknown fact " + j.dump() + "; written by a newer gdsbench?");
  FactKey k{*kind, {}, *fact};
  if (*kind != FactKind::Node) {
    const auto bdf = PciAddress::parse(j.value("bdf", ""));
    if (!bdf) throw UsageError(what + ": fact " + j.dump() + " has no PCI address (\"bdf\": \"0000:19:00.0\")");
    k.bdf = *bdf;
  }
  if (is_port_fact(*fact)) {
    const json port = j.value("port", json());
    if (*kind != FactKind::Nic || !port.is_number_integer() || port.get<int>() < 1)
      throw UsageError(what + ": fact " + j.dump() + " is an RDMA port's and has no port number (\"port\": 1) of a NIC");
    k.port = port.get<int>();
    if (j.contains("rdma_dev") && j["rdma_dev"].is_string()) k.rdma_dev = j["rdma_dev"].get<std::string>();
  }
  return k;
}

// /1 and node-report texts. "GPU 0000:19:00.0 link" -> key; a node fact is its words.
std::optional<FactKey> key_from_text(const std::string& text) {
  for (const auto& [kind, unused] : kKindNames) {
    if (kind == FactKind::Node) continue;
    const std::string head = kind_text(kind) + " ";
    if (text.rfind(head, 0) != 0) continue;
    const auto bdf = PciAddress::parse(std::string_view(text).substr(head.size(), 12));
    if (!bdf) return std::nullopt;
    if (text.size() == head.size() + 12) return FactKey{kind, *bdf, Fact::Present};
    if (text[head.size() + 12] != ' ') return std::nullopt;
    std::string fact = text.substr(head.size() + 13);
    FactKey k{kind, *bdf, Fact::Present};
    if (fact.rfind("(", 0) == 0) {  // "(mlx5_0) port 1 rate"
      const auto close = fact.find(") ");
      if (close == std::string::npos) return std::nullopt;
      k.rdma_dev = fact.substr(1, close - 1);
      fact = fact.substr(close + 2);
    }
    int port = 0, used = 0;
    if (std::sscanf(fact.c_str(), "port %d %n", &port, &used) == 1 && used > 0 && port > 0) {
      k.port = port;
      fact = fact.substr(static_cast<size_t>(used));
    } else if (!k.rdma_dev.empty()) {
      return std::nullopt;
    }
    for (const auto& [f, name] : kFactNames)
      if (f != Fact::Present && fact_text(f) == fact && is_port_fact(f) == (k.port > 0)) {
        k.fact = f;
        return k;
      }
    return std::nullopt;
  }
  for (const auto& [f, name] : kFactNames)
    if (fact_text(f) == text && value_type(f) == ValueType::Text && f != Fact::Driver && f != Fact::Vbios)
      return FactKey{FactKind::Node, {}, f};
  return std::nullopt;
}

std::optional<FactValue> value_from_text(Fact f, const std::string& t) {
  int width = 0;
  double gts = 0;
  unsigned a = 0, b = 0;
  unsigned long long n = 0;
  char tail = 0;
  switch (value_type(f)) {
    case ValueType::Text: return t;
    case ValueType::Integer:
      if (std::sscanf(t.c_str(), "%llu%c", &n, &tail) == 1) return static_cast<int64_t>(n);
      break;
    case ValueType::Presence:
      if (t == "present") return Presence{};
      break;
    case ValueType::Ids:
      if (t.size() == 9 && std::sscanf(t.c_str(), "%4x:%4x%c", &a, &b, &tail) == 2)
        return PciIds{static_cast<uint16_t>(a), static_cast<uint16_t>(b)};
      break;
    case ValueType::Link: {
      if (t == "down") return LinkFact{};
      // /1 wrote the width trained now and no maximum: read as trained at full width.
      if (std::sscanf(t.c_str(), "Gen%u x%d%c", &a, &width, &tail) == 2) {
        if (const auto g = pcie_generation(static_cast<int>(a))) return LinkFact{g->gts, width, width};
      } else if (std::sscanf(t.c_str(), "Gen%u x%d of x%u%c", &a, &width, &b, &tail) == 3) {
        if (const auto g = pcie_generation(static_cast<int>(a))) return LinkFact{g->gts, width, static_cast<int>(b)};
      } else if (std::sscanf(t.c_str(), "%lfGT/s x%d%c", &gts, &width, &tail) == 2) {
        return LinkFact{gts, width, width};
      }
      break;
    }
    case ValueType::Acs: {
      if (t == "off") return AcsControl{0};
      uint16_t ctl = 0;
      size_t start = 0;
      while (start <= t.size()) {
        const size_t end = std::min(t.find('+', start), t.size());
        const std::string word = t.substr(start, end - start);
        bool known = false;
        for (uint16_t bit = 1; bit <= kAcsDt; bit = static_cast<uint16_t>(bit << 1))
          if (acs_words(bit) == word) ctl = static_cast<uint16_t>(ctl | bit), known = true;
        if (!known) return std::nullopt;
        start = end + 1;
      }
      return AcsControl{ctl};
    }
    case ValueType::Mebibytes:
      if (std::sscanf(t.c_str(), "%llu MiB%c", &n, &tail) == 1) return Mebibytes{n};
      break;
    case ValueType::Gbps:
      if (std::sscanf(t.c_str(), "%lf Gb/s%c", &gts, &tail) == 1 && gts > 0) return Gbps{gts};
      break;
  }
  return std::nullopt;
}

}  // namespace

json facts_json(const FactMap& f) {
  json list = json::array();
  for (const auto& [k, v] : f) {
    json j = key_json(k);
    j["value"] = value_json(v);
    j["text"] = key_text(k) + " " + value_text(v);
    list.push_back(std::move(j));
  }
  return list;
}

FactMap facts_from_json(const json& facts, const std::string& what) {
  if (!facts.is_array()) throw UsageError(what + ": \"facts\" is not a list");
  FactMap f;
  for (const json& j : facts) {
    if (!j.is_object()) throw UsageError(what + ": a fact is not an object: " + j.dump());
    const FactKey k = key_from_json(j, what);
    auto v = value_from_json(k.fact, j.value("value", json()));
    if (!v) throw UsageError(what + ": fact \"" + key_text(k) + "\" has no value of its type: " + j.dump());
    f[k] = std::move(*v);
  }
  return f;
}

json fingerprint_json(const Fingerprint& f) {
  json unreadable = json::array();
  for (const auto& [k, u] : f.unreadable) {
    json j = key_json(k);
    j["why"] = u.why;
    j["chosen"] = u.chosen;
    unreadable.push_back(std::move(j));
  }
  return {{"facts", facts_json(f.facts)}, {"unreadable", unreadable}};
}

Fingerprint fingerprint_from_json(const json& j, const std::string& what) {
  Fingerprint f;
  f.facts = facts_from_json(j.at("facts"), what);
  for (const json& u : j.at("unreadable"))
    f.unreadable[key_from_json(u, what)] = Unreadable{u.at("why").get<std::string>(), u.at("chosen").get<bool>()};
  return f;
}

std::map<std::string, std::string> fact_texts(const FactMap& f) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : f) out[key_text(k)] = value_text(v);
  return out;
}

std::vector<std::string> known_gpus(const FactMap& known_good) {
  std::vector<std::string> out;
  for (const auto& [key, value] : known_good)
    if (key.kind == FactKind::Gpu && key.is_presence()) out.push_back(key.bdf.text());
  return out;
}

FactMap facts_from_texts(const std::map<std::string, std::string>& texts, const std::string& what) {
  FactMap f;
  for (const auto& [k, v] : texts) {
    const auto key = key_from_text(k);
    if (!key) throw UsageError(what + ": unknown fact \"" + k + "\"; written by a newer gdsbench?");
    if (v == "not available") continue;  // older files wrote this for a fact NVML did not give
    auto value = value_from_text(key->fact, v);
    if (!value) throw UsageError(what + ": fact \"" + k + "\" has a value it cannot have: \"" + v + "\"");
    f[*key] = std::move(*value);
  }
  return f;
}

json fingerprint_document(const FactMap& f, const FingerprintOrigin& origin) {
  const DeviceCounts c = count_devices(f);
  json doc;
  doc["schema"] = kFingerprintSchema;
  doc["tool"] = {{"name", origin.tool}, {"version", origin.version}};
  doc["host"] = origin.host;
  doc["source"] = origin.source;
  doc["created"] = origin.created;
  if (!origin.note.empty()) doc["note"] = origin.note;
  doc["counts"] = {{"gpus", c.gpus}, {"drives", c.drives}, {"data_nics", c.data_nics}};
  doc["facts"] = facts_json(f);
  return doc;
}

FactMap fingerprint_from_document(const json& doc, const std::string& what) {
  const std::string hint = "; write one with gdsb-topo --save-fingerprint FILE on the node when it is known to be good";
  if (!doc.is_object() || doc.value("schema", json()).is_string() == false)
    throw UsageError(what + ": not a gdsbench fingerprint (no \"schema\")" + hint);
  const std::string schema = doc.at("schema").get<std::string>();
  if (schema == kFingerprintSchema) return facts_from_json(doc.value("facts", json()), what);
  if (schema != kFingerprintSchemaV1)
    throw UsageError(what + ": schema is " + schema + ", expected " + kFingerprintSchema + hint);
  const json facts = doc.value("facts", json());
  if (!facts.is_object()) throw UsageError(what + ": no \"facts\" object" + hint);
  std::map<std::string, std::string> texts;
  for (const auto& [k, v] : facts.items()) {
    if (!v.is_string()) throw UsageError(what + ": fact \"" + k + "\" is not a string");
    texts[k] = v.get<std::string>();
  }
  return facts_from_texts(texts, what);
}

FactMap load_fingerprint(const std::string& path, const std::string& option) {
  const std::string what = option + " " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(what + ": cannot open the file");
  const json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded()) throw UsageError(what + ": not JSON; pass a file written by gdsb-topo --save-fingerprint");
  return fingerprint_from_document(doc, what);
}

}  // namespace gdsb::topo
