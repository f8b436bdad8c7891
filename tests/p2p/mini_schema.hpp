// A small JSON Schema checker for the keywords docs/schema/*.json use: type, enum,
// required, properties, additionalProperties, items, minimum, anyOf and local $ref.
// Enough to hold the documents to their published schema without a new dependency.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gdsb::p2p::testing {

// Returns the violations, each as "path: what" (empty when the document conforms).
std::vector<std::string> validate(const nlohmann::json& schema, const nlohmann::json& doc);

}  // namespace gdsb::p2p::testing
