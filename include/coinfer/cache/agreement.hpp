#pragma once

#include <string_view>

namespace coinfer::cache {

// Why a cached request (the candidate) does not ask what a new request (the query) asks, as
// far as cheap lexical checks can tell. Embeddings place "Which foods are safe for dogs?" and
// "Which foods are not safe for dogs?" close together; these checks catch what they blur:
//   negation  a different count of negation cues (not, no, never, without, n't, ...), or a
//             word negated by a prefix in one text only (safe / unsafe)
//   number    different numbers (digits, number words: "5" and "five" agree)
//   entity    a capitalized name, acronym or alphanumeric token of one text that the other
//             lacks ("Austria" / "Australia", "Python" / "Rust", "H2O")
//   format    a different requested output format or language (JSON / table, in French /
//             in German, Python / JavaScript, short / detailed)
//   antonym   the two sides of a known contrast (advantages / disadvantages, increase /
//             decrease, before / after, buy / sell, ...)
//   substitution  the same words but one, replaced by a word that is not its plural or
//             singular, nor itself with a typo ("zoom in" / "zoom out", "signs of high blood
//             sugar" / "... low ..."): the whole difference sits in one word, which the
//             embedding cannot weigh (synonym or opposite), so it is not taken for the same
//             question
//   role      two arguments trade places across a word that stays between them ("Did Rome
//             conquer Carthage?" / "Did Carthage conquer Rome?"): who does what to whom
//   scope     a different quantifier, frequency, span of time, time relative to now, tense
//             or exclusivity (all / some, always / sometimes, per day / per week, yesterday /
//             tomorrow, was / will, only), by closed word classes
//   condition a condition or hypothesis in one text only, or other words in it ("if I am
//             diabetic" / "if I am pregnant")
//   length    a text of more than 512 words: longer than the embedder reads whole, and the
//             checks' cost bounded (role swaps are looked for in texts of up to 64 words)
// Negation counts cue words and the verbs and nouns that negate without one (fail to, lack,
// avoid, refuse, unable), so "why doesn't it start" and "why does it fail to start" agree.
// The measured effect on hit precision and hit rate is in docs/CACHE.md.
enum class Disagreement {
  none,
  negation,
  number,
  entity,
  format,
  antonym,
  substitution,
  role,
  scope,
  condition,
  length
};
std::string_view to_string(Disagreement reason) noexcept;

// Which checks run: a bit (1 << Disagreement) per check; the bench measures each one's
// contribution by leaving it out.
constexpr unsigned kAllChecks = ~0u;
constexpr unsigned check_bit(Disagreement d) noexcept {
  return 1u << static_cast<unsigned>(d);
}

Disagreement disagreement(std::string_view query, std::string_view candidate,
                          unsigned checks = kAllChecks);

}  // namespace coinfer::cache
