#include "cli.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "gdsb/error.hpp"
#include "gdsb/report/cluster_storage.hpp"
#include "gdsb/report/compare.hpp"
#include "gdsb/report/document.hpp"
#include "gdsb/report/gate.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/cli/tool_flags.hpp"
#include "gdsb/run_context.hpp"
#include "gdsb/version.hpp"

namespace gdsb::report::cli {
namespace {

std::optional<XferType> xfer_option(const std::string& text, const char* option) {
  if (text.empty()) return std::nullopt;
  const auto t = parse_xfer_type(text);
  if (!t) {
    throw UsageError(std::string(option) + " \"" + text +
                     "\": not a transfer type (0-7, a gdsio label such as GPUD or CPU_GPU, or a "
                     "name such as gpu_direct)");
  }
  return t;
}

std::string default_html_name(const std::string& input) {
  const auto dot = input.rfind('.');
  const auto slash = input.rfind('/');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (has_ext ? input.substr(0, dot) : input) + ".html";
}

// Every output is checked before any is written, so a refusal leaves nothing behind.
void check_distinct(const std::vector<std::string>& outputs,
                    const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].empty()) continue;
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (outputs[i] == outputs[j]) throw UsageError(outputs[i] + ": named for two outputs");
    }
    for (const auto& in : inputs) {
      if (outputs[i] == in)
        throw UsageError(outputs[i] + ": is an input; refusing to write a report over it");
    }
  }
}

