#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coinfer/core/status.hpp"

namespace coinfer::generation::grammar {

// A set of bytes, 256 bits.
struct ByteSet {
  std::array<std::uint64_t, 4> bits{};
  void add(unsigned lo, unsigned hi) noexcept {
    for (unsigned b = lo; b <= hi; ++b) bits[b >> 6] |= std::uint64_t{1} << (b & 63);
  }
  bool test(unsigned char b) const noexcept { return (bits[b >> 6] >> (b & 63)) & 1; }
  bool operator==(const ByteSet&) const = default;
};

// One element of a rule's alternative: a byte from a set, a reference to a rule, or the end
// of the alternative (every alternative ends with one, so positions can step past the last
// element and find it).
struct Element {
  enum class Kind : std::uint8_t { bytes, rule, end };
  Kind kind = Kind::end;
  std::uint32_t value = 0;  // bytes: index into Grammar::sets; rule: the rule's index
};

using Sequence = std::vector<Element>;  // without the trailing end

// The one grammar IR that JSON Schema, GBNF, regular expressions and choice lists compile to:
// a context-free grammar over bytes (UTF-8 is spelled out as byte sequences), rules of
// alternatives of sequences. Repetition is rules too: x* is r ::= x r | (empty), which the
// matcher runs in constant stack depth (a reference in tail position pushes no frame).
// A body that can match the empty string repeats as its non-empty part (x{m,n} = x'{0,n} when
// x can be empty, finish()): repeated as written, every copy would stand at the start of the
// next byte, so a step would carry one parser state per copy, and x* would be left-recursive.
//
// Built through the member functions, which keep the grammar within its size bound (a schema
// that would explode stops with an error instead of taking the memory); finish() then checks
// what the matcher relies on: every referenced rule defined, no left recursion (a rule that
// can reach itself without consuming a byte), and that the start rule can match something.
class Grammar {
 public:
  struct Rule {
    std::string name;
    std::vector<Sequence> alternatives;
    bool defined = false;
  };

  // Bounds on what a grammar may grow to: elements over all rules, and rules.
  static constexpr std::size_t kMaxElements = 1 << 20;
  // The parser states one step may start from a rule (finish()): a base plus a multiple of the
  // grammar's elements, so that an alternation of many strings passes and a repeated group
  // that can be empty ((a | ){5000}) does not.
  static constexpr std::size_t kMaxClosureBase = 4096;
  static constexpr std::size_t kMaxClosurePerElement = 2;
  static constexpr std::size_t kMaxRules = 1 << 17;

  // A new rule, defined later with define(); names need not be unique.
  std::uint32_t rule(std::string name);
  void define(std::uint32_t rule, std::vector<Sequence> alternatives);
  // A new rule of these alternatives, referenced as one element.
  Element alternation(std::string_view name, std::vector<Sequence> alternatives);

  Element bytes(const ByteSet& set);
  Sequence literal(std::string_view bytes);
  // The UTF-8 encodings of the code points in the sorted, disjoint ranges, as one element.
  Element code_points(std::string_view name, std::vector<std::pair<char32_t, char32_t>> ranges);
  // body repeated min..max times (max < 0: unbounded).
  Element repeat(std::string_view name, const Sequence& body, std::int64_t min, std::int64_t max);

  // Rewrites the repetitions of bodies that can match the empty string (above), then checks
  // and freezes; the start rule is `root`. Errors: "rule 'x' is referenced but not defined",
  // "rule 'x' is left-recursive", "the grammar matches nothing", "too large", "too ambiguous".
  Status finish(std::uint32_t root);

  // Set by the builders when a bound is crossed; finish() reports it.
  Status status;

  const std::vector<Rule>& rules() const noexcept { return rules_; }
  const std::vector<ByteSet>& sets() const noexcept { return sets_; }
  std::uint32_t root() const noexcept { return root_; }
  std::size_t elements() const noexcept { return elements_; }

 private:
  // A repetition as written, kept for finish(): its rule and its body.
  struct Repetition {
    std::uint32_t rule;
    Sequence body;
    std::int64_t max;
  };
  bool grow(std::size_t elements);
  void define_repeat(std::uint32_t id, const Sequence& body, std::int64_t min, std::int64_t max);
  void repeat_non_empty_bodies();
  std::vector<Rule> rules_;
  std::vector<Repetition> repetitions_;
  std::vector<ByteSet> sets_;
  std::uint32_t root_ = 0;
  std::size_t elements_ = 0;
};

// Code-point ranges as UTF-8 byte sequences: a list of sequences of byte ranges, each
// matching a contiguous block of encodings (the classic split used by RE2 and Rust's
// utf8-ranges). Surrogates (U+D800-DFFF) are never encoded.
std::vector<std::vector<std::pair<std::uint8_t, std::uint8_t>>> utf8_sequences(char32_t lo,
                                                                                char32_t hi);

}  // namespace coinfer::generation::grammar
