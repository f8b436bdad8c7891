// Clauses said once for the GPUs they hold for (issue 35, STYLE 18): each GPU's clause is built
// of words and figures; GPUs whose words match are one clause, named together ("GPU0-7"), each
// figure the range over them ("0.09-0.11 GB/s", "91-106%"). A GPU whose words differ (the
// odd one) keeps a clause of its own. Private to the doctor library.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gdsb::doctor::detail {

class Clause {
 public:
  Clause& text(const std::string& s);
  // The GPUs' names and a verb for one and for many, then a space: "GPU0 reads " / "GPU0-7 read ".
  Clause& gpus(const std::string& one, const std::string& many);
  Clause& words(const std::string& one, const std::string& many);  // "its ceiling" / "their ceilings"
  Clause& gb(double v);                                         // "0.094 GB/s"
  Clause& pct(double ratio);                                    // "96%"
  // The words with a mark for each figure: clauses of equal keys are said together.
  const std::string& key() const { return key_; }

 private:
  friend std::vector<std::string> said_once(const std::vector<std::pair<std::string, Clause>>&);
  struct Part {
    char kind;  // 't' text, 'g' GPUs, 'w' words for one or many, 'b' GB/s, 'p' percent
    std::string one, many;
    double value = 0;
  };
  std::vector<Part> parts_;
  std::string key_;
};

// (GPU label, its clause) in order; one text per distinct key, in the order of first use.
std::vector<std::string> said_once(const std::vector<std::pair<std::string, Clause>>& clauses);

}  // namespace gdsb::doctor::detail
