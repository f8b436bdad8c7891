// Pieces shared by the HTML views of each document kind. Private to gdsb::report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gdsb::report::html {

using nlohmann::json;

// The whole page around a view's body: head with CSS and CSP, header, nav, embedded data,
// self-check script. nav: (anchor id, title) pairs.
std::string page(const json& doc, const std::string& title, const std::string& verdict_html,
                 const std::vector<std::pair<std::string, std::string>>& nav,
                 const std::string& body);

std::string esc(const std::string& text);
// A value from the document as text: strings as they are, null as "-", others dumped.
std::string text_of(const json& v);
// j[key] is the boolean true (false when absent or of another type).
bool flag(const json& j, const char* key);
// j[key] as a string ("" when absent or null).
std::string str(const json& j, const char* key);
// A <section> with an id and <h2>.
std::string section(const std::string& id, const std::string& title, const std::string& inner);
// A figure holding a chart and its caption.
std::string figure(const std::string& svg, const std::string& caption);
// Scrollable table wrapper; rows are already-escaped HTML cells.
std::string table(const std::vector<std::string>& head,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::string& css_class = "");
// Context block (host, kernel, OS, CPU, times, tool, argv, env, and any other context keys).
std::string context_section(const json& doc);
// A coloured badge: kind is "ok", "bad", "warn", "muted".
std::string badge(const std::string& text, const std::string& kind);

std::string render_io(const json& doc);
// The node section of an io report of gdsb-io --gpus (its "node" object), first on the page.
std::string node_section(const json& node);
std::string render_topo(const json& doc);
std::string render_p2p(const json& doc);
std::string render_compare(const json& doc);
std::string render_doctor(const json& doc);
std::string render_cluster(const json& doc);
std::string render_history(const json& doc);  // gdsbench.history/1 (issue 37)
// cluster.html's "Shared storage" section (id "storage"); "" without doc.shared_storage.
std::string shared_storage_section(const json& doc);

}  // namespace gdsb::report::html
