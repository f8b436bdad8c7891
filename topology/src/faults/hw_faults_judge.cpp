// judge_faults (hw_faults.hpp): what the fault facts of a snapshot mean for the node.
#include <algorithm>
#include <cstdio>

#include "gdsb/topo/model.hpp"
#include "gdsb/units.hpp"

namespace gdsb::topo {
namespace {

std::string device_word(const Snapshot& s, const std::string& bdf) {
  const Device* d = s.find(bdf);
  if (!d) return "device";
  switch (d->role) {
    case Role::Gpu: return "GPU";
    case Role::Nvme: return "NVMe";
    case Role::Nic: return "NIC";
    case Role::RootPort:
    case Role::SwitchUpstream:
    case Role::SwitchDownstream: return "port";
    default: return "device";
  }
}

// "11:43:14" from the log's clock, else "+5107.6 s after boot", else "".
std::string when_text(const LogTime& t) {
  if (t.wall.size() >= 8) return t.wall.substr(t.wall.size() - 8);
  if (t.uptime_s) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "+%.1f s after boot", *t.uptime_s);
    return buf;
  }
  return {};
}

// Whether the log's last boot is the boot the facts are of: a log that names its boot (a
// journal) may be of an earlier one; one that does not is taken to end in this boot.
bool log_is_this_boot(const HwFaults& f) {
  const KernelLog& log = *f.kernel_log;
  return f.boot_id.empty() || log.boot_id.empty() || boot_id_key(f.boot_id) == boot_id_key(log.boot_id);
}

// Whether `pos` (the known-good file's or the last delivered check's) had seen `e` whole: the
// same GPU and code with the same last record (or, in /dev/kmsg, a record at or before its cursor).
bool seen_at(const LogPosition& pos, const XidEvent& e) {
  if (pos.seq && e.last.seq && *e.last.seq <= *pos.seq) return true;
  return std::any_of(pos.xids.begin(), pos.xids.end(),
                     [&](const XidEvent& x) { return x.bdf == e.bdf && x.code == e.code && x.last == e.last; });
}

// The finding's fields of an Xid event, and its words: "Xid 79 (fallen off the bus) x3, last at 11:43:14".
std::string xid_event_words(const XidEvent& e, FaultFinding& f) {
  f.kind = FaultKind::Xid;
  f.bdf = e.bdf;
  f.xid = e.code;
  f.count = e.count;
  f.when = when_text(e.last);
  return xid_words(e.code, e.count, f.when);
}

// An Xid listed as history: of an earlier boot, or seen by the known-good file.
FaultFinding xid_history(const Snapshot& s, const FaultBaseline& b, const XidEvent& e, const std::string& when) {
  FaultFinding f;
  const std::string what = xid_event_words(e, f);
  f.severity = FaultSeverity::History;
  f.device = gpu_of_node(s, b, e.bdf) != GpuOfNode::NotKnown ? "GPU" : device_word(s, e.bdf);
  f.action = "none (not judged)";
  f.words = (f.device == "GPU" ? "GPU " : "") + e.bdf + " " + what + ", " + when + ": not judged";
  return f;
}

