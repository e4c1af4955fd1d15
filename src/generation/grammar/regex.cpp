// Regular expressions and choice lists to the grammar IR.
#include <charconv>

#include "code_points.hpp"
#include "coinfer/generation/grammar/sources.hpp"

namespace coinfer::generation::grammar {

namespace {

constexpr int kMaxNesting = 128;          // groups inside groups
constexpr std::int64_t kMaxCount = 10000;  // {m,n}

class RegexParser {
 public:
  RegexParser(Grammar& g, std::string_view pattern, bool json) : g_(g), s_(pattern), json_(json) {}

  Status parse(Element& out) {
    if (!s_.empty() && s_.front() == '^') ++i_;
    std::vector<Sequence> alternatives;
    if (auto st = parse_alternatives(alternatives); !st.ok()) return st;
    if (i_ < s_.size()) return error(s_[i_] == ')' ? "unmatched ')'" : "unexpected character");
    out = alternatives.size() == 1 && alternatives[0].size() == 1
              ? alternatives[0][0]
              : g_.alternation("regex", std::move(alternatives));
    return g_.status;
  }

 private:
  Status error(std::string what) const {
    return Status::invalid("regex: " + what + " at offset " + std::to_string(i_));
  }
  bool at(char c) const { return i_ < s_.size() && s_[i_] == c; }

  Status parse_alternatives(std::vector<Sequence>& alternatives) {
    for (;;) {
      Sequence seq;
      if (auto st = parse_sequence(seq); !st.ok()) return st;
      alternatives.push_back(std::move(seq));
      if (!at('|')) return {};
      ++i_;
    }
  }

  Status parse_sequence(Sequence& seq) {
    while (i_ < s_.size() && s_[i_] != '|' && s_[i_] != ')') {
      if (s_[i_] == '$') {
        if (i_ + 1 != s_.size()) return error("'$' is supported only at the end");
        ++i_;
        break;
      }
      if (s_[i_] == '^') return error("'^' is supported only at the start");
      Sequence atom;
      if (auto st = parse_atom(atom); !st.ok()) return st;
      std::int64_t min = 1, max = 1;
      if (auto st = parse_quantifier(min, max); !st.ok()) return st;
      if (min == 1 && max == 1) {
        seq.insert(seq.end(), atom.begin(), atom.end());
      } else {
        seq.push_back(g_.repeat("regex-repeat", atom, min, max));
      }
      if (!g_.status.ok()) return g_.status;
    }
    return {};
  }

