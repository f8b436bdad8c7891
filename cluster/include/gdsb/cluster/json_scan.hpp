#pragma once
// A JSON text as nlohmann's SAX events, read faster than nlohmann's own lexer: strings
// are copied in runs between quotes and escapes instead of a character at a time through
// a token buffer. It gives a handler the events nlohmann::json::sax_parse(..., strict =
// false) gives it, for every text, valid or not (the same value types, the same point
// where a malformed text ends in parse_error; tests/cluster/json_scan_test.cpp compares
// the two). The summary reader of gdsb-cluster --from spent most of its time in the lexer
// (docs/PERFORMANCE.md, issue 42).
#include <nlohmann/json.hpp>
#include <string_view>

namespace gdsb::cluster {

// Events of `text` to `sax` until its first value ends, a handler returns false or the
// text is malformed (then sax.parse_error). Returns what sax_parse would return.
bool scan_json(std::string_view text, nlohmann::json_sax<nlohmann::json>& sax);

}  // namespace gdsb::cluster
