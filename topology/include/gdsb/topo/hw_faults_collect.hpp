// The readers behind Snapshot::faults (hw_faults.hpp) other than the kernel log's
// (kernel_log.hpp): sysfs AER counters, lspci -vvv's AER status lines, NVML's error
// counters, the boot's identity and uptime. Each reads one recording's format; the
// collectors (sysfs, lspci text, sources.cpp) call them.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

#include "gdsb/nvml.hpp"
#include "gdsb/topo/hw_faults.hpp"

namespace gdsb::topo {

// One aer_dev_* file's text ("RxErr 0\nBadTLP 3\n...TOTAL_ERR_COR 3\n") into `into`. Throws
// RuntimeError naming `what` on a line that is not "<name> <count>".
void parse_aer_file(std::string_view text, AerFile which, AerCounters& into, const std::string& what);
// A device directory's aer_dev_correctable, aer_dev_nonfatal and aer_dev_fatal; nullopt when
// it has none (no AER capability, or a kernel before 4.19). A damaged file throws, naming it.
std::optional<AerCounters> read_aer_dir(const std::filesystem::path& device_dir);
// lspci -vvv's "UESta:" or "CESta:" flags ("DLP- SDES- ... UnsupReq+ ACSViol-"): the set bits
// by the kernel's name.
std::vector<std::string> aer_status_bits(std::string_view flags, AerClass cls);

// What NVML says of one GPU's errors. `check` sees every return code (it throws for one
// that means a failing GPU); NOT_SUPPORTED and a missing symbol leave the field unknown.
GpuErrorCounters read_gpu_errors(const nvml::Library& lib, nvml::Device d,
                                 const std::function<void(nvml::Return)>& check = {});

// boot_id, uptime and the wall clock under a root ("/" live): DIR/proc/sys/kernel/random/boot_id,
// DIR/proc/uptime; the wall clock only when live.
void read_boot_clock(const std::filesystem::path& root, bool live, HwFaults& into);

}  // namespace gdsb::topo
