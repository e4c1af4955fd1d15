#include "coinfer/cache/agreement.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <unordered_map>
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
  bool clause_end = false;  // followed by ',', ';', ':' or the end of a sentence
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
    {
      std::size_t k = end;
      while (k < text.size() && text[k] == ' ') ++k;
      w.clause_end = k >= text.size() || text[k] == ',' || text[k] == ';' || text[k] == ':' ||
                     text[k] == '.' || text[k] == '?' || text[k] == '!' || text[k] == '\n';
    }
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
    "fastest faster fast quick quickly quicker speed accelerate|slowest slower slow slowly "
    "decelerate",
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

// Whether two words are one typo apart: one letter inserted, deleted, replaced, or two
// neighbours transposed (optimal string alignment distance 1), the longer of 5 letters or
// more, where a slip of one letter rarely makes another word.
bool one_typo_apart(std::string_view x, std::string_view y) {
  if (x.size() > y.size()) std::swap(x, y);
  if (y.size() < 5 || x.size() < 4 || x == y) return false;
  if (x.size() == y.size() && x.size() < 5) return false;
  if (y.size() - x.size() > 1) return false;
  std::size_t i = 0;
  while (i < x.size() && x[i] == y[i]) ++i;
  if (x.size() == y.size()) {
    if (x.substr(i + 1) == y.substr(i + 1)) return true;  // replaced
    return i + 1 < x.size() && x[i] == y[i + 1] && x[i + 1] == y[i] &&
           x.substr(i + 2) == y.substr(i + 2);  // transposed
  }
  return x.substr(i) == y.substr(i + 1);  // inserted
}

// Closed word classes whose members change what is asked when one replaces another:
// quantifiers, frequency, spans of time, time relative to now, tense. Words of one group are
// interchangeable ("each" / "every"). Most groups are compared where both texts use the
// class ("all birds" / "some birds", "per day" / "per week", "was" / "is"), since a paraphrase
// often says the same without any ("how long" / "how many minutes", "Who invented" / "was
// invented by"); a frequency or "only" must agree even where one text lacks it ("Do cats
// always land on their feet?"). Closed classes are short and complete by nature: this is
// grammar, not a list grown from examples.
struct ScopeClass {
  bool strict;                  // compared even when one text has none of its words
  std::string_view groups[12];  // one group per string
};
constexpr ScopeClass kScopes[] = {
    {true,
     {"all every entire whole everything everyone everybody everywhere",
      "many much plenty numerous", "few fewer fewest", "several couple handful"}},
    // "each" and "any" often only distribute or soften ("each day", "any tips?"); "most" is
    // as often a superlative ("most famous").
    {false,
     {"each", "some any anything something anyone someone anybody somebody",
      "most majority mostly"}},
    {true, {"only solely exclusively"}},
    {true,
     {"always constantly", "usually generally typically normally", "often frequently",
      "sometimes occasionally", "rarely seldom", "ever"}},
    {false,  // spans of time, and time relative to now
     {"second seconds", "minute minutes", "hour hours hourly", "day days daily",
      "week weeks weekly fortnight", "month months monthly", "year years yearly annual annually",
      "decade decades century centuries", "today tonight nowadays currently", "tomorrow upcoming",
      "yesterday ago formerly previously", "recently lately"}},
    {false,  // tense, by auxiliaries: the past, or not ("will I need" asks what "do I need" does)
     {"was were did had wasn't weren't didn't hadn't",
      "is are am does do has have isn't aren't doesn't don't hasn't haven't will won't shall "
      "i'll you'll it'll we'll they'll"}},
};

constexpr std::size_t kTense = std::size(kScopes) - 1;  // the auxiliaries' class; past first

// Words that make what follows a condition or a hypothesis.
constexpr std::string_view kConditions =
    "if unless assuming assume suppose supposing provided providing given hypothetically "
    "hypothetical otherwise";

// Verbs and nouns that negate without a negation word ("fail to", "lack", "avoid"); forget
// only as "forgot to".
// "Instead of X" and "a substitute for X" both negate X, and agree with each other.
constexpr std::string_view kImplicitNegations =
    "fail fails failed failing failure lack lacks lacked lacking avoid avoids avoided avoiding "
    "refuse refuses refused refusing unable absence absent prevent prevents prevented "
    "preventing deny denies denied denying neglect neglected ignore ignores ignored ignoring "
    "cease ceased missing instead substitute substitutes substituting alternative "
    "alternatives shortage deficiency deficient skip skips skipping "
    "skipped omit omits omitting omitted";

