// gdscheck-like text: environment, annotated PCIe tree, checks, ceilings, verdict.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "gdsb/topo/nic_role.hpp"
#include "gdsb/topo/path_model.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "gdsb/topo/render.hpp"
#include "gdsb/topo/said_together.hpp"

namespace gdsb::topo {
namespace {

void banner(std::ostream& out, const char* title) {
  std::string bar(std::char_traits<char>::length(title) + 1, '=');
  out << ' ' << bar << "\n " << title << ":\n " << bar << '\n';
}

std::string tag(Verdict v) {
  switch (v) {
    case Verdict::Pass:
      return "[PASS]  ";
    case Verdict::Warn:
      return "[WARN]  ";
    case Verdict::Fail:
      return "[FAIL]  ";
    case Verdict::Waived:
      return "[WAIVED]";
  }
  return "";
}

std::string marks(const Snapshot& s, const Device& d) {
  std::string m = " [" + std::string(role_name(d.role)) + "]";
  if (!d.link && d.recorded_link_gb_s) {  // hwloc XML: bandwidth only, no speed or width
    char b[48];
    std::snprintf(b, sizeof b, " %.2f GB/s link", *d.recorded_link_gb_s);
    m += b;
  }
  if (d.link) {
    m += ' ';  // appended piecewise: GCC 12 -O3 reports a false -Wrestrict on " " + string
    m += link_text(d.link->cur_speed_gts, d.link->cur_width);
    const Device* p = d.parent.empty() ? nullptr : s.find(d.parent);
    double exp_speed = d.link->max_speed_gts;
    int exp_width = d.link->max_width;
    if (p && p->link && d.role != Role::RootPort && d.role != Role::SwitchDownstream) {
      exp_speed = std::min(exp_speed, p->link->max_speed_gts);
      exp_width = std::min(exp_width, p->link->max_width);
    } else if (d.role == Role::RootPort || d.role == Role::SwitchDownstream) {
      // A port's partner is the device below it: a Gen4 drive on a Gen5 port is no loss.
      double below_speed = 0;
      int below_width = 0;
      for (const auto& c : s.devices)
        if (c.parent == d.bdf && c.link) {
          below_speed = std::max(below_speed, c.link->max_speed_gts);
          below_width = std::max(below_width, c.link->max_width);
        }
      if (below_width > 0) {
        exp_speed = std::min(exp_speed, below_speed);
        exp_width = std::min(exp_width, below_width);
      }
    }
    if (d.link->cur_width < exp_width || d.link->cur_speed_gts + 0.01 < exp_speed)
      m += " (of " + link_text(exp_speed, exp_width) + "!)";
  }
  bool bridge = d.role == Role::RootPort || d.role == Role::SwitchUpstream ||
                d.role == Role::SwitchDownstream || d.role == Role::Bridge;
  if (d.acs && (d.acs->ctl & kAcsRedirectMask)) {
    m += " ACS-REDIRECT(";
    if (d.acs->ctl & kAcsRr) m += "RR";
    if (d.acs->ctl & kAcsCr) m += " CR";
    if (d.acs->ctl & kAcsEc) m += " EC";
    m += ")";
  } else if (bridge && d.acs) {
    m += " acs:" + hex16(d.acs->ctl);
  } else if (bridge && !d.ext_config_readable) {
    m += " acs:?";
  }
  if (d.numa_node) m += " numa" + std::to_string(*d.numa_node);
  for (const auto& b : d.block_devices) m += " " + b;
  for (const auto& n : d.net_devices) m += " " + n;
  return m;
}

void tree_node(std::ostream& out, const Snapshot& s,
               const std::map<std::string, std::vector<const Device*>>& kids, const Device& d,
               const std::string& prefix, bool last, int depth) {
  out << prefix << (last ? "\\-" : "+-") << d.bdf.substr(5) << ' '
      << display_name(s, d) << marks(s, d) << '\n';
  auto it = kids.find(d.bdf);
  if (it == kids.end() || depth > 32) return;
  for (size_t i = 0; i < it->second.size(); ++i)
    tree_node(out, s, kids, *it->second[i], prefix + (last ? "  " : "| "),
              i + 1 == it->second.size(), depth + 1);
}

// The virtual devices, each with its kind, under the explanation they share: the one place
// the explanation is given; checks, ceilings and the verdict name the devices (issue 27).
void render_virtual_devices(std::ostream& out, const TopologyView& v) {
  std::vector<std::pair<std::string, std::vector<std::string>>> by_why;  // in device order
  for (const Device* d : v.virtual_devices()) {
    const std::string reason = virtual_device_reason(*d);
    const std::string kind = virtual_device_kind(*d);
    const std::string why = reason.size() > kind.size() + 2 ? reason.substr(kind.size() + 2) : "";
    std::string line = d->bdf;
    for (const auto& b : d->block_devices) line += ' ' + b;
    for (const auto& n : d->net_devices) line += ' ' + n;
    line += ": " + kind;
    auto it = std::find_if(by_why.begin(), by_why.end(),
                           [&why](const auto& g) { return g.first == why; });
    if (it == by_why.end()) it = by_why.insert(by_why.end(), {why, {}});
    it->second.push_back(line);
  }
  for (const auto& [why, lines] : by_why) {
    out << " virtual devices" << (why.empty() ? "" : ": " + why) << '\n';
    for (const auto& l : lines) out << "   " << l << '\n';
  }
}

}  // namespace

void render_tree(std::ostream& out, const Snapshot& s, const TopologyView&) {
  std::map<std::string, std::vector<const Device*>> kids;
  std::map<std::string, std::vector<const Device*>>
      roots;  // root complex -> devices on its root bus
  for (const auto& d : s.devices) {
    if (!d.parent.empty() && s.find(d.parent))
      kids[d.parent].push_back(&d);
    else
      roots[d.root_complex.empty() ? d.bdf.substr(0, 7) : d.root_complex].push_back(&d);
  }
  for (const auto& [rc, devs] : roots) {
    out << " -[" << rc << "]\n";
    for (size_t i = 0; i < devs.size(); ++i)
      tree_node(out, s, kids, *devs[i], "   ", i + 1 == devs.size(), 0);
  }
}

void render_matrix(std::ostream& out, const TopologyView& v) {
  if (v.gpus().empty() || v.peers().empty()) {
    out << " (no GPU x NVMe/NIC pairs)\n";
    return;
  }
  auto col = [](const Device* p) {
    if (!p->block_devices.empty()) return p->block_devices.front();
    if (!p->net_devices.empty()) return p->net_devices.front();
    return p->bdf.substr(5);
  };
  out << "        ";
  for (const Device* p : v.peers())
    out << ' ' << std::string(std::max<size_t>(0, 8 - std::min<size_t>(8, col(p).size())), ' ')
        << col(p).substr(0, 8);
  out << '\n';
  for (const Device* g : v.gpus()) {
    std::string label = v.gpu_label(g->bdf);
    out << label << std::string(8 - std::min<size_t>(8, label.size()), ' ');
    for (const Device* p : v.peers()) {
      const Pair* pr = v.pair(g->bdf, p->bdf);
      std::string cell =
          pr ? std::string(path_label_name(pr->label)) + (pr->acs_redirect_ports.empty() ? "" : "*")
             : "?";
      out << ' ' << std::string(8 - cell.size(), ' ') << cell;
    }
    out << "  " << g->bdf << '\n';
  }
  out << "\n Legend: PIX = at most one PCIe switch, PXB = several bridges, PHB = through a host "
         "bridge,\n"
         "         NODE = between host bridges of one NUMA node, SYS = across sockets, * = ACS "
         "redirect\n";
}

std::string platform_verification_line(const Report& r, bool name_checks) {
  int fails = 0, warns = 0, passes = 0, waived = 0;
  std::vector<std::string> reasons;  // distinct waiver reasons, in report order
  std::vector<std::string> ids;      // distinct waived checks, in report order
  for (const auto& c : r.checks) {
    fails += c.verdict == Verdict::Fail;
    warns += c.verdict == Verdict::Warn;
    passes += c.verdict == Verdict::Pass;
    if (c.verdict != Verdict::Waived) continue;
    ++waived;
    if (std::find(reasons.begin(), reasons.end(), c.reason) == reasons.end())
      reasons.push_back(c.reason);
    if (std::find(ids.begin(), ids.end(), c.id) == ids.end()) ids.push_back(c.id);
  }
  std::string why;
  if (name_checks) {
    for (size_t i = 0; i < ids.size(); ++i) why += (i ? ", " : "") + ids[i];
    why += " (reasons above)";
  } else {
    for (size_t i = 0; i < reasons.size() && i < 3; ++i) why += (i ? "; " : "") + reasons[i];
    if (reasons.size() > 3)
      why += "; and " + std::to_string(reasons.size() - 3) + " more reason(s)";
  }
  const std::string total = std::to_string(r.checks.size());
  if (!r.gds_applicable)
    return "Platform verification: " + r.applicability +
           (fails ? " (" + std::to_string(fails) + " check(s) failed)" : std::string());
  const std::string waived_text =
      waived ? ", " + std::to_string(waived) + " waived: " + why : std::string();
  if (fails)
    return "Platform verification: failed (" + std::to_string(fails) + " failed, " +
           std::to_string(warns) + " warning(s))";
  if (passes == 0 && warns == 0)
    return "Platform verification: nothing verified: " + std::to_string(waived) + " of " + total +
           " checks waived: " + why;
  if (warns)
    return "Platform verification: succeeded with " + std::to_string(warns) + " warning(s) (" +
           std::to_string(passes) + " passed" + waived_text + ")";
  return "Platform verification: succeeded: " + std::to_string(passes) + " check(s) passed" +
         waived_text;
}

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : sep) + p;
  return out;
}

