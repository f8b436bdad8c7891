// HTML view of a gdsbench.doctor/1 document: per GPU the measured figure against each
// hop's ceiling, the ranked findings with evidence, fix and expected figure, the steps.
#include <cstdio>

#include "html_parts.hpp"

namespace gdsb::report::html {
namespace {

std::string gb(const json& v) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB/s", v.get<double>());
  return buf;
}

std::string confidence_badge(const std::string& c) {
  return badge(c, c == "certain" ? "bad" : c == "likely" ? "warn" : "muted");
}

std::string gpu_block(const json& g) {
  std::string inner = "<h3>" + esc(str(g, "gpu")) + " " + esc(text_of(g.value("bdf", json()))) + "</h3>";
  inner += "<p>measured " + esc(gb(g.value("measured_gb_s", json()))) + " (" +
           esc(str(g, "measured_by")) + "); ceiling " + (str(g, "ceiling_unknown").empty() ? "" : "at most ") +
           esc(gb(g.value("ceiling_gb_s", json()))) + " set by " + esc(str(g, "binding")) +
           (str(g, "ceiling_unknown").empty() ? "" : ", " + esc(str(g, "ceiling_unknown")) + " unknown") + "</p>";
  std::vector<std::vector<std::string>> rows;
  for (const auto& h : g.value("hops", json::array()))
    rows.push_back({"<tr>", "<td>" + esc(str(h, "name")) + "</td>",
                    "<td class=\"n\">" + esc(gb(h.value("gb_s", json()))) + "</td>",
                    "<td>" + esc(flag(h, "measured") ? std::string("measured")
                                 : str(h, "source").empty() ? std::string("link")
                                                            : str(h, "source")) +
                        "</td>",
                    "<td>" + esc(str(h, "what")) + "</td>"});
  return inner + table({"hop", "allows", "from", "what"}, rows);
}

// GPUs alike (gpu_groups): what they share once, then one row per GPU for its own.
std::string group_block(const json& grp, const json& gpus) {
  const std::string ceiling = str(grp, "ceiling");
  std::string inner = "<h3>" + esc(str(grp, "label")) + "</h3><p>" +
                      esc(ceiling.empty() ? std::string("each GPU's ceiling in its row below")
                                          : "ceiling " + ceiling) +
                      "</p>";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : grp.value("rows", json::array())) {
    const std::string figure = str(r, "figure");
    rows.push_back({"<tr>", "<td>" + esc(str(r, "name")) + "</td>",
                    "<td>" + esc(figure.empty() ? std::string("per GPU below") : figure) + "</td>",
                    "<td>" + esc(str(r, "what") + (flag(r, "own_devices") ? ", each GPU's own" : "")) +
                        "</td>"});
  }
  inner += table({"hop", "allows", "what"}, rows);
  std::vector<std::vector<std::string>> lines;
  for (const auto& l : grp.value("lines", json::array())) {
    json g = json::object();
    for (const auto& x : gpus)
      if (str(x, "gpu") == str(l, "gpu")) g = x;
    std::string own;
    for (const auto& o : l.value("own", json::array())) own += (own.empty() ? "" : "; ") + text_of(o);
    lines.push_back({"<tr>", "<td>" + esc(str(l, "gpu")) + "</td>",
                     "<td>" + esc(text_of(g.value("bdf", json()))) + "</td>",
                     "<td class=\"n\">" + esc(gb(g.value("measured_gb_s", json()))) + "</td>",
                     "<td>" + esc(own) + "</td>",
                     "<td>" + esc(str(l, "ceiling")) + "</td>"});
  }
  return inner + table({"GPU", "bdf", "measured", "its own", "ceiling"}, lines);
}

std::string gpus_section(const json& doc) {
  const json gpus = doc.value("gpus", json::array());
  std::string inner;
  if (doc.contains("gpu_groups") && doc.at("gpu_groups").is_array()) {
    for (const auto& grp : doc.at("gpu_groups")) {
      const auto members = grp.value("gpus", json::array());
      if (members.size() != 1) {
        inner += group_block(grp, gpus);
        continue;
      }
      for (const auto& g : gpus)
        if (str(g, "gpu") == text_of(members.front())) inner += gpu_block(g);
    }
  } else {  // documents written before gpu_groups
    for (const auto& g : gpus) inner += gpu_block(g);
  }
  return section("gpus", "Measured against each hop", inner);
}

