// HTML view of a gdsbench.p2p/1 document: capability matrices as heat maps with their
// legends, measured bandwidth against the theoretical link rate, expectations.
#include <algorithm>
#include <cctype>
#include <sstream>

#include "gdsb/report/metrics.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

// Codes best first; JSON objects lose their order, so ranking comes from the domain.
const std::vector<std::string>& code_rank() {
  static const std::vector<std::string> kRank{"X",
                                              "NV#",
                                              "PIX",
                                              "PXB",
                                              "PHB",
                                              "NODE",
                                              "SYS",
                                              "OK",
                                              "Y",
                                              "YES",
                                              "1",
                                              "CNS",
                                              "GNS",
                                              "TNS",
                                              "NS",
                                              "DR",
                                              "U",
                                              "N",
                                              "NO",
                                              "0",
                                              "BUS_ADDR",
                                              "THRU_HOST_BRIDGE",
                                              "NOT_SUPPORTED"};
  return kRank;
}

std::vector<svg::CodeLegend> legend_of(const json& m) {
  std::vector<svg::CodeLegend> out;
  const json legend = m.value("legend", json::object());
  std::vector<std::string> present;
  for (const auto& [code, meaning] : legend.items()) present.push_back(code);
  for (const auto& row : m.at("cells")) {
    for (const auto& c : row) {
      const auto t = text_of(c);
      const bool nv_bond = t.size() > 2 && t.rfind("NV", 0) == 0 &&
                           std::isdigit(static_cast<unsigned char>(t[2])) && legend.contains("NV#");
      if (!nv_bond && std::find(present.begin(), present.end(), t) == present.end())
        present.push_back(t);
    }
  }
  auto rank = [](const std::string& c) {
    const auto& r = code_rank();
    const std::string key = c.rfind("NV", 0) == 0 && c != "NV#" && c.size() > 2 &&
                                    std::isdigit(static_cast<unsigned char>(c[2]))
                                ? "NV#"
                                : c;
    const auto it = std::find(r.begin(), r.end(), key);
    return it == r.end() ? r.size() : static_cast<std::size_t>(it - r.begin());
  };
  std::stable_sort(present.begin(), present.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  for (const auto& code : present)
    out.push_back({code, legend.contains(code) ? text_of(legend.at(code)) : ""});
  return out;
}

std::vector<std::string> strings(const json& arr) {
  std::vector<std::string> out;
  for (const auto& v : arr) out.push_back(text_of(v));
  return out;
}

std::string matrices_section(const json& doc) {
  if (!doc.contains("matrices") || !doc.at("matrices").is_object()) return "";
  static const std::vector<std::pair<std::string, std::string>> kTitles{
      {"topology", "Topology (nvidia-smi topo -m)"},
      {"pcie_topology", "GPU x GPU PCIe path (from the PCIe tree)"},
      {"cuda_access", "CUDA peer access"},
      {"nvml_read", "NVML P2P read"},
      {"nvml_write", "NVML P2P write"},
      {"nvml_nvlink", "NVML P2P over NVLink"},
      {"nvml_atomics", "NVML P2P atomics"},
      {"nvml_pci", "NVML P2P over PCIe"},
      {"p2pdma", "Kernel P2PDMA, GPU to NVMe/NIC"}};
  const auto& ms = doc.at("matrices");
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& t : kTitles) {
    if (ms.contains(t.first)) order.push_back(t);
  }
  for (const auto& item : ms.items()) {
    const std::string& k = item.key();  // not a structured binding: clang < 16 cannot capture one
    if (std::none_of(kTitles.begin(), kTitles.end(), [&](const auto& t) { return t.first == k; }))
      order.push_back({k, k});
  }
  std::ostringstream o;
  o << "<div class=\"charts\">";
  for (const auto& [key, title] : order) {
    const auto& m = ms.at(key);
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : m.at("cells")) cells.push_back(strings(row));
    o << figure(svg::heatmap_codes(title, strings(m.at("rows")), strings(m.at("cols")), cells,
                                   legend_of(m)),
                title);
  }
  o << "</div>";
  return section("matrices", "Capability matrices", o.str());
}

std::string opt_num(const json& j, const char* key, int sig = 4) {
  return j.contains(key) && j.at(key).is_number() ? esc(format_number(j.at(key).get<double>(), sig))
                                                  : "-";
}

bool is_waived(const json& m) { return m.is_object() && m.contains("waived"); }

