// HTML view of a gdsbench.io/1 document.
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "gdsb/report/metrics.hpp"
#include "gdsb/result.hpp"
#include "gdsb/report/gdsio_line.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

bool is_compat(const RunResult& r) {
  return xfer_uses_cufile(r.workload.xfer) && path_used_of(r.path.path_used) == PathUsed::Compat;
}

std::string num_cell(double v, int sig = 4) {
  return "<td class=\"n\" data-v=\"" + svg::num(v) + "\">" + esc(format_number(v, sig)) + "</td>";
}

std::string path_cell(const RunResult& r) {
  if (r.path.path_used.empty()) return "<td>-</td>";
  if (is_compat(r)) {
    return "<td><span class=\"compat\">" + esc(r.path.path_used) +
           "</span><br><span class=\"note\">cuFile fell back to POSIX I/O through its own bounce "
           "buffers: not GPUDirect Storage</span></td>";
  }
  return "<td><code>" + esc(r.path.path_used) + "</code></td>";
}

// The badge colour of a run's status: "page cache" measured, but the memory's figures.
const char* status_kind(RunStatus s) {
  switch (s) {
    case RunStatus::Ok: return "ok";
    case RunStatus::Waived: return "muted";
    case RunStatus::PageCache: return "warn";
    case RunStatus::Failed: break;
  }
  return "bad";
}

std::string status_cell(const RunResult& r) {
  std::string s = "<td>" + badge(std::string(run_status_name(r.status)), status_kind(r.status));
  if (r.interrupted) s += " " + badge("interrupted", "warn");
  if (r.verify_errors > 0)
    s += " " + badge(std::to_string(r.verify_errors) + " verify errors", "bad");
  if (!r.reason.empty()) s += "<br><span class=\"note\">" + esc(r.reason) + "</span>";
  return s + "</td>";
}

std::string summary_tables(const std::vector<RunResult>& runs) {
  std::vector<XferType> order;
  for (const auto& r : runs) {
    if (std::find(order.begin(), order.end(), r.workload.xfer) == order.end())
      order.push_back(r.workload.xfer);
  }
  std::ostringstream o;
  for (const auto x : order) {
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto& r = runs[i];
      if (r.workload.xfer != x) continue;
      const auto& w = r.workload;
      const auto& m = r.result;
      const bool ok = r.status == RunStatus::Ok;
      std::vector<std::string> row{
          is_compat(r) ? "<tr class=\"bad\">" : "<tr>",
          "<td><a href=\"#run-" + std::to_string(i) + "\">#" + std::to_string(i) + "</a></td>",
          esc(std::string(pattern_label(w.pattern))) +
              (w.mixed_read_percent ? " " + std::to_string(*w.mixed_read_percent) + "% read" : ""),
          "<td class=\"n\" data-v=\"" + std::to_string(w.io_size) + "\">" +
              esc(format_bytes(w.io_size)) + "</td>",
          "<td class=\"n\">" + std::to_string(w.threads) + "</td>",
          esc(std::string(engine_name(w.engine))) + " qd" + std::to_string(w.iodepth),
          status_cell(r),
          path_cell(r)};
      if (ok) {
        for (const double v :
             {m.throughput_gib_s, m.iops, m.latency.p50_us, m.latency.p99_us, m.latency.p999_us})
          row.push_back(num_cell(v));
        row.push_back(num_cell(m.cpu.user_percent, 3));
        row.push_back(num_cell(m.cpu.sys_percent, 3));
      } else {
        for (int k = 0; k < 7; ++k) row.push_back("<td class=\"n\">-</td>");
      }
      row.push_back(
          "<td class=\"n\">" +
          (r.repetitions.empty() ? std::string("1") : std::to_string(r.repetitions.size())) +
          "</td>");
      rows.push_back(std::move(row));
    }
    o << "<h3>" << esc(std::string(xfer_label(x))) << " <span class=\"note\">("
      << esc(std::string(xfer_name(x))) << ", -x " << static_cast<int>(x) << ")</span></h3>"
      << table({"run", "pattern", "I/O size", "threads", "engine", "status", "path used", "GiB/s",
                "IOPS", "p50 us", "p99 us", "p99.9 us", "CPU usr %", "CPU sys %", "reps"},
               rows, "sortable");
  }
  return o.str();
}