// -v: each data NIC's RDMA ports and net devices, where the input read them.
void render_data_nics(std::ostream& out, const Snapshot& s) {
  const NetworkFacts& n = s.machine.network;
  bool any = false;
  for (const Device& d : s.devices) {
    if (!is_data_nic(d)) continue;
    const auto rdma = rdma_devices_of(n, d.bdf);
    const auto nets = interfaces_of(n, d.bdf);
    if (rdma.empty() && nets.empty()) continue;
    if (!any) banner(out, "DATA NICS");
    any = true;
    out << " NIC " << d.bdf << " (" << display_name(s, d) << ")\n";
    for (const RdmaDevice* r : rdma) {
      out << "   RDMA " << join({r->name, r->fw_ver.empty() ? "" : "fw " + r->fw_ver,
                                 r->node_guid.empty() ? "" : "node GUID " + r->node_guid}, ", ") << '\n';
      for (const RdmaPort& p : r->ports)
        out << "     port " << p.port << ": "
            << join({p.link_layer, p.state.empty() ? "state unknown" : p.state, p.phys_state,
                     p.rate.empty() ? "rate unknown" : p.rate, p.netdev.empty() ? "" : "net device " + p.netdev},
                    ", ")
            << '\n';
    }
    for (const NetInterface* i : nets)
      out << "   net " << i->name << ": "
          << join({i->operstate.empty() ? "state unknown" : i->operstate,
                   i->speed_mbps ? std::to_string(*i->speed_mbps) + " Mb/s" : "no link speed",
                   join(i->addresses, " ")}, ", ")
          << '\n';
  }
}

