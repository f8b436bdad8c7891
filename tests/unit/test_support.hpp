// Test helpers: a temporary directory removed with its contents, and small file tools.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace gdsb::test {

// Created under the working directory (ctest runs tests in the build tree, a real disk
// file system where O_DIRECT works; /tmp may be a tmpfs that refuses it).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::current_path() / "gdsb-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `bytes` bytes of a fixed value with plain I/O (no gdsbench mark).
inline void write_plain_file(const std::string& path, std::size_t bytes, char value = 'x') {
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  std::vector<char> buf(bytes, value);
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::write(fd, buf.data() + done, bytes - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace gdsb::test
