#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gdsb/doctor/render.hpp"
#include "gpu_groups.hpp"
#include "rules/rule_util.hpp"

namespace gdsb::doctor {

using detail::gb;

namespace {

// One line per hop row. A row an earlier GPU (group) listed (a NIC two GPUs share) is
// referred to by that GPU.
void render_row(std::ostream& out, topo::HopKind kind, const std::string& figure,
                const std::string& what, const std::string& device, const std::string& who,
                std::map<std::string, std::string>& listed) {
  const std::string line = std::string(topo::hop_kind_name(kind)) + ": " + figure + " - " + what;
  const auto [it, first] = listed.emplace(line, who);
  if (first)
    out << "  hop " << line << '\n';
  else
    out << "  hop " << topo::hop_kind_name(kind) << ": as for " << it->second
        << (device.empty() ? "" : " (" + device + ")") << '\n';
}

void render_gpu(std::ostream& out, const GpuDiagnosis& g,
                std::map<std::string, std::string>& listed) {
  out << g.label << (g.bdf.empty() ? "" : " (" + g.bdf + ")");
  if (g.measured_gb_s)
    out << " reads at " << gb(*g.measured_gb_s) << " (" << g.measured_by << ")";
  else
    out << " has no measured read";
  if (g.ceiling_gb_s)
    out << "; " << detail::ceiling_lead(!g.ceiling_unknown.empty(), false) << detail::ceiling_text(g, g.binding);
  else
    out << "; ceiling unknown from these inputs";
  out << ".\n";
  for (const auto& r : detail::hop_rows(g)) {
    const std::string device = r.devices.empty() ? "" : r.devices.front();
    render_row(out, r.kind, detail::hop_figure(r), r.what, device, g.label, listed);
  }
}

// GPUs alike (gpu_groups.hpp): what they share once, then one line per GPU for its own.
void render_group(std::ostream& out, const detail::GpuGroup& grp,
                  std::map<std::string, std::string>& listed) {
  const bool any_read = std::any_of(grp.gpus.begin(), grp.gpus.end(),
                                    [](const GpuDiagnosis* g) { return g->measured_gb_s.has_value(); });
  out << grp.label << (any_read ? ":" : " have no measured read;");
  if (grp.ceiling == "unknown")
    out << " ceiling unknown from these inputs";
  else if (!grp.ceiling.empty())
    out << ' ' << detail::ceiling_lead(grp.ceiling_open, true) << grp.ceiling;
  else if (!grp.unknown.empty())
    out << " each GPU's ceiling at most the figure on its line below, " << grp.unknown << " unknown";
  else
    out << " each GPU's ceiling on its line below";
  out << ".\n";
  for (const auto& r : grp.rows)
    render_row(out, r.kind, r.figure.empty() ? "per GPU below" : r.figure,
               r.what + (r.own_devices ? ", each GPU's own" : ""), "", grp.label, listed);
  for (const auto& line : grp.lines) {
    const GpuDiagnosis& g = *line.gpu;
    out << "  " << g.label << (g.bdf.empty() ? "" : " (" + g.bdf + ")");
    if (g.measured_gb_s) out << " reads at " << gb(*g.measured_gb_s) << " (" << g.measured_by << ")";
    std::string own;
    for (const auto& o : line.own) own += (own.empty() ? "" : "; ") + o;
    if (!line.ceiling.empty())
      own += std::string(own.empty() ? "" : "; ") + detail::ceiling_lead(line.ceiling_open, false) + line.ceiling;
    if (!own.empty()) out << (g.measured_gb_s ? "; " : ": ") << own;
    out << '\n';
  }
}

// The one headline: the diagnosis's own, else what these inputs allow.
std::string headline_text(const Diagnosis& d) {
  if (!d.headline.empty()) return d.headline;
  if (d.gpus.empty())
    return "no GPU figure from these inputs (see the steps and notes)" +
           (d.storage.empty() ? std::string() : "; " + d.storage);
  for (const auto& g : d.gpus)
    if (g.measured_gb_s) return "each GPU's read against its ceiling, below";
  return "no GPU read measured: each GPU's ceiling and hops, below";
}

}  // namespace

void render_text(std::ostream& out, const Diagnosis& d) {
  out << "Diagnosis: " << headline_text(d) << ".\n";
  // With a GPU, storage alone is a hop of each GPU's list: said there, not here.
  std::map<std::string, std::string> listed;  // hop line -> the GPU(s) that listed it first
  for (const auto& grp : detail::gpu_groups(d.gpus)) {
    if (grp.gpus.size() == 1)
      render_gpu(out, *grp.gpus.front(), listed);
    else
      render_group(out, grp, listed);
  }
  if (!d.steps.empty()) {
    out << "Steps:\n";
    for (std::size_t i = 0; i < d.steps.size(); ++i) {
      const Step& s = d.steps[i];
      out << "  " << (s.ran ? "ran     " : "not run ") << s.name;
      // Steps not run for one reason (all storage steps without --io-dir): named together,
      // the reason once.
      while (!s.ran && i + 1 < d.steps.size() && !d.steps[i + 1].ran &&
             d.steps[i + 1].reason == s.reason)
        out << ", " << d.steps[++i].name;
      if (s.gb_s) out << ": " << gb(*s.gb_s);
      if (!s.detail.empty()) out << " (" << s.detail << ")";
      if (!s.ran) out << ": " << s.reason;
      out << '\n';
    }
  }
  if (!d.findings.empty()) {
    out << "Findings (most certain and costly first):\n";
    int n = 0;
    for (const auto& f : d.findings) {
      out << "  " << ++n << ". [" << confidence_name(f.confidence) << "] " << f.title << '\n';
      if (!f.per_gpu.empty()) {  // one cause on several GPUs: each GPU's devices together
        out << "     devices:";
        for (std::size_t i = 0; i < f.per_gpu.size(); ++i) {
          out << (i ? "," : "");
          for (const auto& dev : f.per_gpu[i].devices) out << ' ' << dev;
        }
        out << '\n';
      } else if (!f.devices.empty()) {
        out << "     devices:";
        for (const auto& dev : f.devices) out << ' ' << dev;
        out << '\n';
      }
      for (const auto& e : f.evidence) out << "     evidence: " << e << '\n';
      if (!f.fix.empty()) out << "     fix: " << f.fix << '\n';
      if (!f.expected.empty()) out << "     expected after the fix: " << f.expected << '\n';
    }
  }
  for (const auto& note : d.notes) out << "Note: " << note << '\n';
  if (!d.not_applicable.empty()) {
    out << "Verdict: " << d.not_applicable << '\n';
  } else if (d.has_problem()) {
    std::size_t strong = 0;
    for (const auto& f : d.findings) strong += f.confidence != Confidence::Possible ? 1 : 0;
    out << "Verdict: " << strong << " certain or likely cause(s); the first: "
        << d.findings.front().title << '\n';
  } else if (!d.nothing_wrong.empty()) {
    out << "Verdict: nothing wrong: " << d.nothing_wrong << '\n';
  } else {
    out << "Verdict: no certain or likely cause found" << '\n';
  }
}

}  // namespace gdsb::doctor
