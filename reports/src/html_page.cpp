#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/report/output_file.hpp"
#include "html_parts.hpp"

namespace gdsb::report {
namespace {
#include "html_style.inc"

// A per-document script nonce: the page's Content-Security-Policy runs only the script
// carrying it, so even markup that slipped through escaping could not run code.
std::string nonce_for(const std::string& data) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "g%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string json_for_script(const nlohmann::json& doc) {
  std::string raw = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // In valid JSON these characters occur only inside strings, where \uXXXX is equivalent.
  // Most documents have none: the text is returned as it is (the page of 25,000 nodes embeds
  // 50 MB); else the runs between them are copied whole.
  const auto special = [](char c) { return c == '<' || c == '>' || c == '&'; };
  auto next = std::find_if(raw.cbegin(), raw.cend(), special);
  if (next == raw.cend()) return raw;
  std::string out;
  out.reserve(raw.size() + 64);
  for (auto at = raw.cbegin();; next = std::find_if(at, raw.cend(), special)) {
    out.append(at, next);
    if (next == raw.cend()) return out;
    out += *next == '<' ? "\\u003c" : *next == '>' ? "\\u003e" : "\\u0026";
    at = next + 1;
  }
}

std::string render_html(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("schema") || !doc.at("schema").is_string()) {
    throw UsageError("render_html: the document has no \"schema\"");
  }
  const auto schema = doc.at("schema").get<std::string>();
  try {
    if (schema == "gdsbench.io/1") return html::render_io(doc);
    if (schema == "gdsbench.topo/1") return html::render_topo(doc);
    if (schema == "gdsbench.p2p/1") return html::render_p2p(doc);
    if (schema == "gdsbench.compare/1") return html::render_compare(doc);
    if (schema == "gdsbench.doctor/1") return html::render_doctor(doc);
    if (schema == "gdsbench.cluster/1") return html::render_cluster(doc);
    if (schema == "gdsbench.history/1") return html::render_history(doc);
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError("render_html: invalid " + schema + " document: " + e.what());
  }
  throw UsageError("render_html: unknown schema \"" + schema + "\"");
}

void write_html(const nlohmann::json& doc, const std::string& path, bool allow_overwrite) {
  check_output_path(path, allow_overwrite);
  const std::string page = render_html(doc);
  write_output_atomic(path, page, allow_overwrite);
}

