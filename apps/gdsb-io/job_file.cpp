#include "job_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"
#include "validate.hpp"
#include "values.hpp"

namespace gdsb::io {
namespace {

struct Entry {
  std::string key;
  std::string value;
  int line = 0;
  std::string section;
};

struct Section {
  std::string name;
  int line = 0;
  std::vector<Entry> entries;
  std::optional<int> phase;
};

using Setter = std::function<void(Workload&, const std::string& value, const std::string& what)>;

// The job-file key that corresponds to a field, for messages.
std::string job_key(Field f) {
  switch (f) {
    case Field::File:
      return "filename";
    case Field::Dir:
      return "directory";
    case Field::Threads:
      return "num_threads";
    case Field::Size:
      return "size";
    case Field::Offset:
      return "offset";
    case Field::IoSize:
      return "bs";
    case Field::Xfer:
      return "xfer_type";
    case Field::Pattern:
      return "rw";
    case Field::Alignment:
      return "alignment";
    case Field::Unaligned:
      return "unaligned";
    case Field::Mixed:
      return "rwmixread";
    case Field::Odirect:
      return "odirect";
    case Field::Engine:
      return "engine";
    case Field::Iodepth:
      return "iodepth";
    case Field::Repeat:
      return "repeat";
    case Field::Duration:
      return "runtime";
    case Field::Warmup:
      return "warmup";
    case Field::BatchSize:
      return "batch_size";
  }
  return "?";
}

uint32_t to_u32(const std::string& v, const std::string& what) {
  return static_cast<uint32_t>(parse_uint(v, what, UINT32_MAX));
}

const std::map<std::string, Setter>& key_table() {
  static const std::map<std::string, Setter> table = {
      {"name", [](Workload& w, const std::string& v, const std::string&) { w.name = v; }},
      {"xfer_type",
       [](Workload& w, const std::string& v, const std::string& k) { w.xfer = parse_xfer(v, k); }},
      {"rw", [](Workload& w, const std::string& v,
                const std::string& k) { w.pattern = parse_pattern(v, k); }},
      {"bs",
       [](Workload& w, const std::string& v, const std::string& k) {
         // Ranges are expanded by the caller; store the minimum to validate the rest.
         w.io_size = parse_size_range(v, k).min;
       }},
      {"size", [](Workload& w, const std::string& v,
                  const std::string& k) { w.file_size = parse_size(v, k); }},
      {"offset", [](Workload& w, const std::string& v,
                    const std::string& k) { w.start_offset = parse_size(v, k); }},
      {"runtime", [](Workload& w, const std::string& v,
                     const std::string& k) { w.runtime_s = parse_seconds(v, k); }},
      {"do_verify", [](Workload& w, const std::string& v,
                       const std::string& k) { w.verify = parse_bool(v, k); }},
      {"enable_nvlinks", [](Workload& w, const std::string& v,
                            const std::string& k) { w.enable_nvlinks = parse_bool(v, k); }},
      {"numa_node",
       [](Workload& w, const std::string& v, const std::string& k) {
         w.numa_node = static_cast<int>(parse_uint(v, k, 4095));
       }},
      {"gpu_dev_id",
       [](Workload& w, const std::string& v, const std::string& k) {
         w.gpu = static_cast<int>(parse_uint(v, k, 4095));
       }},
      {"num_threads",
       [](Workload& w, const std::string& v, const std::string& k) { w.threads = to_u32(v, k); }},
      {"directory", [](Workload& w, const std::string& v, const std::string&) { w.directory = v; }},
      {"filename", [](Workload& w, const std::string& v, const std::string&) { w.file = v; }},
      {"file", [](Workload& w, const std::string& v, const std::string&) { w.file = v; }},
      {"seed", [](Workload& w, const std::string& v,
                  const std::string& k) { w.seed = parse_uint(v, k, UINT64_MAX); }},
      {"mem_type", [](Workload& w, const std::string& v,
                      const std::string& k) { w.mem_type = parse_mem(v, k); }},
      {"skip_bufregister", [](Workload& w, const std::string& v,
                              const std::string& k) { w.skip_buffer_register = parse_bool(v, k); }},
      {"batch_size", [](Workload& w, const std::string& v,
                        const std::string& k) { w.batch_size = to_u32(v, k); }},
      {"alignment", [](Workload& w, const std::string& v,
                       const std::string& k) { w.random_alignment = parse_size(v, k); }},
      {"unaligned", [](Workload& w, const std::string& v,
                       const std::string& k) { w.unaligned_random = parse_bool(v, k); }},
      {"rwmixread",
       [](Workload& w, const std::string& v, const std::string& k) {
         w.mixed_read_percent = static_cast<uint32_t>(parse_uint(v, k, 100));
       }},
      {"random_fill", [](Workload& w, const std::string& v,
                         const std::string& k) { w.fill_random = parse_bool(v, k); }},
      {"refill", [](Workload& w, const std::string& v,
                    const std::string& k) { w.refill_every_write = parse_bool(v, k); }},
      {"odirect", [](Workload& w, const std::string& v,
                     const std::string& k) { w.odirect = parse_bool(v, k); }},
      {"engine", [](Workload& w, const std::string& v,
                    const std::string& k) { w.engine = parse_engine(v, k); }},
      {"iodepth",
       [](Workload& w, const std::string& v, const std::string& k) { w.iodepth = to_u32(v, k); }},
      {"warmup", [](Workload& w, const std::string& v,
                    const std::string& k) { w.warmup_s = parse_seconds(v, k); }},
      {"repeat",
       [](Workload& w, const std::string& v, const std::string& k) { w.repeat = to_u32(v, k); }},
      // gdsbench job-model extensions (docs/gdsb-io.md, "Job files").
      {"filelist", [](Workload& w, const std::string& v, const std::string&) { w.file_list = v; }},
      {"fsync", [](Workload& w, const std::string& v,
                   const std::string& k) { w.fsync = parse_bool(v, k); }},
      {"request_blocks",
       [](Workload& w, const std::string& v, const std::string& k) {
         w.request_blocks = static_cast<uint32_t>(parse_uint(v, k, 4096));
         if (w.request_blocks == 0) throw UsageError(k + ": must be at least 1");
       }},
      {"workload", [](Workload& w, const std::string& v, const std::string&) { w.preset = v; }},
      {"naive_load", [](Workload& w, const std::string& v,
                        const std::string& k) { w.naive_load = parse_bool(v, k); }},
      {"open_per_file", [](Workload& w, const std::string& v,
                           const std::string& k) { w.open_per_file = parse_bool(v, k); }},
  };
  return table;
}

// "jobs.gdsio:7: [job1] bs": where a value came from, for messages.
std::string located(const std::string& path, int line, const std::string& section,
                    const std::string& key) {
  std::string out = path;
  out += ':';
  out += std::to_string(line);
  out += ": [";
  out += section;
  out += "] ";
  out += key;
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool is_job_section(const std::string& name) {
  if (name.size() <= 3 || name.compare(0, 3, "job") != 0) return false;
  return name.find_first_not_of("0123456789", 3) == std::string::npos;
}

std::string known_keys() {
  std::string out;
  for (const auto& [k, setter] : key_table()) out += (out.empty() ? "" : ", ") + k;
  return out + ", phase ([jobN] only), run_together ([global] only)";
}

std::vector<Section> split_sections(const std::string& text, const std::string& path,
                                    bool& run_together) {
  std::vector<Section> sections;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  const auto where = [&](int l) { return path + ":" + std::to_string(l) + ": "; };
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      if (line.back() != ']')
        throw UsageError(where(line_no) + "section header '" + line + "' has no closing ']'");
      const std::string name = trim(line.substr(1, line.size() - 2));
      if (name != "global" && !is_job_section(name)) {
        throw UsageError(where(line_no) + "unknown section [" + name +
                         "]; expected [global] or [jobN] (e.g. [job1])");
      }
      for (const auto& s : sections) {
        if (s.name == name && name != "global") {
          throw UsageError(where(line_no) + "section [" + name + "] appears twice (first at line " +
                           std::to_string(s.line) + ")");
        }
      }
      sections.push_back({name, line_no, {}, std::nullopt});
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw UsageError(where(line_no) + "expected key=value, found '" + line + "'");
    if (sections.empty())
      throw UsageError(where(line_no) + "key before any section; start with [global] or [job1]");
    const std::string key = trim(line.substr(0, eq));
    const std::string value = trim(line.substr(eq + 1));
    Section& cur = sections.back();
    if (key == "phase") {
      if (cur.name == "global") throw UsageError(where(line_no) + "phase belongs in a [jobN] section");
      cur.phase = static_cast<int>(parse_uint(value, where(line_no) + "phase", 1000000));
      continue;
    }
    if (key == "run_together") {
      if (cur.name != "global")
        throw UsageError(where(line_no) + "run_together belongs in [global]");
      run_together = parse_bool(value, where(line_no) + "run_together");
      continue;
    }
    if (key_table().count(key) == 0) {
      throw UsageError(where(line_no) + "unknown key '" + key + "' in [" + cur.name +
                       "]; known keys: " + known_keys());
    }
    for (const auto& e : cur.entries) {
      if (e.key == key)
        throw UsageError(where(line_no) + "key '" + key + "' set twice in [" + cur.name +
                         "] (first at line " + std::to_string(e.line) + ")");
    }
    cur.entries.push_back({key, value, line_no, cur.name});
  }
  return sections;
}

}  // namespace

JobFile parse_job_file(const std::string& text, const std::string& path, const Workload& defaults) {
  JobFile out;
  const auto sections = split_sections(text, path, out.run_together);

  std::map<std::string, Entry> global;
  for (const auto& s : sections) {
    if (s.name != "global") continue;
    for (const auto& e : s.entries) global[e.key] = e;
  }
  for (const auto& s : sections) {
    if (s.name == "global") continue;
    std::map<std::string, Entry> merged = global;
    for (const auto& e : s.entries) merged[e.key] = e;

    Workload w = defaults;
    w.name = s.name;
    std::string bs_text;
    for (const auto& [key, e] : merged) {
      key_table().at(key)(w, e.value, located(path, e.line, e.section, key));
      if (key == "bs") bs_text = e.value;
    }
    // A [global] name names the test; each job keeps its section in its own name.
    if (const auto it = merged.find("name"); it != merged.end() && it->second.section == "global") {
      w.name = it->second.value + "/" + s.name;
    }
    const FieldNamer namer = [&](Field f) {
      std::string key = job_key(f);
      if (f == Field::File && merged.count("file") != 0) key = "file";
      const auto it = merged.find(key);
      if (it != merged.end()) {
        return located(path, it->second.line, it->second.section, key);
      }
      // Not set anywhere: point at the job's section header.
      return located(path, s.line, s.name, key);
    };
    std::vector<uint64_t> sizes{w.io_size};
    if (!bs_text.empty() && is_size_range(bs_text))
      sizes = expand_size_range(parse_size_range(bs_text, namer(Field::IoSize)));
    for (const uint64_t size : sizes) {
      Workload job = w;
      job.io_size = size;
      size_from_existing_file(job);
      if (sizes.size() > 1) job.name = s.name + "/bs=" + format_size(size);
      validate_workload(job, namer);
      out.jobs.push_back(std::move(job));
      out.phases.push_back(s.phase);
    }
  }
  if (out.jobs.empty())
    throw UsageError(path + ": no [jobN] section; a job file needs at least one job");
  return out;
}

JobFile load_job_file(const std::string& path, const Workload& defaults) {
  std::ifstream in(path);
  if (!in) throw RuntimeError("cannot read job file " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_job_file(text.str(), path, defaults);
}

}  // namespace gdsb::io
