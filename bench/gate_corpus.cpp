#include "gate_corpus.hpp"

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <numbers>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gdsb::bench {
namespace {

// Normal and Student-t draws from mt19937_64's raw output (its sequence is fixed by the
// standard; std::normal_distribution's algorithm is not), so the corpus is the same everywhere.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : rng_(seed) {}
  double uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0; }
  double normal() {  // Box-Muller
    return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * std::numbers::pi * uniform());
  }
  double student4() {  // t with 4 degrees of freedom, scaled to unit variance (its variance is 2)
    double chi = 0;
    for (int i = 0; i < 4; ++i) {
      const double z = normal();
      chi += z * z;
    }
    return normal() / std::sqrt(chi / 4) / std::numbers::sqrt2;
  }

 private:
  std::mt19937_64 rng_;
};

constexpr double kLevel = 10.0;  // GiB/s

std::string pct(double f) { return std::to_string(static_cast<int>(std::lround(f * 100))) + "%"; }

CorpusSeries make(const std::string& category, std::size_t n, double noise, std::uint64_t seed, bool heavy,
                  const std::function<double(std::size_t)>& level) {
  // Each category draws its own noise (the same noise under every category would make their
  // false alarms one event counted many times).
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a of the category
  for (const char c : category) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  Noise rng(h ^ (seed * 7919 + n * 31 + static_cast<std::uint64_t>(noise * 1000)));
  CorpusSeries s;
  s.category = category;
  s.name = category + " " + pct(noise) + " n" + std::to_string(n) + " seed" + std::to_string(seed);
  for (std::size_t i = 0; i < n; ++i) s.values.push_back(level(i) * (1 + noise * (heavy ? rng.student4() : rng.normal())));
  return s;
}

void synthetic(std::vector<CorpusSeries>& out, bool fast) {
  const std::vector<double> noises{0.01, 0.02, 0.05, 0.10};
  const std::vector<std::uint64_t> seeds = fast ? std::vector<std::uint64_t>{1} : std::vector<std::uint64_t>{1, 2};
  const auto lengths = [&](std::vector<std::size_t> all) {
    std::vector<std::size_t> kept;
    for (const auto n : all)
      if (!fast || n <= 200) kept.push_back(n);
    return kept;
  };
  const auto flat = [](std::size_t) { return kLevel; };
  for (const double z : noises)
    for (const auto n : lengths({20, 40, 60, 100, 200, 500}))
      for (const auto seed : seeds) out.push_back(make("healthy", n, z, seed, false, flat));
  for (const double z : {0.02, 0.05, 0.10})
    for (const auto n : lengths({60, 200}))
      for (const auto seed : seeds) out.push_back(make("healthy, heavy tails", n, z, seed, true, flat));
  for (const double k : {2.0, 3.0, 4.0, 6.0, 10.0})
    for (const double z : noises) {
      if (k * z > 0.6) continue;  // a drop of more than 60%: not a level a run keeps
      for (const auto n : lengths({40, 100, 300})) {
        const std::size_t at = n * 3 / 5;
        auto s = make("step-down " + std::to_string(static_cast<int>(k)) + "s", n, z, 1, false,
                      [&](std::size_t i) { return i < at ? kLevel : kLevel * (1 - k * z); });
        s.truth = Truth::Regression, s.step = at, s.step_sigmas = k;
        out.push_back(std::move(s));
      }
    }
  for (const double k : {4.0, 10.0})
    for (const double z : noises)
      for (const auto n : lengths({40, 200})) {
        const std::size_t at = n / 2;
        out.push_back(make("step-up " + std::to_string(static_cast<int>(k)) + "s", n, z, 1, false,
                           [&](std::size_t i) { return i < at ? kLevel : kLevel * (1 + k * z); }));
      }
  // Masked: down k noise units, then 15 nights (or a fifth of the series) later up k/4: the
  // issue's 10 -> 6 -> 6.5 GiB/s is k = 40% / noise.
  for (const double k : {4.0, 6.0, 10.0})
    for (const double z : noises) {
      if (k * z > 0.6) continue;
      for (const auto n : lengths({60, 200})) {
        const std::size_t at = n * 2 / 5;
        const std::size_t up = at + std::max<std::size_t>(15, n / 5);
        auto s = make("masked " + std::to_string(static_cast<int>(k)) + "s", n, z, 1, false, [&](std::size_t i) {
          return i < at ? kLevel : i < up ? kLevel * (1 - k * z) : kLevel * (1 - k * z + k / 4 * z);
        });
        s.truth = Truth::Masked, s.step = at, s.step_sigmas = k;
        out.push_back(std::move(s));
      }
    }
  // One-night spikes: 3% of the nights (never two in a row) drop 6 to 10 noise units.
  for (const double z : noises)
    for (const auto n : lengths({60, 200})) {
      Noise pick(n + 17);
      std::vector<double> drop(n, 0);
      for (std::size_t i = 1; i < n; ++i)
        if (drop[i - 1] == 0 && pick.uniform() < 0.03) drop[i] = (6 + 4 * pick.uniform()) * z;
      out.push_back(make("one-night spikes", n, z, 1, false, [&](std::size_t i) { return kLevel * (1 - drop[i]); }));
    }
  // The noise triples half way; the level stays.
  for (const double z : {0.01, 0.02, 0.05})
    for (const auto n : lengths({60, 200})) {
      const auto s0 = make("noise x3", n, z, 1, false, flat);
      const auto s1 = make("noise x3", n, 3 * z, 2, false, flat);
      auto s = s0;
      for (std::size_t i = n / 2; i < n; ++i) s.values[i] = s1.values[i];
      out.push_back(std::move(s));
    }
  // Slow drift: the second half declines by 10 noise units in all.
  for (const double z : {0.01, 0.02, 0.05})
    for (const auto n : lengths({100, 300})) {
      auto s = make("slow drift", n, z, 1, false, [&](std::size_t i) {
        return i < n / 2 ? kLevel : kLevel * (1 - 10 * z * static_cast<double>(i - n / 2) / static_cast<double>(n / 2));
      });
      s.truth = Truth::Drift;
      out.push_back(std::move(s));
    }
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the recorded series");
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cells.push_back(c);
    rows.push_back(std::move(cells));
  }
  return rows;
}

