// gdsb-report history add|show|export and gate --history (issue 37): options, then the
// library (history.hpp, history_db.hpp, history_analysis.hpp), then the writers.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli.hpp"
#include "gdsb/error.hpp"
#include "gdsb/report/history_analysis.hpp"
#include "gdsb/report/history_db.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/report/output_file.hpp"

namespace gdsb::report::cli {
namespace {

using history::HistoryDb;

ChangePointOptions change_point_options(const ChangePointFlags& f) {
  if (!(f.max_pvalue > 0 && f.max_pvalue <= 1)) throw UsageError("--max-pvalue must lie in (0, 1]");
  if (!(f.min_magnitude >= 0)) throw UsageError("--min-magnitude must be 0 or more (a fraction: 0.05 = 5%)");
  if (f.min_runs < 1 || f.min_runs > 100) throw UsageError("--min-runs must lie in 1..100 (nights)");
  ChangePointOptions o;
  if (f.method == "level") {
    o.method = ChangePointMethod::Level;
  } else if (f.method == "otava") {
    o.method = ChangePointMethod::Windowed;
  } else {
    throw UsageError("--method " + f.method + ": give level (the gate's own, the default) or otava");
  }
  o.max_pvalue = f.max_pvalue;
  o.min_magnitude = f.min_magnitude;
  o.level.min_magnitude = f.min_magnitude;
  o.level.min_runs = f.min_runs;
  return o;
}

int run_add(const HistoryOptions& opt) {
  // Every document is read and checked before the database is touched: a bad one is named
  // and nothing is added.
  std::vector<history::RunRecord> records;
  for (const auto& path : opt.documents) records.push_back(history::extract_run(load_document(path)));
  const auto db = HistoryDb::open(opt.database, HistoryDb::Mode::Create, opt.busy_timeout_s * 1000);
  std::size_t added = 0;
  for (const auto& rec : records) {
    const auto r = db->add(rec);
    added += r.added ? 1U : 0U;
    std::cout << (r.added ? "added " : "already there ") << rec.source << " as run " << r.run_id << " ("
              << rec.points.size() << " figures)\n";
  }
  std::cout << opt.database << ": " << added << " of " << records.size() << " documents added\n";
  return kExitOk;
}

int run_show(const HistoryOptions& opt, const nlohmann::json& meta) {
  const OutputTarget json_target{opt.json, "--json", history::kHistorySchema};
  if (!opt.html.empty() && opt.html == opt.json) throw UsageError(opt.html + ": named for two outputs");
  for (const auto& out : {opt.html, opt.json})
    if (!out.empty() && out == opt.database) throw UsageError(out + ": is the database; refusing to write a report over it");
  if (!opt.html.empty()) check_output_path(opt.html, opt.allow_overwrite);
  if (!opt.json.empty()) check_output_path(json_target, opt.allow_overwrite);
  const auto options = change_point_options(opt.change_points);
  const auto h = HistoryDb::open(opt.database, HistoryDb::Mode::ReadOnly)->load();
  const auto a = history::analyse(h, options);
  const auto doc = history::analysis_to_json(a, meta);
  const std::string html = opt.html.empty() ? "" : render_html(doc);
  std::cout << history::analysis_text(a);
  if (!opt.json.empty()) write_output_atomic(json_target, doc.dump(2) + "\n", opt.allow_overwrite);
  if (!opt.html.empty()) write_output_atomic(opt.html, html, opt.allow_overwrite);
  return kExitOk;
}

int run_export(const HistoryOptions& opt) {
  struct stat st {};
  if (::stat(opt.csv_dir.c_str(), &st) != 0) {
    if (errno != ENOENT) throw RuntimeError(opt.csv_dir + ": " + std::strerror(errno));
    if (::mkdir(opt.csv_dir.c_str(), 0777) != 0)
      throw RuntimeError(opt.csv_dir + ": cannot create the directory: " + std::strerror(errno));
  } else if (!S_ISDIR(st.st_mode)) {
    throw UsageError(opt.csv_dir + ": --csv names a directory to write the CSV files into");
  }
  const auto h = HistoryDb::open(opt.database, HistoryDb::Mode::ReadOnly)->load();
  const auto ex = history::otava_csv(h);
  // Our own CSV files of an earlier export are replaced (otava.yaml says which are ours and
  // carries the generator mark itself); a file of the same name that we did not write is not.
  std::vector<bool> ours;
  for (const auto& f : ex.files) ours.push_back(opt.allow_overwrite || history::exported_csv(opt.csv_dir, f.name));
  for (std::size_t i = 0; i < ex.files.size(); ++i) check_output_path(opt.csv_dir + "/" + ex.files[i].name, ours[i]);
  for (std::size_t i = 0; i < ex.files.size(); ++i)
    write_output_atomic(opt.csv_dir + "/" + ex.files[i].name, ex.files[i].text, ours[i]);
  for (const auto& n : ex.notes) std::cout << "note: " << n << "\n";
  std::cout << "wrote " << ex.files.size() - 1 << " CSV files and otava.yaml to " << opt.csv_dir
            << " (Apache Otava: cd " << opt.csv_dir << " && otava analyze --config-file otava.yaml ...)\n";
  return kExitOk;
}

}  // namespace

void add_change_point_flags(CLI::App& cmd, ChangePointFlags& flags) {
  cmd.add_option("--method", flags.method,
                 "level: red when the newest --min-runs nights all sit below the last accepted level "
                 "beyond the noise (calibrated: docs/changepoints.md); otava: Apache Otava's windowed "
                 "E-Divisive, red when the last change point is a significant regression")
      ->capture_default_str();
  cmd.add_option("--min-runs", flags.min_runs,
                 "level: nights that must all sit beyond the threshold before the gate goes red")
      ->capture_default_str();
  cmd.add_option("--max-pvalue", flags.max_pvalue,
                 "otava: a change point is kept when its p-value is at most this (Otava's -P)")
      ->capture_default_str();
  cmd.add_option("--min-magnitude", flags.min_magnitude,
                 "A regression must also exceed this relative change, e.g. 0.05 for 5% (Otava's -M)")
      ->capture_default_str();
}

void setup_history(CLI::App& app, HistoryOptions& opt) {
  auto* h = app.add_subcommand("history", "Keep every run in an SQLite history; change points and what changed");
  h->require_subcommand(1);
  auto* add = h->add_subcommand("add", "Add gdsbench documents (io, doctor, p2p, cluster) as runs; the same document twice is one run");
  add->add_option("database", opt.database, "History file (SQLite; created when missing)")->required();
  add->add_option("documents", opt.documents, "gdsbench JSON documents")->required();
  add->add_option("--busy-timeout", opt.busy_timeout_s, "Seconds to wait for another writer")->capture_default_str();
  auto* show = h->add_subcommand("show", "Change points of every series, with what changed in the runs' context");
  show->add_option("database", opt.database, "History file")->required();
  show->add_option("--html", opt.html, "Write the history page (charts per series, change points marked)");
  show->add_option("--json", opt.json, "Write the gdsbench.history/1 document");
  add_change_point_flags(*show, opt.change_points);
  show->add_flag("--allow-overwrite", opt.allow_overwrite, "Replace existing files that gdsbench did not write");
  auto* ex = h->add_subcommand("export", "Write the history in Apache Otava's CSV layout");
  ex->add_option("database", opt.database, "History file")->required();
  ex->add_option("--csv", opt.csv_dir, "Directory for the CSV files and otava.yaml")->required();
  ex->add_flag("--allow-overwrite", opt.allow_overwrite, "Replace existing files that gdsbench did not write");
}

int run_history(CLI::App& cmd, const HistoryOptions& opt, const nlohmann::json& meta) {
  if (cmd.got_subcommand("add")) return run_add(opt);
  if (cmd.got_subcommand("show")) return run_show(opt, meta);
  if (cmd.got_subcommand("export")) return run_export(opt);
  throw UsageError("history: give add, show or export");
}

int run_gate_history(const GateOptions& opt) {
  for (const auto* t : {&opt.max_throughput_drop, &opt.max_iops_drop, &opt.max_p50_rise, &opt.max_p99_rise,
                        &opt.max_cpu_rise, &opt.thresholds_file})
    if (!t->empty())
      throw UsageError("gate --history judges by levels and change points, not thresholds: use --method, --min-runs, --min-magnitude (and --max-pvalue with --method otava)");
  if (opt.junit == opt.history || opt.markdown == opt.history)
    throw UsageError(opt.history + ": is the database; refusing to write a report over it");
  if (!opt.junit.empty() && opt.junit == opt.markdown) throw UsageError(opt.junit + ": named for two outputs");
  for (const auto* out : {&opt.junit, &opt.markdown})
    if (!out->empty()) check_output_path(*out, opt.allow_overwrite);
  const auto options = change_point_options(opt.change_points);
  const auto h = history::HistoryDb::open(opt.history, history::HistoryDb::Mode::ReadOnly)->load();
  if (opt.accept_through > 0 &&
      std::none_of(h.runs.begin(), h.runs.end(), [&](const auto& r) { return r.id == opt.accept_through; }))
    throw UsageError("--accept-through " + std::to_string(opt.accept_through) + ": " + opt.history +
                     " has no run with that id (`gdsb-report history show` lists them)");
  const auto a = history::analyse(h, options,
                                  opt.accept_through > 0 ? std::optional<int64_t>(opt.accept_through) : std::nullopt);
  return report_gate(history::gate_history(a), opt);
}

}  // namespace gdsb::report::cli
