#include "coinfer/cache/agreement.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace coinfer::cache {
namespace {

struct Word {
  std::string lower;
  bool capitalized = false;  // first letter upper case
  bool acronym = false;      // two or more letters, all upper case
  bool mixed = false;        // letters and digits together (H2O, mp3, GPT4)
  bool sentence_start = false;
};

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
char lower(char c) {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}

// Words: letters and digits, with inner apostrophes (don't), inner '.' and ',' between digits
// (3.14, 1,000), and trailing '+' / '#' (C++, C#). A possessive 's is dropped.
std::vector<Word> words_of(std::string_view text) {
  std::vector<Word> words;
  bool sentence_start = true;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (!is_alpha(c) && !is_digit(c)) {
      if (c == '.' || c == '?' || c == '!' || c == ':' || c == '\n' || c == ';') {
        sentence_start = true;
      }
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size()) {
      const char d = text[end];
      if (is_alpha(d) || is_digit(d)) {
        ++end;
      } else if ((d == '\'' || d == '.' || d == ',') && end + 1 < text.size() && end > i) {
        const char next = text[end + 1];
        const bool digits = is_digit(text[end - 1]) && is_digit(next);
        if ((d == '\'' && is_alpha(next)) || ((d == '.' || d == ',') && digits)) {
          end += 2;
        } else {
          break;
        }
      } else {
        break;
      }
    }
    while (end < text.size() && (text[end] == '+' || text[end] == '#')) ++end;
    Word w;
    int letters = 0, uppers = 0, digits = 0;
    std::size_t word_end = end;  // a possessive 's is not part of the word
    if (word_end - i > 2 && text[word_end - 2] == '\'' && lower(text[word_end - 1]) == 's') {
      word_end -= 2;
    }
    for (std::size_t k = i; k < word_end; ++k) {
      const char ch = text[k];
      if (ch == ',') continue;  // 1,000 = 1000
      w.lower += lower(ch);
      if (is_alpha(ch)) ++letters;
      if (is_upper(ch)) ++uppers;
      if (is_digit(ch)) ++digits;
    }
    w.capitalized = is_upper(text[i]);
    w.acronym = letters >= 2 && uppers == letters;
    w.mixed = letters > 0 && digits > 0;
    w.sentence_start = sentence_start;
    sentence_start = false;
    words.push_back(std::move(w));
    i = end;
  }
  return words;
}

