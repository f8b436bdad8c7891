// Optional values in the snapshot's JSON (snapshot_io.cpp, snapshot_faults.cpp): nullopt is
// written as null and read back from null or an absent key (a file older than the field).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace gdsb::topo::detail {

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <class T>
std::optional<T> get_opt(const nlohmann::json& j, const char* k) {
  if (!j.contains(k) || j[k].is_null()) return std::nullopt;
  return j[k].get<T>();
}

}  // namespace gdsb::topo::detail
