#include "npd_plugin.hpp"

#include <algorithm>
#include <cctype>

#include "gdsb/error.hpp"

namespace gdsb::topo_app {
namespace {

bool hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// "0000:cb:00.0" at `i` (and not inside a longer address): lspci writes it "cb:00.0".
bool domain0_address_at(std::string_view s, size_t i) {
  if (s.compare(i, 5, "0000:") != 0 || i + 12 > s.size()) return false;
  if (i > 0 && (hex(s[i - 1]) || s[i - 1] == ':')) return false;
  const std::string_view a = s.substr(i + 5, 7);  // "cb:00.0"
  return hex(a[0]) && hex(a[1]) && a[2] == ':' && hex(a[3]) && hex(a[4]) && a[5] == '.' &&
         a[6] >= '0' && a[6] <= '7';
}

// At most `limit` bytes, never cutting a UTF-8 character in two.
std::string cut_utf8(const std::string& s, size_t limit) {
  if (s.size() <= limit) return s;
  size_t n = limit;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

bool is_unchecked(const topo::HealthDifference& d) { return d.problem && !d.key; }

}  // namespace

std::string npd_line(std::string_view fault, size_t more) {
  std::string text;
  for (size_t i = 0; i < fault.size();) {
    if (domain0_address_at(fault, i)) {
      i += 5;
      continue;
    }
    if (fault.compare(i, 8, ": drain,") == 0) {  // ": drain, reboot" -> ": reboot"
      text += ':';
      i += 8;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(fault[i++]);
    text += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
  }
  // NPD trims the output (strings.TrimSpace): so do we, before measuring.
  const auto first = text.find_first_not_of(' ');
  text =
      first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(' ') - first + 1);
  const std::string suffix = more ? " (+" + std::to_string(more) + " more)" : "";
  const size_t room = kNpdMaxOutput - suffix.size();
  if (text.size() > room) text = cut_utf8(text, room - 3) + "...";
  return text + suffix;
}

int npd_verdict(const Options& opt, const std::vector<topo::HealthDifference>& differences,
                const std::vector<topo::FaultFinding>& findings, std::ostream& out) {
  if (const auto u = std::find_if(differences.begin(), differences.end(), is_unchecked);
      u != differences.end())
    return npd_unchecked(opt, u->words, out);
  // The faults of the kind asked for, the one that names the cause best first: a hardware
  // fault before the known-good difference it causes (as --slurm-drain's reason).
  std::vector<const std::string*> faults;
  if (opt.npd_kind == NpdKind::All || opt.npd_kind == NpdKind::Hardware)
    for (const auto& f : findings)
      if (f.severity == topo::FaultSeverity::Critical) faults.push_back(&f.words);
  if (opt.npd_kind == NpdKind::All || opt.npd_kind == NpdKind::KnownGood)
    for (const auto& d : differences)
      if (d.problem) faults.push_back(&d.words);
  if (faults.empty()) {
    out << (opt.npd_kind == NpdKind::Hardware    ? "ok: no critical hardware fault"
            : opt.npd_kind == NpdKind::KnownGood ? "ok: as known good"
            : opt.npd_kind == NpdKind::Unchecked ? "ok: checked"
                                                 : "ok")
        << '\n';
    return kExitOk;
  }
  out << npd_line(*faults.front(), faults.size() - 1) << '\n';
  return kNpdProblem;
}

int npd_unchecked(const Options& opt, std::string_view why, std::ostream& out) {
  out << npd_line("not checked: " + std::string(why), 0) << '\n';
  return opt.npd_unchecked_unknown ? kNpdUnknown : kNpdProblem;
}

}  // namespace gdsb::topo_app