std::string overview_charts(const std::vector<RunResult>& runs) {
  std::vector<svg::Bar> tput, cpu;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    if (r.status != RunStatus::Ok) continue;
    const std::string label = "#" + std::to_string(i) + " " + run_label(r.workload);
    tput.push_back(
        {label,
         {r.result.throughput_gib_s},
         std::nullopt,
         is_compat(r),
         format_number(r.result.throughput_gib_s, 3) + (is_compat(r) ? " (compat)" : "")});
    cpu.push_back({label,
                   {r.result.cpu.user_percent, r.result.cpu.sys_percent},
                   std::nullopt,
                   false,
                   format_number(r.result.cpu.user_percent + r.result.cpu.sys_percent, 3) + "%"});
  }
  svg::ChartSpec t{"Throughput per run", svg::axis("GiB/s (base 1024)"), svg::axis(""), 760, 0};
  svg::ChartSpec c{"CPU use per run", svg::axis("% of all cores"), svg::axis(""), 760, 0};
  return "<div class=\"charts\">" +
         figure(svg::bar_chart(t, {"throughput"}, tput),
                "Throughput per run (compat-mode runs in red)") +
         figure(svg::bar_chart(c, {"user", "system"}, cpu),
                "CPU use per run, user and system, % of the machine") +
         "</div>";
}

std::string run_charts(const RunResult& r) {
  const auto& m = r.result;
  std::ostringstream o;
  o << "<div class=\"charts\">";
  svg::Series ts{"throughput", {}, 0, m.timeseries.size() < 30};
  double prev = 0;
  for (const auto& p : m.timeseries) {
    const double dt = p.t_end_s - prev;
    if (dt > 0) ts.points.push_back({p.t_end_s, static_cast<double>(p.bytes) / dt / 1073741824.0});
    prev = p.t_end_s;
  }
  o << figure(
      svg::line_chart({"Throughput over time", svg::axis("seconds"), svg::axis("GiB/s"), 480, 240},
                      {ts}),
      "Throughput over time (GiB/s per interval)");
  // Percentiles on a "number of nines" axis: p50 -> 0.3, p90 -> 1, p99 -> 2, p99.9 -> 3.
  struct Pct {
    double p;
    const char* label;
    double us;
  };
  const std::vector<Pct> pcts{{50, "p50", m.latency.p50_us},
                              {90, "p90", m.latency.p90_us},
                              {99, "p99", m.latency.p99_us},
                              {99.9, "p99.9", m.latency.p999_us},
                              {99.99, "p99.99", m.latency.p9999_us}};
  svg::Series lat{"latency", {}, 2, true};
  svg::Axis xa = svg::axis("percentile");
  xa.include_zero = false;
  for (const auto& pc : pcts) {
    if (pc.us <= 0) continue;
    const double nines = -std::log10(1.0 - pc.p / 100.0);
    lat.points.push_back({nines, pc.us});
    xa.ticks.push_back({nines, pc.label});
  }
  o << figure(
      svg::line_chart({"Latency percentiles", xa, svg::axis("us (log)", true), 480, 240}, {lat}),
      "Latency percentile curve, p50 to p99.99 (us, log scale)");
  std::vector<svg::Bucket> buckets;
  for (const auto& b : m.histogram)
    buckets.push_back({b.lower_us, b.upper_us, static_cast<double>(b.count)});
  o << figure(
      svg::histogram({"Latency histogram", svg::axis("us (log)", true), svg::axis("ops"), 480, 240},
                     buckets),
      "Latency histogram (ops per bucket)");
  o << "</div>";
  return o.str();
}

std::string repetitions_table(const RunResult& r) {
  if (r.repetitions.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < r.repetitions.size(); ++k) {
    const auto& m = r.repetitions[k];
    rows.push_back({"<td class=\"n\">" + std::to_string(k + 1) + "</td>",
                    num_cell(m.throughput_gib_s), num_cell(m.iops), num_cell(m.latency.p50_us),
                    num_cell(m.latency.p99_us), num_cell(m.cpu.user_percent + m.cpu.sys_percent, 3),
                    num_cell(m.seconds)});
  }
  return "<p class=\"note\">Repeated " + std::to_string(r.repetitions.size()) +
         " times; the figures above are the median repetition.</p>" +
         table({"repetition", "GiB/s", "IOPS", "p50 us", "p99 us", "CPU %", "seconds"}, rows,
               "sortable");
}