// The fault facts the input held, judged as --health judges them without a known-good file,
// each once with what the health check would do with it (issue 42: no input ignored). Only
// when the input had a kernel log or some fault was found.
void render_faults(std::ostream& out, const Snapshot& s, const Report& r) {
  const auto& log = s.faults.kernel_log;
  if (!log && r.faults.empty()) return;
  banner(out, "FAULTS");
  if (log) {
    uint64_t records = 0, earlier = 0;
    for (const XidEvent& e : log->xids) records += e.count;
    for (const XidEvent& e : log->earlier_xids) earlier += e.count;
    out << " kernel log: " << log->source << " (" << log->format << ", " << log->lines << " lines, ";
    // A log that spans boots says which boot its Xid records are of (the last is judged).
    if (log->boots > 1)
      out << log->boots << " boots: " << records << " Xid record" << (records == 1 ? "" : "s") << " in the last, "
          << earlier << " in earlier ones";
    else
      out << records << " Xid record" << (records == 1 ? "" : "s");
    if (log->unparsed + log->dropped > 0)
      out << ", " << log->unparsed + log->dropped << " more not kept (address or code unreadable, or past "
          << kMaxXidKeys << " GPU and code pairs)";
    out << ")\n";
  } else if (!s.faults.kernel_log_unread.empty()) {
    out << " kernel log not read: " << s.faults.kernel_log_unread << '\n';
  }
  if (r.faults.empty()) {
    out << " no fault\n";
    return;
  }
  out << " as gdsb-topo --health judges them without a known-good file (since boot): DRAIN exits 3 and drains,"
         " WARN is said, HISTORY (an earlier boot) is listed only\n";
  for (const FaultFinding& f : r.faults) {
    std::string t = "[" + std::string(health_action_name(f)) + "]";
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    t.resize(std::max<size_t>(t.size(), 8), ' ');
    out << ' ' << t << ' ' << f.words << '\n';
  }
}

