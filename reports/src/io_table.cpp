#include "gdsb/report/io_table.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "gdsb/units.hpp"

namespace gdsb::report {
namespace {

constexpr std::size_t kColumns = 13;
using Row = std::array<std::string, kColumns>;

const Row kHeader = {"#",        "xfer",          "pattern",    "io size", "thr",
                     "qd",       "GiB/s",         "IOPS",       "p50 us",  "p99 us",
                     "p99.9 us", "cpu usr/sys %", "status/path"};

// Latencies: three significant figures are what the histogram can promise anyway.
std::string latency(double us) {
  if (us >= 100) return format_fixed(us, 0);
  if (us >= 10) return format_fixed(us, 1);
  return format_fixed(us, 2);
}

std::string status_cell(const RunResult& r) {
  if (r.status == RunStatus::Ok) {
    std::string s = r.path.path_used.empty() ? "ok" : r.path.path_used;
    if (r.interrupted) s += " (interrupted)";
    if (!r.path.warnings.empty()) s += " !";
    return s;
  }
  return std::string(run_status_name(r.status));
}

Row make_row(std::size_t index, const RunResult& r) {
  const Workload& w = r.workload;
  const Measurement& m = r.result;
  const bool measured = r.status == RunStatus::Ok || m.ops > 0;
  std::string pattern(pattern_label(w.pattern));
  if (w.mixed_read_percent) {
    // Appended piecewise: GCC 12 at -O3 warns (-Wrestrict) on "literal" + std::string here.
    pattern += ' ';
    pattern += std::to_string(*w.mixed_read_percent);
    pattern += "%r";
  }
  Row row{std::to_string(index + 1),
          std::string(xfer_name(w.xfer)),
          pattern,
          format_bytes(w.io_size),
          std::to_string(w.threads),
          std::to_string(w.engine == SubmitEngine::IoUring ? w.iodepth : 1),
          "-",
          "-",
          "-",
          "-",
          "-",
          "-",
          status_cell(r)};
  if (measured) {
    row[6] = format_fixed(m.throughput_gib_s, 3);
    row[7] = format_fixed(m.iops, 0);
    row[8] = latency(m.latency.p50_us);
    row[9] = latency(m.latency.p99_us);
    row[10] = latency(m.latency.p999_us);
    row[11] = format_fixed(m.cpu.user_percent, 1) + "/" + format_fixed(m.cpu.sys_percent, 1);
  }
  return row;
}

// "1,2", "1-4,7-16": runs of three or more rows as ranges.
std::string row_ranges(const std::vector<std::size_t>& rows) {
  std::string out;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i + 1;
    while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(rows[i]);
    if (j - i == 2) out += "," + std::to_string(rows[i + 1]);
    if (j - i > 2) out += "-" + std::to_string(rows[j - 1]);
    i = j;
  }
  return out;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  uint64_t whole = bytes;
  while (unit + 1 < kUnits.size() && whole >= 1024 && whole % 1024 == 0) {
    whole /= 1024;
    ++unit;
  }
  if (whole < 1024 || unit + 1 == kUnits.size()) return std::to_string(whole) + " " + kUnits[unit];
  // Not a whole number of the next unit: show one decimal of it.
  double v = static_cast<double>(bytes);
  unit = 0;
  while (unit + 1 < kUnits.size() && v >= 1024) {
    v /= 1024;
    ++unit;
  }
  return format_fixed(v, 1) + " " + kUnits[unit];
}

std::string io_table(std::span<const RunResult> runs) {
  std::vector<Row> rows{kHeader};
  for (std::size_t i = 0; i < runs.size(); ++i) rows.push_back(make_row(i, runs[i]));

  std::array<std::size_t, kColumns> width{};
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line;
    for (std::size_t c = 0; c < kColumns; ++c) {
      const std::string& cell = rows[r][c];
      const std::string pad(width[c] - cell.size(), ' ');
      // Text columns left-aligned, numbers right-aligned; the last column is not padded.
      const bool text = c == 1 || c == 2 || c == kColumns - 1;
      if (c + 1 == kColumns) {
        line += cell;
      } else {
        line += text ? cell + pad : pad + cell;
        line += "  ";
      }
    }
    out += line + "\n";
    if (r == 0) {
      std::size_t total = 0;
      for (std::size_t c = 0; c < kColumns; ++c) total += width[c] + (c + 1 == kColumns ? 0 : 2);
      out += std::string(total, '-') + "\n";
    }
  }

  // Reasons under the table, each once with the rows it applies to: a reason every GPU type
  // shares (no NVIDIA driver) is one note, not one per type (issue 35). A note of one type
  // names it; the table's xfer column names the types of a note that several share.
  struct Note {
    std::vector<std::size_t> rows;
    std::vector<std::string> xfers;
    std::string text;
  };
  std::vector<Note> notes;
  const auto add_note = [&notes](std::size_t row, const std::string& xfer, std::string text) {
    auto it = std::find_if(notes.begin(), notes.end(), [&](const Note& n) { return n.text == text; });
    if (it == notes.end()) it = notes.insert(notes.end(), Note{{}, {}, std::move(text)});
    it->rows.push_back(row + 1);
    if (std::find(it->xfers.begin(), it->xfers.end(), xfer) == it->xfers.end())
      it->xfers.push_back(xfer);
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const std::string xfer(xfer_name(r.workload.xfer));
    if (r.status != RunStatus::Ok) {
      add_note(i, xfer,
               (r.status == RunStatus::Waived   ? std::string("not available: ")
                : r.status == RunStatus::Failed ? std::string("failed: ")
                                                : std::string(run_status_name(r.status)) + ": ") +
                   r.reason);
    }
    for (const auto& w : r.path.warnings) add_note(i, "", "warning: " + w);
  }
  if (!notes.empty()) out += "\n";
  for (const auto& n : notes) {
    out += "  " + row_ranges(n.rows) + ' ';
    if (n.xfers.size() == 1 && !n.xfers.front().empty()) out += n.xfers.front() + ": ";
    out += n.text + '\n';
  }
  return out;
}

}  // namespace gdsb::report
