// The shared-storage phase's option values: rates, the demand per GPU and the model's size.
#include <algorithm>
#include <cmath>

#include "gdsb/cluster/storage_options.hpp"
#include "gdsb/error.hpp"
#include "gdsb/units.hpp"

namespace gdsb::cluster {

Demand parse_demand(std::string_view text, std::string_view option) {
  const std::string t(text);
  const std::string opt(option);
  Demand d;
  d.text = opt + " " + t;
  const auto number = [&](const std::string& part) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(part, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != part.size() || !(v > 0) || !std::isfinite(v))
      throw UsageError(opt + " " + t + ": '" + part + "' is not a number above 0");
    return v;
  };
  if (t.rfind("dataset:", 0) == 0) {
    const std::string rest = t.substr(8);
    const auto x = rest.find('x');
    const double samples = number(rest.substr(0, x));
    const uint64_t size = x == std::string::npos ? 128 * 1024 : parse_size(rest.substr(x + 1), option);
    if (size == 0) throw UsageError(opt + " " + t + ": a sample of 0 bytes");
    d.gb_s = samples * static_cast<double>(size) / 1e9;
    d.text += " (" + rest.substr(0, x) + " samples a second of " + format_size(size) + " a GPU)";
    return d;
  }
  if (t.rfind("checkpoint-load:", 0) == 0) {
    d.restore_s = number(t.substr(16));
    return d;
  }
  const std::string presets = "or a preset: dataset:SAMPLES_PER_S[xSIZE] or checkpoint-load:SECONDS";
  try {
    d.gb_s = parse_rate(t, opt) / 1e9;  // bits are bits: 100Gb/s is 12.5 GB/s
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + "; " + presets);
  }
  if (!(*d.gb_s > 0))
    throw UsageError(opt + " " + t + ": expected a rate above 0 such as 2GB/s, 500MB/s or 100Gb/s, " + presets);
  return d;
}

std::pair<uint64_t, std::string> parse_model_bytes(std::string_view text, std::string_view option) {
  const std::string t(text);
  const auto colon = t.find(':');
  if (colon == std::string::npos) {
    const uint64_t b = parse_size(t, option);
    if (b == 0) throw UsageError(std::string(option) + " " + t + ": the model must have at least one byte");
    return {b, format_size(b) + " (as given)"};
  }
  const std::string params = t.substr(0, colon), rest = t.substr(colon + 1);
  std::size_t used = 0;
  double n = 0;
  try {
    n = std::stod(params, &used);
  } catch (...) {
    used = 0;
  }
  const std::string suffix = params.substr(used);
  const double scale = suffix == "K" || suffix == "k" ? 1e3
                       : suffix == "M"               ? 1e6
                       : suffix == "B" || suffix == "G" ? 1e9
                       : suffix == "T"               ? 1e12
                       : suffix.empty()              ? 1
                                                     : 0;
  const bool adam = rest.size() > 5 && rest.substr(rest.size() - 5) == "+adam";
  const std::string dtype = adam ? rest.substr(0, rest.size() - 5) : rest;
  const int width = dtype == "bf16" || dtype == "fp16" ? 2 : dtype == "fp32" ? 4 : dtype == "fp8" ? 1 : 0;
  const double params_n = n * scale;
  if (used == 0 || scale == 0 || width == 0 || !(params_n >= 1) || params_n > 1e15)
    throw UsageError(std::string(option) + " '" + t +
                     "': expected a size (64M, 2G) or PARAMETERS:DTYPE[+adam] such as 405B:bf16+adam "
                     "(parameters with K, M, B or T; DTYPE bf16, fp16, fp32 or fp8)");
  const double per = width + (adam ? 12 : 0);
  const auto bytes = static_cast<uint64_t>(std::llround(params_n * per));
  std::string words = params + " parameters in " + dtype + " (" + std::to_string(width) + " bytes each)";
  if (adam) words += " plus Adam's fp32 master weights, momentum and variance (12 bytes a parameter)";
  return {bytes, words};
}

}  // namespace gdsb::cluster
