// The one reader of a summary block: nlohmann's public SAX events (through scan_json,
// json_scan.hpp) straight into a NodeSummary. Building a JSON document first and converting it after (the former route)
// allocated every key and value twice and was most of the time of aggregating 10,000
// node reports (docs/PERFORMANCE.md).
#include <nlohmann/json.hpp>

#include "gdsb/cluster/json_scan.hpp"
#include "gdsb/cluster/summary.hpp"
#include "gdsb/error.hpp"
#include "summary_fields.hpp"

namespace gdsb::cluster {
namespace {

using nlohmann::json;

// What the parser stands in: a container and, in objects, the last key read.
enum class In {
  Root,
  Summary,
  Hardware,
  Errors,
  Checks,
  Check,
  Faults,
  Fault,
  GpuMetrics,
  GpuSeries,
  NodeMetrics,
  Waived,
  Fingerprint,
  Storage,  // the shared-storage object: kept as JSON, read by rank_storage_from_json()
  Skip
};

struct Frame {
  In in;
  std::string key;  // objects: the key of the value that comes next
  std::vector<std::optional<double>>* series = nullptr;  // GpuSeries: where its values go
};

// One value event, as the handlers below see it; Object and Array are containers met
// where the reader takes them for a value (to be named, or skipped).
struct Scalar {
  enum class Type { Null, Boolean, Number, String, Object, Array } type;
  double number = 0;
  const std::string* text = nullptr;
  bool whole = false;  // a non-negative integer, exactly `u`
  uint64_t u = 0;
  bool flag = false;   // a boolean's value
};

const char* type_words(Scalar::Type t) {
  switch (t) {
    case Scalar::Type::Null:
      return "null";
    case Scalar::Type::Boolean:
      return "a boolean";
    case Scalar::Type::Number:
      return "a number";
    case Scalar::Type::String:
      return "a string";
    case Scalar::Type::Object:
      return "an object";
    case Scalar::Type::Array:
      return "an array";
  }
  return "?";
}

// The containers of a summary, by key; In::Skip for any other key.
In container_of(const std::string& k) {
  using namespace summary_fields;
  static const std::pair<const char*, In> containers[] = {
      {kHardware, In::Hardware},        {kErrors, In::Errors},
      {kFailingChecks, In::Checks},     {kGpuMetrics, In::GpuMetrics},
      {kNodeMetrics, In::NodeMetrics},  {kWaived, In::Waived},
      {kFingerprint, In::Fingerprint},  {kStorage, In::Storage},
      {kFaults, In::Faults}};
  for (const auto& [name, in] : containers)
    if (k == name) return in;
  return In::Skip;
}
bool is_array(In in) { return in == In::Errors || in == In::Checks || in == In::Faults; }

class SummaryReader final : public nlohmann::json_sax<json> {
 public:
  // bare: the text is a summary itself (what a rank sends), not a node report.
  SummaryReader(NodeSummary& s, bool bare, const FingerprintTexts* like) : s_(s), bare_(bare), like_(like) {}

  bool null() override { return scalar({Scalar::Type::Null}); }
  bool boolean(bool b) override { return scalar({Scalar::Type::Boolean, 0, nullptr, false, 0, b}); }
  bool number_integer(number_integer_t v) override {
    return scalar({Scalar::Type::Number, static_cast<double>(v), nullptr, v >= 0, static_cast<uint64_t>(v >= 0 ? v : 0)});
  }
  bool number_unsigned(number_unsigned_t v) override {
    return scalar({Scalar::Type::Number, static_cast<double>(v), nullptr, true, v});
  }
  bool number_float(number_float_t v, const string_t&) override {
    return scalar({Scalar::Type::Number, v});
  }
  bool string(string_t& v) override { return scalar({Scalar::Type::String, 0, &v}); }
  bool binary(binary_t&) override { return scalar({Scalar::Type::Null}); }  // not in JSON text
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    stack_.back().key.assign(k);  // assigned, not moved: the lexer keeps its buffer
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const json::exception&) override {
    return false;
  }

