// Kernel log reading (kernel_log.hpp): one pass over the text, one line in memory at a time.
#include "gdsb/topo/kernel_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

#include "gdsb/error.hpp"

namespace gdsb::topo {
namespace {

constexpr size_t kMaxTextBytes = 300;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// The next space-separated token, removed from s.
std::string_view take_token(std::string_view& s) {
  s = ltrim(s);
  const size_t end = std::min(s.find(' '), s.size());
  const std::string_view t = s.substr(0, end);
  s.remove_prefix(end);
  return t;
}

template <class T>
std::optional<T> number(std::string_view s, int base = 10) {
  T v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> seconds(std::string_view s) {  // "5107.644336"
  const size_t dot = s.find('.');
  const auto whole = number<uint64_t>(s.substr(0, dot));
  if (!whole) return std::nullopt;
  double v = static_cast<double>(*whole);
  if (dot != std::string_view::npos) {
    const std::string_view frac = s.substr(dot + 1);
    const auto f = number<uint64_t>(frac);
    if (!f || frac.size() > 9) return std::nullopt;
    double scale = 1;
    for (size_t i = 0; i < frac.size(); ++i) scale *= 10;
    v += static_cast<double>(*f) / scale;
  }
  return v;
}

constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
std::optional<int> month_number(std::string_view m) {
  for (size_t i = 0; i < kMonths.size(); ++i)
    if (kMonths[i] == m) return static_cast<int>(i + 1);
  return std::nullopt;
}

bool is_clock(std::string_view t) {  // "16:24:18"
  return t.size() == 8 && is_digit(t[0]) && is_digit(t[1]) && t[2] == ':' && is_digit(t[3]) && t[5] == ':';
}

// A record's time and where its message starts, by the line's own prefix. format: the
// prefix kind found ("" none).
struct Prefix {
  LogTime time;
  std::string_view message;
  std::string_view format;
  bool continuation = false;  // a /dev/kmsg dictionary line (" KEY=value")
};

// "[ 5107.644336] rest" or "[Sun Feb 23 16:24:18 2025] rest"; false when not such a prefix.
bool bracket_prefix(std::string_view l, Prefix& p) {
  if (l.empty() || l.front() != '[') return false;
  const size_t close = l.find(']');
  if (close == std::string_view::npos) return false;
  std::string_view inside = ltrim(l.substr(1, close - 1));
  const std::string_view rest = l.substr(close + 1);
  if (const auto up = seconds(inside)) {
    p.time.uptime_s = up;
    p.message = ltrim(rest);
    if (p.format.empty()) p.format = "dmesg";
    return true;
  }
  // dmesg -T: "Sun Feb 23 16:24:18 2025"
  take_token(inside);  // weekday
  const std::string_view mon = take_token(inside), day = take_token(inside), clock = take_token(inside),
                         year = take_token(inside);
  const auto m = month_number(mon);
  const auto d = number<int>(day);
  if (!m || !d || !is_clock(clock) || year.size() != 4 || !number<int>(year)) return false;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4s-%02d-%02d %.8s", year.data(), *m, *d, clock.data());
  p.time.wall = buf;
  p.message = ltrim(rest);
  p.format = "dmesg -T";
  return true;
}

Prefix parse_prefix(std::string_view l) {
  Prefix p;
  p.message = l;
  if (!l.empty() && (l.front() == ' ' || l.front() == '\t')) {
    p.continuation = true;  // kmsg dictionary or a wrapped line: no record of its own
    p.message = ltrim(l);
    return p;
  }
  // /dev/kmsg: "6,1234,5678901,-;message"
  if (!l.empty() && is_digit(l.front())) {
    const size_t semi = l.find(';');
    const size_t c1 = l.find(',');
    if (semi != std::string_view::npos && c1 != std::string_view::npos && c1 < semi) {
      const size_t c2 = l.find(',', c1 + 1), c3 = c2 == std::string_view::npos ? c2 : l.find(',', c2 + 1);
      if (c2 != std::string_view::npos && c3 != std::string_view::npos && c3 < semi) {
        const auto seq = number<uint64_t>(l.substr(c1 + 1, c2 - c1 - 1));
        const auto usec = number<uint64_t>(l.substr(c2 + 1, c3 - c2 - 1));
        if (seq && usec) {
          p.time.seq = seq;
          p.time.uptime_s = static_cast<double>(*usec) / 1e6;
          p.message = l.substr(semi + 1);
          p.format = "kmsg";
          return p;
        }
      }
    }
    // journalctl -o short-iso: "2025-02-14T05:03:41+0000 host kernel: ..."
    if (l.size() > 19 && l[4] == '-' && l[7] == '-' && l[10] == 'T' && is_clock(l.substr(11, 8))) {
      p.time.wall = std::string(l.substr(0, 10)) + " " + std::string(l.substr(11, 8));
      std::string_view rest = l.substr(19);
      take_token(rest);  // the zone's remainder
      take_token(rest);  // host
      take_token(rest);  // "kernel:"
      p.message = ltrim(rest);
      p.format = "journalctl";
      Prefix inner;
      if (bracket_prefix(p.message, inner)) p.time.uptime_s = inner.time.uptime_s, p.message = inner.message;
      return p;
    }
  }
  if (bracket_prefix(l, p)) return p;
  // journalctl -k (short) and syslog: "May 18 19:02:39 host kernel: [  269.5] message"
  std::string_view rest = l;
  const std::string_view mon = take_token(rest), day = take_token(rest), clock = take_token(rest);
  if (month_number(mon) && number<int>(day) && is_clock(clock)) {
    p.time.wall = std::string(mon) + " " + std::string(day) + " " + std::string(clock);
    // "host kernel: ..." or, pasted without the host, "kernel: ..."
    std::string_view after = rest;
    if (const size_t k = rest.find("kernel:"); k != std::string_view::npos && k < 80) after = rest.substr(k + 7);
    p.message = ltrim(after);
    p.format = "journalctl";
    Prefix inner;
    if (bracket_prefix(p.message, inner)) p.time.uptime_s = inner.time.uptime_s, p.message = inner.message;
  }
  return p;
}

// "PCI:0000:9b:00", "0000:01:00", "PCI:0000:01:00 GPU-I:05" -> "0000:9b:00.0".
std::optional<std::string> xid_address(std::string_view inside) {
  if (inside.substr(0, 4) == "PCI:") inside.remove_prefix(4);
  inside = inside.substr(0, std::min(inside.find(' '), inside.size()));
  const size_t c1 = inside.find(':');
  if (c1 == std::string_view::npos) return std::nullopt;
  const size_t c2 = inside.find(':', c1 + 1);
  std::string_view dom = "0000", bus, dev;
  if (c2 == std::string_view::npos) {
    bus = inside.substr(0, c1);
    dev = inside.substr(c1 + 1);
  } else {
    dom = inside.substr(0, c1);
    bus = inside.substr(c1 + 1, c2 - c1 - 1);
    dev = inside.substr(c2 + 1);
  }
  dev = dev.substr(0, std::min(dev.find('.'), dev.size()));
  const auto d = number<uint32_t>(dom, 16);
  const auto b = number<uint32_t>(bus, 16);
  const auto v = number<uint32_t>(dev, 16);
  if (!d || !b || !v || *b > 0xff || *v > 0x1f || dom.size() > 8) return std::nullopt;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.0", *d & 0xffffu, *b, *v);
  return std::string(out);
}

// The value of "key=" up to the next comma ("name=nvidia-smi, ...").
std::string field(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view v = text.substr(at + key.size());
  v = v.substr(0, std::min(v.find(','), v.size()));
  return std::string(v.substr(0, 64));
}

}  // namespace

KernelLogReader::KernelLogReader(std::string source, std::optional<uint64_t> after_seq)
    : source_(std::move(source)), after_seq_(after_seq) {
  log_.source = source_;
}

void KernelLogReader::feed(std::string_view chunk) {
  for (size_t i = 0; i < chunk.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(chunk[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1b) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      throw RuntimeError(source_ + ": byte " + hex + " at offset " + std::to_string(offset_ + i) +
                         " is not text: a binary or compressed file, not a kernel log (gunzip a .gz "
                         "first; save one with `dmesg`, `dmesg -T` or `journalctl -k`)");
    }
  }
  log_.bytes += chunk.size();
  size_t start = 0;
  while (start < chunk.size()) {
    const size_t nl = chunk.find('\n', start);
    const std::string_view piece = chunk.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (partial_.size() < kMaxLineBytes) partial_.append(piece.substr(0, kMaxLineBytes - partial_.size()));
    if (nl == std::string_view::npos) break;
    line(partial_);
    partial_.clear();
    start = nl + 1;
  }
  offset_ += chunk.size();
}

void KernelLogReader::feed_record(std::string_view record) {
  feed(record);
  if (record.empty() || record.back() != '\n') feed("\n");
}

// A new boot starts. One that follows no record of the boot before it (a log that begins
// with the kernel's first line, a "Linux version" record after journalctl's "-- Boot --") is
// the same boot; its id, where named, is kept.
void KernelLogReader::new_boot(std::optional<std::string> id) {
  if (records_in_boot_ > 0) {
    for (XidEvent& e : log_.xids) {
      std::pair<std::string, int> key{e.bdf, e.code};
      auto [it, fresh] = earlier_index_.try_emplace(std::move(key), log_.earlier_xids.size());
      if (fresh) {
        if (log_.earlier_xids.size() >= kMaxXidKeys) {
          earlier_index_.erase(it);
          ++log_.dropped;
          continue;
        }
        log_.earlier_xids.push_back(std::move(e));
        continue;
      }
      XidEvent& old = log_.earlier_xids[it->second];
      old.count += e.count;
      old.last = e.last;
      old.last_text = std::move(e.last_text);
      if (!e.process.empty()) old.process = std::move(e.process);
      if (e.recovery_action) old.recovery_action = e.recovery_action;
    }
    log_.xids.clear();
    index_.clear();
    ++log_.boots;
    records_in_boot_ = 0;
    log_.boot_id.clear();
    log_.boot_start.clear();
  }
  last_uptime_.reset();
  if (id) log_.boot_id = std::move(*id);
}

void KernelLogReader::line(std::string_view l) {
  ++log_.lines;
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  // journalctl's own lines between boots: "-- Boot 5f2c...e0 --" (v250 and newer), "-- Reboot --".
  if (l.substr(0, 3) == "-- ") {
    if (l.substr(0, 8) == "-- Boot ") {
      std::string_view id = l.substr(8);
      id = id.substr(0, std::min(id.find(' '), id.size()));
      new_boot(std::string(id));
    } else if (l.substr(0, 12) == "-- Reboot --") {
      new_boot(std::nullopt);
    }
    return;  // "-- Logs begin at ...", "-- No entries --": notes, no record
  }
  // journalctl -o export: each record's fields, one a line, __CURSOR= first.
  if (l.substr(0, 9) == "__CURSOR=") export_ = true;
  if (export_) return export_field(l);
  const Prefix p = parse_prefix(l);
  if (p.time.seq) log_.last_seq = p.time.seq;  // the newest record read: the next check's cursor
  if (log_.format.empty() && !p.format.empty()) log_.format = std::string(p.format);
  if (p.continuation || l.empty()) return;
  record(p.time, p.message, !p.format.empty());
}

// One field of an -o export record; MESSAGE= is the record, read with the fields before it
// (journald writes __REALTIME_TIMESTAMP, __MONOTONIC_TIMESTAMP and _BOOT_ID first).
void KernelLogReader::export_field(std::string_view l) {
  if (log_.format.empty()) log_.format = "journalctl export";
  const size_t eq = l.find('=');
  if (l.empty() || eq == std::string_view::npos) {
    export_uptime_.reset();
    export_wall_.clear();
    return;
  }
  const std::string_view key = l.substr(0, eq), value = l.substr(eq + 1);
  if (key == "__MONOTONIC_TIMESTAMP") {
    if (const auto us = number<uint64_t>(value)) export_uptime_ = static_cast<double>(*us) / 1e6;
  } else if (key == "__REALTIME_TIMESTAMP") {
    if (const auto us = number<uint64_t>(value)) {
      const std::time_t t = static_cast<std::time_t>(*us / 1000000);
      std::tm tm{};
      char buf[32];
      if (::gmtime_r(&t, &tm) && std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm)) export_wall_ = buf;
    }
  } else if (key == "_BOOT_ID") {
    if (value != log_.boot_id) new_boot(std::string(value));
  } else if (key == "MESSAGE") {
    LogTime t;
    t.uptime_s = export_uptime_;
    t.wall = export_wall_;
    record(t, value, true);
  }
}

void KernelLogReader::record(const LogTime& time, std::string_view message, bool has_prefix) {
  // The kernel's first line, or a time since boot that went back: a reboot.
  if (message.substr(0, 14) == "Linux version ") new_boot(std::nullopt);
  else if (time.uptime_s && last_uptime_ && *time.uptime_s + 1.0 < *last_uptime_) new_boot(std::nullopt);
  if (time.uptime_s) last_uptime_ = time.uptime_s;
  if (records_in_boot_++ == 0 && has_prefix) log_.boot_start = time.wall;
  const size_t nvrm = message.find("NVRM: ");
  if (nvrm == std::string_view::npos) return;
  ++log_.nvrm_lines;
  std::string_view rec = message.substr(nvrm + 6);
  if (rec.substr(0, 5) != "Xid (") return;
  rec.remove_prefix(5);
  const size_t close = rec.find("): ");
  const auto bdf = close == std::string_view::npos ? std::nullopt : xid_address(rec.substr(0, close));
  std::string_view after = close == std::string_view::npos ? std::string_view{} : rec.substr(close + 3);
  const size_t digits = std::min(after.find_first_not_of("0123456789"), after.size());
  const auto code = number<int>(after.substr(0, digits));
  if (!bdf || !code) {
    ++log_.unparsed;
    return;
  }
  if (after_seq_ && time.seq && *time.seq <= *after_seq_) {
    ++log_.before_cursor;
    return;
  }
  std::string_view text = ltrim(after.substr(digits));
  if (!text.empty() && text.front() == ',') text = ltrim(text.substr(1));
  std::pair<std::string, int> key{*bdf, *code};
  auto [it, fresh] = index_.try_emplace(std::move(key), log_.xids.size());
  if (fresh) {
    if (log_.xids.size() >= kMaxXidKeys) {
      index_.erase(it);
      ++log_.dropped;
      return;
    }
    XidEvent e;
    e.bdf = *bdf;
    e.code = *code;
    e.first = time;
    log_.xids.push_back(std::move(e));
  }
  XidEvent& e = log_.xids[it->second];
  ++e.count;
  e.last = time;
  e.last_text = std::string(text.substr(0, kMaxTextBytes));
  if (const std::string name = field(text, "name="); !name.empty()) e.process = name;
  if (*code == 154) {  // "... changed from 0x0 (None) to 0x2 (Node Reboot Required)"
    const size_t to = text.find(" to 0x");
    if (to != std::string_view::npos) {
      std::string_view hex = text.substr(to + 6);
      hex = hex.substr(0, std::min(hex.find_first_not_of("0123456789abcdefABCDEF"), hex.size()));
      if (const auto a = number<int>(hex, 16)) e.recovery_action = *a;
    }
  }
}

KernelLog KernelLogReader::finish() {
  if (!partial_.empty()) {
    // A log still being written ends mid-line: its last line is read when it parses as a
    // record (its prefix known, an Xid record whole); else the text was cut off.
    const Prefix p = parse_prefix(partial_);
    const uint64_t unparsed = log_.unparsed;
    bool known = !p.format.empty() || export_ || p.message.find("NVRM: ") != std::string_view::npos;
    // An Xid code at the very end may be cut inside its digits ("11" of "119"): read only
    // with something after it.
    if (const size_t x = partial_.find("NVRM: Xid ("); x != std::string::npos) {
      size_t d = partial_.find("): ", x);
      if (d != std::string::npos)
        for (d += 3; d < partial_.size() && is_digit(partial_[d]);) ++d;
      known = known && d < partial_.size();
    }
    const std::string last = std::move(partial_);
    partial_.clear();
    if (known) line(last);
    if (!known || log_.unparsed > unparsed)
      throw RuntimeError(source_ + ": the last line (line " + std::to_string(log_.lines + (known ? 0 : 1)) +
                         ") has no newline and does not parse: the log was cut off; save it whole "
                         "(`dmesg > FILE`, `journalctl -k > FILE`)");
  }
  if (log_.format.empty()) log_.format = "text";
  return std::move(log_);
}

KernelLog read_kernel_log_file(const std::filesystem::path& file) {
  const std::string what = "--kernel-log " + file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw RuntimeError(what + ": cannot be opened (" + std::strerror(errno) + ")");
  KernelLogReader reader(what);
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    if (in.gcount() > 0) reader.feed(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) throw RuntimeError(what + ": read error (" + std::strerror(errno) + ")");
  return reader.finish();
}

KernelLog read_kmsg(const std::string& path, std::optional<uint64_t> after_seq, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw RuntimeError(path + ": cannot be opened (" + std::strerror(errno) +
                       "); reading the kernel log needs root or CAP_SYSLOG where kernel.dmesg_restrict=1");
  struct stat st {};
  // /dev/kmsg hands out one record per read(); a regular file (a saved copy) is plain text.
  const bool device = ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
  KernelLogReader reader(path, after_seq);
  std::array<char, 8192> buf{};  // a record is at most 8 KiB (PRINTK_MESSAGE_MAX and its prefix)
  size_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) continue;  // records overwritten under us: go on from the next
    if (n < 0 && errno == EAGAIN) break;    // the newest record was read
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw RuntimeError(path + ": read failed (" + std::strerror(e) + ")");
    }
    if (n == 0) break;  // a regular file given as path (tests): its end
    const std::string_view got(buf.data(), static_cast<size_t>(n));
    if (device) reader.feed_record(got);
    else reader.feed(got);
    total += static_cast<size_t>(n);
    if (total >= max_bytes) break;
  }
  ::close(fd);
  KernelLog log = reader.finish();
  if (device) log.format = "kmsg";
  return log;
}

}  // namespace gdsb::topo
