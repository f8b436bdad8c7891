// Loading and validating gdsbench documents (io, topo, p2p, compare, doctor, cluster). Every error names
// the file and what is wrong: gdsb::RuntimeError when the file cannot be read, is not
// JSON or has invalid fields (exit 1); gdsb::UsageError when it is a valid file of a kind
// or version the caller cannot use (exit 2).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gdsb/result.hpp"

namespace gdsb::report {

enum class DocKind { Io, Topo, P2p, Compare, Doctor, Cluster };

std::string_view kind_name(DocKind k);    // "io", "topo", "p2p", "compare", "doctor", "cluster"
std::string_view schema_name(DocKind k);  // "gdsbench.io/1", ...

struct Document {
  std::string path;  // where it came from, for messages ("<memory>" when parsed from text)
  DocKind kind = DocKind::Io;
  nlohmann::json json;
};

// Reads, parses, detects the kind from "schema" and validates the fields this tool uses.
Document load_document(const std::string& path);
Document parse_document(std::string_view text, const std::string& name);

// Kind from the "schema" key; UsageError for a foreign or newer schema.
DocKind detect_kind(const nlohmann::json& doc, const std::string& name);

// Structural checks of the fields the reports read; RuntimeError naming the field.
void validate_document(const Document& doc);

// Whether the document carries gdsbench.io/1 runs (io, and doctor documents, whose runs
// are the measurements the diagnosis used): compare and gate read them alike.
bool has_io_runs(DocKind k);

// The runs of an io (or doctor) document, parsed with libgdsbench's from_json.
std::vector<RunResult> io_runs(const Document& doc);

// Throws UsageError unless the document is of the wanted kind.
void require_kind(const Document& doc, DocKind wanted, std::string_view command);

}  // namespace gdsb::report