std::string link_bars(const json& meas, const char* key, const std::string& title,
                      std::vector<std::vector<std::string>>& rows) {
  if (!meas.contains(key)) return "";
  const auto& arr = meas.at(key);
  if (is_waived(arr)) {
    rows.push_back({esc(title), "<td colspan=\"4\">waived: " + esc(str(arr, "waived")) + "</td>"});
    return "";
  }
  std::vector<svg::Bar> bars;
  for (const auto& e : arr) {
    const std::string gpu = "GPU " + str(e, "gpu");
    const double v = e.value("gb_s", 0.0);
    std::optional<double> theo;
    if (e.contains("theoretical_gb_s") && e.at("theoretical_gb_s").is_number())
      theo = e.at("theoretical_gb_s").get<double>();
    const bool low = e.contains("percent") && e.at("percent").is_number() &&
                     e.at("percent").get<double>() < 70.0;
    bars.push_back({gpu,
                    {v},
                    theo,
                    low,
                    format_number(v, 3) + (theo ? " of " + format_number(*theo, 3) : "")});
    rows.push_back({esc(title), esc(gpu), "<td class=\"n\">" + opt_num(e, "gb_s") + "</td>",
                    "<td class=\"n\">" + opt_num(e, "theoretical_gb_s") + "</td>",
                    std::string(low ? "<td class=\"n bad-text\">" : "<td class=\"n\">") +
                        opt_num(e, "percent", 3) + "</td>"});
  }
  return figure(svg::bar_chart({title, svg::axis("GB/s"), svg::axis(""), 560, 0}, {"measured"},
                               bars, "theoretical"),
                title + ": measured vs theoretical (GB/s)");
}

// --concurrent: one row per group, the aggregate next to the sum of the one-GPU figures.
std::string concurrent_table(const json& meas) {
  std::vector<std::vector<std::string>> rows;
  std::string notes;
  for (const auto& [key, title] : {std::pair<const char*, const char*>{"h2d_concurrent", "Host to GPUs at once"},
                                   {"d2h_concurrent", "GPUs to host at once"}}) {
    if (!meas.contains(key)) continue;
    const auto& c = meas.at(key);
    if (is_waived(c)) {
      if (str(c, "waived").rfind("not asked for", 0) != 0)
        notes += "<p>" + badge("waived", "muted") + " " + esc(title) + ": " + esc(str(c, "waived")) + "</p>";
      continue;
    }
    for (const auto& g : c.value("groups", json::array())) {
      std::string gpus;
      for (const auto& i : g.value("gpus", json::array())) gpus += (gpus.empty() ? "GPU " : "+") + text_of(i);
      const bool low = g.contains("ratio") && g.at("ratio").is_number() && g.at("ratio").get<double>() < 0.9;
      rows.push_back({esc(title), esc(gpus), "<td class=\"n\">" + opt_num(g, "gb_s") + "</td>",
                      "<td class=\"n\">" + opt_num(g, "single_sum_gb_s") + "</td>",
                      std::string(low ? "<td class=\"n bad-text\">" : "<td class=\"n\">") +
                          opt_num(g, "ratio", 3) + "</td>",
                      esc(str(g, "shared"))});
    }
    notes += "<p class=\"note\">" + esc(title) + ": " + esc(str(c, "grouping")) + "</p>";
  }
  if (rows.empty()) return notes;
  return table({"direction", "GPUs together", "GB/s", "sum of single GB/s", "ratio", "shared"}, rows) + notes;
}

std::string measurements_section(const json& doc) {
  if (!doc.contains("measurements") || !doc.at("measurements").is_object()) {
    return section("measurements", "Measurements",
                   "<p class=\"note\">Not measured (run gdsb-p2p with --measure).</p>");
  }
  const auto& meas = doc.at("measurements");
  std::vector<std::vector<std::string>> rows;
  std::string charts = link_bars(meas, "h2d", "Host to device", rows);
  charts += link_bars(meas, "d2h", "Device to host", rows);
  std::string inner;
  if (!charts.empty()) inner += "<div class=\"charts\">" + charts + "</div>";
  if (!rows.empty())
    inner += table({"direction", "GPU", "GB/s", "theoretical GB/s", "% of theoretical"}, rows);
  inner += concurrent_table(meas);
  static const std::vector<std::pair<std::string, std::string>> kMats{
      {"d2d_uni", "GPU to GPU, unidirectional (GB/s)"},
      {"d2d_bi", "GPU to GPU, bidirectional (GB/s)"},
      {"d2d_uni_no_p2p", "GPU to GPU through the host, unidirectional (GB/s)"},
      {"d2d_bi_no_p2p", "GPU to GPU through the host, bidirectional (GB/s)"},
      {"latency_us", "GPU to GPU latency (us)"}};
  std::string maps;
  for (const auto& [key, title] : kMats) {
    if (!meas.contains(key)) continue;
    const auto& m = meas.at(key);
    if (is_waived(m)) {
      inner += "<p>" + badge("waived", "muted") + " " + esc(title) + ": " + esc(str(m, "waived")) +
               "</p>";
      continue;
    }
    std::vector<std::vector<std::optional<double>>> cells;
    for (const auto& row : m.at("cells")) {
      std::vector<std::optional<double>> r;
      for (const auto& c : row)
        r.push_back(c.is_number() ? std::optional<double>(c.get<double>()) : std::nullopt);
      cells.push_back(std::move(r));
    }
    maps += figure(svg::heatmap_values(title, strings(m.at("rows")), strings(m.at("cols")), cells,
                                       key == "latency_us" ? "us" : "GB/s"),
                   title);
  }
  if (!maps.empty()) inner += "<div class=\"charts\">" + maps + "</div>";
  if (meas.contains("method") && meas.at("method").is_object()) {
    const auto& me = meas.at("method");
    std::string sizes;
    for (const auto& s : me.value("sizes_bytes", json::array()))
      sizes += (sizes.empty() ? "" : ", ") + text_of(s);
    inner += "<p class=\"note\">Method: sizes " + esc(sizes) + " bytes, " +
             esc(str(me, "repetitions")) + " repetitions, " + esc(str(me, "statistic")) +
             " reported. GB/s are base 1000.</p>";
  }
  return section("measurements", "Measurements", inner);
}

