// Parsing of the enumerated and numeric values gdsb-io accepts, shared by the command
// line and job files. Every error is a UsageError that names `what` (an option or a key
// with its line) and lists what is accepted.
#pragma once

#include <cstdint>
#include <string_view>

#include "gdsb/workload.hpp"

namespace gdsb::io {

XferType parse_xfer(std::string_view text, std::string_view what);
// 0..3 or read, write, randread, randwrite (also rand_read, random_read, ...).
IoPattern parse_pattern(std::string_view text, std::string_view what);
MemType parse_mem(std::string_view text, std::string_view what);
SubmitEngine parse_engine(std::string_view text, std::string_view what);
// 1/0, true/false, yes/no, on/off.
bool parse_bool(std::string_view text, std::string_view what);
uint64_t parse_uint(std::string_view text, std::string_view what, uint64_t max);
double parse_seconds(std::string_view text, std::string_view what);

}  // namespace gdsb::io