void judge_xids(const Snapshot& s, const FaultBaseline& b, std::vector<FaultFinding>& out) {
  if (!s.faults.kernel_log) return;
  const KernelLog& log = *s.faults.kernel_log;
  for (const XidEvent& e : log.earlier_xids) out.push_back(xid_history(s, b, e, "in an earlier boot"));
  const bool this_boot = log_is_this_boot(s.faults);
  const std::string boot = log_boot_key(s.faults);
  const bool known_good_here = !boot.empty() && b.known_good_log.boot == boot;
  const bool reported_here = !boot.empty() && b.reported.boot == boot;
  for (const XidEvent& e : log.xids) {
    if (!this_boot) {
      out.push_back(xid_history(s, b, e, "in an earlier boot"));
      continue;
    }
    if (reported_here && seen_at(b.reported, e)) continue;  // reported by a check whose verdict was delivered
    if (known_good_here && seen_at(b.known_good_log, e)) {
      out.push_back(xid_history(s, b, e, "before the known-good file"));
      continue;
    }
    const XidRow* row = find_xid(e.code);
    FaultFinding f;
    const std::string what = xid_event_words(e, f);
    f.device = device_word(s, e.bdf);
    const GpuOfNode where = gpu_of_node(s, b, e.bdf);
    if (where == GpuOfNode::Missing) {
      out.push_back(missing_gpu_xid(e.bdf, e.code, e.count, f.when));
      continue;
    }
    if (where == GpuOfNode::NotKnown) {
      f.kind = FaultKind::XidNotOurGpu;
      f.action = "check which node the log is from";
      f.words = e.bdf + " " + what + ": not a GPU of this node (a log of another node?)";
      out.push_back(std::move(f));
      continue;
    }
    f.device = "GPU";
    bool drains = row && row->drains && !row->user_program;
    f.action = row ? std::string(xid_bucket_words(row->bucket)) : "contact support";
    if (e.code == 154 && e.recovery_action) {
      const auto a = recovery_action_from_code(*e.recovery_action);
      drains = a && *a != RecoveryAction::None;
      f.action = a ? std::string(recovery_action_words(*a)) : "contact support";
    }
    f.severity = drains ? FaultSeverity::Critical : FaultSeverity::Warning;
    const std::string who = e.process.empty() || !row || !row->user_program ? "" : " (" + e.process + ")";
    f.words = "GPU " + e.bdf + " " + what + who + ": " + (drains ? "drain, " : "") + f.action;
    out.push_back(std::move(f));
  }
}

void judge_gpu_errors(const Snapshot& s, std::vector<FaultFinding>& out) {
  for (const auto& [gpu_bdf, g] : s.faults.gpu_errors) {
    const std::string& bdf = gpu_bdf;  // a lambda may not capture a structured binding (clang < 16)
    auto add = [&](FaultKind k, FaultSeverity sev, uint64_t count, std::string action, const std::string& what) {
      FaultFinding f;
      f.kind = k;
      f.severity = sev;
      f.bdf = bdf;
      f.device = "GPU";
      f.count = count;
      f.action = std::move(action);
      f.words = "GPU " + bdf + " " + what + ": " + (sev == FaultSeverity::Critical ? "drain, " : "") + f.action;
      out.push_back(std::move(f));
    };
    if (g.ecc_volatile_uncorrected && *g.ecc_volatile_uncorrected > 0)
      add(FaultKind::EccUncorrectable, FaultSeverity::Critical, *g.ecc_volatile_uncorrected, "reset the GPU",
          std::to_string(*g.ecc_volatile_uncorrected) + " uncorrectable ECC errors since the driver loaded");
    if (g.remap_failed.value_or(false))
      add(FaultKind::RemapFailed, FaultSeverity::Critical, g.remapped_rows_uncorrectable.value_or(0),
          "send the GPU for service", "row remapping failed");
    else if (g.remap_pending.value_or(false))
      add(FaultKind::RemapPending, FaultSeverity::Warning, g.remapped_rows_uncorrectable.value_or(0),
          "reset the GPU when it is idle", "memory rows wait to be remapped");
    // The driver's recovery action (NVML): the same verdict Xid 154 announces in the log, read
    // now, so a check after the log rotated (or without root) still sees it.
    if (g.recovery_action && *g.recovery_action != 0) {
      // Critical as Xid 154 with an action is: every action needs the GPU out of service.
      const auto a = recovery_action_from_code(*g.recovery_action);
      add(FaultKind::GpuRecoveryAction, FaultSeverity::Critical, static_cast<uint64_t>(*g.recovery_action),
          a ? std::string(recovery_action_words(*a)) : "contact support",
          "recovery action " + std::to_string(*g.recovery_action) + " (the driver's, NVML)");
    }
    if (g.retired_pages_pending.value_or(false))
      add(FaultKind::RetiredPagesPending, FaultSeverity::Warning, g.retired_pages_dbe.value_or(0),
          "reload the driver (reset the GPU) when it is idle", "retired pages wait for a driver reload");
  }
}