double pstdev(const std::vector<double>& v) {
  double m = 0, q = 0;
  for (const double x : v) m += x;
  m /= static_cast<double>(v.size());
  for (const double x : v) q += (x - m) * (x - m);
  return std::sqrt(q / static_cast<double>(v.size()));
}

// series.csv: source,series,night,value (nights from 1, in order); labels.csv: source,series,truth,
// step_night (empty when none). Each healthy series of 30 nights or more is also used with a
// step of 4 standard deviations (its own, drift included) injected at two thirds: its real
// noise, a known step.
void recorded(std::vector<CorpusSeries>& out, const std::string& dir) {
  std::map<std::string, std::vector<double>> values;
  for (const auto& r : read_csv(dir + "/series.csv")) {
    if (r.size() != 4) throw std::runtime_error(dir + "/series.csv: a row without source,series,night,value");
    values[r[0] + " " + r[1]].push_back(std::stod(r[3]));
  }
  for (const auto& r : read_csv(dir + "/labels.csv")) {
    if (r.size() < 3) throw std::runtime_error(dir + "/labels.csv: a row without source,series,truth");
    const auto key = r[0] + " " + r[1];
    const auto it = values.find(key);
    if (it == values.end()) throw std::runtime_error(dir + "/labels.csv: " + key + " has no values in series.csv");
    CorpusSeries s;
    s.name = "real " + key;
    s.category = "real, " + r[2];
    s.values = it->second;
    if (r[2] == "healthy") {
      s.truth = Truth::Healthy;
    } else if (r[2] == "regression") {
      s.truth = Truth::Regression;
      s.step = static_cast<std::size_t>(std::stoul(r.at(3))) - 1;
      s.step_sigmas = 0;  // real: its size is what it is
    } else {
      throw std::runtime_error(dir + "/labels.csv: " + key + ": truth " + r[2] + " (give healthy or regression)");
    }
    if (s.truth == Truth::Healthy && s.values.size() >= 30) {
      CorpusSeries step = s;
      const std::size_t at = s.values.size() * 2 / 3;
      const double drop = 4 * pstdev(s.values);
      for (std::size_t i = at; i < step.values.size(); ++i) step.values[i] -= drop;
      step.name += " + 4 sd step";
      step.category = "real noise + step 4s";
      step.truth = Truth::Regression, step.step = at, step.step_sigmas = 4;
      out.push_back(std::move(step));
    }
    out.push_back(std::move(s));
  }
}

}  // namespace

std::vector<CorpusSeries> gate_corpus(bool fast, const std::string& real_dir) {
  std::vector<CorpusSeries> out;
  synthetic(out, fast);
  recorded(out, real_dir);
  return out;
}

}  // namespace gdsb::bench
