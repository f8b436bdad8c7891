// nlohmann's sax_parse (parser.hpp, lexer.hpp of 3.11) rewritten for a text in memory: the
// same grammar (RFC 8259, no comments, a UTF-8 byte order mark skipped), the same checks
// (UTF-8 of RFC 3629, no control character in a string, surrogates in pairs, a float that
// overflows is an error) and the same value types (an integer is unsigned when not
// negative, a float when it does not fit 64 bits). What is faster: a run of plain
// characters is appended at once, and numbers are read with std::from_chars.
#include "gdsb/cluster/json_scan.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace gdsb::cluster {
namespace {

using nlohmann::json;

// Characters that end a run of plain ones in a string: the quote, the backslash, control
// characters and every byte of a multi-byte sequence (checked one sequence at a time).
constexpr bool plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }
struct PlainTable {
  bool at[256]{};
  constexpr PlainTable() {
    for (int c = 0; c < 256; ++c) at[c] = plain(static_cast<unsigned char>(c));
  }
};
constexpr PlainTable kPlain;

class Scanner {
 public:
  Scanner(std::string_view text, nlohmann::json_sax<json>& sax)
      : p_(text.data()), end_(text.data() + text.size()), begin_(text.data()), sax_(sax) {}

  bool run() {
    if (end_ - p_ >= 1 && static_cast<unsigned char>(*p_) == 0xEF) {  // the byte order mark, whole or not at all
      if (end_ - p_ < 3 || static_cast<unsigned char>(p_[1]) != 0xBB || static_cast<unsigned char>(p_[2]) != 0xBF)
        return error();
      p_ += 3;
    }
    std::vector<bool> in_array;  // the open containers, as parser.hpp keeps them
    skip_ws();
    for (;;) {
      // A value starts here.
      if (p_ == end_) return error();
      const char c = *p_;
      if (c == '{') {
        ++p_;
        if (!sax_.start_object(static_cast<std::size_t>(-1))) return false;
        skip_ws();
        if (p_ != end_ && *p_ == '}') {
          ++p_;
          if (!sax_.end_object()) return false;
        } else {
          if (!key_and_colon()) return false;
          in_array.push_back(false);
          skip_ws();
          continue;
        }
      } else if (c == '[') {
        ++p_;
        if (!sax_.start_array(static_cast<std::size_t>(-1))) return false;
        skip_ws();
        if (p_ != end_ && *p_ == ']') {
          ++p_;
          if (!sax_.end_array()) return false;
        } else {
          in_array.push_back(true);
          continue;
        }
      } else if (!scalar()) {
        return false;
      }
      // A value ended: close the containers it ends, or go on to the next value.
      for (;;) {
        if (in_array.empty()) return true;
        skip_ws();
        if (p_ == end_) return error();
        if (in_array.back()) {
          if (*p_ == ',') {
            ++p_;
            skip_ws();
            break;
          }
          if (*p_ != ']') return error();
          ++p_;
          if (!sax_.end_array()) return false;
        } else {
          if (*p_ == ',') {
            ++p_;
            skip_ws();
            if (!key_and_colon()) return false;
            skip_ws();
            break;
          }
          if (*p_ != '}') return error();
          ++p_;
          if (!sax_.end_object()) return false;
        }
        in_array.pop_back();
      }
    }
  }

 private:
  bool error() {
    const auto at = static_cast<std::size_t>(p_ - begin_);
    return sax_.parse_error(at, std::string(), json::parse_error::create(101, at, "syntax error", nullptr));
  }
  void skip_ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  // A key, its event, then the colon (parser.hpp: the key's event comes before the colon is read).
  bool key_and_colon() {
    if (p_ == end_ || *p_ != '"' || !string()) return error();
    if (!sax_.key(text_)) return false;
    skip_ws();
    if (p_ == end_ || *p_ != ':') return error();
    ++p_;
    return true;
  }

