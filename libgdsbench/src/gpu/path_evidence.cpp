#include "gdsb/gpu/path_evidence.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gdsb::gpu {
namespace {

std::string slurp(const std::string& path, bool* ok = nullptr) {
  std::ifstream in(path);
  if (ok != nullptr) *ok = static_cast<bool>(in);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// The number after " key=" (or "key=" at the start of the line); 0 when absent.
// (No std::regex here: GCC 12 reports false maybe-uninitialized errors in it under ASan.)
uint64_t field(const std::string& line, const std::string& key) {
  const std::string needle = key + "=";
  for (std::size_t at = line.find(needle); at != std::string::npos; at = line.find(needle, at + 1)) {
    if (at != 0 && !std::isspace(static_cast<unsigned char>(line[at - 1]))) continue;
    uint64_t v = 0;
    for (std::size_t i = at + needle.size(); i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])); ++i) {
      v = v * 10 + static_cast<uint64_t>(line[i] - '0');
    }
    return v;
  }
  return 0;
}

// Removes commas that directly precede } or ] (outside strings): cufile.json has them.
std::string strip_trailing_commas(const std::string& t) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < t.size()) {
        out += t[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == ',') {
      std::size_t j = i + 1;
      while (j < t.size() && std::isspace(static_cast<unsigned char>(t[j]))) ++j;
      if (j < t.size() && (t[j] == '}' || t[j] == ']')) continue;
    }
    out += c;
  }
  return out;
}

bool contains_any(const std::string& lowered, std::initializer_list<const char*> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](const char* w) { return lowered.find(w) != std::string::npos; });
}

// cuFile's records carry a level word between blanks ("... NOTICE  cufio-drv:851 ...").
bool is_log_record(const std::string& line) {
  static const char* const kLevels[] = {"ERROR", "WARN", "WARNING", "NOTICE", "INFO", "DEBUG", "TRACE"};
  for (const char* level : kLevels) {
    const std::string w(level);
    for (std::size_t at = line.find(w); at != std::string::npos; at = line.find(w, at + 1)) {
      const bool start_ok = at == 0 || std::isspace(static_cast<unsigned char>(line[at - 1]));
      const std::size_t end = at + w.size();
      const bool end_ok = end < line.size() && std::isspace(static_cast<unsigned char>(line[end]));
      if (start_ok && end_ok) return true;
    }
  }
  return false;
}

std::optional<bool> json_bool(const nlohmann::json& j, const char* section, const char* key) {
  if (!j.contains(section) || !j.at(section).is_object()) return std::nullopt;
  const auto& s = j.at(section);
  if (!s.contains(key) || !s.at(key).is_boolean()) return std::nullopt;
  return s.at(key).get<bool>();
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string yes_no(const std::optional<bool>& v, const char* unset) {
  if (!v) return unset;
  return *v ? "true" : "false";
}

constexpr const char* kP2pFeature = "fflags CU_FILE_P2P_SUPPORTED";
constexpr const char* kNvmeP2pStatus = "nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED";

// The bit of cuFileDriverGetProperties that reports P2PDMA, or nullptr when none does:
// cuFile's own word, as gdscheck -p prints it ("NVMe P2PDMA : Supported").
const char* p2pdma_property(const DriverProps& p) {
  if (!p.known) return nullptr;
  if (p.p2p_supported) return kP2pFeature;
  if (p.nvme_p2p_supported) return kNvmeP2pStatus;
  return nullptr;
}

std::string on_off(bool b) { return b ? "on" : "off"; }

}  // namespace