std::string run_section(const RunResult& r, std::size_t i) {
  std::ostringstream o;
  o << "<section id=\"run-" << i << "\"><h3>#" << i << " " << esc(run_label(r.workload)) << "</h3>";
  const auto& w = r.workload;
  std::string files = w.file.empty() ? w.directory + "/gdsio.N" : w.file;
  o << "<p>"
    << badge(std::string(run_status_name(r.status)), status_kind(r.status))
    << " <span class=\"note\">GPU " << w.gpu << " · " << esc(std::string(mem_type_name(w.mem_type)))
    << " · file <code>" << esc(files) << "</code> · " << esc(r.started_at) << " to "
    << esc(r.ended_at) << "</span></p>";
  if (!r.reason.empty()) o << "<p><b>Reason:</b> " << esc(r.reason) << "</p>";
  if (!r.path.path_used.empty()) {
    o << "<p><b>Path taken:</b> "
      << (is_compat(r) ? "<span class=\"compat\">" + esc(r.path.path_used) +
                             " (compat mode: not GPUDirect)</span>"
                       : "<code>" + esc(r.path.path_used) + "</code>")
      << "</p>";
  }
  if (!r.path.evidence.empty()) {
    o << "<ul class=\"note\">";
    for (const auto& e : r.path.evidence) o << "<li>" << esc(e) << "</li>";
    o << "</ul>";
  }
  for (const auto& wmsg : r.path.warnings)
    o << "<p>" << badge("warning", "warn") << " " << esc(wmsg) << "</p>";
  if (r.status == RunStatus::Ok) {
    const auto& l = r.result.latency;
    o << "<p class=\"note\">"
      << esc(format_number(static_cast<double>(r.result.bytes) / 1073741824.0, 4)) << " GiB in "
      << esc(format_number(r.result.seconds, 4)) << " s, " << r.result.ops << " ops ("
      << r.result.read_ops << " reads, " << r.result.write_ops << " writes); latency mean "
      << esc(format_number(l.mean_us)) << " us, min " << esc(format_number(l.min_us)) << ", max "
      << esc(format_number(l.max_us)) << "</p>";
    if (r.result.phases) {  // bounce-buffer paths: the same lines as the text output
      std::string text = phases_text(*r.result.phases);
      while (!text.empty() && text.back() == '\n') text.pop_back();
      std::string html;
      for (std::size_t a = 0, b = 0; a <= text.size(); a = b + 1) {
        b = text.find('\n', a);
        if (b == std::string::npos) b = text.size();
        html += (a == 0 ? "" : "<br>") + esc(text.substr(a, b - a));
      }
      o << "<p class=\"note\">" << html << "</p>";
    }
    o << run_charts(r) << repetitions_table(r);
  }
  o << "</section>";
  return o.str();
}

std::string cell(const json& v, int sig = 4) {
  return v.is_number() ? num_cell(v.get<double>(), sig) : std::string("<td>-</td>");
}

// gdsb-io --workload: the preset's time to result first, GB/s and latencies next, the
// platform ceiling last (docs/io-schema.md, workload_summary).
std::string workload_section(const json& s) {
  std::ostringstream o;
  o << "<p>Preset <code>" << esc(str(s, "preset")) << "</code>, -x "
    << s.value("xfer_type", 0) << " <code>" << esc(str(s, "xfer_name")) << "</code>, "
    << s.value("gpus", 0) << " GPU(s).</p>";
  std::vector<std::vector<std::string>> rows;
  const auto group_rows = [&](const char* key, const std::string& what) {
    if (!s.contains(key)) return;
    const json& g = s.at(key);
    rows.push_back({"<td><b>" + esc(what) + ": node</b></td>", cell(g.value("node_s", json())),
                    cell(g.value("gb_s", json())), "<td></td>"});
    for (const auto& e : g.value("per_gpu", json::array())) {
      rows.push_back({"<td>GPU " + std::to_string(e.value("gpu", 0)) + "</td>",
                      cell(e.value("seconds", json())), cell(e.value("gb_s", json())),
                      "<td><code>" + esc(str(e, "path_used")) + "</code></td>"});
    }
  };
  const std::string preset = str(s, "preset");
  if (preset == "checkpoint-load" || preset == "checkpoint-save") {
    group_rows("time_to_result",
               preset == "checkpoint-load" ? "time until the last GPU holds its shards"
                                           : "time until every shard is durable");
    group_rows("naive", "naive load (buffered read into pageable memory, a cudaMemcpy per tensor)");
    o << table({"", "seconds", "GB/s", "path"}, rows);
    const json f = s.contains("naive") ? s.at("naive").value("facts", json()) : json();
    if (f.is_object()) {
      const json share = f.value("cached_share", json());
      o << "<p class=\"note\">Naive load: " << esc(str(f, "models")) << ". "
        << f.value("read_calls", 0ULL) << " read calls, " << f.value("bytes_read", 0ULL)
        << " bytes; " << f.value("pageable_copies", 0ULL) << " pageable copies, "
        << f.value("bytes_copied", 0ULL) << " bytes"
        << (f.value("gpu_copies_done", true) ? "" : " (no GPU: copies not done)")
        << ". Page cache before it: "
        << (share.is_number() ? std::to_string(static_cast<int>(share.get<double>() * 100 + 0.5)) +
                                    "% of the shards resident"
                              : std::string("unknown"))
        << ".</p>";
    }
  } else if (preset == "kv-offload") {
    for (const auto& j : s.value("requests", json::array())) {
      const json rl = j.value("request_latency", json::object());
      const json bl = j.value("block_latency", json::object());
      rows.push_back({"<td>" + esc(str(j, "job")) + "</td>", cell(rl.value("p50_us", json())),
                      cell(rl.value("p99_us", json())), cell(bl.value("p50_us", json())),
                      cell(bl.value("p99_us", json())), cell(j.value("requests_per_s", json())),
                      cell(j.value("gb_s", json()))});
    }
    o << table({"job", "request p50 us", "request p99 us", "block p50 us", "block p99 us",
                "requests/s", "GB/s"},
               rows);
  } else if (preset == "dataset" && s.contains("time_to_result")) {
    const json& t = s.at("time_to_result");
    rows.push_back({cell(t.value("seconds", json())), cell(t.value("files_per_s", json())),
                    cell(t.value("gb_s", json()))});
    o << table({"seconds", "files/s", "GB/s"}, rows);
    // Each file's costs inside that time (open, register, read, deregister, close).
    const json f = s.value("per_file", json());
    if (f.is_object()) {
      std::vector<std::vector<std::string>> costs;
      for (const char* k : {"open", "register", "read", "deregister", "close"}) {
        const bool registration = std::string_view(k) == "register" || std::string_view(k) == "deregister";
        if (registration && !f.value("registers", false)) continue;
        const json c = f.value(k, json::object());
        costs.push_back({std::string("<td>") + k + "</td>", cell(c.value("mean_us", json())),
                         cell(c.value("p99_us", json()))});
      }
      o << "<p>Per file, inside the time above (" << f.value("files", 0ULL) << " files):</p>"
        << table({"step", "mean us", "p99 us"}, costs);
    }
  }
  const json c = s.value("ceiling", json());
  if (c.is_object() && c.contains("per_gpu")) {
    std::vector<std::vector<std::string>> ceil;
    for (const auto& e : c.at("per_gpu")) {
      ceil.push_back({"<td><code>" + esc(str(e, "gpu")) + "</code></td>", cell(e.value("gb_s", json())),
                      "<td>" + esc(str(e, "limited_by")) + "</td>"});
    }
    o << "<p>Platform ceiling (" << esc(str(c, "source")) << "):</p>"
      << table({"GPU", "GB/s", "limited by"}, ceil);
  } else if (c.is_object()) {
    o << "<p class=\"note\">Platform ceiling (" << esc(str(c, "source")) << "): no figure: "
      << esc(str(c, "note")) << "</p>";
  } else {
    o << "<p class=\"note\">Platform ceiling: not known.</p>";
  }
  return o.str();
}

}  // namespace

