#include "coinfer/tokenizers/bert_normalizer.hpp"

#include <array>

#include "bert_unicode.hpp"
#include "utf8.hpp"

namespace coinfer {
namespace {

// The one unconditional lowercase mapping (SpecialCasing.txt) longer than a code point;
// bert::to_lower gives the simple, one-to-one ones. (With strip_accents on, NFD has already
// split it into I and a dropped U+0307.)
constexpr char32_t kCapitalIWithDotAbove = 0x130;

// The back end of the normalizer: takes code points after clean_text and handle_chinese_chars,
// applies strip_accents and lowercase, and appends UTF-8 to `out`.
//
// NFD puts each run of combining marks (combining class > 0) in canonical order. Marks that are
// nonspacing are dropped anyway, and a stable sort keeps the others in the same relative order
// whether or not the dropped ones took part, so only the surviving marks of a run are held back
// (in `marks_`, sorted by insertion) until the next starter ends the run.
class Tail {
 public:
  Tail(const BertNormalizer& options, std::string& out) : options_(options), out_(out) {}

  void ascii(char c) {
    end_run();
    if (options_.lowercase && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out_.push_back(c);
  }

  void code_point(char32_t cp) {
    if (!options_.strip_accents) {
      emit(cp);
      return;
    }
    std::array<char32_t, 4> decomposed;
    const std::size_t length = bert::decompose(cp, decomposed);
    for (std::size_t i = 0; i < length; ++i) unaccented(decomposed[i]);
  }

  void end_run() {
    if (marks_.empty()) return;
    for (char32_t mark : marks_) emit(mark);
    marks_.clear();
  }

 private:
  void unaccented(char32_t cp) {
    const bool nonspacing = bert::is_nonspacing_mark(cp);
    const int combining_class = bert::combining_class(cp);
    if (combining_class == 0) {
      end_run();
      if (!nonspacing) emit(cp);
    } else if (!nonspacing) {
      std::size_t at = marks_.size();
      while (at > 0 && bert::combining_class(marks_[at - 1]) > combining_class) --at;
      marks_.insert(marks_.begin() + static_cast<std::ptrdiff_t>(at), cp);
    }
  }

  void emit(char32_t cp) {
    if (options_.lowercase) {
      if (cp == kCapitalIWithDotAbove) {
        out_.append("i\xCC\x87");  // i, U+0307 COMBINING DOT ABOVE
        return;
      }
      cp = bert::to_lower(cp);
    }
    utf8::append(cp, out_);
  }

  const BertNormalizer& options_;
  std::string& out_;
  std::u32string marks_;  // empty but for rare scripts: no allocation in the common case
};

// clean_text on an ASCII byte: the C0 controls and DEL go, \t \n \r become spaces.
enum class AsciiClass : unsigned char { keep, drop, space };
constexpr std::array<AsciiClass, 128> kAsciiClean = [] {
  std::array<AsciiClass, 128> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = AsciiClass::drop;
  table['\t'] = table['\n'] = table['\r'] = AsciiClass::space;
  table[0x7F] = AsciiClass::drop;
  return table;
}();

}  // namespace

Status BertNormalizer::normalize(std::string_view utf8_text, std::string& out) const {
  out.reserve(out.size() + utf8_text.size());
  Tail tail(*this, out);
  std::size_t at = 0;
  while (at < utf8_text.size()) {
    const auto byte = static_cast<unsigned char>(utf8_text[at]);
    if (byte < 0x80) {
      ++at;
      // No ASCII character is a CJK ideograph, nor changes under NFD.
      if (clean_text) {
        const AsciiClass ascii_class = kAsciiClean[byte];
        if (ascii_class == AsciiClass::drop) continue;
        if (ascii_class == AsciiClass::space) {
          tail.ascii(' ');
          continue;
        }
      }
      tail.ascii(static_cast<char>(byte));
      continue;
    }
    char32_t cp;
    const std::size_t length = utf8::decode(utf8_text, at, cp);
    if (length == 0) return Status::invalid("invalid UTF-8 at byte " + std::to_string(at));
    at += length;
    if (clean_text) {
      if (cp == 0xFFFD || bert::is_control(cp)) continue;
      if (bert::is_whitespace(cp)) {
        tail.ascii(' ');
        continue;
      }
    }
    if (handle_chinese_chars && bert::is_chinese(cp)) {
      tail.ascii(' ');
      tail.code_point(cp);
      tail.ascii(' ');
      continue;
    }
    tail.code_point(cp);
  }
  tail.end_run();
  return {};
}

}  // namespace coinfer