std::string findings_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : doc.value("findings", json::array())) {
    std::string ev = "<ul>";
    for (const auto& e : f.value("evidence", json::array())) ev += "<li>" + esc(text_of(e)) + "</li>";
    ev += "</ul>";
    // One cause on several GPUs (per_gpu, issue 43): each GPU's devices together.
    const auto joined = [](const json& list) {
      std::string s;
      for (const auto& d : list) s += (s.empty() ? "" : " ") + esc(text_of(d));
      return s;
    };
    std::string devs;
    for (const auto& g : f.value("per_gpu", json::array()))
      devs += (devs.empty() ? "" : ", ") + joined(g.value("devices", json::array()));
    if (devs.empty()) devs = joined(f.value("devices", json::array()));
    rows.push_back({str(f, "confidence") == "possible" ? "<tr>" : "<tr class=\"bad\">",
                    "<td class=\"n\">" + esc(text_of(f.value("rank", json()))) + "</td>",
                    "<td>" + confidence_badge(str(f, "confidence")) + "</td>",
                    "<td><b>" + esc(str(f, "title")) + "</b><br><span class=\"note\">" + devs +
                        "</span>" + ev + "</td>",
                    "<td><code>" + esc(str(f, "fix")) + "</code></td>",
                    "<td>" + esc(str(f, "expected")) + "</td>"});
  }
  const std::string inner = rows.empty() ? "<p>No finding.</p>"
                                         : table({"#", "confidence", "cause and evidence", "fix",
                                                  "expected after the fix"},
                                                 rows);
  return section("findings", "Findings", inner);
}

std::string steps_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  const auto steps = doc.value("steps", json::array());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const json& s = steps[i];
    std::string name = str(s, "name");
    // Steps not run for one reason: one row, the reason once (as in the text).
    while (!flag(s, "ran") && i + 1 < steps.size() && !flag(steps[i + 1], "ran") &&
           str(steps[i + 1], "reason") == str(s, "reason"))
      name += ", " + str(steps[++i], "name");
    rows.push_back({"<tr>", "<td>" + esc(name) + "</td>",
                    "<td>" + badge(flag(s, "ran") ? "ran" : "not run", flag(s, "ran") ? "ok" : "muted") +
                        "</td>",
                    "<td class=\"n\">" + esc(gb(s.value("gb_s", json()))) + "</td>",
                    "<td>" + esc(flag(s, "ran") ? str(s, "detail") : str(s, "reason")) + "</td>"});
  }
  std::string notes;
  for (const auto& n : doc.value("notes", json::array())) notes += "<li>" + esc(text_of(n)) + "</li>";
  return section("steps", "Steps and notes",
                 (rows.empty() ? "<p class=\"note\">Recorded inputs: nothing was measured here.</p>"
                               : table({"step", "status", "figure", "detail or reason"}, rows)) +
                     (notes.empty() ? "" : "<ul>" + notes + "</ul>"));
}

}  // namespace

std::string render_doctor(const json& doc) {
  const auto v = doc.value("verdict", std::string("unknown"));
  const std::string kind = v == "ok" ? "ok" : v == "problem" ? "bad" : v == "not_applicable" ? "muted" : "warn";
  std::string summary = str(doc, "nothing_wrong");
  const auto findings = doc.value("findings", json::array());
  if (!findings.empty()) summary = "first cause: " + str(findings.front(), "title");
  // Virtual storage or a storage-bound read decides the diagnosis: said first, as in text.
  if (!str(doc, "headline").empty()) summary = str(doc, "headline") + "; " + summary;
  // No NVIDIA GPU: gdsb-topo's verdict, in its words, before anything else.
  if (!str(doc, "applicability").empty())
    summary = str(doc, "applicability") + (summary.empty() ? "" : "; " + summary);
  const std::string verdict = badge("diagnosis: " + v, kind) + " " + esc(summary);
  const std::string body = gpus_section(doc) + findings_section(doc) + steps_section(doc) +
                           context_section(doc);
  const std::string host = str(doc.value("context", json::object()), "host");
  return page(doc, "gdsbench doctor" + (host.empty() ? "" : ": " + host), verdict,
              {{"gpus", "GPUs"}, {"findings", "Findings"}, {"steps", "Steps"}, {"context", "Context"}},
              body);
}

}  // namespace gdsb::report::html
