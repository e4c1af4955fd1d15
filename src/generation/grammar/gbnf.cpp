// llama.cpp's GBNF to the grammar IR.
#include <charconv>
#include <unordered_map>

#include "code_points.hpp"
#include "coinfer/generation/grammar/sources.hpp"

namespace coinfer::generation::grammar {

namespace {

constexpr int kMaxNesting = 128;
constexpr std::int64_t kMaxCount = 10000;

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

class GbnfParser {
 public:
  GbnfParser(Grammar& g, std::string_view text) : g_(g), s_(text) {}

  Status parse() {
    space(true);
    while (i_ < s_.size()) {
      const auto name = word();
      if (name.empty()) return error("expected a rule name");
      space(false);
      if (s_.substr(i_, 3) != "::=") return error("expected '::=' after '" + std::string(name) + "'");
      i_ += 3;
      space(true);
      const auto id = rule_named(name);
      if (defined_[id]) return error("rule '" + std::string(name) + "' is defined twice");
      defined_[id] = true;
      std::vector<Sequence> alternatives;
      if (auto st = alternates(false, alternatives); !st.ok()) return st;
      g_.define(id, std::move(alternatives));
      if (!g_.status.ok()) return g_.status;
      if (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') return error("unexpected character");
      space(true);
    }
    const auto root = names_.find("root");
    if (root == names_.end()) return Status::invalid("grammar: no rule named 'root'");
    if (auto st = g_.finish(root->second); !st.ok()) return Status::invalid("grammar: " + std::string(st.message()));
    return {};
  }

 private:
  Status error(std::string what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < i_ && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Status::invalid("grammar: " + what + " at line " + std::to_string(line) + ", column " +
                           std::to_string(column));
  }

  std::uint32_t rule_named(std::string_view name) {
    const auto [it, inserted] = names_.try_emplace(std::string(name), 0);
    if (inserted) {
      it->second = g_.rule(std::string(name));
      defined_.resize(std::max<std::size_t>(defined_.size(), it->second + 1), false);
    }
    return it->second;
  }

  std::string_view word() {
    const auto start = i_;
    while (i_ < s_.size() && word_char(s_[i_])) ++i_;
    return s_.substr(start, i_ - start);
  }

  // Spaces, tabs and comments; newlines too where the grammar is inside parentheses or after
  // '::=' and '|'.
  void space(bool newlines) {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines)) {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
      } else {
        break;
      }
    }
  }

  Status alternates(bool nested, std::vector<Sequence>& out) {
    for (;;) {
      Sequence seq;
      if (auto st = sequence(nested, seq); !st.ok()) return st;
      out.push_back(std::move(seq));
      if (i_ >= s_.size() || s_[i_] != '|') return {};
      ++i_;
      space(true);
    }
  }