NvfsSnapshot parse_nvfs_stats(std::string_view text) {
  NvfsSnapshot s;
  s.loaded = true;
  s.stats_readable = true;
  std::istringstream in{std::string(text)};
  std::string line;
  bool have_reads = false, have_writes = false;
  while (std::getline(in, line)) {
    const std::string head = trim(line.substr(0, line.find(':')));
    if (head == "NVFS Driver(version" || line.rfind("NVFS Driver(version:", 0) == 0) {
      const auto a = line.find(':'), b = line.find(')');
      if (a != std::string::npos && b != std::string::npos && b > a) {
        s.version = trim(line.substr(a + 1, b - a - 1));
        std::replace(s.version.begin(), s.version.end(), ':', '.');
      }
    } else if (head == "Reads" && !have_reads && line.find(" n=") != std::string::npos) {
      s.reads = field(line, "n");
      s.read_mib = field(line, "readMiB");
      have_reads = true;
    } else if (head == "Writes" && !have_writes && line.find(" n=") != std::string::npos) {
      s.writes = field(line, "n");
      s.write_mib = field(line, "writeMiB");
      have_writes = true;
    }
  }
  return s;
}

NvfsSnapshot read_nvfs(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  bool ok = false;
  const std::string stats = slurp(dir + "/stats", &ok);
  NvfsSnapshot s = ok ? parse_nvfs_stats(stats) : NvfsSnapshot{};
  s.loaded = true;
  s.stats_readable = ok;
  bool vok = false;
  const std::string v = trim(slurp(dir + "/version", &vok));
  if (vok && !v.empty()) s.version = v;
  return s;
}

std::string strip_json_comments(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  bool in_string = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < t.size()) {
        out += t[++i];
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      while (i < t.size() && t[i] != '\n') ++i;
      out += '\n';
    } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
      i += 2;
      while (i + 1 < t.size() && !(t[i] == '*' && t[i + 1] == '/')) ++i;
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

std::string cufile_config_path(const char* env_value) {
  if (env_value != nullptr && *env_value != '\0') return env_value;
  return "/etc/cufile.json";
}

CufileConfig read_cufile_config(const std::string& path) {
  CufileConfig c;
  c.path = path;
  bool ok = false;
  const std::string raw = slurp(path, &ok);
  if (!ok) return c;
  c.found = true;
  c.text = strip_json_comments(raw);
  try {
    // cufile.json tolerates trailing commas in practice; nlohmann does not, so remove them.
    c.text = strip_trailing_commas(c.text);
    const auto j = nlohmann::json::parse(c.text);
    c.allow_compat_mode = json_bool(j, "properties", "allow_compat_mode");
    c.force_compat_mode = json_bool(j, "properties", "force_compat_mode");
    c.use_pci_p2pdma = json_bool(j, "properties", "use_pci_p2pdma");
    if (j.contains("properties") && j.at("properties").is_object()) {
      const auto& p = j.at("properties");
      for (auto [key, field] : {std::pair{"max_direct_io_size_kb", &c.max_direct_io_size_kb},
                                std::pair{"per_buffer_cache_size_kb", &c.per_buffer_cache_size_kb}})
        if (p.contains(key) && p.at(key).is_number_integer()) *field = p.at(key).get<long long>();
    }
    if (j.contains("logging") && j.at("logging").is_object()) {
      c.log_dir = j.at("logging").value("dir", std::string());
      c.log_level = j.at("logging").value("level", std::string());
    }
  } catch (const std::exception& e) {
    c.error = e.what();
  }
  return c;
}

std::string private_cufile_config(const CufileConfig& base, const std::string& log_dir,
                                  const std::string& default_level) {
  nlohmann::json j = nlohmann::json::object();
  if (base.found && base.error.empty()) j = nlohmann::json::parse(base.text);
  if (!j.contains("logging") || !j["logging"].is_object()) j["logging"] = nlohmann::json::object();
  j["logging"]["dir"] = log_dir;
  if (base.log_level.empty()) j["logging"]["level"] = default_level;
  return j.dump(2);
}

std::optional<CufileLogRecord> parse_log_record(std::string_view line) {
  const auto pid = line.find("[pid=");
  if (pid == std::string_view::npos) return std::nullopt;
  const auto close = line.find(']', pid);
  if (close == std::string_view::npos) return std::nullopt;
  std::istringstream in{std::string(line.substr(close + 1))};
  CufileLogRecord r;
  if (!(in >> r.level >> r.source) || !is_log_record(" " + r.level + " ")) return std::nullopt;
  std::getline(in >> std::ws, r.message);
  r.message = trim(r.message);
  return r;
}

