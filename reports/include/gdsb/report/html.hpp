// Self-contained HTML reports: one file with styles, script, charts (inline SVG) and the
// document itself embedded as <script type="application/json" id="gdsb-data">, so the
// page is a view of that JSON and opens offline. Every string taken from the document is
// escaped; the embedded JSON cannot close its script element.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gdsb::report {

// The kind is taken from doc["schema"] (io, topo, p2p or compare). Throws gdsb::UsageError
// for an unknown schema and gdsb::RuntimeError for invalid fields; validate first with
// parse_document() when the input comes from a file.
std::string render_html(const nlohmann::json& doc);

// render_html, then write_output_atomic: nothing is written when rendering fails.
void write_html(const nlohmann::json& doc, const std::string& path, bool allow_overwrite);

// Text for HTML element content and quoted attribute values.
std::string html_escape(std::string_view text);
// JSON text safe inside <script type="application/json">: '<', '>' and '&' become \u003c,
// \u003e, \u0026 (valid JSON, identical value once parsed), so "</script>" cannot appear.
std::string json_for_script(const nlohmann::json& doc);

}  // namespace gdsb::report