// "GPU0: 0000:19:00.0, 0000:18:00.0", one per GPU with devices of its own.
std::vector<std::string> own_lines(const std::vector<TextGpu>& gpus, const std::vector<std::vector<std::string>>& own) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < gpus.size() && i < own.size(); ++i)
    if (!own[i].empty()) out.push_back(gpus[i].label + ": " + join(own[i], ", "));
  return out;
}

// Texts about one GPU each, said once for the GPUs whose texts have the same shape (issue 43):
// (GPU label, text) in order; one text per shape, in the order of first use.
// A device each GPU has of its own goes on a line of that GPU below ("  GPU0: 0000:18:00.0").
std::vector<std::string> said_once(const std::vector<std::pair<std::string, std::string>>& lines) {
  std::vector<std::string> out;
  std::vector<bool> done(lines.size(), false);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (done[i]) continue;
    std::vector<TextGpu> gpus;
    std::vector<std::string> texts;
    const std::string shape = text_shape(lines[i].second, {lines[i].first, {}});
    for (std::size_t j = i; j < lines.size(); ++j)
      if (!done[j] && text_shape(lines[j].second, {lines[j].first, {}}) == shape) {
        done[j] = true;
        gpus.push_back({lines[j].first, {}});
        texts.push_back(lines[j].second);
      }
    std::vector<std::vector<std::string>> own;
    out.push_back(said_together(gpus, texts, &own));
    for (const auto& l : own_lines(gpus, own)) out.push_back("  " + l);
  }
  return out;
}