std::vector<std::string> filter_log_lines(const std::vector<std::string>& lines,
                                          std::size_t max_lines) {
  // At INFO cuFile also dumps its configuration as JSON, whose lines
  // ("allow_compat_mode": true) match the words below but explain nothing: only records.
  std::vector<std::string> out;
  for (const auto& l : lines) {
    if (is_log_record(l) &&
        contains_any(lower(l), {"error", "warn", "fail", "compat", "udev", "nvfs", "nvidia-fs",
                                "p2p", "posix", "not supported", "bar1", "version"})) {
      if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    }
  }
  if (out.size() > max_lines) out.erase(out.begin(), out.end() - static_cast<long>(max_lines));
  return out;
}

std::vector<std::string> relevant_log_lines(const std::string& dir, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    std::ifstream in(e.path());
    std::string l;
    while (std::getline(in, l)) lines.push_back(trim(l));
  }
  return filter_log_lines(lines, max_lines);
}

int try_odirect_open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

FileFacts file_facts(const std::string& path, const std::string& mountinfo,
                     const std::string& udev_root, const std::string& sys_root) {
  FileFacts f;
  std::error_code ec;
  f.udev_database_present = std::filesystem::is_directory(udev_root + "/data", ec);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return f;
  const unsigned maj = major(st.st_dev), min = minor(st.st_dev);
  const std::string dev = std::to_string(maj) + ":" + std::to_string(min);
  f.device = dev;
  if (std::filesystem::is_directory(sys_root + "/dev/block", ec))
    f.block_device = std::filesystem::exists(sys_root + "/dev/block/" + dev, ec);
  if (S_ISREG(st.st_mode)) f.odirect_open_errno = try_odirect_open(path);
  f.udev_record = udev_root + "/data/b" + dev;
  f.udev_record_present = std::filesystem::exists(f.udev_record, ec);
  std::ifstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string id, parent, majmin;
    ls >> id >> parent >> majmin;
    if (majmin != dev) continue;
    const auto sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream rest(line.substr(sep + 3));
    rest >> f.fs_type;
    break;
  }
  return f;
}