// Counters restart at boot: a known-good file of another boot is no baseline, the boot is.
// The seconds from the known-good file to this collection where both are of this boot.
std::optional<double> same_boot_window(const FaultBaseline& b, const HwFaults& f) {
  if (b.boot_id.empty() || b.boot_id != f.boot_id || !b.taken_unix_s || !f.collected_unix_s) return std::nullopt;
  return static_cast<double>(*f.collected_unix_s - *b.taken_unix_s);
}

// NVLink counters. A replay (the link resent a packet) or a recovery (the link retrained) is
// an event: one since the known-good file of this boot is a warning, as NVIDIA's DCGM health
// watch counts any (it fails the GPU; we do not drain on it). Counted since boot with no
// known-good file of this boot they are not judged: when they happened is unknown, and
// long-running healthy H100 fleets show some (DCGM 4.6.1's lifetime check flagged them,
// aws/eks-node-monitoring-agent#261). CRC errors matter by rate (FaultThresholds).
void judge_nvlinks(const Snapshot& s, const FaultBaseline& b, const FaultThresholds& th,
                   std::vector<FaultFinding>& out) {
  const HwFaults& hf = s.faults;
  const auto window = same_boot_window(b, hf);
  const bool same_boot = window && *window > 0;
  for (const auto& [gpu_bdf, g] : hf.gpu_errors) {
    const std::string& bdf = gpu_bdf;  // a lambda may not capture a structured binding (clang < 16)
    const auto base = same_boot ? b.nvlinks.find(bdf) : b.nvlinks.end();
    const bool has_base = base != b.nvlinks.end();
    // The window: since the known-good file, else since boot (NVML counts since the driver loaded).
    const double seconds = has_base ? *window : hf.uptime_s.value_or(0);
    const std::string since = has_base ? "since the known-good file" : "since boot";
    auto add = [&](FaultKind k, uint64_t count, const std::string& what, double per_hour) {
      FaultFinding f;
      f.kind = k;
      f.bdf = bdf;
      f.device = "GPU";
      f.count = count;
      f.rate_per_hour = per_hour;
      f.action = "check the NVLink (nvidia-smi nvlink -e); service the board if it goes on";
      f.words = "GPU " + bdf + " " + what + ": " + f.action;
      out.push_back(std::move(f));
    };
    for (const NvLinkErrorCounters& now : g.nvlinks) {
      const NvLinkErrorCounters* then = nullptr;
      if (has_base)
        for (const auto& c : base->second)
          if (c.link == now.link) then = &c;
      if (has_base && then == nullptr) continue;  // a link the known-good file lacks: no baseline
      const auto rise = [&](std::optional<uint64_t> NvLinkErrorCounters::*m) -> uint64_t {
        const auto& n = now.*m;
        if (!n) return 0;
        const uint64_t t = then != nullptr && (then->*m) && *(then->*m) <= *n ? *(then->*m) : 0;
        return *n - t;
      };
      const std::string link = "NVLink " + std::to_string(now.link);
      if (has_base) {
        const uint64_t replays = rise(&NvLinkErrorCounters::replay), recoveries = rise(&NvLinkErrorCounters::recovery);
        if (replays + recoveries > 0) {
          std::string what;
          if (recoveries > 0) what = "retrained " + std::to_string(recoveries) + (recoveries == 1 ? " time" : " times");
          if (replays > 0)
            what += (what.empty() ? "" : " and ") + std::string("replayed ") + std::to_string(replays) +
                    (replays == 1 ? " packet" : " packets");
          add(FaultKind::NvLinkErrors, replays + recoveries, link + " " + what + " " + since, 0);
        }
      }
      const uint64_t crc = rise(&NvLinkErrorCounters::crc_flit) + rise(&NvLinkErrorCounters::crc_data);
      if (crc == 0 || seconds <= 0 || static_cast<double>(crc) / seconds < th.nvlink_crc_per_second) continue;
      const double per_second = static_cast<double>(crc) / seconds;
      add(FaultKind::NvLinkCrcRate, crc,
          link + " " + std::to_string(crc) + " CRC errors " + since + " (" + format_fixed(per_second, 0) +
              "/s, past " + std::to_string(static_cast<long long>(th.nvlink_crc_per_second)) + "/s)",
          per_second * 3600);
    }
  }
}

