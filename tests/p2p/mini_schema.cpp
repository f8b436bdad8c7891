#include "mini_schema.hpp"

namespace gdsb::p2p::testing {

namespace {

using nlohmann::json;

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}

class Checker {
 public:
  explicit Checker(const json& root) : root_(root) {}

  void check(const json& s, const json& v, const std::string& path, std::vector<std::string>& out) {
    if (s.contains("$ref")) {
      const std::string ref = s["$ref"];  // "#/$defs/name"
      check(root_.at(json::json_pointer(ref.substr(1))), v, path, out);
      return;
    }
    if (s.contains("anyOf")) {
      bool any = false;
      for (const json& alt : s["anyOf"]) {
        std::vector<std::string> errs;
        check(alt, v, path, errs);
        if (errs.empty()) any = true;
      }
      if (!any) out.push_back(path + ": matches no alternative of anyOf");
      return;
    }
    if (s.contains("type")) {
      const json& t = s["type"];
      bool ok = false;
      if (t.is_string()) ok = has_type(v, t);
      for (const json& one : t.is_array() ? t : json::array()) ok = ok || has_type(v, one);
      if (!ok) {
        out.push_back(path + ": type is not " + t.dump());
        return;
      }
    }
    if (s.contains("enum")) {
      bool found = false;
      for (const json& e : s["enum"]) found = found || e == v;
      if (!found) out.push_back(path + ": " + v.dump() + " is not one of " + s["enum"].dump());
    }
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>()) {
      out.push_back(path + ": below minimum");
    }
    if (v.is_object()) {
      for (const json& r : s.value("required", json::array())) {
        if (!v.contains(r.get<std::string>())) out.push_back(path + ": missing " + r.get<std::string>());
      }
      const json props = s.value("properties", json::object());
      for (const auto& [key, value] : v.items()) {
        if (props.contains(key)) {
          check(props[key], value, path + "/" + key, out);
        } else if (s.contains("additionalProperties")) {
          const json& extra = s["additionalProperties"];
          if (extra.is_boolean() && !extra.get<bool>()) out.push_back(path + ": unexpected " + key);
          if (extra.is_object()) check(extra, value, path + "/" + key, out);
        }
      }
    }
    if (v.is_array() && s.contains("items")) {
      for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], path + "/" + std::to_string(i), out);
    }
  }

 private:
  const json& root_;
};

}  // namespace

std::vector<std::string> validate(const json& schema, const json& doc) {
  std::vector<std::string> out;
  Checker(schema).check(schema, doc, "", out);
  return out;
}

}  // namespace gdsb::p2p::testing
