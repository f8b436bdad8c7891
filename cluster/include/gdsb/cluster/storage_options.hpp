// The shared-storage phase's option values (gdsb-cluster --demand-per-gpu, --model-bytes),
// read once into figures; UsageError naming the option otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gdsb::cluster {

// --demand-per-gpu: a rate (gdsb::parse_rate: "2GB/s", "100Gb/s" = 12.5 GB/s), or a preset stated by the user's own figures:
//   dataset:SAMPLES[xSIZE]  each GPU consumes SAMPLES samples a second of SIZE bytes (default
//                           128K, gdsb-io's dataset preset's file size): SAMPLES x SIZE;
//   checkpoint-load:SECONDS each GPU loads its shard of --model-bytes (the model over the
//                           run's GPUs) within SECONDS: decided where the GPUs are counted.
// UsageError naming the option and what is accepted; a demand of 0 is one.
struct Demand {
  std::optional<double> gb_s;
  std::optional<double> restore_s;
  std::string text;
};
Demand parse_demand(std::string_view text, std::string_view option);
// "64M", "5.67T" (bytes, as --io-size), or PARAMS:DTYPE[+adam] ("405B:bf16+adam": 405e9
// parameters of 2 bytes, plus Adam's fp32 master weights, momentum and variance, 12 bytes a
// parameter). Returns bytes and the words saying how; UsageError naming the option otherwise.
std::pair<uint64_t, std::string> parse_model_bytes(std::string_view text, std::string_view option);

}  // namespace gdsb::cluster