  // After an atom: * + ? {m} {m,} {m,n}, optionally lazy (same language).
  Status parse_quantifier(std::int64_t& min, std::int64_t& max) {
    if (i_ >= s_.size()) return {};
    const char c = s_[i_];
    if (c == '*') {
      min = 0, max = -1, ++i_;
    } else if (c == '+') {
      min = 1, max = -1, ++i_;
    } else if (c == '?') {
      min = 0, max = 1, ++i_;
    } else if (c == '{') {
      std::size_t j = i_ + 1;
      std::int64_t a = 0, b = 0;
      if (!read_count(j, a)) return {};  // not a quantifier: '{' is a literal
      b = a;
      if (j < s_.size() && s_[j] == ',') {
        ++j;
        if (j < s_.size() && s_[j] == '}') {
          b = -1;
        } else if (!read_count(j, b)) {
          return {};
        }
      }
      if (j >= s_.size() || s_[j] != '}') return {};
      i_ = j + 1;
      if (a > kMaxCount || b > kMaxCount) {
        return error("repetition counts above " + std::to_string(kMaxCount) + " are not supported");
      }
      if (b >= 0 && b < a) return error("repetition {m,n} with n < m");
      min = a, max = b;
    } else {
      return {};
    }
    if (at('?')) ++i_;
    if (at('+')) return error("possessive quantifiers are not supported");
    if (i_ < s_.size() && (s_[i_] == '*' || s_[i_] == '+' || s_[i_] == '?' ||
                           (s_[i_] == '{' && i_ + 1 < s_.size() && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9'))) {
      return error("a quantifier follows a quantifier");
    }
    return {};
  }

  bool read_count(std::size_t& j, std::int64_t& out) const {
    const auto begin = s_.data() + j;
    const auto end = s_.data() + std::min(s_.size(), j + 9);
    const auto [ptr, ec] = std::from_chars(begin, end, out);
    if (ec != std::errc() || ptr == begin) return false;
    j += static_cast<std::size_t>(ptr - begin);
    return true;
  }

  Status parse_atom(Sequence& atom) {
    const char c = s_[i_];
    if (c == '(') {
      ++i_;
      if (at('?')) {
        ++i_;
        if (at(':')) {
          ++i_;
        } else if ((at('<') || at('P')) && i_ + 1 < s_.size() && s_[i_ + 1] != '=' && s_[i_ + 1] != '!') {
          if (at('P')) ++i_;
          if (!at('<')) return error("unknown group syntax");
          while (i_ < s_.size() && s_[i_] != '>') ++i_;
          if (!at('>')) return error("unterminated group name");
          ++i_;
        } else if (at('=') || at('!') || at('<')) {
          return error("lookaround is not supported");
        } else {
          return error("inline flags and other (? groups are not supported");
        }
      }
      if (++depth_ > kMaxNesting) return error("groups nested too deep");
      std::vector<Sequence> alternatives;
      if (auto st = parse_alternatives(alternatives); !st.ok()) return st;
      if (!at(')')) return error("missing ')'");
      ++i_;
      --depth_;
      if (alternatives.size() == 1) {
        atom = std::move(alternatives[0]);
      } else {
        atom.push_back(g_.alternation("regex-group", std::move(alternatives)));
      }
      return g_.status;
    }
    if (c == '[') return parse_class(atom);
    if (c == '.') {
      ++i_;
      return add_class(complement({{'\n', '\n'}}), atom);
    }
    if (c == '*' || c == '+' || c == '?') return error("nothing to repeat");
    if (c == '\\') {
      CodePointRanges ranges;
      char32_t literal = 0;
      bool is_class = false;
      if (auto st = parse_escape(ranges, literal, is_class, false); !st.ok()) return st;
      return is_class ? add_class(std::move(ranges), atom) : add_literal(literal, atom);
    }
    char32_t cp = 0;
    if (!next_code_point(s_, i_, cp)) return error("invalid UTF-8");
    return add_literal(cp, atom);
  }

  Status parse_class(Sequence& atom) {
    ++i_;  // '['
    bool negated = false;
    if (at('^')) {
      negated = true;
      ++i_;
    }
    CodePointRanges ranges;
    bool first = true;
    while (i_ < s_.size() && (s_[i_] != ']' || first)) {
      first = false;
      char32_t lo = 0;
      bool is_class = false;
      if (auto st = class_member(ranges, lo, is_class); !st.ok()) return st;
      if (is_class) continue;
      if (at('-') && i_ + 1 < s_.size() && s_[i_ + 1] != ']') {
        ++i_;
        char32_t hi = 0;
        if (auto st = class_member(ranges, hi, is_class); !st.ok()) return st;
        if (is_class) return error("a class cannot end a range");
        if (hi < lo) return error("range out of order");
        ranges.emplace_back(lo, hi);
      } else {
        ranges.emplace_back(lo, lo);
      }
    }
    if (!at(']')) return error("missing ']'");
    ++i_;
    if (negated) ranges = complement(std::move(ranges));
    return add_class(std::move(ranges), atom);
  }

  Status class_member(CodePointRanges& ranges, char32_t& cp, bool& is_class) {
    is_class = false;
    if (at('\\')) {
      CodePointRanges escaped;
      if (auto st = parse_escape(escaped, cp, is_class, true); !st.ok()) return st;
      if (is_class) ranges.insert(ranges.end(), escaped.begin(), escaped.end());
      return {};
    }
    if (!next_code_point(s_, i_, cp)) return error("invalid UTF-8");
    return {};
  }

  Status parse_escape(CodePointRanges& ranges, char32_t& literal, bool& is_class, bool in_class) {
    ++i_;  // '\'
    if (i_ >= s_.size()) return error("a trailing backslash");
    const char c = s_[i_++];
    is_class = true;
    switch (c) {
      case 'd': ranges = digit_class(); return {};
      case 'D': ranges = complement(digit_class()); return {};
      case 'w': ranges = word_class(); return {};
      case 'W': ranges = complement(word_class()); return {};
      case 's': ranges = space_class(); return {};
      case 'S': ranges = complement(space_class()); return {};
      default: break;
    }
    is_class = false;
    switch (c) {
      case 'n': literal = '\n'; return {};
      case 'r': literal = '\r'; return {};
      case 't': literal = '\t'; return {};
      case 'f': literal = '\f'; return {};
      case 'v': literal = '\v'; return {};
      case '0': literal = 0; return {};
      case 'b':
        if (in_class) {
          literal = '\b';
          return {};
        }
        return error("word boundaries are not supported");
      case 'B': return error("word boundaries are not supported");
      case 'x': return hex(2, literal);
      case 'u':
        if (at('{')) {
          ++i_;
          const auto close = s_.find('}', i_);
          if (close == std::string_view::npos || close == i_ || close - i_ > 6) return error("bad \\u{...}");
          return hex(close - i_, literal, 1);
        }
        return hex(4, literal);
      default: break;
    }
    if ((c >= '1' && c <= '9') || c == 'k') return error("backreferences are not supported");
    if (c == 'p' || c == 'P') return error("Unicode property classes are not supported");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      return error(std::string("unknown escape \\").append(1, c));
    }
    --i_;
    if (!next_code_point(s_, i_, literal)) return error("invalid UTF-8");
    return {};
  }

  Status hex(std::size_t digits, char32_t& out, std::size_t skip_after = 0) {
    if (const char* wrong = read_hex_escape(s_, i_, digits, out)) return error(wrong);
    i_ += skip_after;
    return {};
  }

  Status add_class(CodePointRanges ranges, Sequence& atom) {
    normalize(ranges);
    if (json_) {
      subtract(ranges, 0, 0x1F);
      subtract(ranges, '"', '"');
      subtract(ranges, '\\', '\\');
    }
    if (ranges.empty()) return error("a class that matches no character");
    atom.push_back(g_.code_points("regex-class", std::move(ranges)));
    return g_.status;
  }

  Status add_literal(char32_t cp, Sequence& atom) {
    std::string bytes;
    if (json_ && (cp < 0x20 || cp == '"' || cp == '\\')) {
      static constexpr char kHex[] = "0123456789abcdef";
      switch (cp) {
        case '"': bytes = "\\\""; break;
        case '\\': bytes = "\\\\"; break;
        case '\n': bytes = "\\n"; break;
        case '\r': bytes = "\\r"; break;
        case '\t': bytes = "\\t"; break;
        case '\b': bytes = "\\b"; break;
        case '\f': bytes = "\\f"; break;
        default:
          bytes = "\\u00";
          bytes += kHex[cp >> 4];
          bytes += kHex[cp & 15];
      }
    } else {
      append_utf8(bytes, cp);
    }
    const auto seq = g_.literal(bytes);
    atom.insert(atom.end(), seq.begin(), seq.end());
    return {};
  }

  Grammar& g_;
  std::string_view s_;
  std::size_t i_ = 0;
  bool json_;
  int depth_ = 0;
};

}  // namespace

Status add_regex(Grammar& g, std::string_view pattern, bool json_string, Element& out) {
  return RegexParser(g, pattern, json_string).parse(out);
}

Status regex_grammar(std::string_view pattern, Grammar& out) {
  Element e;
  if (auto st = add_regex(out, pattern, false, e); !st.ok()) return st;
  const auto root = out.rule("root");
  out.define(root, {{e}});
  return out.finish(root);
}

Status choice_grammar(std::span<const std::string> choices, Grammar& out) {
  if (choices.empty()) return Status::invalid("choice: the list is empty");
  std::vector<Sequence> alternatives;
  for (const auto& c : choices) {
    if (c.empty()) return Status::invalid("choice: an empty string cannot be generated");
    alternatives.push_back(out.literal(c));
  }
  const auto root = out.rule("root");
  out.define(root, std::move(alternatives));
  return out.finish(root);
}

}  // namespace coinfer::generation::grammar
