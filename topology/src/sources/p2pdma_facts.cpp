// The host facts cuFile's P2PDMA mode rests on (gdsb/topo/p2pdma.hpp), read under a root.
#include <dlfcn.h>

#include <fstream>
#include <functional>
#include <string>
#include <system_error>

#include "gdsb/topo/p2pdma.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace {

using detail::read_text;
using detail::trim;

// Calls `line` for each line of a text file until it returns false; false when unreadable.
bool each_line(const fs::path& file, const std::function<bool(const std::string&)>& line) {
  std::ifstream in(file);
  if (!in) return false;
  std::string l;
  while (std::getline(in, l))
    if (!line(l)) break;
  return true;
}

// /proc/config.gz through zlib, loaded at run time (libz.so.1 is on every Linux system; its
// headers are not a build dependency): gzopen/gzgets/gzclose, typed as zlib.h declares them.
bool each_gz_line(const fs::path& file, const std::function<bool(const std::string&)>& line) {
  void* z = ::dlopen("libz.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!z) return false;
  using Open = void* (*)(const char*, const char*);
  using Gets = char* (*)(void*, char*, int);
  using Close = int (*)(void*);
  const auto open = reinterpret_cast<Open>(::dlsym(z, "gzopen"));
  const auto gets = reinterpret_cast<Gets>(::dlsym(z, "gzgets"));
  const auto close = reinterpret_cast<Close>(::dlsym(z, "gzclose"));
  bool ok = false;
  if (open && gets && close) {
    if (void* f = open(file.c_str(), "rb")) {
      ok = true;
      char buf[512];
      while (gets(f, buf, sizeof buf)) {
        std::string l(buf);
        while (!l.empty() && l.back() == '\n') l.pop_back();
        if (!line(l)) break;
      }
      close(f);
    }
  }
  ::dlclose(z);
  return ok;
}

// CONFIG_PCI_P2PDMA in a kernel configuration: "y" (it is a bool), else "not set" (the
// "# ... is not set" line, or no line: kernels before the option).
bool read_config(const fs::path& file, bool gz, std::string& value) {
  value = "not set";
  const auto scan = [&](const std::string& l) {
    if (l.rfind("CONFIG_PCI_P2PDMA=", 0) == 0) {
      value = l.substr(18) == "y" ? "y" : "not set";
      return false;
    }
    return true;
  };
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return false;
  return gz ? each_gz_line(file, scan) : each_line(file, scan);
}

}  // namespace

P2pdmaHostFacts read_p2pdma_facts(const fs::path& root, bool live,
                                  const std::string& kernel_release) {
  P2pdmaHostFacts f;
  std::error_code ec;
  // "ADDRESS TYPE NAME [MODULE]": the symbol name is the third field. Without root the
  // addresses read 0, the names do not change.
  bool found = false;
  const bool read = each_line(root / "proc/kallsyms", [&](const std::string& l) {
    const size_t a = l.find(' '), b = a == std::string::npos ? a : l.find(' ', a + 1);
    if (b == std::string::npos) return true;
    const size_t e = l.find_first_of(" \t", b + 1);
    found = l.compare(b + 1, e == std::string::npos ? std::string::npos : e - b - 1,
                      "p2pdma_pgmap_ops") == 0;
    return !found;
  });
  if (read) f.kallsyms_pgmap_ops = found;

  const fs::path gz = root / "proc/config.gz", boot = root / "boot" / ("config-" + kernel_release);
  if (read_config(gz, true, f.kernel_config)) {
    f.kernel_config_file = "/proc/config.gz";
  } else if (!kernel_release.empty() && read_config(boot, false, f.kernel_config)) {
    f.kernel_config_file = "/boot/config-" + kernel_release;
  } else {
    f.kernel_config.clear();
  }

  if (const auto params = read_text(root / "proc/driver/nvidia/params")) {
    std::string dwords;
    each_line(root / "proc/driver/nvidia/params", [&](const std::string& l) {
      if (l.rfind("RegistryDwords:", 0) != 0) return true;
      dwords = trim(l.substr(15));
      if (dwords.size() >= 2 && dwords.front() == '"' && dwords.back() == '"')
        dwords = dwords.substr(1, dwords.size() - 2);
      return false;
    });
    f.registry_dwords = dwords;
  }

  // Built-in modules with parameters appear under /sys/module too, so no nvme_core there is
  // no NVMe driver at all.
  if (live || fs::is_directory(root / "sys/module", ec)) {
    if (fs::is_directory(root / "sys/module/nvme_core", ec))
      f.nvme_multipath = trim(read_text(root / "sys/module/nvme_core/parameters/multipath").value_or("?"));
    else
      f.nvme_multipath = "";
  }
  return f;
}

}  // namespace gdsb::topo