  Status sequence(bool nested, Sequence& seq) {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      Sequence atom;
      if (c == '"') {
        ++i_;
        std::string bytes;
        while (i_ < s_.size() && s_[i_] != '"') {
          char32_t cp = 0;
          if (auto st = character(cp); !st.ok()) return st;
          append_utf8(bytes, cp);
        }
        if (i_ >= s_.size()) return error("unterminated string");
        ++i_;
        atom = g_.literal(bytes);
      } else if (c == '[') {
        if (auto st = char_class(atom); !st.ok()) return st;
      } else if (c == '.') {
        ++i_;
        atom.push_back(g_.code_points("any", {{0, kMaxCodePoint}}));
      } else if (c == '(') {
        ++i_;
        if (++depth_ > kMaxNesting) return error("groups nested too deep");
        space(true);
        std::vector<Sequence> alternatives;
        if (auto st = alternates(true, alternatives); !st.ok()) return st;
        if (i_ >= s_.size() || s_[i_] != ')') return error("expected ')'");
        ++i_;
        --depth_;
        if (alternatives.size() == 1) {
          atom = std::move(alternatives[0]);
        } else {
          atom.push_back(g_.alternation("group", std::move(alternatives)));
        }
      } else if (word_char(c)) {
        const auto name = word();
        atom.push_back({Element::Kind::rule, rule_named(name)});
      } else if (c == '<') {
        return error("token references (<...>) are not supported");
      } else {
        break;  // '|', ')', a newline at the top level, or an error the caller names
      }
      space(nested);
      std::int64_t min = 1, max = 1;
      if (auto st = quantifier(min, max); !st.ok()) return st;
      if (min == 1 && max == 1) {
        seq.insert(seq.end(), atom.begin(), atom.end());
      } else {
        seq.push_back(g_.repeat("repeat", atom, min, max));
      }
      if (!g_.status.ok()) return g_.status;
      space(nested);
    }
    return {};
  }

  Status quantifier(std::int64_t& min, std::int64_t& max) {
    if (i_ >= s_.size()) return {};
    const char c = s_[i_];
    if (c == '*') {
      min = 0, max = -1, ++i_;
    } else if (c == '+') {
      min = 1, max = -1, ++i_;
    } else if (c == '?') {
      min = 0, max = 1, ++i_;
    } else if (c == '{') {
      ++i_;
      space(true);
      if (!number(min)) return error("expected a repetition count");
      max = min;
      space(true);
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        space(true);
        max = -1;
        if (i_ < s_.size() && s_[i_] != '}' && !number(max)) return error("expected a repetition count");
        space(true);
      }
      if (i_ >= s_.size() || s_[i_] != '}') return error("expected '}'");
      ++i_;
      if (min > kMaxCount || max > kMaxCount) {
        return error("repetition counts above " + std::to_string(kMaxCount) + " are not supported");
      }
      if (max >= 0 && max < min) return error("repetition {m,n} with n < m");
    } else {
      return {};
    }
    return {};
  }

  bool number(std::int64_t& out) {
    const auto begin = s_.data() + i_;
    const auto end = s_.data() + std::min(s_.size(), i_ + 9);
    const auto [ptr, ec] = std::from_chars(begin, end, out);
    if (ec != std::errc() || ptr == begin || out < 0) return false;
    i_ += static_cast<std::size_t>(ptr - begin);
    return true;
  }

  // One character of a string or class, escapes decoded.
  Status character(char32_t& out) {
    if (s_[i_] != '\\') {
      if (!next_code_point(s_, i_, out)) return error("invalid UTF-8");
      return {};
    }
    ++i_;
    if (i_ >= s_.size()) return error("a trailing backslash");
    const char c = s_[i_++];
    std::size_t digits = 0;
    switch (c) {
      case 'n': out = '\n'; return {};
      case 'r': out = '\r'; return {};
      case 't': out = '\t'; return {};
      case '\\': case '"': case '[': case ']': case '-': case '^': out = static_cast<char32_t>(c); return {};
      case 'x': digits = 2; break;
      case 'u': digits = 4; break;
      case 'U': digits = 8; break;
      default: return error(std::string("unknown escape \\").append(1, c));
    }
    if (const char* wrong = read_hex_escape(s_, i_, digits, out)) return error(wrong);
    return {};
  }

  Status char_class(Sequence& atom) {
    ++i_;
    bool negated = false;
    if (i_ < s_.size() && s_[i_] == '^') {
      negated = true;
      ++i_;
    }
    CodePointRanges ranges;
    while (i_ < s_.size() && s_[i_] != ']') {
      char32_t lo = 0, hi = 0;
      if (auto st = character(lo); !st.ok()) return st;
      hi = lo;
      if (i_ + 1 < s_.size() && s_[i_] == '-' && s_[i_ + 1] != ']') {
        ++i_;
        if (auto st = character(hi); !st.ok()) return st;
        if (hi < lo) return error("range out of order");
      }
      ranges.emplace_back(lo, hi);
    }
    if (i_ >= s_.size()) return error("unterminated character class");
    ++i_;
    normalize(ranges);
    if (negated) ranges = complement(std::move(ranges));
    if (ranges.empty()) return error("a class that matches no character");
    atom.push_back(g_.code_points("class", std::move(ranges)));
    return {};
  }

  Grammar& g_;
  std::string_view s_;
  std::size_t i_ = 0;
  int depth_ = 0;
  std::unordered_map<std::string, std::uint32_t> names_;
  std::vector<bool> defined_;
};

}  // namespace

Status gbnf_grammar(std::string_view text, Grammar& out) { return GbnfParser(out, text).parse(); }

}  // namespace coinfer::generation::grammar