  bool scalar() {
    switch (*p_) {
      case '"':
        if (!string()) return error();
        return sax_.string(text_);
      case 't':
        return literal("true") ? sax_.boolean(true) : error();
      case 'f':
        return literal("false") ? sax_.boolean(false) : error();
      case 'n':
        return literal("null") ? sax_.null() : error();
      default:
        return number();
    }
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number() {
    const char* const start = p_;
    const auto digit = [&] { return p_ != end_ && *p_ >= '0' && *p_ <= '9'; };
    const bool negative = p_ != end_ && *p_ == '-';
    if (negative) ++p_;
    if (!digit()) return error();
    if (*p_ == '0') {
      ++p_;
    } else {
      while (digit()) ++p_;
    }
    bool whole = true;
    if (p_ != end_ && *p_ == '.') {
      whole = false;
      ++p_;
      if (!digit()) return error();
      while (digit()) ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      whole = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digit()) return error();
      while (digit()) ++p_;
    }
    if (whole) {  // strtoull / strtoll in lexer.hpp; out of range: a float
      if (negative) {
        int64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) return sax_.number_integer(v);
      } else {
        uint64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) return sax_.number_unsigned(v);
      }
    }
    text_.assign(start, p_);
    double v = 0;
    if (std::from_chars(start, p_, v).ec != std::errc()) v = std::strtod(text_.c_str(), nullptr);  // under- or overflow
    if (!std::isfinite(v)) {
      const auto at = static_cast<std::size_t>(p_ - begin_);
      return sax_.parse_error(at, text_, json::out_of_range::create(406, "number overflow parsing '" + text_ + "'", nullptr));
    }
    return sax_.number_float(v, text_);
  }

  // Four hex digits after \u, or -1.
  int hex4() {
    if (end_ - p_ < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else return -1;
    }
    return v;
  }
  void put(unsigned cp) {
    if (cp < 0x80) {
      text_ += static_cast<char>(cp);
    } else if (cp <= 0x7FF) {
      text_ += static_cast<char>(0xC0u | (cp >> 6u));
      text_ += static_cast<char>(0x80u | (cp & 0x3Fu));
    } else if (cp <= 0xFFFF) {
      text_ += static_cast<char>(0xE0u | (cp >> 12u));
      text_ += static_cast<char>(0x80u | ((cp >> 6u) & 0x3Fu));
      text_ += static_cast<char>(0x80u | (cp & 0x3Fu));
    } else {
      text_ += static_cast<char>(0xF0u | (cp >> 18u));
      text_ += static_cast<char>(0x80u | ((cp >> 12u) & 0x3Fu));
      text_ += static_cast<char>(0x80u | ((cp >> 6u) & 0x3Fu));
      text_ += static_cast<char>(0x80u | (cp & 0x3Fu));
    }
  }
  bool escape() {  // after the backslash
    if (p_ == end_) return false;
    switch (*p_++) {
      case '"': text_ += '"'; return true;
      case '\\': text_ += '\\'; return true;
      case '/': text_ += '/'; return true;
      case 'b': text_ += '\b'; return true;
      case 'f': text_ += '\f'; return true;
      case 'n': text_ += '\n'; return true;
      case 'r': text_ += '\r'; return true;
      case 't': text_ += '\t'; return true;
      case 'u': break;
      default: return false;
    }
    const int first = hex4();
    if (first < 0) return false;
    if (first >= 0xDC00 && first <= 0xDFFF) return false;  // a low surrogate alone
    if (first < 0xD800 || first > 0xDBFF) {
      put(static_cast<unsigned>(first));
      return true;
    }
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
    p_ += 2;
    const int second = hex4();
    if (second < 0xDC00 || second > 0xDFFF) return false;
    put((static_cast<unsigned>(first) << 10u) + static_cast<unsigned>(second) - 0x35FDC00u);
    return true;
  }
  // One UTF-8 sequence of two to four bytes, as lexer.hpp's ranges allow.
  bool sequence() {
    const auto b = [&](std::ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
    const auto in = [](unsigned char c, unsigned lo, unsigned hi) { return c >= lo && c <= hi; };
    const unsigned char c = b(0);
    int n = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
    if (in(c, 0xC2, 0xDF)) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (in(c, 0xE1, 0xEC) || in(c, 0xEE, 0xEF)) n = 3;
    else if (c == 0xED) n = 3, hi = 0x9F;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (in(c, 0xF1, 0xF3)) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;
    else return false;
    if (end_ - p_ < n || !in(b(1), lo, hi)) return false;
    for (int i = 2; i < n; ++i)
      if (!in(b(i), 0x80, 0xBF)) return false;
    text_.append(p_, static_cast<std::size_t>(n));
    p_ += n;
    return true;
  }
  // A string from its opening quote into text_; false when malformed.
  bool string() {
    ++p_;
    text_.clear();
    for (;;) {
      const char* run = p_;
      while (p_ != end_ && kPlain.at[static_cast<unsigned char>(*p_)]) ++p_;
      text_.append(run, static_cast<std::size_t>(p_ - run));
      if (p_ == end_) return false;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        ++p_;
        if (!escape()) return false;
      } else if (c < 0x20 || !sequence()) {
        return false;
      }
    }
  }

  const char* p_;
  const char* const end_;
  const char* const begin_;
  nlohmann::json_sax<json>& sax_;
  std::string text_;  // the string, key or float read last
};

}  // namespace

bool scan_json(std::string_view text, nlohmann::json_sax<nlohmann::json>& sax) { return Scanner(text, sax).run(); }

}  // namespace gdsb::cluster
