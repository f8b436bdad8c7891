// SHA-256 (FIPS 180-4) of a byte string, as 64 lower-case hex digits: the key that makes the
// same document one run of a history however often it is added. Private to gdsb::report.
#pragma once

#include <string>
#include <string_view>

namespace gdsb::report {

std::string sha256_hex(std::string_view data);

}  // namespace gdsb::report
