#include "cufile_evidence.hpp"

#include <sstream>
#include <string_view>

#include "gdsb/gpu/cufile_errors.hpp"
#include "gdsb/gpu/path_evidence.hpp"

namespace gdsb::doctor::detail {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Every line of a run's evidence, warnings and (multi-line) failure reason, trimmed.
std::vector<std::string> all_lines(const RunResult& r) {
  std::vector<std::string> out = r.path.evidence;
  out.insert(out.end(), r.path.warnings.begin(), r.path.warnings.end());
  std::istringstream in(r.reason);
  for (std::string l; std::getline(in, l);) {
    const auto first = l.find_first_not_of(" \t");
    if (first != std::string::npos) out.push_back(l.substr(first));
  }
  return out;
}

// Lines whose cuFile record satisfies pred(message).
template <typename Pred>
std::vector<std::string> records_where(const RunResult& r, Pred pred) {
  std::vector<std::string> out;
  for (const auto& l : all_lines(r))
    if (const auto rec = gpu::parse_log_record(l); rec && pred(rec->message)) out.push_back(l);
  return out;
}

// "error creating udev_device for block device dev_no: 0:53" -> "0".
std::string udev_device_major(std::string_view message) {
  constexpr std::string_view kStart = "error creating udev_device for block device dev_no:";
  if (!starts_with(message, kStart)) return {};
  std::string rest(message.substr(kStart.size()));
  const auto first = rest.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  rest = rest.substr(first);
  const auto colon = rest.find(':');
  return colon == std::string::npos ? std::string() : rest.substr(0, colon);
}

}  // namespace

std::vector<std::string> udev_lookup_failures(const RunResult& r) {
  return records_where(r, [](std::string_view m) {
    const std::string major = udev_device_major(m);
    return starts_with(m, "udev property not found:") || (!major.empty() && major != "0");
  });
}

std::vector<std::string> udev_record_missing(const RunResult& r) {
  std::vector<std::string> out;
  for (const auto& l : all_lines(r))
    if (starts_with(l, "hint: " + std::string(gpu::cufile::kNoUdevHint))) out.push_back(l);
  return out;
}

std::vector<std::string> no_block_device(const RunResult& r) {
  std::vector<std::string> out;
  for (const auto& l : all_lines(r))
    if (starts_with(l, "hint: ") && l.find(", which is no block device (/sys/dev/block/") !=
                                        std::string::npos)
      out.push_back(l);
  for (auto& l : records_where(r, [](std::string_view m) { return udev_device_major(m) == "0"; }))
    out.push_back(std::move(l));
  return out;
}

std::vector<std::string> bar1_exhausted(const RunResult& r) {
  const std::string label = gpu::cufile::error_label(5036);  // CU_FILE_GPU_MEMORY_PINNING_FAILED
  std::vector<std::string> out;
  for (const auto& l : all_lines(r))
    if (l.find("failed: " + label) != std::string::npos) out.push_back(l);
  for (auto& l :
       records_where(r, [](std::string_view m) { return starts_with(m, "Inc-bar-usage failed"); }))
    out.push_back(std::move(l));
  return out;
}

}  // namespace gdsb::doctor::detail
