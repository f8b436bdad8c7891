#include "gdsb/topo/said_together.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace gdsb::topo {
namespace {

std::optional<int> cuda_index(const std::string& label) {
  if (label.size() < 4 || label.compare(0, 3, "GPU") != 0) return std::nullopt;
  for (std::size_t i = 3; i < label.size(); ++i)
    if (label[i] < '0' || label[i] > '9') return std::nullopt;
  return std::stoi(label.substr(3));
}

// A text read for one GPU: words, the GPU's label, device names and figures, so that two
// GPUs' texts compare by their words only.
struct Piece {
  char kind;         // 't' words, 'g' the GPU's label, 'd' a device name, 'f' a figure
  std::string text;  // the words, the name, or the figure's number as written ("1.2")
  std::string unit;  // a figure's unit as written (" GB/s", "%", " MiB")
  double value = 0;
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// Length of a PCI address ("0000:18:00.0") at i, else 0.
std::size_t pci_address(const std::string& s, std::size_t i) {
  static constexpr const char* kShape = "hhhh:hh:hh.h";
  for (std::size_t k = 0; k < 12; ++k) {
    if (i + k >= s.size()) return 0;
    if (kShape[k] == 'h' ? !hex(s[i + k]) : s[i + k] != kShape[k]) return 0;
  }
  return i + 12 < s.size() && word_char(s[i + 12]) ? 0 : 12;
}

bool at_word(const std::string& s, std::size_t i, const std::string& w) {
  return !w.empty() && s.compare(i, w.size(), w) == 0 && (i + w.size() == s.size() || !word_char(s[i + w.size()]));
}

std::vector<Piece> pieces(const std::string& s, const TextGpu& g) {
  std::vector<std::string> own = g.own;
  std::sort(own.begin(), own.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::vector<Piece> out;
  const auto words = [&](char c) {
    if (out.empty() || out.back().kind != 't') out.push_back({'t', "", "", 0});
    out.back().text += c;
  };
  for (std::size_t i = 0; i < s.size();) {
    const bool start = i == 0 || !word_char(s[i - 1]);
    if (start) {
      if (const std::size_t n = pci_address(s, i)) {
        out.push_back({'d', s.substr(i, n), "", 0});
        i += n;
        continue;
      }
      const auto name = std::find_if(own.begin(), own.end(), [&](const std::string& w) { return at_word(s, i, w); });
      if (name != own.end()) {
        out.push_back({'d', *name, "", 0});
        i += name->size();
        continue;
      }
      if (at_word(s, i, g.label)) {
        out.push_back({'g', g.label, "", 0});
        i += g.label.size();
        continue;
      }
    }
    if (start && std::isdigit(static_cast<unsigned char>(s[i])) && (i == 0 || s[i - 1] != '.')) {
      std::size_t j = i;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
        ++j;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      }
      const std::string number = s.substr(i, j - i);
      std::string unit;
      for (const std::string u : {" GB/s", "%", " MiB"})
        if (unit.empty() && s.compare(j, u.size(), u) == 0) unit = u;
      if (!unit.empty()) {
        out.push_back({'f', number, unit, std::stod(number)});
        i = j + unit.size();
        continue;
      }
      for (; i < j; ++i) words(s[i]);
      continue;
    }
    words(s[i++]);
  }
  return out;
}

}  // namespace

std::string gpu_set(const std::vector<std::string>& labels) {
  std::string out;
  for (std::size_t i = 0; i < labels.size();) {
    std::size_t j = i + 1;
    const auto first = cuda_index(labels[i]);
    while (first && j < labels.size() && cuda_index(labels[j]) == *first + static_cast<int>(j - i)) ++j;
    out += (out.empty() ? "" : ", ") + labels[i];
    if (j - i > 1) out += (j - i == 2 ? ", " + labels[j - 1] : "-" + labels[j - 1].substr(3));
    i = j;
  }
  return out;
}

std::string text_shape(const std::string& text, const TextGpu& gpu) {
  std::string k;
  for (const auto& p : pieces(text, gpu))
    k += p.kind == 't' ? p.text : p.kind == 'f' ? "\x02" + p.unit : std::string(1, p.kind == 'g' ? '\x01' : '\x05');
  return k;
}

std::string said_together(const std::vector<TextGpu>& gpus, const std::vector<std::string>& texts,
                          std::vector<std::vector<std::string>>* own) {
  if (own) own->assign(gpus.size(), {});
  std::vector<std::vector<Piece>> ps;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    ps.push_back(pieces(texts[i], gpus[i]));
    labels.push_back(gpus[i].label);
  }
  std::string out;
  for (std::size_t k = 0; k < ps.front().size(); ++k) {
    const Piece& p = ps.front()[k];
    if (p.kind == 't') {
      out += p.text;
    } else if (p.kind == 'g') {
      out += gpu_set(labels);
    } else if (p.kind == 'd') {  // a device they share once; one that differs is each GPU's own
      const bool shared = std::all_of(ps.begin(), ps.end(), [&](const auto& q) { return q[k].text == p.text; });
      out += shared ? p.text : std::string(kEachOwn);
      if (!shared && own)
        for (std::size_t i = 0; i < ps.size(); ++i)
          if (std::find((*own)[i].begin(), (*own)[i].end(), ps[i][k].text) == (*own)[i].end())
            (*own)[i].push_back(ps[i][k].text);
    } else {
      const Piece *lo = &p, *hi = &p;
      std::vector<std::pair<std::string, std::vector<std::string>>> by_value;
      for (std::size_t i = 0; i < ps.size(); ++i) {
        const Piece& q = ps[i][k];
        if (q.value < lo->value) lo = &q;
        if (q.value > hi->value) hi = &q;
        auto it = std::find_if(by_value.begin(), by_value.end(), [&](const auto& v) { return v.first == q.text; });
        if (it == by_value.end()) it = by_value.insert(by_value.end(), {q.text, {}});
        it->second.push_back(labels[i]);
      }
      if (by_value.size() == 1) {
        out += p.text + p.unit;
        continue;
      }
      out += lo->text + "-" + hi->text + p.unit + " (";
      for (std::size_t v = 0; v < by_value.size(); ++v)
        out += (v ? "; " : "") + gpu_set(by_value[v].second) + " " + by_value[v].first;
      out += ")";
    }
  }
  // A list of devices each GPU has its own of reads as one "each GPU's own".
  const std::string twice = std::string(kEachOwn) + ", " + kEachOwn;
  for (std::size_t at; (at = out.find(twice)) != std::string::npos;) out.erase(at, twice.size() - std::string(kEachOwn).size());
  return out;
}

}  // namespace gdsb::topo