  bool complete() const { return complete_; }
  bool schema_is_node() const { return bare_ || schema_ == kNodeSchema; }
  bool has_node() const { return has_node_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  // "summary.hardware.gpus", "summary.failing_checks[].id": where the parser stands.
  std::string where() const {
    std::string w = "summary";
    for (std::size_t i = 1; i < stack_.size(); ++i) {
      const In in = stack_[i].in;
      if (is_array(in) || in == In::GpuSeries)
        w += "[]";
      else
        w += "." + stack_[i].key;
    }
    return w;
  }
  // A report that is not an object is no node report (summarize() says so); a bare summary
  // that is not one is malformed.
  bool not_an_object() { return bare_ ? fail("the summary is not a JSON object") : false; }
  bool wrong(const char* wanted, const char* found) {
    return fail(where() + ": expected " + std::string(wanted) + ", found " + found);
  }

  bool open(bool object) {
    if (stack_.empty()) {
      if (!object) return not_an_object();
      stack_.push_back({In::Root, bare_ ? "summary" : ""});
      if (bare_) stack_.push_back({In::Summary, {}});
      return true;
    }
    Frame& f = stack_.back();
    const std::string& k = f.key;
    if (f.in == In::Storage) {  // a container inside the storage object
      nlohmann::json& into = storage_put(object ? json::object() : json::array());
      storage_.push_back(&into);
      stack_.push_back({In::Storage, {}});
      return true;
    }
    if (f.in == In::Summary && k == summary_fields::kStorage) {
      if (!object) return wrong("an object", "an array");
      storage_root_ = json::object();
      storage_.assign(1, &storage_root_);
      stack_.push_back({In::Storage, {}});
      return true;
    }
    // A container where a value belongs goes to scalar(), which names it or skips it.
    const Scalar as_value{object ? Scalar::Type::Object : Scalar::Type::Array};
    In next = In::Skip;
    switch (f.in) {
      case In::Root:
        // Only after the node schema: another document's "summary" is not read as ours.
        if (k == "summary" && schema_ == kNodeSchema && object) next = In::Summary;
        break;
      case In::Summary:
        next = container_of(k);
        if (next != In::Skip && is_array(next) == object) next = In::Skip;  // the wrong kind
        break;
      case In::Checks:
        if (!object) break;
        s_.failing_checks.emplace_back();
        next = In::Check;
        break;
      case In::Faults:
        if (!object) break;
        s_.faults.emplace_back();
        next = In::Fault;
        break;
      case In::GpuMetrics: {
        if (object) break;
        auto& series = s_.gpu_metrics[k];
        series.clear();
        stack_.push_back({In::GpuSeries, {}, &series});
        return true;
      }
      default:
        break;
    }
    if (next == In::Skip && !scalar(as_value)) return false;
    stack_.push_back({next, {}});
    return true;
  }

  bool close() {
    const In was = stack_.back().in;
    stack_.pop_back();
    if (was == In::Storage) {
      storage_.pop_back();
      if (storage_.empty()) {  // the storage object is whole
        try {
          s_.storage = rank_storage_from_json(storage_root_, "summary.storage");
        } catch (const Error& e) {
          return fail(e.what());
        }
        storage_root_ = nullptr;
      }
      return true;
    }
    if (was == In::Summary) {
      complete_ = true;
      return false;  // stop here: the rest of the document is never read
    }
    return true;
  }

  bool text(const Scalar& v, std::string& out) {
    if (v.type != Scalar::Type::String) return wrong("a string", type_words(v.type));
    out.assign(*v.text);
    return true;
  }
  bool count(const Scalar& v, int& out) {
    if (v.type != Scalar::Type::Number) return wrong("a number", type_words(v.type));
    const auto n = summary_fields::to_count(v.number);
    if (!n) return fail(where() + ": expected " + summary_fields::kCountWanted + ", found " +
                        summary_fields::number_words(v.number));
    out = *n;
    return true;
  }
  // A plain field of the summary's top level or its hardware (summary_fields.hpp).
  bool field(summary_fields::Group group, const std::string& k, const Scalar& v) {
    const summary_fields::Field* f = summary_fields::find_field(group, k);
    if (f == nullptr) return true;  // a field this version does not know
    if (k == summary_fields::kRequired) has_node_ = true;
    return f->text != nullptr ? text(v, s_.*f->text) : count(v, s_.*f->count);
  }

  bool scalar(const Scalar& v) {
    if (stack_.empty()) return not_an_object();
    Frame& f = stack_.back();
    const std::string& k = f.key;
    switch (f.in) {
      case In::Root:
        if (k == "schema" && v.type == Scalar::Type::String) schema_ = *v.text;
        if (k == "summary" && schema_ == kNodeSchema)
          return fail(std::string("summary: expected an object, found ") + type_words(v.type));
        return true;
      case In::Summary:
        if (k == summary_fields::kStatus) {
          std::string st;
          if (!text(v, st)) return false;
          s_.status = summary_fields::status_from_name(st);
          return true;
        }
        if (const In c = container_of(k); c != In::Skip)
          return wrong(is_array(c) ? "an array" : "an object", type_words(v.type));
        return field(summary_fields::Group::Top, k, v);
      case In::Hardware:
        return field(summary_fields::Group::Hardware, k, v);
      case In::Errors:
        return text(v, s_.errors.emplace_back());
      case In::Checks:
        return wrong("an object", type_words(v.type));
      case In::Check: {
        const summary_fields::CheckField* check_field = summary_fields::find_check_field(k);
        return check_field == nullptr || text(v, s_.failing_checks.back().*check_field->text);
      }
      case In::Faults:
        return wrong("an object", type_words(v.type));
      case In::Fault: {
        const summary_fields::FaultField* ff = summary_fields::find_fault_field(k);
        if (ff == nullptr) return true;  // a field this version does not know
        return ff->text != nullptr ? text(v, s_.faults.back().*ff->text) : count(v, s_.faults.back().*ff->count);
      }
      case In::GpuMetrics:
        return wrong("an array", type_words(v.type));
      case In::GpuSeries:
        f.series->push_back(v.type == Scalar::Type::Number ? std::optional<double>(v.number)
                                                           : std::nullopt);
        return true;
      case In::NodeMetrics:
        if (v.type != Scalar::Type::Number) return wrong("a number", type_words(v.type));
        s_.node_metrics.insert_or_assign(k, v.number);
        return true;
      case In::Waived: {
        if (v.type != Scalar::Type::String) return wrong("a string", type_words(v.type));
        s_.waived.insert_or_assign(k, *v.text);
        return true;
      }
      case In::Fingerprint:
        if (v.type != Scalar::Type::String) return wrong("a string", type_words(v.type));
        // Written in key order: each set() appends two interned ids.
        s_.fingerprint.set(k, *v.text, like_);
        return true;
      case In::Storage:
        switch (v.type) {
          case Scalar::Type::Null: storage_put(nullptr); break;
          case Scalar::Type::Boolean: storage_put(v.flag); break;
          case Scalar::Type::Number: storage_put(number_of(v)); break;
          case Scalar::Type::String: storage_put(*v.text); break;
          default: break;
        }
        return true;
      case In::Skip:
        return true;
    }
    return true;
  }

  // A value inside the storage object: at the key read last, or appended to an array.
  nlohmann::json& storage_put(nlohmann::json v) {
    nlohmann::json& at = *storage_.back();
    if (at.is_array()) return at.emplace_back(std::move(v));
    return at[stack_.back().key] = std::move(v);
  }
  // Byte counts and timestamps keep their type: whole numbers stay integers.
  static nlohmann::json number_of(const Scalar& v) {
    if (v.whole) return nlohmann::json(v.u);
    return nlohmann::json(v.number);
  }

  NodeSummary& s_;
  const bool bare_;
  const FingerprintTexts* like_;
  std::vector<Frame> stack_;
  std::string schema_;
  std::string error_;
  bool complete_ = false;
  bool has_node_ = false;
  nlohmann::json storage_root_;
  std::vector<nlohmann::json*> storage_;  // the open containers of the storage object
};

// The two entry points share this: parse, then say what is wrong with the block.
std::optional<NodeSummary> read_block(std::string_view text, const std::string& origin, bool bare,
                                      const std::shared_ptr<TextTable>& table, const FingerprintTexts* like) {
  NodeSummary s;
  if (table) s.fingerprint = FingerprintTexts(table);
  SummaryReader reader(s, bare, like);
  scan_json(text, reader);  // nlohmann's events, without its lexer's time (json_scan.hpp)
  if (!reader.error().empty())
    throw UsageError(origin + ": invalid gdsb-cluster node report: " + reader.error());
  if (!reader.complete() || !reader.schema_is_node()) return std::nullopt;
  if (!reader.has_node())
    throw UsageError(origin + ": invalid gdsb-cluster node report: the summary has no \"" +
                     summary_fields::kRequired + "\"");
  s.fingerprint.shrink_to_fit();
  return s;
}

}  // namespace

std::optional<NodeSummary> read_summary_block(std::string_view text, const std::string& origin,
                                              const std::shared_ptr<TextTable>& table,
                                              const FingerprintTexts* like) {
  return read_block(text, origin, false, table, like);
}

NodeSummary summary_from_text(std::string_view text, const std::string& origin,
                              const std::shared_ptr<TextTable>& table) {
  std::optional<NodeSummary> s = read_block(text, origin, true, table, nullptr);
  if (!s) throw UsageError(origin + ": not a gdsb-cluster node summary (cut short, or not JSON)");
  return std::move(*s);
}

}  // namespace gdsb::cluster