std::string gpus_table(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& g : doc.at("gpus")) {
    std::string pcie = "-";
    if (g.contains("pcie") && g.at("pcie").is_object())
      pcie = "Gen" + str(g.at("pcie"), "gen") + " x" + str(g.at("pcie"), "width");
    rows.push_back({"<td class=\"n\">" + esc(str(g, "index")) + "</td>",
                    "<td><code>" + esc(str(g, "bdf")) + "</code></td>", esc(str(g, "name")),
                    esc(pcie), esc(str(g, "nvlinks").empty() ? "-" : str(g, "nvlinks"))});
  }
  std::string inner = table({"index", "BDF", "name", "PCIe", "NVLinks"}, rows);
  if (!str(doc, "gpu_source").empty())
    inner += "<p>GPUs as seen by: <code>" + esc(str(doc, "gpu_source")) + "</code></p>";
  // NVSwitches: by BDF, as the PCIe input shows them.
  std::vector<std::vector<std::string>> switches;
  for (const auto& sw : doc.value("nvswitches", json::array()))
    switches.push_back({"<td><code>" + esc(sw.get<std::string>()) + "</code></td>", "NVSwitch"});
  if (!switches.empty())
    inner += "<h3>NVSwitches: " + std::to_string(switches.size()) + "</h3>" +
             table({"BDF", "kind"}, switches);
  return section("gpus", "GPUs", inner);
}

std::string expectations_section(const json& doc, std::size_t& failed) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : doc.value("expectations", json::array())) {
    const bool ok = flag(e, "ok");
    failed += ok ? 0U : 1U;
    rows.push_back({ok ? "<tr>" : "<tr class=\"bad\">",
                    "<td><code>" + esc(str(e, "expr")) + "</code></td>",
                    "<td>" + badge(ok ? "met" : "not met", ok ? "ok" : "bad") + "</td>",
                    "<td class=\"wrap\">" + esc(str(e, "detail")) + "</td>"});
  }
  std::vector<std::vector<std::string>> wrows;
  for (const auto& w : doc.value("waived", json::array()))
    wrows.push_back({esc(str(w, "what")), "<td class=\"wrap\">" + esc(str(w, "reason")) + "</td>"});
  std::string inner;
  if (!rows.empty()) inner += table({"expectation", "result", "detail"}, rows);
  if (!wrows.empty()) inner += "<h3>Waived</h3>" + table({"what", "reason"}, wrows);
  return inner.empty() ? "" : section("expectations", "Expectations and waived cases", inner);
}

}  // namespace

std::string render_p2p(const json& doc) {
  std::size_t failed = 0;
  const std::string expectations = expectations_section(doc, failed);
  std::string verdict = badge(std::to_string(doc.at("gpus").size()) + " GPUs", "muted");
  if (!str(doc, "applicability").empty()) verdict += " " + esc(str(doc, "applicability"));
  if (doc.contains("expectations")) {
    verdict += " " + badge(failed ? std::to_string(failed) + " expectation(s) not met"
                                  : "expectations met",
                           failed ? "bad" : "ok");
  }
  const std::string body = gpus_table(doc) + matrices_section(doc) + measurements_section(doc) +
                           expectations + context_section(doc);
  const std::string host = str(doc.value("context", json::object()), "host");
  return page(doc, "gdsbench peer-to-peer report" + (host.empty() ? "" : ": " + host), verdict,
              {{"gpus", "GPUs"},
               {"matrices", "Matrices"},
               {"measurements", "Measurements"},
               {"expectations", "Expectations"},
               {"context", "Context"}},
              body);
}

}  // namespace gdsb::report::html