nlohmann::json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw RuntimeError(path + ": cannot open the thresholds file");
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    return nlohmann::json::parse(buf.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw RuntimeError(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace

nlohmann::json run_meta(int argc, char** argv, RunContext context) {
  context.ended_at = utc_now_iso8601();
  return {{"tool", {{"name", "gdsb-report"}, {"version", std::string(version())}}},
          {"argv", std::vector<std::string>(argv, argv + argc)},
          {"interrupted", false},
          {"context", context}};
}

void setup(CLI::App& app, Options& opt) {
  gdsb::cli::add_tool_flags(app, "gdsb-report");
  app.require_subcommand(1);
  auto* html = app.add_subcommand(
      "html",
      "Render a gdsbench JSON document (io, topo, p2p, compare, doctor or cluster) as one "
      "self-contained HTML file");
  html->add_option("input", opt.html.input, "gdsbench JSON document")->required();
  html->add_option("-o,--output", opt.html.output,
                   "HTML file to write (default: INPUT with .html)");
  html->add_flag("--allow-overwrite", opt.html.allow_overwrite,
                 "Replace an existing file that gdsbench did not write");

  auto* cmp = app.add_subcommand(
      "compare",
      "Compare runs of two io documents (BEFORE AFTER), two transfer types of one document, or "
      "the shared-storage results of two cluster documents");
  cmp->add_option("documents", opt.compare.inputs,
                  "BEFORE.json AFTER.json, or one DOC.json with --baseline-xfer and --xfer")
      ->required()
      ->expected(1, 2);
  cmp->add_option("--html", opt.compare.html, "Also write the comparison as HTML");
  cmp->add_option("--json", opt.compare.json, "Also write the gdsbench.compare/1 document");
  cmp->add_option("--baseline-xfer", opt.compare.baseline_xfer,
                  "Transfer type of the baseline runs (e.g. 2 or CPU_GPU)");
  cmp->add_option("--xfer", opt.compare.xfer,
                  "Transfer type of the compared runs (e.g. 0 or GPUD)");
  cmp->add_option("--alpha", opt.compare.alpha, "Significance level of the Mann-Whitney U test")
      ->capture_default_str();
  cmp->add_flag("--allow-overwrite", opt.compare.allow_overwrite,
                "Replace existing files that gdsbench did not write");

  auto* gate = app.add_subcommand(
      "gate", "Fail (exit 3) when the current document regressed against the baseline");
  gate->add_option("--baseline", opt.gate.baseline, "Baseline document (io, topo, doctor or cluster)");
  gate->add_option("--current", opt.gate.current, "Current document of the same kind");
  gate->add_option("--history", opt.gate.history,
                   "A history database (gdsb-report history add): fail when its newest nights sit below "
                   "the last accepted level beyond the series' noise (--method level), or a test of the "
                   "newest night gave no figure");
  add_change_point_flags(*gate, opt.gate.change_points);
  gate->add_option("--accept-through", opt.gate.accept_through,
                   "With --history: a regression whose level starts at this run id or earlier "
                   "is accepted as the new normal (a later change is judged again)")
      ->check(CLI::PositiveNumber);
  gate->add_option("--thresholds", opt.gate.thresholds_file,
                   "JSON file with thresholds (flags override it)");
  gate->add_option("--max-throughput-drop", opt.gate.max_throughput_drop,
                   "e.g. 5% (default 5%; off disables)");
  gate->add_option("--max-iops-drop", opt.gate.max_iops_drop, "e.g. 5% (default 5%)");
  gate->add_option("--max-p50-rise", opt.gate.max_p50_rise, "e.g. 10% (default 10%)");
  gate->add_option("--max-p99-rise", opt.gate.max_p99_rise, "e.g. 10% (default 10%)");
  gate->add_option("--max-cpu-rise", opt.gate.max_cpu_rise, "e.g. 20% (default off)");
  gate->add_option("--alpha", opt.gate.alpha,
                   "Significance level for repeated runs (default 0.05)");
  gate->add_flag("--allow-missing", opt.gate.allow_missing,
                 "A baseline run missing from the current document does not fail");
  gate->add_option("--junit", opt.gate.junit, "Write JUnit XML (one testcase per run x metric)");
  gate->add_option("--markdown", opt.gate.markdown, "Write a Markdown summary");
  gate->add_flag("--allow-overwrite", opt.gate.allow_overwrite,
                 "Replace existing files that gdsbench did not write");
  setup_history(app, opt.history);
}

namespace {

// `html DIR` (the survey's gdsb-report/, say): a directory is no report; name the reports in
// it that html renders, so the next command is one copy away.
[[noreturn]] void refuse_directory(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.is_regular_file(ec)) names.push_back(e.path().string());
  std::sort(names.begin(), names.end());
  std::string renders;
  for (const auto& name : names) {
    try {
      const auto doc = load_document(name);
      renders += (renders.empty() ? "" : ", ") + name + " (" + std::string(kind_name(doc.kind)) + ")";
    } catch (const Error&) {  // not a gdsbench document: not listed
    }
  }
  if (ec) throw UsageError(dir + ": is a directory, not a report (and it cannot be listed: " + ec.message() + ")");
  throw UsageError(dir + ": is a directory, not a report; " +
                   (renders.empty() ? std::string("none of its .json files is a gdsbench report")
                                    : "the reports in it: " + renders + "; render one with gdsb-report html FILE"));
}

}  // namespace

int run_html(const HtmlOptions& opt) {
  std::error_code dir_ec;
  if (std::filesystem::is_directory(opt.input, dir_ec)) refuse_directory(opt.input);
  const auto doc = load_document(opt.input);
  const std::string out = opt.output.empty() ? default_html_name(opt.input) : opt.output;
  check_distinct({out}, {opt.input});
  try {
    write_html(doc.json, out, opt.allow_overwrite);
  } catch (const RuntimeError& e) {
    throw RuntimeError(opt.input + ": " + e.what());
  }
  std::cout << "wrote " << out << " (" << kind_name(doc.kind) << " report)\n";
  return kExitOk;
}

namespace {

// Two cluster documents: their shared_storage (issue 26), points matched by nodes, mode, op.
int compare_cluster_outputs(const CompareOptions& opt, const Document& before,
                            const Document& after, const nlohmann::json& meta) {
  if (opt.inputs.size() != 2 || !opt.baseline_xfer.empty() || !opt.xfer.empty()) {
    throw UsageError(
        "compare: cluster documents are compared as BEFORE.json AFTER.json, without "
        "--baseline-xfer/--xfer");
  }
  const auto c = compare_cluster(before, after);
  const auto doc = storage_comparison_to_json(c, meta);
  const std::string html = opt.html.empty() ? "" : render_html(doc);
  const std::string json_text = doc.dump(2) + "\n";
  std::cout << storage_comparison_text(c);
  if (c.matches.empty() && c.not_comparable.empty()) {
    throw UsageError("compare: nothing of " + after.path + "'s shared_storage matches " +
                     before.path + " (points match by nodes, mode and op); nothing written");
  }
  const OutputTarget json_target{opt.json, "--json", std::string(schema_name(DocKind::Compare))};
  if (!opt.json.empty()) write_output_atomic(json_target, json_text, opt.allow_overwrite);
  if (!opt.html.empty()) write_output_atomic(opt.html, html, opt.allow_overwrite);
  return kExitOk;
}

}  // namespace

int run_compare(const CompareOptions& opt, const nlohmann::json& meta) {
  report::CompareOptions co;
  co.alpha = opt.alpha;
  co.baseline_xfer = xfer_option(opt.baseline_xfer, "--baseline-xfer");
  co.current_xfer = xfer_option(opt.xfer, "--xfer");
  if (opt.inputs.size() == 1 && (!co.baseline_xfer || !co.current_xfer)) {
    throw UsageError(
        "compare with one document needs --baseline-xfer and --xfer (e.g. --baseline-xfer 2 --xfer "
        "0)");
  }
  check_distinct({opt.html, opt.json}, opt.inputs);
  const OutputTarget json_target{opt.json, "--json", std::string(schema_name(DocKind::Compare))};
  if (!opt.html.empty()) check_output_path(opt.html, opt.allow_overwrite);
  if (!opt.json.empty()) check_output_path(json_target, opt.allow_overwrite);
  const auto before = load_document(opt.inputs.front());
  const auto after = opt.inputs.size() == 2 ? load_document(opt.inputs.back()) : before;
  if (before.kind != after.kind) {
    throw UsageError("compare: " + before.path + " is " + std::string(schema_name(before.kind)) +
                     " but " + after.path + " is " + std::string(schema_name(after.kind)) +
                     "; compare two io documents or two cluster documents");
  }
  if (before.kind == DocKind::Cluster) return compare_cluster_outputs(opt, before, after, meta);
  const auto c = compare_documents(before, after, co);
  auto doc = comparison_to_json(c, meta);
  // Render everything before writing anything: a failure leaves no partial set of outputs.
  const std::string html = opt.html.empty() ? "" : render_html(doc);
  const std::string json_text = doc.dump(2) + "\n";
  std::cout << comparison_text(c);
  if (c.matches.empty() && c.not_comparable.empty()) {
    throw UsageError("compare: no run of " + after.path + " matches a run of " + before.path +
                     " (workloads differ in xfer_type, io_pattern, io_size, threads, "
                     "mixed_read_percent, engine, "
                     "iodepth, mem_type or odirect); nothing written");
  }
  if (!opt.json.empty()) write_output_atomic(json_target, json_text, opt.allow_overwrite);
  if (!opt.html.empty()) write_output_atomic(opt.html, html, opt.allow_overwrite);
  return kExitOk;
}

int run_gate(const GateOptions& opt) {
  if (!opt.history.empty()) {
    if (!opt.baseline.empty() || !opt.current.empty())
      throw UsageError("gate: give either --history DB or --baseline and --current, not both");
    return run_gate_history(opt);
  }
  if (opt.baseline.empty() || opt.current.empty())
    throw UsageError("gate: give --baseline B.json and --current C.json (or --history DB)");
  Thresholds t = default_thresholds();
  if (!opt.thresholds_file.empty())
    apply_thresholds_json(t, load_json_file(opt.thresholds_file), opt.thresholds_file);
  const std::vector<std::pair<Metric, const std::string*>> flags{
      {Metric::Throughput, &opt.max_throughput_drop},
      {Metric::Iops, &opt.max_iops_drop},
      {Metric::P50, &opt.max_p50_rise},
      {Metric::P99, &opt.max_p99_rise},
      {Metric::Cpu, &opt.max_cpu_rise}};
  for (const auto& [m, text] : flags) {
    if (!text->empty()) {
      std::string name = "--" + threshold_key(m);
      for (auto& ch : name) ch = ch == '_' ? '-' : ch;
      t.max_worse_percent.at(static_cast<std::size_t>(m)) = parse_percent(*text, name);
    }
  }
  if (opt.alpha != 0) {
    if (!(opt.alpha > 0 && opt.alpha < 1)) throw UsageError("--alpha must lie between 0 and 1");
    t.alpha = opt.alpha;
  }
  if (opt.allow_missing) t.allow_missing = true;
  check_distinct({opt.junit, opt.markdown}, {opt.baseline, opt.current, opt.thresholds_file});
  for (const auto* out : {&opt.junit, &opt.markdown}) {
    if (!out->empty()) check_output_path(*out, opt.allow_overwrite);
  }
  const auto base = load_document(opt.baseline);
  const auto cur = load_document(opt.current);
  return report_gate(report::run_gate(base, cur, t), opt);
}

int report_gate(const GateResult& result, const GateOptions& opt) {
  // Rendered before anything is written: a failure leaves no partial set of outputs.
  const std::string junit = opt.junit.empty() ? "" : gate_junit(result);
  const std::string md = opt.markdown.empty() ? "" : gate_markdown(result);
  std::cout << gate_text(result);
  if (!opt.junit.empty()) write_output_atomic(opt.junit, junit, opt.allow_overwrite);
  if (!opt.markdown.empty()) write_output_atomic(opt.markdown, md, opt.allow_overwrite);
  return result.failed() ? kExitCheckFailed : kExitOk;
}

}  // namespace gdsb::report::cli