bool contains(const std::vector<std::string>& set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

constexpr std::array<std::pair<std::string_view, std::string_view>, 38> kNumberWords{{
    {"zero", "0"},      {"one", "1"},         {"two", "2"},        {"three", "3"},
    {"four", "4"},      {"five", "5"},        {"six", "6"},        {"seven", "7"},
    {"eight", "8"},     {"nine", "9"},        {"ten", "10"},       {"eleven", "11"},
    {"twelve", "12"},   {"thirteen", "13"},   {"fourteen", "14"},  {"fifteen", "15"},
    {"sixteen", "16"},  {"seventeen", "17"},  {"eighteen", "18"},  {"nineteen", "19"},
    {"twenty", "20"},   {"thirty", "30"},     {"forty", "40"},     {"fifty", "50"},
    {"sixty", "60"},    {"seventy", "70"},    {"eighty", "80"},    {"ninety", "90"},
    {"hundred", "100"}, {"thousand", "1000"}, {"million", "1e6"},  {"billion", "1e9"},
    {"dozen", "12"},    {"half", "0.5"},      {"quarter", "0.25"}, {"twice", "x2"},
    {"double", "x2"},   {"triple", "x3"},
}};

constexpr std::array<std::string_view, 12> kNegations{"not",    "no",      "never",   "none",
                                                      "nobody", "nothing", "nowhere", "neither",
                                                      "nor",    "without", "cannot",  "non"};

// Groups of words naming one output format; the group index is what is compared.
constexpr std::string_view kFormats[] = {"json",
                                         "xml",
                                         "csv",
                                         "yaml yml",
                                         "toml",
                                         "html",
                                         "markdown",
                                         "table tabular",
                                         "bullet bullets bulleted",
                                         "paragraph paragraphs",
                                         "essay",
                                         "poem",
                                         "haiku",
                                         "limerick",
                                         "sonnet",
                                         "story",
                                         "tweet",
                                         "email",
                                         "summary summarize summarise tldr",
                                         "outline",
                                         "python",
                                         "javascript js node nodejs",
                                         "typescript",
                                         "java",
                                         "c++ cpp",
                                         "c#",
                                         "rust",
                                         "golang",
                                         "ruby php",
                                         "sql",
                                         "bash shell",
                                         "french",
                                         "german",
                                         "spanish",
                                         "italian",
                                         "portuguese",
                                         "chinese mandarin",
                                         "japanese",
                                         "binary hexadecimal hex octal roman",
                                         "short brief briefly concise",
                                         "detailed detail depth lengthy elaborate",
                                         "prose",
                                         "verse rhyming rhyme rhymes",
                                         "funny humorous humor witty playful",
                                         "professional formal serious"};

static_assert(std::size(kFormats) <= 64, "one bit per format group");

// Two sides of a contrast: "side0 words|side1 words".
constexpr std::string_view kContrasts[] = {
    "advantages advantage benefits benefit pros upsides upside strengths|disadvantages "
    "disadvantage drawbacks drawback cons downsides downside weaknesses risks",
    "increase increases increasing raise raising boost|decrease decreases decreasing reduce "
    "reducing lower lowering",
    "fastest faster fast quick quickly quicker|slowest slower slow slowly",
    "hot hotter hottest warm warmer warmest|cold colder coldest cool cooler coolest",
    "before|after",
    "buy buying purchase|sell selling",
    "best|worst",
    "better|worse",
    "largest biggest big bigger large larger|smallest small smaller tiny",
    "highest higher tallest taller|lowest shortest shorter",
    "longest longer|shortest",
    "maximum max maximize maximise most|minimum min minimize minimise least",
    "start starting begin beginning|stop stopping end ending quit",
    "gain gaining|lose losing loss",
    "add adding|remove removing delete deleting",
    "encrypt encrypting encryption|decrypt decrypting decryption",
    "compress compressing compression|decompress decompressing decompression",
    "import imports importing|export exports exporting",
    "upload uploading|download downloading",
    "push pushing|pull pulling",
    "enable enabling|disable disabling",
    "open opening|close closing",
    "win winning|lose losing",
    "cheapest cheap cheaper affordable|expensive priciest costly pricier",
    "easy easiest easier easily|hard hardest harder difficult",
    "heavy heavier heaviest|light lighter lightest",
    "north northern|south southern",
    "east eastern|west western",
    "morning|evening night",
    "summer|winter",
    "wet|dry",
    "safe safely|dangerous",
    "positive|negative",
    "first|last",
    "rise rising|fall falling sink",
    "expand expanding|shrink shrinking",
    "love|hate",
    "accept accepting|reject rejecting decline declining",
    "uppercase upper|lowercase",
    "on|off",
    "in|out",
    "high|low",
    "recursion recursive recursively|iteration iterative iteratively loop loops",
    "include includes including|skip skips skipping exclude excludes excluding",
    "inbound incoming|outbound outgoing",
    "young younger youngest|old older oldest",
    "rich richest|poor poorest",
    "early earlier earliest|late later latest",
    "above|below",
    "inside indoor indoors|outside outdoor outdoors",
    "strong stronger strongest|weak weaker weakest",
    "borrow borrowing|lend lending",
};

// A number's canonical text ("5" for "5" and "five"), empty for other words.
std::string_view number_value(std::string_view word) {
  if (!word.empty() && is_digit(word.front())) return word;
  for (const auto& [name, value] : kNumberWords) {
    if (word == name) return value;
  }
  return {};
}

bool in_list(std::string_view list, std::string_view word) {
  std::size_t i = 0;
  while (i < list.size()) {
    std::size_t end = list.find_first_of(" |", i);
    if (end == std::string_view::npos) end = list.size();
    if (list.substr(i, end - i) == word) return true;
    i = end + 1;
  }
  return false;
}

struct Features {
  std::vector<std::string> all;      // every word, lower case
  std::vector<std::string> numbers;  // canonical
  int negations = 0;
  std::vector<std::string> entities;  // lower case
  std::uint64_t formats = 0;          // bit per group
  std::vector<std::uint8_t> contrasts = std::vector<std::uint8_t>(std::size(kContrasts));
  // Per contrast, the side named first (1 or 2; 0: none): "uppercase to lowercase" and
  // "lowercase to uppercase" name both sides, in another order.
  std::vector<std::uint8_t> first_side = std::vector<std::uint8_t>(std::size(kContrasts));
};

Features features_of(std::string_view text) {
  Features f;
  for (const Word& w : words_of(text)) {
    f.all.push_back(w.lower);
    const std::string_view s = w.lower;
    if (!w.mixed) {
      if (const std::string_view n = number_value(s); !n.empty()) f.numbers.emplace_back(n);
    }
    if (s.ends_with("n't") ||
        std::find(kNegations.begin(), kNegations.end(), s) != kNegations.end()) {
      ++f.negations;
    }
    const bool pronoun = s == "i" || s.starts_with("i'");
    if (!pronoun && (w.acronym || w.mixed || (w.capitalized && !w.sentence_start))) {
      f.entities.push_back(w.lower);
    }
    for (std::size_t g = 0; g < std::size(kFormats); ++g) {
      if (in_list(kFormats[g], s)) f.formats |= std::uint64_t{1} << g;
    }
    for (std::size_t c = 0; c < std::size(kContrasts); ++c) {
      const std::string_view pair = kContrasts[c];
      const std::size_t bar = pair.find('|');
      std::uint8_t side = 0;
      if (in_list(pair.substr(0, bar), s)) side = 1;
      if (in_list(pair.substr(bar + 1), s)) side = 2;
      f.contrasts[c] |= side;
      if (f.first_side[c] == 0) f.first_side[c] = side;
    }
  }
  std::sort(f.numbers.begin(), f.numbers.end());
  f.numbers.erase(std::unique(f.numbers.begin(), f.numbers.end()), f.numbers.end());
  return f;
}

// A word of `a` that is a word of `b` with a negating prefix (unsafe / safe), where the
// other text lacks the prefixed form.
bool prefix_negated(const Features& a, const Features& b) {
  static constexpr std::array<std::string_view, 7> prefixes{"un", "in",  "im", "il",
                                                            "ir", "dis", "non"};
  for (const std::string& word : a.all) {
    if (contains(b.all, word)) continue;
    for (std::string_view prefix : prefixes) {
      if (word.size() > prefix.size() + 2 && std::string_view(word).starts_with(prefix)) {
        const std::string_view rest = std::string_view(word).substr(prefix.size());
        if (contains(b.all, rest) && !contains(a.all, rest)) return true;
      }
    }
  }
  return false;
}

// Whether `b` names `entity`: the word itself, its plural or singular (ETF / ETFs), or, for
// an acronym, consecutive words with its initials (BMI / body mass index).
bool names(const Features& b, const std::string& entity) {
  if (contains(b.all, entity) || contains(b.all, entity + "s")) return true;
  if (entity.size() > 2 && entity.back() == 's' &&
      contains(b.all, std::string_view(entity).substr(0, entity.size() - 1))) {
    return true;
  }
  if (entity.size() < 2 || entity.size() > 6) return false;
  for (std::size_t i = 0; i + entity.size() <= b.all.size(); ++i) {
    bool initials = true;
    for (std::size_t k = 0; k < entity.size() && initials; ++k) {
      initials = b.all[i + k].front() == entity[k];
    }
    if (initials) return true;
  }
  return false;
}

bool entity_missing(const Features& a, const Features& b) {
  for (const std::string& entity : a.entities) {
    if (!names(b, entity)) return true;
  }
  return false;
}

// The same words in the same order but at one position, where neither word is the other
// with a plural s.
bool one_word_substituted(const Features& a, const Features& b) {
  if (a.all.size() != b.all.size()) return false;
  std::size_t differing = a.all.size();
  for (std::size_t i = 0; i < a.all.size(); ++i) {
    if (a.all[i] == b.all[i]) continue;
    if (differing != a.all.size()) return false;  // a second difference: a rewording
    differing = i;
  }
  if (differing == a.all.size()) return false;
  const std::string& x = a.all[differing];
  const std::string& y = b.all[differing];
  if (!number_value(x).empty() && number_value(x) == number_value(y)) return false;  // 5 / five
  return x + "s" != y && y + "s" != x;
}

}  // namespace

