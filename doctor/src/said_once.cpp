#include "said_once.hpp"

#include <algorithm>

#include "gdsb/units.hpp"
#include "gpu_groups.hpp"
#include "rules/rule_util.hpp"

namespace gdsb::doctor::detail {

Clause& Clause::text(const std::string& s) {
  parts_.push_back({'t', s, s, 0});
  key_ += s;
  return *this;
}

Clause& Clause::gpus(const std::string& one, const std::string& many) {
  parts_.push_back({'g', one, many, 0});
  key_ += "\x01" + one + "\x01" + many;
  return *this;
}

Clause& Clause::words(const std::string& one, const std::string& many) {
  parts_.push_back({'w', one, many, 0});
  key_ += "\x04" + one + "\x04" + many;
  return *this;
}

Clause& Clause::gb(double v) {
  parts_.push_back({'b', "", "", v});
  key_ += "\x02";
  return *this;
}

Clause& Clause::pct(double ratio) {
  parts_.push_back({'p', "", "", ratio});
  key_ += "\x03";
  return *this;
}

namespace {

std::string percent(double ratio) { return format_fixed(ratio * 100.0, 0); }

// "a" where every figure reads alike, else "lo-hi".
std::string range(const std::vector<double>& v, std::string (*format)(double)) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const std::string a = format(*lo), b = format(*hi);
  return a == b ? a : a + "-" + b;
}

}  // namespace

std::vector<std::string> said_once(const std::vector<std::pair<std::string, Clause>>& clauses) {
  std::vector<std::string> out;
  std::vector<bool> done(clauses.size(), false);
  for (std::size_t i = 0; i < clauses.size(); ++i) {
    if (done[i]) continue;
    std::vector<std::size_t> alike;
    for (std::size_t j = i; j < clauses.size(); ++j)
      if (!done[j] && clauses[j].second.key() == clauses[i].second.key()) {
        alike.push_back(j);
        done[j] = true;
      }
    std::vector<std::string> labels;
    for (const std::size_t j : alike) labels.push_back(clauses[j].first);
    const std::string who = gpu_set(labels);
    const auto& parts = clauses[i].second.parts_;
    std::string s;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const auto& p = parts[k];
      std::vector<double> values;
      for (const std::size_t j : alike) values.push_back(clauses[j].second.parts_[k].value);
      switch (p.kind) {
        case 't':
          s += p.one;
          break;
        case 'g':
          s += who + " " + (alike.size() == 1 ? p.one : p.many);
          if (!p.one.empty()) s += ' ';
          break;
        case 'w':
          s += alike.size() == 1 ? p.one : p.many;
          break;
        case 'b':
          s += range(values, gb_number) + " GB/s";
          break;
        default:
          s += range(values, percent) + "%";
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gdsb::doctor::detail