uint64_t rise_of(const std::map<std::string, uint64_t>& now, const std::map<std::string, uint64_t>* then,
                 std::string& top_kind) {
  uint64_t total = 0, top = 0;
  for (const auto& [kind, n] : now) {
    uint64_t t = 0;
    if (then)
      if (const auto it = then->find(kind); it != then->end() && it->second <= n) t = it->second;
    const uint64_t d = n - t;
    total += d;
    if (d > top) top = d, top_kind = kind;
  }
  return total;
}

void judge_aer(const Snapshot& s, const FaultBaseline& b, const FaultThresholds& th, std::vector<FaultFinding>& out) {
  const HwFaults& f = s.faults;
  const auto window = same_boot_window(b, f);
  for (const auto& [bdf, now] : f.aer) {
    if (!now.counters_known) continue;
    // A device's counters lower than the known-good file's are measured from boot (rise_of).
    const auto it = b.aer.find(bdf);
    const AerCounters* then = window && it != b.aer.end() && it->second.counters_known ? &it->second : nullptr;
    double hours = 0;
    if (then) hours = *window / 3600;
    else if (f.uptime_s) hours = *f.uptime_s / 3600;
    const std::string dev = device_word(s, bdf);
    const std::string since = then ? "since the known-good file" : "since boot";
    std::string kind;
    const uint64_t cor = rise_of(now.correctable, then ? &then->correctable : nullptr, kind);
    if (cor > 0 && hours > 0 && static_cast<double>(cor) / hours > th.aer_correctable_per_hour) {
      FaultFinding x;
      x.kind = FaultKind::AerCorrectableRate;
      x.bdf = bdf;
      x.device = dev;
      x.count = cor;
      x.aer_kind = kind;
      x.rate_per_hour = static_cast<double>(cor) / hours;
      x.action = "reseat the card, replace the cable or riser";
      const std::string rate = format_fixed(x.rate_per_hour, 0);
      const AerKindRow* row = find_aer_kind(AerClass::Correctable, kind);
      x.words = dev + " " + bdf + " " + std::to_string(cor) + " correctable PCIe errors " + since + " (" + rate +
                "/h; most " + kind + (row ? ": " + std::string(row->meaning) : "") + "): " + x.action;
      out.push_back(std::move(x));
    }
    for (const bool fatal : {false, true}) {
      std::string k;
      const auto& cur = fatal ? now.fatal : now.nonfatal;
      const uint64_t n = rise_of(cur, then ? (fatal ? &then->fatal : &then->nonfatal) : nullptr, k);
      if (n == 0) continue;
      FaultFinding x;
      x.kind = FaultKind::AerUncorrectable;
      x.severity = fatal ? FaultSeverity::Critical : FaultSeverity::Warning;
      x.bdf = bdf;
      x.device = dev;
      x.count = n;
      x.aer_kind = k;
      x.action = "reseat the card, replace the cable or riser";
      x.words = dev + " " + bdf + " " + std::to_string(n) + (fatal ? " fatal" : " non-fatal") +
                " uncorrectable PCIe errors " + since + " (most " + k + "): " + (fatal ? "drain, " : "") + x.action;
      out.push_back(std::move(x));
    }
  }
}

}  // namespace

std::string xid_words(int code, uint64_t count, const std::string& when) {
  const XidRow* row = find_xid(code);
  const std::string meaning = row ? std::string(row->meaning) : "not in NVIDIA's Xid catalog";
  const std::string times = count > 1 ? " x" + std::to_string(count) + ", last" : "";
  const std::string at = when.empty() ? "" : (when[0] == '+' ? " " : " at ") + when;
  return "Xid " + std::to_string(code) + " (" + meaning + ")" + times + at;
}

GpuOfNode gpu_of_node(bool gpu_on_bus, bool known_good_lists_it, bool own_log) {
  if (gpu_on_bus) return GpuOfNode::Present;
  return known_good_lists_it || own_log ? GpuOfNode::Missing : GpuOfNode::NotKnown;
}

GpuOfNode gpu_of_node(const Snapshot& s, const FaultBaseline& b, const std::string& bdf) {
  const Device* d = s.find(bdf);
  const bool known = std::find(b.known_gpus.begin(), b.known_gpus.end(), bdf) != b.known_gpus.end();
  // Read in the boot the facts were collected in (boot ids are random, 128 bits): this node's.
  const auto& log = s.faults.kernel_log;
  const bool own_log = log && !log->boot_id.empty() && log->boot_id == s.faults.boot_id;
  return gpu_of_node(d && d->role == Role::Gpu, known, own_log);
}