// Function words: never the arguments a role swap exchanges.
constexpr std::string_view kFunctionWords =
    "a an the this that these those my your his her its our their me you him them us it i we "
    "they he she is are am was were be been being do does did have has had can could should "
    "would will shall may might must what which who whom whose when where why how there here "
    "of to in on at by for with from about into onto over under as than then so and or but "
    "if not no yes also too very just really please some any all one ones";

// Words around which two arguments may trade places without changing the question.
constexpr std::string_view kSymmetric =
    "and or nor vs versus between both & the a an is are was were be";

constexpr std::size_t kMaxRoleWords = 64;
constexpr std::size_t kMaxWords = 512;

// Relations that may recur in a request and still pivot a swap ("the way to move photos from
// X to Y"); other pivots occur once in each text.
constexpr std::string_view kRelations = "to from than into onto against over";

// A question embedded after these is no condition ("I was wondering if", "tell me if").
constexpr std::string_view kAsking =
    "wondering wonder know tell ask asking asks see check checks checking determine determines "
    "verify verifies test tests testing decide find out matter curious sure unsure idea me";

struct Features {
  std::vector<std::string> all;  // every word, lower case
  int statements = 0;            // Sentence::statement sentences
  // Per kScopes class, a bit per group present.
  std::array<std::uint16_t, std::size(kScopes)> scopes{};
  int conditions = 0;
  std::vector<std::string> numbers;  // canonical
  int negations = 0;
  std::vector<std::string> entities;  // lower case
  std::uint64_t formats = 0;          // bit per group
  std::vector<std::uint8_t> contrasts = std::vector<std::uint8_t>(std::size(kContrasts));
  // Per contrast, the side named first (1 or 2; 0: none): "uppercase to lowercase" and
  // "lowercase to uppercase" name both sides, in another order.
  std::vector<std::uint8_t> first_side = std::vector<std::uint8_t>(std::size(kContrasts));
};

// What a sentence of a request does: asks (a question or an imperative), asks politely in
// the first person ("I'd like to know..."), or states something about the asker that may
// change the answer ("For context, I have asthma.", "In my case I rent.").
enum class Sentence { asks, request, statement };

constexpr std::string_view kQuestionStarts =
    "how what why when where which who whom whose can could should would will do does did is "
    "are am was were may might must shall have has any";
constexpr std::string_view kWh = "how what why when where which who whom whose";
constexpr std::string_view kRequests =
    "wonder wondering wondered know curious like love want wanted wanna looking need trying "
    "hoping asking please tell explain show help appreciate thanks thank";
constexpr std::string_view kUnsure =
    "sure know knew understand get got remember certain idea clear agree figure confused";

// Every listed word and what it is, looked up once per word of a text instead of scanning
// the lists: built on first use, read-only after (a function-local static).
struct Lexeme {
  bool negation = false;  // kNegations, kImplicitNegations
  bool condition = false;
  bool request = false;  // kRequests or kUnsure
  bool unsure = false;
  bool wh = false;
  std::uint64_t formats = 0;                                      // bit per kFormats group
  std::vector<std::pair<std::uint8_t, std::uint8_t>> contrasts;  // (kContrasts index, side)
  std::vector<std::pair<std::uint8_t, std::uint8_t>> scopes;     // (kScopes class, group)
};

template <class F>
void for_each_listed(std::string_view list, F&& f) {
  std::size_t i = 0;
  int side = 1;
  while (i < list.size()) {
    std::size_t end = list.find_first_of(" |", i);
    if (end == std::string_view::npos) end = list.size();
    if (end > i) f(list.substr(i, end - i), side);
    if (end < list.size() && list[end] == '|') side = 2;
    i = end + 1;
  }
}

const std::unordered_map<std::string_view, Lexeme>& lexicon() {
  static const auto* const words = [] {
    auto* out = new std::unordered_map<std::string_view, Lexeme>;
    auto& m = *out;
    for (std::string_view w : kNegations) m[w].negation = true;
    for_each_listed(kImplicitNegations, [&](std::string_view w, int) { m[w].negation = true; });
    for_each_listed(kConditions, [&](std::string_view w, int) { m[w].condition = true; });
    for_each_listed(kRequests, [&](std::string_view w, int) { m[w].request = true; });
    for_each_listed(kUnsure, [&](std::string_view w, int) {
      m[w].request = true;
      m[w].unsure = true;
    });
    for_each_listed(kWh, [&](std::string_view w, int) { m[w].wh = true; });
    for (std::size_t g = 0; g < std::size(kFormats); ++g) {
      for_each_listed(kFormats[g], [&](std::string_view w, int) {
        m[w].formats |= std::uint64_t{1} << g;
      });
    }
    for (std::size_t c = 0; c < std::size(kContrasts); ++c) {
      for_each_listed(kContrasts[c], [&](std::string_view w, int side) {
        m[w].contrasts.emplace_back(static_cast<std::uint8_t>(c), static_cast<std::uint8_t>(side));
      });
    }
    for (std::size_t k = 0; k < std::size(kScopes); ++k) {
      for (std::size_t g = 0; g < std::size(kScopes[k].groups); ++g) {
        for_each_listed(kScopes[k].groups[g], [&](std::string_view w, int) {
          m[w].scopes.emplace_back(static_cast<std::uint8_t>(k), static_cast<std::uint8_t>(g));
        });
      }
    }
    return out;
  }();
  return *words;
}