std::string_view to_string(Disagreement reason) noexcept {
  switch (reason) {
    case Disagreement::none:
      return "none";
    case Disagreement::negation:
      return "negation";
    case Disagreement::number:
      return "number";
    case Disagreement::entity:
      return "entity";
    case Disagreement::format:
      return "format";
    case Disagreement::antonym:
      return "antonym";
    case Disagreement::substitution:
      return "substitution";
  }
  return "none";
}

Disagreement disagreement(std::string_view query, std::string_view candidate) {
  const Features q = features_of(query);
  const Features c = features_of(candidate);
  // Cheapest and most specific first: a format name (JSON) is also an acronym, a contrast
  // (disadvantages) also looks prefix-negated.
  if (q.negations != c.negations) return Disagreement::negation;
  if (q.numbers != c.numbers) return Disagreement::number;
  if (q.formats != c.formats) return Disagreement::format;
  for (std::size_t i = 0; i < std::size(kContrasts); ++i) {
    if (q.contrasts[i] != 0 && c.contrasts[i] != 0 &&
        (q.contrasts[i] != c.contrasts[i] || q.first_side[i] != c.first_side[i])) {
      return Disagreement::antonym;
    }
  }
  if (prefix_negated(q, c) || prefix_negated(c, q)) return Disagreement::negation;
  if (entity_missing(q, c) || entity_missing(c, q)) return Disagreement::entity;
  if (one_word_substituted(q, c)) return Disagreement::substitution;
  return Disagreement::none;
}

}  // namespace coinfer::cache
