// scan_json against its oracle, nlohmann::json::sax_parse(..., strict = false): the same
// events, in the same order, with the same values, and the same end (a handler's false, a
// parse error, or the value's end) for valid texts, malformed ones, a real node report cut
// at every length, and a handler that stops at every event.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gdsb/cluster/json_scan.hpp"

using gdsb::cluster::scan_json;
using nlohmann::json;

namespace {

// Every event as a line; stops (returns false) at event number `stop_at` when given.
class Recorder final : public nlohmann::json_sax<json> {
 public:
  explicit Recorder(std::size_t stop_at = static_cast<std::size_t>(-1)) : stop_at_(stop_at) {}
  std::vector<std::string> events;

  bool null() override { return add("null"); }
  bool boolean(bool b) override { return add(b ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return add("int " + std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return add("uint " + std::to_string(v)); }
  bool number_float(number_float_t v, const string_t& s) override {
    char b[64];
    std::snprintf(b, sizeof b, "%.17g", v);
    return add("float " + std::string(b) + " " + s);
  }
  bool string(string_t& v) override { return add("string " + v); }
  bool binary(binary_t&) override { return add("binary"); }
  bool start_object(std::size_t n) override { return add("{ " + std::to_string(n)); }
  bool end_object() override { return add("}"); }
  bool start_array(std::size_t n) override { return add("[ " + std::to_string(n)); }
  bool end_array() override { return add("]"); }
  bool key(string_t& k) override { return add("key " + k); }
  bool parse_error(std::size_t, const std::string&, const json::exception&) override {
    events.emplace_back("error");
    return false;
  }

 private:
  bool add(std::string e) {
    events.push_back(std::move(e));
    return events.size() != stop_at_;
  }
  std::size_t stop_at_;
};

struct Run {
  bool result;
  std::vector<std::string> events;
};
Run oracle(const std::string& text, std::size_t stop_at = static_cast<std::size_t>(-1)) {
  Recorder r(stop_at);
  const bool ok = json::sax_parse(text.begin(), text.end(), &r, json::input_format_t::json, false);
  return {ok, r.events};
}
Run ours(const std::string& text, std::size_t stop_at = static_cast<std::size_t>(-1)) {
  Recorder r(stop_at);
  const bool ok = scan_json(text, r);
  return {ok, r.events};
}
void same(const std::string& text, std::size_t stop_at = static_cast<std::size_t>(-1)) {
  const Run want = oracle(text, stop_at);
  const Run got = ours(text, stop_at);
  EXPECT_EQ(got.result, want.result) << "text: " << text.substr(0, 200);
  EXPECT_EQ(got.events, want.events) << "text: " << text.substr(0, 200);
}

std::string fixture() {
  std::ifstream in(std::string(GDSB_CLUSTER_FIXTURES) + "/hgx-node-template.json", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(JsonScan, ValidTextsGiveNlohmannsEvents) {
  for (const char* t : {
           R"({"a": 1, "b": [true, false, null], "c": {"d": "e"}, "f": {}, "g": [], "h": [[], {}]})",
           R"(  [1, -1, 0, -0, 18446744073709551615, 18446744073709551616, -9223372036854775808,
                -9223372036854775809, 1.5, -0.0, 1e5, 1E-5, 2.5e+3, 1e-400, 4.9e-324, 0.1, 123456789012345678901234567890])",
           R"(["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20ac\ud83d\ude00", "\u0000x", "plain \u00fc text", "é€😀", ""])",
           "\xEF\xBB\xBF{\"bom\": 1}",
           " \t\r\n{ \"k\" \t:\n 1 } trailing text is not read",
           "1", "\"s\"", "true", "null", "-12.5e2",
       })
    same(t);
}

TEST(JsonScan, MalformedTextsEndWhereNlohmannsDo) {
  for (const char* t : {
           "", " ", "{", "[", "{\"a\"", "{\"a\":", "{\"a\" 1}", "{1: 2}", "[1,]", "{\"a\":1,}", "[1 2]",
           "[01]", "[-]", "[1.]", "[.5]", "[1e]", "[1e+]", "[+1]", "[1x]", "[tru]", "[truex]", "[nul]",
           "[1e400]", "[-1e400]", "[\"a\nb\"]", "[\"\x01\"]", "[\"\\x\"]", "[\"\\u12\"]", "[\"\\u12g4\"]",
           "[\"\\ud83d\"]", "[\"\\ud83dx\"]", "[\"\\ud83d\\u0041\"]", "[\"\\ude00\"]", "[\"unterminated",
           "[\"\xC0\x80\"]", "[\"\xC3\"]", "[\"\xE0\x80\x80\"]", "[\"\xED\xA0\x80\"]", "[\"\xF0\x80\x80\x80\"]",
           "[\"\xF4\x90\x80\x80\"]", "[\"\xF5\x80\x80\x80\"]", "[\"\xFF\"]", "[\"\x80\"]", "\xEF\xBB{}", "\xEF",
           "/* comment */ 1", "{\"a\": 1}}", "]", "}", ",", "[1]]",
       })
    same(t);
}

TEST(JsonScan, EveryCutOfARealReportEndsAsNlohmannsDoes) {
  const std::string text = fixture();
  ASSERT_GT(text.size(), 20000u);
  same(text);
  for (std::size_t n = 0; n < 16384; n += 7) same(text.substr(0, n));  // the summary's head
  for (std::size_t n = 16384; n < text.size(); n += 997) same(text.substr(0, n));
}

TEST(JsonScan, AHandlerThatStopsStopsBoth) {
  const std::string text = fixture().substr(0, 4000);
  const std::size_t events = oracle(text).events.size();
  ASSERT_GT(events, 100u);
  for (std::size_t k = 1; k <= events; ++k) same(text, k);
}
