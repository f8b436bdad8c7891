#include <ostream>

#include "gdsb/doctor/render.hpp"
#include "rules/rule_util.hpp"

namespace gdsb::doctor {

using detail::gb;

void render_text(std::ostream& out, const Diagnosis& d) {
  if (!d.headline.empty()) out << "Diagnosis: " << d.headline << ".\n";
  if (d.gpus.empty())
    out << "Diagnosis: no GPU figure from these inputs (see the steps and notes)"
        << (d.storage.empty() ? std::string() : "; " + d.storage) << ".\n";
  else if (!d.storage.empty())
    out << "Storage: " << d.storage << '\n';
  for (const auto& g : d.gpus) {
    out << "Diagnosis: " << g.label << (g.bdf.empty() ? "" : " (" + g.bdf + ")");
    if (g.measured_gb_s)
      out << " reads at " << gb(*g.measured_gb_s) << " (" << g.measured_by << ")";
    else
      out << " has no measured read";
    if (g.ceiling_gb_s)
      out << "; the platform allows ~" << gb(*g.ceiling_gb_s) << " (" << g.binding << ")";
    else
      out << "; ceiling unknown from these inputs";
    out << ".\n";
    for (const auto& h : g.hops)
      out << "  hop " << topo::hop_kind_name(h.kind) << ": "
          << (h.gb_s ? gb(*h.gb_s) : std::string("unknown")) << (h.measured ? " measured" : "")
          << (h.source.empty() || h.measured ? "" : " (" + h.source + ")") << " - " << h.what
          << '\n';
  }
  if (!d.steps.empty()) {
    out << "Steps:\n";
    for (const auto& s : d.steps) {
      out << "  " << (s.ran ? "ran     " : "not run ") << s.name;
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
      if (!f.devices.empty()) {
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