std::string render_io(const json& doc) {
  std::vector<RunResult> runs;
  for (const auto& j : doc.at("runs")) runs.push_back(j.get<RunResult>());
  std::size_t ok = 0, compat = 0, failed = 0;
  for (const auto& r : runs) {
    ok += r.status == RunStatus::Ok ? 1U : 0U;
    failed += r.status == RunStatus::Failed ? 1U : 0U;
    compat += is_compat(r) ? 1U : 0U;
  }
  std::string verdict = badge(std::to_string(ok) + "/" + std::to_string(runs.size()) + " runs ok",
                              failed ? "bad" : "ok");
  if (compat > 0)
    verdict += " " + badge(std::to_string(compat) + " cuFile run(s) in compat mode", "bad");
  if (flag(doc, "interrupted")) verdict += " " + badge("interrupted", "warn");
  std::ostringstream body;
  std::string intro;
  if (compat > 0) {
    intro = "<p class=\"compat\">" + std::to_string(compat) +
            " cuFile run(s) took the compat path: cuFile moved the data through host bounce "
            "buffers, so their "
            "figures are not GPUDirect Storage figures.</p>";
  }
  const bool preset = doc.contains("workload_summary") && doc.at("workload_summary").is_object();
  // gdsb-io --gpus: the node figure the run was made for comes first (issue 43).
  const bool node = doc.contains("node") && doc.at("node").is_object();
  if (node) body << node_section(doc.at("node"));
  if (preset) body << section("workload", "Workload: time to result", workload_section(doc.at("workload_summary")));
  body << section("summary", "Summary by transfer type", intro + summary_tables(runs));
  body << section("overview", "Overview", overview_charts(runs));
  std::ostringstream per_run;
  for (std::size_t i = 0; i < runs.size(); ++i) per_run << run_section(runs[i], i);
  body << section("runs", "Runs", per_run.str());
  body << context_section(doc);
  const std::string host = str(doc.value("context", json::object()), "host");
  std::vector<std::pair<std::string, std::string>> nav{
      {"summary", "Summary"}, {"overview", "Overview"}, {"runs", "Runs"}, {"context", "Context"}};
  if (preset) nav.insert(nav.begin(), {"workload", "Workload"});
  if (node) nav.insert(nav.begin(), {"node", "Node"});
  return page(doc, "gdsbench I/O report" + (host.empty() ? "" : ": " + host), verdict, nav,
              body.str());
}

}  // namespace gdsb::report::html
