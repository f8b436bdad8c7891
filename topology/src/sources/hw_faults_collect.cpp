// Readers of hw_faults_collect.hpp.
#include "gdsb/topo/hw_faults_collect.hpp"

#include <charconv>
#include <chrono>

#include "gdsb/error.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace {

// The kernel closes each file with a TOTAL_ERR_* line (TOTAL_ERR_COR, TOTAL_ERR_NONFATAL,
// TOTAL_ERR_FATAL): kept apart from the kinds.
bool is_total(std::string_view name) { return name.substr(0, 10) == "TOTAL_ERR_"; }

}  // namespace

void parse_aer_file(std::string_view text, AerFile which, AerCounters& into, const std::string& what) {
  auto& kinds = which == AerFile::Correctable ? into.correctable
                : which == AerFile::NonFatal  ? into.nonfatal
                                              : into.fatal;
  auto& total = which == AerFile::Correctable ? into.total_correctable
                : which == AerFile::NonFatal  ? into.total_nonfatal
                                              : into.total_fatal;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(std::min(nl + 1, text.size()));
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t sp = line.rfind(' ');
    uint64_t v = 0;
    const std::string_view name = sp == std::string_view::npos ? std::string_view{} : line.substr(0, sp);
    const std::string_view digits = sp == std::string_view::npos ? line : line.substr(sp + 1);
    const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (name.empty() || ec != std::errc() || p != digits.data() + digits.size())
      throw RuntimeError(what + ": line " + std::to_string(line_no) + " is not \"<kind> <count>\": \"" +
                         std::string(line.substr(0, 80)) + "\"");
    if (is_total(name)) total = v;
    else kinds[std::string(name)] = v;
  }
  into.counters_known = true;
}

std::optional<AerCounters> read_aer_dir(const fs::path& device_dir) {
  AerCounters out;
  bool any = false;
  for (AerFile f : {AerFile::Correctable, AerFile::NonFatal, AerFile::Fatal}) {
    const fs::path file = device_dir / std::string(aer_file_name(f));
    const auto text = detail::read_text(file);
    if (!text) continue;
    parse_aer_file(*text, f, out, file.string());
    any = true;
  }
  if (!any) return std::nullopt;
  return out;
}

std::vector<std::string> aer_status_bits(std::string_view flags, AerClass cls) {
  std::vector<std::string> out;
  while (!flags.empty()) {
    const size_t sp = std::min(flags.find(' '), flags.size());
    const std::string_view flag = flags.substr(0, sp);
    flags.remove_prefix(std::min(sp + 1, flags.size()));
    if (flag.size() < 2 || flag.back() != '+') continue;
    const std::string_view name = flag.substr(0, flag.size() - 1);
    const AerKindRow* row = find_aer_kind_lspci(cls, name);
    out.emplace_back(row ? row->sysfs_name : name);
  }
  return out;
}

GpuErrorCounters read_gpu_errors(const nvml::Library& lib, nvml::Device d,
                                 const std::function<void(nvml::Return)>& check) {
  auto seen = [&](nvml::Return rc) {
    if (check) check(rc);
  };
  auto take = [&](const auto& r, auto& field) {
    seen(r.rc);
    if (r.ok()) field = r.value;
  };
  GpuErrorCounters g;
  using MT = nvml::MemoryErrorType;
  using CT = nvml::EccCounterType;
  take(lib.total_ecc_errors(d, MT::Corrected, CT::Volatile), g.ecc_volatile_corrected);
  take(lib.total_ecc_errors(d, MT::Uncorrected, CT::Volatile), g.ecc_volatile_uncorrected);
  take(lib.total_ecc_errors(d, MT::Corrected, CT::Aggregate), g.ecc_aggregate_corrected);
  take(lib.total_ecc_errors(d, MT::Uncorrected, CT::Aggregate), g.ecc_aggregate_uncorrected);
  take(lib.retired_pages_count(d, nvml::PageRetirementCause::MultipleSingleBitEcc), g.retired_pages_sbe);
  take(lib.retired_pages_count(d, nvml::PageRetirementCause::DoubleBitEcc), g.retired_pages_dbe);
  take(lib.retired_pages_pending(d), g.retired_pages_pending);
  const auto rows = lib.remapped_rows(d);
  seen(rows.rc);
  if (rows.ok()) {
    g.remapped_rows_correctable = rows.value.correctable;
    g.remapped_rows_uncorrectable = rows.value.uncorrectable;
    g.remap_pending = rows.value.pending != 0;
    g.remap_failed = rows.value.failed != 0;
  }
  take(lib.clocks_event_reasons(d), g.clock_event_reasons);
  // The driver's own verdict on the GPU (R560 and newer; NOT_SUPPORTED before).
  if (const auto a = lib.field_value_uint(d, nvml::kFieldGpuRecoveryAction); a.rc != nvml::kErrorFunctionNotFound) {
    seen(a.rc);
    if (a.ok()) g.recovery_action = static_cast<int>(a.value);
  }
  // NVML answers NOT_SUPPORTED or INVALID_ARGUMENT past a GPU's last link.
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    NvLinkErrorCounters c;
    c.link = static_cast<int>(link);
    bool any = false;
    using NC = nvml::NvLinkErrorCounter;
    for (auto [counter, field] : {std::pair{NC::DlReplay, &c.replay}, std::pair{NC::DlRecovery, &c.recovery},
                                  std::pair{NC::DlCrcFlit, &c.crc_flit}, std::pair{NC::DlCrcData, &c.crc_data}}) {
      const auto r = lib.nvlink_error_counter(d, link, counter);
      if (r.rc == nvml::kErrorFunctionNotFound) return g;
      seen(r.rc);
      if (r.ok()) *field = r.value, any = true;
    }
    if (any) g.nvlinks.push_back(c);
  }
  return g;
}

void read_boot_clock(const fs::path& root, bool live, HwFaults& into) {
  if (const auto id = detail::read_text(root / "proc/sys/kernel/random/boot_id")) into.boot_id = detail::trim(*id);
  if (const auto up = detail::read_text(root / "proc/uptime")) {
    try {
      into.uptime_s = std::stod(*up);
    } catch (const std::exception&) {
    }
  }
  if (live)
    into.collected_unix_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace gdsb::topo
