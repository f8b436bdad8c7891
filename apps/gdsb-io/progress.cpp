#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace gdsb::io {

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

std::string ProgressLine::render(const std::string& label, const Progress& p) {
  char buf[256];
  const double iops = p.elapsed_s > 0 ? static_cast<double>(p.ops) / p.elapsed_s : 0.0;
  if (p.warming_up) {
    (void)std::snprintf(buf, sizeof buf, "%s warming up  %.2f GiB/s  %.1fs", label.c_str(),
                        p.recent_gib_s, p.elapsed_s);
  } else if (p.planned_s > 0) {
    const double left = p.planned_s > p.elapsed_s ? p.planned_s - p.elapsed_s : 0.0;
    (void)std::snprintf(buf, sizeof buf,
                        "%s  %.2f GiB/s  %.0f IOPS avg  %.1fs / %.1fs (%.1fs left)", label.c_str(),
                        p.recent_gib_s, iops, p.elapsed_s, p.planned_s, left);
  } else {
    (void)std::snprintf(buf, sizeof buf, "%s  %.2f GiB/s  %.0f IOPS avg  %.1fs elapsed",
                        label.c_str(), p.recent_gib_s, iops, p.elapsed_s);
  }
  return buf;
}

std::function<void(const Progress&)> ProgressLine::for_job(std::size_t index, std::string label) {
  if (!enabled_) return {};
  return [this, index, label = std::move(label)](const Progress& p) {
    const std::lock_guard lock(mutex_);
    jobs_[index] = {label, p};
    draw();
  };
}

void ProgressLine::finish_job(std::size_t index) {
  if (!enabled_) return;
  const std::lock_guard lock(mutex_);
  jobs_.erase(index);
}

void ProgressLine::draw() {
  std::string line;
  for (const auto& [index, job] : jobs_) {
    if (!line.empty()) line += " | ";
    line += render(job.first, job.second);
  }
  // Keep one terminal row: long lines would wrap and defeat the carriage return.
  if (line.size() > 150) line.resize(150);
  (void)std::fprintf(stderr, "\r\033[K%s", line.c_str());
  (void)std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!enabled_) return;
  const std::lock_guard lock(mutex_);
  if (drawn_) {
    (void)std::fputs("\r\033[K", stderr);
    (void)std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace gdsb::io