namespace html {

std::string esc(const std::string& text) { return html_escape(text); }

std::string text_of(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool flag(const json& j, const char* key) {
  // Compared, not converted: GCC 12 at -O3 sees a false null dereference in get<bool>().
  return j.is_object() && j.contains(key) && j.at(key) == json(true);
}

std::string str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return "";
  return text_of(j.at(key));
}

std::string badge(const std::string& text, const std::string& kind) {
  return "<span class=\"badge b-" + kind + "\">" + esc(text) + "</span>";
}

std::string section(const std::string& id, const std::string& title, const std::string& inner) {
  return "<section id=\"" + esc(id) + "\"><h2>" + esc(title) + "</h2>" + inner + "</section>";
}

std::string figure(const std::string& svg, const std::string& caption) {
  return "<figure><figcaption>" + esc(caption) + "</figcaption>" + svg + "</figure>";
}

std::string table(const std::vector<std::string>& head,
                  const std::vector<std::vector<std::string>>& rows, const std::string& css_class) {
  std::ostringstream o;
  o << "<div class=\"tw\"><table" << (css_class.empty() ? "" : " class=\"" + css_class + "\"")
    << "><thead><tr>";
  for (const auto& h : head) o << "<th>" << esc(h) << "</th>";
  o << "</tr></thead><tbody>";
  for (const auto& r : rows) {
    // A row may carry its own <tr ...> opener as its first element when it starts with "<tr".
    std::size_t first = 0;
    if (!r.empty() && r.front().rfind("<tr", 0) == 0) {
      o << r.front();
      first = 1;
    } else {
      o << "<tr>";
    }
    for (std::size_t i = first; i < r.size(); ++i) {
      const bool whole = r[i].rfind("<td", 0) == 0 || r[i].rfind("<th", 0) == 0;  // a complete cell
      o << (whole ? r[i] : "<td>" + r[i] + "</td>");
    }
    o << "</tr>";
  }
  o << "</tbody></table></div>";
  return o.str();
}

std::string context_section(const json& doc) {
  const json ctx = doc.value("context", json::object());
  std::vector<std::vector<std::string>> rows;
  auto add = [&](const std::string& k, const std::string& v) {
    rows.push_back({"<th>" + esc(k) + "</th>", "<td class=\"wrap\">" + esc(v) + "</td>"});
  };
  const json tool = doc.value("tool", json::object());
  add("tool", str(tool, "name") + " " + str(tool, "version"));
  if (doc.contains("argv") && doc.at("argv").is_array()) {
    std::string argv;
    for (const auto& a : doc.at("argv")) argv += (argv.empty() ? "" : " ") + text_of(a);
    rows.push_back({"<th>command</th>", "<td class=\"wrap\"><code>" + esc(argv) + "</code></td>"});
  }
  for (const char* k : {"host", "kernel", "os", "cpu_model", "cpus", "started_at", "ended_at"}) {
    if (ctx.contains(k)) add(k, text_of(ctx.at(k)));
  }
  add("interrupted", flag(doc, "interrupted") ? "yes: the run was stopped early" : "no");
  // Everything else the writer put into the context (cufile settings, driver versions, ...).
  for (const auto& [k, v] : ctx.items()) {
    if (k == "env" || k == "host" || k == "kernel" || k == "os" || k == "cpu_model" ||
        k == "cpus" || k == "started_at" || k == "ended_at") {
      continue;
    }
    if (v.is_object()) {
      for (const auto& [k2, v2] : v.items()) add(k + "." + k2, text_of(v2));
    } else {
      add(k, text_of(v));
    }
  }
  std::string inner = table({"field", "value"}, rows, "kv");
  const json env = ctx.value("env", json::object());
  if (env.is_object() && !env.empty()) {
    std::vector<std::vector<std::string>> erows;
    for (const auto& [k, v] : env.items())
      erows.push_back({"<td><code>" + esc(k) + "</code></td>",
                       "<td class=\"wrap\"><code>" + esc(text_of(v)) + "</code></td>"});
    inner +=
        "<h3>Environment (CUFILE_* and CUDA_* only)</h3>" + table({"variable", "value"}, erows);
  } else {
    inner += "<p class=\"note\">No CUFILE_* or CUDA_* environment variables were set.</p>";
  }
  return section("context", "Context", inner);
}

std::string page(const json& doc, const std::string& title, const std::string& verdict_html,
                 const std::vector<std::pair<std::string, std::string>>& nav,
                 const std::string& body) {
  const std::string data = json_for_script(doc);
  const std::string nonce = nonce_for(data);
  const json ctx = doc.value("context", json::object());
  const json tool = doc.value("tool", json::object());
  const std::string schema = str(doc, "schema");
  std::string file_name = schema.substr(0, schema.find('/')) + ".json";
  if (!str(ctx, "host").empty()) file_name = str(ctx, "host") + "-" + file_name;
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<meta name=\"generator\" content=\"gdsbench gdsb-report (" << kGeneratorMark << ")\">"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'; "
    << "img-src data:; script-src 'nonce-" << nonce << "'; base-uri 'none'; form-action 'none'\">"
    << "<title>" << esc(title) << "</title><style>" << kCss << "</style></head>\n"
    << "<body data-schema=\"" << esc(schema) << "\"><header class=\"top\"><div class=\"t\"><h1>"
    << esc(title) << "</h1><div class=\"sub\">" << esc(str(ctx, "host"))
    << (str(ctx, "host").empty() ? "" : " · ")
    << esc(str(tool, "name") + " " + str(tool, "version")) << " · " << esc(schema)
    << (str(ctx, "started_at").empty() ? "" : " · " + esc(str(ctx, "started_at"))) << "</div></div>"
    << verdict_html << "<button id=\"gdsb-download\" class=\"noprint\" type=\"button\" data-name=\""
    << esc(file_name) << "\">Download JSON</button></header>\n<nav>";
  for (const auto& [id, name] : nav) o << "<a href=\"#" << esc(id) << "\">" << esc(name) << "</a>";
  o << "</nav>\n<main>" << body << "</main>\n<footer>Generated by gdsb-report from the embedded "
    << esc(schema) << " document; every figure on this page is read from it.</footer>"
    << "<div id=\"gdsb-selfcheck\" hidden></div>\n<script type=\"application/json\" "
       "id=\"gdsb-data\">";
  // The data (tens of MB for a large fleet) is appended once, not copied through the stream.
  std::string page = o.str();
  const std::string tail = std::string("</script>\n<script nonce=\"") + nonce + "\">" + kScript + "</script></body></html>\n";
  page.reserve(page.size() + data.size() + tail.size());
  return page.append(data).append(tail);
}

}  // namespace html
}  // namespace gdsb::report