FaultFinding missing_gpu_xid(const std::string& bdf, int xid, uint64_t count, const std::string& when) {
  FaultFinding f;
  f.kind = FaultKind::Xid;
  f.severity = FaultSeverity::Critical;
  f.bdf = bdf;
  f.device = "GPU";
  f.xid = xid;
  f.count = count;
  f.when = when;
  // A GPU gone from the bus comes back with the node's reboot (the catalog's Xid 79 row,
  // RESTART_BM); a code whose own remedy drains says that one.
  const XidRow* row = find_xid(xid);
  f.action = std::string(xid_bucket_words(row && row->drains && !row->user_program ? row->bucket
                                                                                   : XidBucket::RebootNode));
  f.words = "GPU " + bdf + " missing: " + xid_words(xid, count, when) + ": drain, " + f.action;
  return f;
}

std::string_view health_action_name(const FaultFinding& f) {
  switch (f.severity) {
    case FaultSeverity::Critical: return "drain";
    case FaultSeverity::Warning: return "warn";
    case FaultSeverity::History: return "history";
  }
  return "warn";
}

std::string_view fault_severity_name(FaultSeverity s) {
  switch (s) {
    case FaultSeverity::Critical: return "critical";
    case FaultSeverity::Warning: return "warning";
    case FaultSeverity::History: return "history";
  }
  return "warning";
}

std::string boot_id_key(std::string_view boot_id) {
  std::string out;
  for (const char c : boot_id)
    if (c != '-') out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::string log_boot_key(const HwFaults& f) {
  if (!f.boot_id.empty()) return boot_id_key(f.boot_id);
  if (!f.kernel_log) return {};
  if (!f.kernel_log->boot_id.empty()) return boot_id_key(f.kernel_log->boot_id);
  if (!f.kernel_log->boot_start.empty()) return "started " + f.kernel_log->boot_start;
  return {};
}

LogPosition log_position(const HwFaults& f) {
  LogPosition p;
  p.boot = log_boot_key(f);
  if (!f.kernel_log) return p;
  p.seq = f.kernel_log->last_seq;
  if (log_is_this_boot(f)) p.xids = f.kernel_log->xids;
  return p;
}

std::string_view fault_kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::Xid: return "xid";
    case FaultKind::XidNotOurGpu: return "xid_not_our_gpu";
    case FaultKind::EccUncorrectable: return "ecc_uncorrectable";
    case FaultKind::RemapFailed: return "remap_failed";
    case FaultKind::RemapPending: return "remap_pending";
    case FaultKind::RetiredPagesPending: return "retired_pages_pending";
    case FaultKind::NvLinkErrors: return "nvlink_errors";
    case FaultKind::NvLinkCrcRate: return "nvlink_crc_rate";
    case FaultKind::GpuRecoveryAction: return "gpu_recovery_action";
    case FaultKind::AerCorrectableRate: return "aer_correctable_rate";
    case FaultKind::AerUncorrectable: return "aer_uncorrectable";
  }
  return "unknown";
}

std::vector<FaultFinding> judge_faults(const Snapshot& s, const FaultBaseline& baseline,
                                       const FaultThresholds& thresholds) {
  std::vector<FaultFinding> out;
  judge_xids(s, baseline, out);
  judge_gpu_errors(s, out);
  judge_nvlinks(s, baseline, thresholds, out);
  judge_aer(s, baseline, thresholds, out);
  // Critical first, then warnings, then history; by device within each.
  const auto rank = [](FaultSeverity v) { return v == FaultSeverity::Critical ? 0 : v == FaultSeverity::Warning ? 1 : 2; };
  std::stable_sort(out.begin(), out.end(), [&](const FaultFinding& a, const FaultFinding& b) {
    if (a.severity != b.severity) return rank(a.severity) < rank(b.severity);
    return a.bdf < b.bdf;
  });
  return out;
}

}  // namespace gdsb::topo
