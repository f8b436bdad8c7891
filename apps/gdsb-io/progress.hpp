// Live progress on stderr: one line, redrawn in place, only when stderr is a terminal
// and --quiet is not set. clear() erases it before a result line is printed.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "gdsb/runner.hpp"

namespace gdsb::io {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}

  bool enabled() const { return enabled_; }
  // The callback for job `index` (label shown in the line). Empty when disabled.
  std::function<void(const Progress&)> for_job(std::size_t index, std::string label);
  // Erases the line; call before printing anything else to the terminal.
  void clear();
  void finish_job(std::size_t index);

  // "1.23 GiB/s  3.0s / 10.0s (7.0s left)": exposed for tests.
  static std::string render(const std::string& label, const Progress& p);

 private:
  void draw();

  bool enabled_;
  std::mutex mutex_;
  std::map<std::size_t, std::pair<std::string, Progress>> jobs_;
  bool drawn_ = false;
};

// Whether stderr is a terminal.
bool stderr_is_terminal();

}  // namespace gdsb::io