std::optional<bool> parse_bool_env(const char* value) {
  if (value == nullptr) return std::nullopt;
  const std::string v = lower(value);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::optional<std::string> compat_certain_before_run(const PathFacts& f) {
  if (f.env_force_compat.value_or(false)) {
    return "CUFILE_FORCE_COMPAT_MODE is set in the environment";
  }
  if (f.config.force_compat_mode.value_or(false)) {
    return "properties.force_compat_mode is true in " + f.config.path;
  }
  if (!f.before.loaded && !f.config.use_pci_p2pdma.value_or(false)) {
    return "the nvidia-fs module is not loaded (/proc/driver/nvidia-fs absent) and "
           "properties.use_pci_p2pdma is not enabled, so cuFile can only use compat mode";
  }
  return std::nullopt;
}

PathReport decide_path(const PathFacts& f) {
  PathReport r;
  auto& ev = r.evidence;
  ev.push_back("libcufile: " + f.library);
  ev.push_back(f.config.found
                   ? "cufile.json " + f.config.path + ": allow_compat_mode=" +
                         yes_no(f.config.allow_compat_mode, "unset(default true)") +
                         " force_compat_mode=" + yes_no(f.config.force_compat_mode, "unset") +
                         " use_pci_p2pdma=" + yes_no(f.config.use_pci_p2pdma, "unset") +
                         (f.config.error.empty() ? "" : " (parse error: " + f.config.error + ")")
                   : "cufile.json " + f.config.path + ": not found (cuFile defaults apply)");
  if (f.env_force_compat) {
    ev.push_back(std::string("env CUFILE_FORCE_COMPAT_MODE=") + (*f.env_force_compat ? "true" : "false"));
  }
  if (f.props.known) {
    ev.push_back("cuFileDriverGetProperties: nvfs version " + std::to_string(f.props.nvfs_major) +
                 "." + std::to_string(f.props.nvfs_minor) + ", allow_compat " +
                 on_off(f.props.allow_compat) + ", P2P feature " +
                 on_off(p2pdma_property(f.props) != nullptr) + " (" + kP2pFeature + " " +
                 on_off(f.props.p2p_supported) + ", " + kNvmeP2pStatus + " " +
                 on_off(f.props.nvme_p2p_supported) + ")");
  }
  ev.push_back(f.before.loaded ? "nvidia-fs loaded (version " + f.before.version + ")"
                               : "nvidia-fs not loaded (/proc/driver/nvidia-fs absent)");
  ev.push_back(std::string("file handle registration: ") + (f.handles_registered ? "ok" : "failed"));
  for (const auto& l : f.log_lines) ev.push_back("cuFile log: " + l);

  const uint64_t dr = f.after.reads - std::min(f.after.reads, f.before.reads);
  const uint64_t dw = f.after.writes - std::min(f.after.writes, f.before.writes);
  const bool nvfs_moved = f.before.stats_readable && f.after.stats_readable && (dr + dw) > 0;
  if (f.before.stats_readable && f.after.stats_readable) {
    ev.push_back("nvidia-fs counters during the run: reads +" + std::to_string(dr) + ", writes +" +
                 std::to_string(dw) + " (cuFile ops: " + std::to_string(f.reads) + " reads, " +
                 std::to_string(f.writes) + " writes)");
  }
  const bool log_says_compat = std::any_of(f.log_lines.begin(), f.log_lines.end(), [](const std::string& l) {
    return lower(l).find("compat") != std::string::npos;
  });

  std::string why_compat;
  if (f.env_force_compat.value_or(false)) {
    why_compat = "CUFILE_FORCE_COMPAT_MODE is set";
  } else if (f.config.force_compat_mode.value_or(false)) {
    why_compat = "force_compat_mode is true in " + f.config.path;
  } else if (nvfs_moved) {
    r.path_used = path_used_name(PathUsed::GdsNvfs);
    r.decided_by = "nvidia-fs counters moved during the run (reads +" + std::to_string(dr) + ", writes +" +
                   std::to_string(dw) + ")";
    return r;
  } else if (f.before.loaded && (f.reads + f.writes) > 0 && f.before.stats_readable) {
    why_compat = "nvidia-fs is loaded but its counters did not move during " +
                 std::to_string(f.reads + f.writes) +
                 " cuFile ops (or its rw statistics are disabled: nvidia_fs rw_stats_enabled=0)";
  } else if (const char* p2p = p2pdma_property(f.props); !f.before.loaded && p2p != nullptr) {
    if (!log_says_compat) {
      r.path_used = path_used_name(PathUsed::GdsP2pdma);
      r.decided_by = std::string("cuFileDriverGetProperties: ") + p2p + " set, nvidia-fs not loaded";
      return r;
    }
    why_compat = std::string("cuFile's log reports compat mode although its properties set ") + p2p;
  } else if (!f.before.loaded) {
    // use_pci_p2pdma only asks for P2PDMA: cuFile sets a P2PDMA property when it can do it.
    why_compat = f.props.known
                     ? std::string("the nvidia-fs module is not loaded and cuFileDriverGetProperties sets "
                                   "neither ") + kP2pFeature + " nor " + kNvmeP2pStatus
                     : "the nvidia-fs module is not loaded and cuFileDriverGetProperties did not "
                       "answer, so no property of cuFile reports P2PDMA";
    if (f.config.use_pci_p2pdma.value_or(false)) {
      why_compat += " (use_pci_p2pdma is true in " + f.config.path + ")";
    }
  } else if (log_says_compat) {
    why_compat = "cuFile's log reports compat mode";
  } else {
    why_compat = "no evidence of GDS DMA (nvidia-fs statistics unreadable)";
  }
  r.path_used = path_used_name(PathUsed::Compat);
  r.decided_by = why_compat;
  r.warnings.push_back("cuFile ran in compat mode (POSIX I/O through cuFile's bounce buffers), "
                       "not GPUDirect Storage: " + why_compat);
  return r;
}

}  // namespace gdsb::gpu