const Lexeme* lexeme(std::string_view word) {
  const auto& words = lexicon();
  const auto it = words.find(word);
  return it == words.end() ? nullptr : &it->second;
}

Sentence classify(const std::vector<Word>& words, bool question_mark) {
  if (question_mark || words.empty() || in_list(kQuestionStarts, words.front().lower)) {
    return Sentence::asks;
  }
  bool first_person = false, request = false;
  for (const Word& w : words) {
    const Lexeme* l = lexeme(w.lower);
    if (l && l->wh) return Sentence::asks;  // "before I sign, what should I check" without '?'
    first_person = first_person || w.lower == "i" || w.lower.starts_with("i'") || w.lower == "my" ||
                   w.lower == "we" || w.lower == "our";
    request = request || (l && l->request);
  }
  if (!first_person) return Sentence::asks;  // "Explain X.", "Baby potatoes: how long?"
  if (request || words.size() < 4) return Sentence::request;
  return Sentence::statement;
}

// Calls f(sentence text, whether it ends with '?') per sentence: text up to '.', '!' or '?'
// before a space or the end, or a line break (so 3.14 and requirements.txt stay whole).
template <class F>
void for_each_sentence(std::string_view text, F&& f) {
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size() || text[i] == '\n' ||
                     ((text[i] == '.' || text[i] == '!' || text[i] == '?') &&
                      (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n'));
    if (!end) continue;
    if (i > start) f(text.substr(start, i - start), i < text.size() && text[i] == '?');
    start = i + 1;
  }
}

Features features_of(std::string_view text) {
  Features f;
  std::vector<Word> words;
  for_each_sentence(text, [&](std::string_view sentence, bool question) {
    std::vector<Word> in = words_of(sentence);
    const Sentence kind = classify(in, question);
    if (kind == Sentence::statement) ++f.statements;
    words.insert(words.end(), std::make_move_iterator(in.begin()),
                 std::make_move_iterator(in.end()));
  });
  for (std::size_t index = 0; index < words.size(); ++index) {
    const Word& w = words[index];
    f.all.push_back(w.lower);
    const std::string_view s = w.lower;
    if (!w.mixed) {
      if (const std::string_view n = number_value(s); !n.empty()) f.numbers.emplace_back(n);
    }
    // "I'm not sure what it means", "I don't get it": the asker unsure, not the question
    // negated.
    const auto is_unsure = [&](std::size_t i) {
      const Lexeme* l = i < words.size() ? lexeme(words[i].lower) : nullptr;
      return l && l->unsure;
    };
    const Lexeme* l = lexeme(s);
    const bool unsure = is_unsure(index + 1) || is_unsure(index + 2);
    if (!unsure && (s.ends_with("n't") || (l && l->negation))) ++f.negations;
    const std::string_view previous =
        f.all.size() >= 2 ? std::string_view(f.all[f.all.size() - 2]) : std::string_view();
    if (l && l->condition && !(s == "if" && in_list(kAsking, previous))) ++f.conditions;
    // Stated circumstances: "for context", "keep in mind", "in my case", "note that".
    if (s == "context" || (s == "mind" && previous == "in") || (s == "case" && previous == "my") ||
        (s == "that" && previous == "note")) {
      ++f.conditions;
    }
    if ((s == "to" && (previous == "forgot" || previous == "forget" || previous == "forgets" ||
                       previous == "forgetting"))) {
      ++f.negations;
    }
    if (s == "of" && (previous == "lot" || previous == "lots")) f.scopes[0] |= 2;  // many
    // "how many", "so much": a question or degree, no quantifier.
    const bool degree = (s == "many" || s == "much") &&
                        (previous == "how" || previous == "so" || previous == "too" ||
                         previous == "as" || previous == "very");
    if (l && !degree) {
      for (const auto& [k, g] : l->scopes) f.scopes[k] |= static_cast<std::uint16_t>(1u << g);
    }
    const bool pronoun = s == "i" || s.starts_with("i'");
    if (!pronoun && (w.acronym || w.mixed || (w.capitalized && !w.sentence_start))) {
      f.entities.push_back(w.lower);
    }
    if (!l) continue;
    f.formats |= l->formats;
    for (const auto& [c, side] : l->contrasts) {
      f.contrasts[c] |= side;
      if (f.first_side[c] == 0) f.first_side[c] = side;
    }
  }
  // "I was wondering", "I was hoping": politeness, not the past.
  for (std::size_t i = 0; i + 1 < f.all.size(); ++i) {
    if (f.all[i] == "was" &&
        (f.all[i + 1] == "wondering" || f.all[i + 1] == "hoping" || f.all[i + 1] == "thinking")) {
      bool other_past = false;
      for (std::size_t k = 0; k < f.all.size(); ++k) {
        other_past = other_past || (k != i && in_list(kScopes[kTense].groups[0], f.all[k]));
      }
      if (!other_past) f.scopes[kTense] &= static_cast<std::uint16_t>(~1u);
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
  for (const std::string& word : b.all) {
    if (one_typo_apart(entity, word)) return true;  // Exceel / Excel
  }
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

// Who does what to whom, exchanged, in nearly the same words: two content words each text
// has once trade places across a word that stays between them ("Did Rome conquer Carthage?" /
// "Did Carthage conquer Rome?", "convert Celsius to Fahrenheit" / "... Fahrenheit to
// Celsius"), or a person named by a pronoun is the subject in one text and the object in the
// other ("I owe my landlord" / "My landlord owes me"). A moved phrase ("In winter, what should
// I pack?") trades places with nothing fixed between, and a symmetric connective ("cats and
// dogs", "between X and Y") is no such word. A passive ("was conquered by") says the same
// with the roles swapped: a "by" in one text only is a change of voice, not of roles.
bool roles_swapped(const Features& a, const Features& b) {
  // Checked in texts of up to kMaxRoleWords words: a cubic search, kept cheap.
  if (a.all.size() > kMaxRoleWords || b.all.size() > kMaxRoleWords) return false;
  const auto count = [](const std::vector<std::string>& words, std::string_view w) {
    return std::count(words.begin(), words.end(), w);
  };
  if (count(a.all, "by") != count(b.all, "by")) return false;
  // Content words, an s ending dropped ("owe" / "owes").
  const auto content_words = [](const std::vector<std::string>& words) {
    std::vector<std::string> out;
    for (const std::string& w : words) {
      if (in_list(kFunctionWords, w)) continue;
      out.push_back(w.size() > 3 && w.back() == 's' ? w.substr(0, w.size() - 1) : w);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto ca = content_words(a.all), cb = content_words(b.all);
  std::vector<std::string> differing;
  std::set_symmetric_difference(ca.begin(), ca.end(), cb.begin(), cb.end(),
                                std::back_inserter(differing));
  if (differing.size() > 1) return false;
  // Pronouns: subject forms, object forms. An object after a verb of telling ("tell me",
  // "show us") addresses the asker; it names no role.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kPersons{{
      {"i i'm i'd i've i'll", "me"},
      {"we we're we'd we've we'll", "us"},
      {"he he's he'd", "him"},
      {"they they're they'd they've", "them"},
  }};
  const auto cases = [](const std::vector<std::string>& words, const auto& person) {
    int subject = 0, object = 0;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (in_list(person.first, words[i])) ++subject;
      // "for me", "to me": a beneficiary, no role in the relation.
      const bool addressed = i > 0 && in_list(
                                          "tell show give help let send explain teach remind "
                                          "ask recommend suggest for to with about from at "
                                          "of like than",
                                          words[i - 1]);
      if (words[i] == person.second && !addressed) ++object;
    }
    return std::pair{subject, object};
  };
  for (const auto& person : kPersons) {
    const auto [as, ao] = cases(a.all, person);
    const auto [bs, bo] = cases(b.all, person);
    if ((as > 0 && ao == 0 && bs == 0 && bo > 0) || (as == 0 && ao > 0 && bs > 0 && bo == 0)) {
      return true;
    }
  }
  // Words: content words each text has once, at (position in a, position in b).
  std::vector<std::pair<std::size_t, std::size_t>> content;
  for (std::size_t i = 0; i < a.all.size(); ++i) {
    const std::string& w = a.all[i];
    if (in_list(kFunctionWords, w) || !number_value(w).empty()) continue;
    if (count(a.all, w) != 1 || count(b.all, w) != 1) continue;
    content.emplace_back(
        i, static_cast<std::size_t>(std::find(b.all.begin(), b.all.end(), w) - b.all.begin()));
  }
  // A word between x and y in a that is also between them, the other way round, in b.
  const auto pivot = [&](std::pair<std::size_t, std::size_t> x,
                         std::pair<std::size_t, std::size_t> y) {
    for (std::size_t i = x.first + 1; i < y.first; ++i) {
      const std::string& w = a.all[i];
      if (in_list(kSymmetric, w)) continue;
      if (!in_list(kRelations, w) && (count(a.all, w) != 1 || count(b.all, w) != 1)) continue;
      for (std::size_t k = y.second + 1; k < x.second; ++k) {
        if (b.all[k] == w) return true;
      }
    }
    return false;
  };
  // x and y exchange places (give or take an article), rather than one of them moving.
  const auto distance = [](std::size_t i, std::size_t k) { return i > k ? i - k : k - i; };
  for (const auto& x : content) {
    for (const auto& y : content) {
      if (x.first < y.first && x.second > y.second && distance(x.first, y.second) <= 3 &&
          distance(y.first, x.second) <= 3 && pivot(x, y)) {
        return true;
      }
    }
  }
  return false;
}

// The words of the conditions ("if I am diabetic"): each condition marker's clause, to the
// next clause boundary, as sorted words.
std::vector<std::string> condition_words(std::string_view text) {
  std::vector<std::string> out;
  const std::vector<Word> words = words_of(text);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!in_list(kConditions, words[i].lower)) continue;
    for (std::size_t k = i + 1; k < words.size() && !words[k].sentence_start; ++k) {
      if (!in_list(kFunctionWords, words[k].lower)) out.push_back(words[k].lower);
      if (words[k].clause_end) break;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The same words in the same order but at one position, where neither word is the other
// with a plural s, nor the other with a typo.
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
  return x + "s" != y && y + "s" != x && !one_typo_apart(x, y);
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
    case Disagreement::role:
      return "role";
    case Disagreement::scope:
      return "scope";
    case Disagreement::condition:
      return "condition";
    case Disagreement::length:
      return "length";
  }
  return "none";
}

Disagreement disagreement(std::string_view query, std::string_view candidate, unsigned checks) {
  const Features q = features_of(query);
  const Features c = features_of(candidate);
  const auto on = [checks](Disagreement d) { return (checks & check_bit(d)) != 0; };
  // Past kMaxWords (longer than a text the embedder takes whole), no text is taken for another.
  if (on(Disagreement::length) && (q.all.size() > kMaxWords || c.all.size() > kMaxWords)) {
    return Disagreement::length;
  }
  // Cheapest and most specific first: a format name (JSON) is also an acronym, a contrast
  // (disadvantages) also looks prefix-negated.
  if (on(Disagreement::negation) && q.negations != c.negations) return Disagreement::negation;
  if (on(Disagreement::number) && q.numbers != c.numbers) return Disagreement::number;
  if (on(Disagreement::format) && q.formats != c.formats) return Disagreement::format;
  if (on(Disagreement::antonym)) {
    for (std::size_t i = 0; i < std::size(kContrasts); ++i) {
      if (q.contrasts[i] != 0 && c.contrasts[i] != 0 &&
          (q.contrasts[i] != c.contrasts[i] || q.first_side[i] != c.first_side[i])) {
        return Disagreement::antonym;
      }
    }
  }
  if (on(Disagreement::negation) && (prefix_negated(q, c) || prefix_negated(c, q))) {
    return Disagreement::negation;
  }
  if (on(Disagreement::scope)) {
    for (std::size_t k = 0; k < std::size(kScopes); ++k) {
      const bool compared = kScopes[k].strict || (q.scopes[k] != 0 && c.scopes[k] != 0);
      if (compared && q.scopes[k] != c.scopes[k]) return Disagreement::scope;
    }
  }
  if (on(Disagreement::condition) &&
      (q.conditions != c.conditions || q.statements != c.statements ||
       (q.conditions > 0 && condition_words(query) != condition_words(candidate)))) {
    return Disagreement::condition;
  }
  if (on(Disagreement::entity) && (entity_missing(q, c) || entity_missing(c, q))) {
    return Disagreement::entity;
  }
  if (on(Disagreement::role) && roles_swapped(q, c)) return Disagreement::role;
  if (on(Disagreement::substitution) && one_word_substituted(q, c)) {
    return Disagreement::substitution;
  }
  return Disagreement::none;
}

}  // namespace coinfer::cache
