// The history gate's scoreboard (issue 41): every series of the labelled corpus judged night by
// night, as a CI job runs `gdsb-report gate --history` after each nightly run, by the level
// gate (the default) and by Otava's method (`--method otava`), with the same library calls the
// gate makes. Prints, per category and method: healthy nights red, steps caught within 5
// nights, nights to detection, masked regressions red to the end, change points that moved
// when a night was added. docs/changepoints.md explains the targets; docs/PERFORMANCE.md has
// the figures.
//
//   gate_scoreboard [--fast] [--check] [--real DIR]
//     --fast   the subset CI runs (series of 200 nights or fewer, one seed)
//     --check  exit 3 unless the targets hold: healthy nights red <= 0.2% (level), steps of
//              4 noise units or more caught within 5 nights in >= 95% of series (level), every
//              masked regression red from detection to the end and green once accepted, and
//              the level gate ahead of Otava's on both rates
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gate_corpus.hpp"
#include "gdsb/report/changepoint.hpp"
#include "gdsb/report/level_gate.hpp"

using gdsb::bench::CorpusSeries;
using gdsb::bench::Truth;
using namespace gdsb::report;

namespace {

constexpr std::size_t kFirstNight = 6;  // both methods judge from the 6th night on (3 + min_runs)
constexpr std::size_t kWithin = 5;      // "caught within 5 nights" of the step

struct Night {
  bool red = false;
  std::vector<std::size_t> points;  // change points the method reported that night
};

// One method's nights over one series: nights[t] judges values[0, t].
using Judge = std::vector<Night> (*)(const std::vector<double>&, std::size_t accepted_end);

std::vector<Night> level_nights(const std::vector<double>& v, std::size_t accepted_end) {
  std::vector<Night> out(v.size());
  for (std::size_t t = kFirstNight; t <= v.size(); ++t) {
    const auto verdict = judge_level(std::span(v).first(t), true, accepted_end);
    out[t - 1] = {verdict.state == LevelVerdict::State::Regression, verdict.shifts};
  }
  return out;
}

// Otava's default (windowed E-Divisive, P 0.001) and the gate's --method otava decision: red when
// the last change point is worse and significant.
std::vector<Night> otava_nights(const std::vector<double>& v, std::size_t accepted_end) {
  std::vector<Night> out(v.size());
  for (std::size_t t = kFirstNight; t <= v.size(); ++t) {
    const auto points = find_change_points(std::span(v).first(t), ChangePointOptions{});
    Night n;
    for (const auto& p : points) n.points.push_back(p.index);
    if (!points.empty()) {
      const auto& last = points.back();
      n.red = last.forward_change_percent < 0 && last.p_value <= ChangePointOptions{}.max_pvalue &&
              last.index >= accepted_end;
    }
    out[t - 1] = std::move(n);
  }
  return out;
}

struct Score {
  std::size_t series = 0;
  std::size_t healthy_nights = 0, healthy_red = 0;
  std::size_t steps = 0, caught = 0;  // within kWithin nights
  std::vector<std::size_t> delays;    // nights from the step to the first red, of those caught at all
  std::size_t masked = 0, masked_held = 0, masked_released = 0;
  std::size_t nights = 0, moved = 0;
  std::size_t drift = 0, drift_caught = 0;
};

// Whether the series' night t (index) is one the gate must not be red on.
bool must_be_green(const CorpusSeries& s, std::size_t t) {
  if (s.truth == Truth::Healthy) return true;
  if (s.truth == Truth::Drift) return false;
  return t < *s.step;
}

void score(const CorpusSeries& s, Judge judge, Score& sc) {
  const auto nights = judge(s.values, 0);
  ++sc.series;
  std::optional<std::size_t> first_red_after;
  for (std::size_t t = kFirstNight - 1; t < nights.size(); ++t) {
    ++sc.nights;
    if (must_be_green(s, t)) {
      ++sc.healthy_nights;
      sc.healthy_red += nights[t].red ? 1U : 0U;
      if (nights[t].red && std::getenv("GDSB_SCOREBOARD_VERBOSE") != nullptr)
        std::fprintf(stderr, "false alarm: %s: %s night %zu\n", judge == level_nights ? "level" : "otava",
                     s.name.c_str(), t + 1);
    } else if (nights[t].red && !first_red_after && (!s.step || t >= *s.step)) {
      first_red_after = t;
    }
    // A point reported on night t that night t+1 no longer reports where it was.
    if (t + 1 < nights.size())
      for (const auto p : nights[t].points)
        if (std::find(nights[t + 1].points.begin(), nights[t + 1].points.end(), p) == nights[t + 1].points.end())
          ++sc.moved;
  }
  if (s.truth == Truth::Drift) {
    ++sc.drift;
    sc.drift_caught += first_red_after ? 1U : 0U;
    return;
  }
  if (s.truth == Truth::Healthy) return;
  ++sc.steps;
  if (std::getenv("GDSB_SCOREBOARD_VERBOSE") != nullptr && judge == level_nights &&
      (!first_red_after || *first_red_after - *s.step + 1 > kWithin))
    std::fprintf(stderr, "late: %s: first red %zu, step at night %zu\n", s.name.c_str(),
                 first_red_after ? *first_red_after + 1 : 0, *s.step + 1);
  if (first_red_after) {
    const std::size_t delay = *first_red_after - *s.step + 1;
    sc.delays.push_back(delay);
    sc.caught += delay <= kWithin ? 1U : 0U;
  }
  if (s.truth == Truth::Masked) {
    ++sc.masked;
    bool held = first_red_after.has_value();
    for (std::size_t t = first_red_after.value_or(nights.size()); t < nights.size(); ++t) held = held && nights[t].red;
    sc.masked_held += held ? 1U : 0U;
    if (!held && judge == level_nights && std::getenv("GDSB_SCOREBOARD_VERBOSE") != nullptr)
      for (std::size_t t = first_red_after.value_or(nights.size()); t < nights.size(); ++t)
        if (!nights[t].red) std::fprintf(stderr, "masked green: %s night %zu\n", s.name.c_str(), t + 1);
    // Accepted a few nights after it was caught: green from then on (the partial recovery after
    // it is an improvement on the accepted level).
    if (first_red_after) {
      const std::size_t accept_end = *first_red_after + 1;
      const auto accepted = judge(s.values, accept_end);
      bool green = true;
      for (std::size_t t = accept_end; t < accepted.size(); ++t) green = green && !accepted[t].red;
      sc.masked_released += green ? 1U : 0U;
    }
  }
}

double share(std::size_t a, std::size_t b) { return b == 0 ? 0 : 100.0 * static_cast<double>(a) / static_cast<double>(b); }

std::string median_delay(std::vector<std::size_t> d) {
  if (d.empty()) return "-";
  std::sort(d.begin(), d.end());
  return std::to_string(d[d.size() / 2]) + " (max " + std::to_string(d.back()) + ")";
}

void print_row(const std::string& what, const char* method, const Score& s) {
  std::printf("| %s | %s | %zu | %zu | %s | %s | %s | %s | %.2f |\n", what.c_str(), method, s.series, s.nights,
              s.healthy_nights == 0 ? "-"
                                    : (std::to_string(s.healthy_red) + " of " + std::to_string(s.healthy_nights) +
                                       " (" + std::to_string(share(s.healthy_red, s.healthy_nights)).substr(0, 5) + "%)")
                                          .c_str(),
              s.steps == 0 ? "-" : (std::to_string(s.caught) + "/" + std::to_string(s.steps)).c_str(),
              median_delay(s.delays).c_str(),
              s.masked == 0 ? (s.drift == 0 ? "-" : ("drift caught " + std::to_string(s.drift_caught) + "/" +
                                                      std::to_string(s.drift)).c_str())
                            : (std::to_string(s.masked_held) + "/" + std::to_string(s.masked) + ", released " +
                               std::to_string(s.masked_released))
                                  .c_str(),
              100.0 * static_cast<double>(s.moved) / static_cast<double>(std::max<std::size_t>(s.nights, 1)));
}

void add(Score& into, const Score& s) {
  into.series += s.series, into.healthy_nights += s.healthy_nights, into.healthy_red += s.healthy_red;
  into.steps += s.steps, into.caught += s.caught, into.masked += s.masked, into.masked_held += s.masked_held;
  into.masked_released += s.masked_released, into.nights += s.nights, into.moved += s.moved;
  into.drift += s.drift, into.drift_caught += s.drift_caught;
  into.delays.insert(into.delays.end(), s.delays.begin(), s.delays.end());
}

}  // namespace