// Checks about one GPU each (its label in the title: bar1, pair-locality) with the same
// verdict and words for several GPUs are one block naming them ("bar1: GPU0-7 BAR1"), a
// device or figure that differs listed (issue 43). The report keeps one check per GPU.
std::vector<CheckResult> checks_said_once(const std::vector<CheckResult>& checks, const TopologyView& v) {
  const auto gpu_of = [&](const CheckResult& c) -> std::string {
    for (const auto& d : c.devices)
      if (const std::string label = v.gpu_label(d); label != d && c.title.find(label) != std::string::npos)
        return label;
    return {};
  };
  const auto key = [](const CheckResult& c, const TextGpu& g) {
    std::string k = c.id + "\n" + std::string(1, static_cast<char>(c.verdict)) + text_shape(c.title, g) + "\n" +
                    text_shape(c.reason, g) + "\n" + text_shape(c.consequence, g) + "\n" + text_shape(c.remedy, g);
    for (const auto& e : c.evidence) k += "\n" + text_shape(e, g);
    return k;
  };
  std::vector<CheckResult> out;
  std::vector<bool> done(checks.size(), false);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    if (done[i]) continue;
    const std::string label = gpu_of(checks[i]);
    if (label.empty()) {
      out.push_back(checks[i]);
      continue;
    }
    const std::string k = key(checks[i], {label, {}});
    std::vector<TextGpu> gpus;
    std::vector<const CheckResult*> members;
    for (std::size_t j = i; j < checks.size(); ++j) {
      const std::string lj = j == i ? label : gpu_of(checks[j]);
      if (done[j] || lj.empty() || key(checks[j], {lj, {}}) != k) continue;
      done[j] = true;
      gpus.push_back({lj, {}});
      members.push_back(&checks[j]);
    }
    std::vector<std::vector<std::string>> own(gpus.size());
    const auto merged = [&](const auto& field) {
      std::vector<std::string> texts;
      for (const CheckResult* m : members) texts.push_back(field(*m));
      std::vector<std::vector<std::string>> mine;
      std::string text = said_together(gpus, texts, &mine);
      for (std::size_t g = 0; g < gpus.size(); ++g)
        for (auto& d : mine[g])
          if (std::find(own[g].begin(), own[g].end(), d) == own[g].end()) own[g].push_back(d);
      return text;
    };
    CheckResult c = checks[i];
    c.title = merged([](const CheckResult& m) { return m.title; });
    c.reason = merged([](const CheckResult& m) { return m.reason; });
    c.consequence = merged([](const CheckResult& m) { return m.consequence; });
    c.remedy = merged([](const CheckResult& m) { return m.remedy; });
    for (std::size_t e = 0; e < c.evidence.size(); ++e)
      c.evidence[e] = merged([e](const CheckResult& m) { return m.evidence[e]; });
    for (auto& l : own_lines(gpus, own)) c.evidence.push_back(std::move(l));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

void render_text(std::ostream& out, const Snapshot& s, const TopologyView& v, const Report& r,
                 const TextOptions& opt) {
  const Machine& m = s.machine;
  out << " GDS platform check (gdsb-topo), source: " << source_kind_name(s.kind)
      << (s.path.empty() ? "" : " " + s.path) << '\n';
  banner(out, "ENVIRONMENT");
  if (m.proc_known) {
    out << " kernel " << m.kernel_release << " (" << m.arch << ", " << m.cpu_vendor << " family "
        << m.cpu_family << ")\n";
    out << " nvidia-fs: "
        << (m.nvidia_fs_loaded ? "loaded " + m.nvidia_fs_version : std::string("not loaded"))
        << ", udev database: " << (m.udev_present ? "present" : "absent")
        << ", cufile.json: " << m.cufile.path << (m.cufile.found ? "" : " (not found)") << '\n';
  } else {
    out << " host facts: not in this input\n";
  }
  if (m.iommu_known)
    out << " IOMMU: " << m.iommu_units.size() << " unit(s), " << m.iommu_group_types.size()
        << " group(s)\n";
  out << " devices: " << s.devices.size() << ", GPUs: " << v.gpus().size()
      << ", NVMe: " << s.with_role(Role::Nvme).size() << ", NICs: " << s.with_role(Role::Nic).size()
      << ", NUMA nodes: " << (m.numa_nodes ? std::to_string(m.numa_nodes) : "?") << '\n';
  for (const auto& n : s.notes) out << " note: " << n << '\n';
  render_virtual_devices(out, v);
  render_nvlink(out, v);
  if (opt.tree) {
    banner(out, "PCIE TREE");
    render_tree(out, s, v);
  }
  if (opt.verbose) render_data_nics(out, s);
  if (opt.matrix) {
    banner(out, "GPU x NVMe/NIC MATRIX");
    render_matrix(out, v);
  }
  banner(out, "CHECKS");
  // Each reason, consequence and remedy is written once, under the first check that has
  // it; a later check with the same text refers to that check by name (issue 27).
  std::map<std::string, std::string> said;  // text -> the check that said it
  const auto once = [&](const char* label, const std::string& text, const CheckResult& c) {
    const auto [it, first] = said.emplace(text, c.id + ": " + c.title);
    out << "           " << label << ": " << (first ? text : "as for " + it->second) << '\n';
  };
  for (const auto& c : checks_said_once(r.checks, v)) {
    out << ' ' << tag(c.verdict) << ' ' << c.id << ": " << c.title << '\n';
    if (c.verdict == Verdict::Waived) once("reason", c.reason, c);
    size_t n = c.verdict == Verdict::Pass && !opt.verbose ? std::min<size_t>(1, c.evidence.size())
                                                          : c.evidence.size();
    for (size_t i = 0; i < n; ++i) out << "           - " << c.evidence[i] << '\n';
    if (n < c.evidence.size())
      out << "           (" << c.evidence.size() - n << " more with --verbose)\n";
    if (!c.consequence.empty() && c.verdict != Verdict::Pass) once("consequence", c.consequence, c);
    if (!c.remedy.empty() && c.verdict != Verdict::Pass) once("remedy", c.remedy, c);
  }
  render_faults(out, s, r);
  banner(out, "CEILINGS");
  if (r.ceilings.empty()) out << " (no GPU)\n";
  std::map<std::string, std::string> limits;  // a ceiling's unknown-why -> who said it first
  // GPUs' lines give their reason each (said once below when alike); a node line refers to it.
  const auto line = [&](const Ceiling& c, const std::string& what, bool refer = true) -> std::string {
    if (!c.gb_s) {
      const auto [it, first] = limits.emplace(c.limited_by, what);
      if (!first && refer) return what + " have no ceiling from this input, for the same reason";
      return what + " have no ceiling from this input: " + c.limited_by;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "~%.1f GB/s", *c.gb_s);
    return what + " limited to " + buf + " by " + c.limited_by;
  };
  const auto figure = [&](const Ceiling& c, const std::string& what) { out << ' ' << line(c, what) << '\n'; };
  // A GPU's ceiling said once for the GPUs whose ceilings read alike (issue 43).
  std::vector<std::pair<std::string, std::string>> gpu_lines, nic_lines;
  for (const auto& c : r.ceilings)
    gpu_lines.emplace_back(v.gpu_label(c.gpu), line(c, "GDS reads on " + v.gpu_label(c.gpu) + " (" + c.gpu + ")", false));
  for (const auto& c : r.nic_ceilings)
    if (c.gb_s)
      nic_lines.emplace_back(v.gpu_label(c.gpu), line(c, "Remote GDS (RDMA) into " + v.gpu_label(c.gpu) + " (" + c.gpu + ")"));
  for (const auto& lines : {gpu_lines, nic_lines})
    for (const auto& l : said_once(lines)) out << ' ' << l << '\n';
  if (!r.ceilings.empty()) {
    figure(r.node_nvme, "Node-wide GDS reads from all NVMe drives");
    if (r.node_nic.gb_s) figure(r.node_nic, "Node-wide remote GDS through all data NICs");
  }
  for (const auto& mc : r.mount_ceilings) {
    figure(mc.node, "Reads of " + mc.target + " (" + mc.kind + ")");
    if (opt.verbose)
      for (const auto& c : mc.gpus)
        figure(c, "  into " + v.gpu_label(c.gpu) + " (" + c.gpu + ")");
  }
  out << ' ' << platform_verification_line(r, true) << '\n';
}

}  // namespace gdsb::topo