int main(int argc, char** argv) {
  bool fast = false, check = false;
  std::string real = GDSB_GATE_CORPUS_REAL;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fast") == 0) fast = true;
    else if (std::strcmp(argv[i], "--check") == 0) check = true;
    else if (std::strcmp(argv[i], "--real") == 0 && i + 1 < argc) real = argv[++i];
    else {
      std::fprintf(stderr, "gate_scoreboard: unknown argument %s (usage: [--fast] [--check] [--real DIR])\n", argv[i]);
      return 2;
    }
  }
  std::vector<CorpusSeries> corpus;
  try {
    corpus = gdsb::bench::gate_corpus(fast, real);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gate_scoreboard: %s\n", e.what());
    return 1;
  }
  const std::pair<const char*, Judge> methods[] = {{"level", level_nights}, {"otava", otava_nights}};
  std::map<std::string, std::map<std::string, Score>> by_category;  // category -> method -> score
  std::map<std::string, Score> total, big_steps;
  std::vector<std::string> order;
  for (const auto& s : corpus) {
    if (std::find(order.begin(), order.end(), s.category) == order.end()) order.push_back(s.category);
    for (const auto& [name, judge] : methods) {
      Score one;
      score(s, judge, one);
      add(by_category[s.category][name], one);
      add(total[name], one);
      if ((s.truth == Truth::Regression || s.truth == Truth::Masked) && s.step_sigmas >= 4) add(big_steps[name], one);
    }
  }
  std::printf("%zu series (%s corpus), judged night by night from night %zu\n\n", corpus.size(),
              fast ? "fast" : "whole", kFirstNight);
  std::printf("| series | method | count | nights judged | healthy nights red | steps caught within %zu nights | "
              "nights to detection, median | masked: red to the end, green once accepted | points moved per 100 "
              "nights |\n|---|---|---|---|---|---|---|---|---|\n",
              kWithin);
  for (const auto& c : order)
    for (const auto& [name, judge] : methods) print_row(c, name, by_category[c][name]);
  for (const auto& [name, judge] : methods) print_row("**all**", name, total[name]);
  for (const auto& [name, judge] : methods) print_row("**steps of 4 noise units or more**", name, big_steps[name]);
  if (!check) return 0;
  const auto& lv = total["level"];
  const auto& ot = total["otava"];
  std::vector<std::string> missed;
  if (share(lv.healthy_red, lv.healthy_nights) > 0.2) missed.push_back("healthy nights red above 0.2%");
  if (share(big_steps["level"].caught, big_steps["level"].steps) < 95)
    missed.push_back("steps of 4 noise units or more caught within 5 nights in fewer than 95% of series");
  if (lv.masked_held != lv.masked || lv.masked_released != lv.masked)
    missed.push_back("a masked regression not red to the end, or not green once accepted");
  if (share(lv.healthy_red, lv.healthy_nights) > share(ot.healthy_red, ot.healthy_nights) ||
      share(big_steps["level"].caught, big_steps["level"].steps) < share(big_steps["otava"].caught, big_steps["otava"].steps))
    missed.push_back("not ahead of Otava's method on both rates");
  for (const auto& m : missed) std::printf("\nTARGET MISSED: %s\n", m.c_str());
  if (missed.empty()) std::printf("\nall targets met\n");
  return missed.empty() ? 0 : 3;
}
