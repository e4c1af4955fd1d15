#include "coinfer/tokenizers/bpe.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "bert_unicode.hpp"
#include "coinfer/models/gguf.hpp"
#include "utf8.hpp"

namespace coinfer {
namespace {

constexpr std::string_view kPreTokenizerSmolLm = "smollm";

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 (controls,
// space, DEL, NBSP, soft hyphen) for U+0100 onwards in byte order. Every code point is below
// kAlphabetEnd.
constexpr char32_t kAlphabetEnd = 0x144;
constexpr std::array<char32_t, 256> kByteToChar = [] {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (char32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    table[b] = printable ? b : next++;
  }
  return table;
}();
constexpr std::array<std::int16_t, kAlphabetEnd> kCharToByte = [] {
  std::array<std::int16_t, kAlphabetEnd> table{};
  table.fill(-1);
  for (std::size_t b = 0; b < 256; ++b) table[kByteToChar[b]] = static_cast<std::int16_t>(b);
  return table;
}();

// What GPT-2's pattern tells apart: \p{L}, \p{N}, \s and the rest.
enum class CharClass : unsigned char { letter, number, space, other };

constexpr std::array<CharClass, 128> kAsciiClass = [] {
  std::array<CharClass, 128> table{};
  for (char32_t c = 0; c < 128; ++c) {
    table[c] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) ? CharClass::letter
               : (c >= '0' && c <= '9')                           ? CharClass::number
               : (c == ' ' || (c >= '\t' && c <= '\r'))           ? CharClass::space
                                                                  : CharClass::other;
  }
  return table;
}();

struct Range {
  char32_t first;
  char32_t last;
};

// Letters and numbers of Unicode 15.0 (utf8proc 2.8) that the Oniguruma inside Hugging Face
// tokenizers 0.15.2 does not know (its tables are Unicode 14.0): its \p{L} and \p{N} do not
// match them. Rust's char::is_numeric, which the Digits stage uses, is Unicode 15.0 like
// utf8proc. Derived by running every code point through both (scripts/smollm2_tokenizer_golden.py
// --unicode-diff); derive again if utf8proc's Unicode version changes.
constexpr Range kUnknownToHfRegex[] = {
    {0x1123F, 0x11240}, {0x11F02, 0x11F02}, {0x11F04, 0x11F10}, {0x11F12, 0x11F33},
    {0x11F50, 0x11F59}, {0x1342F, 0x1342F}, {0x13441, 0x13446}, {0x1B132, 0x1B132},
    {0x1B155, 0x1B155}, {0x1D2C0, 0x1D2D3}, {0x1DF25, 0x1DF2A}, {0x1E030, 0x1E06D},
    {0x1E4D0, 0x1E4EB}, {0x1E4F0, 0x1E4F9}, {0x2B739, 0x2B739}, {0x31350, 0x323AF},
};

bool unknown_to_hf_regex(char32_t cp) noexcept {
  const auto it = std::upper_bound(std::begin(kUnknownToHfRegex), std::end(kUnknownToHfRegex), cp,
                                   [](char32_t c, const Range& r) { return c < r.first; });
  return it != std::begin(kUnknownToHfRegex) && cp <= std::prev(it)->last;
}

struct Char {
  std::size_t length;  // bytes
  CharClass regex_class;
  bool numeric;  // Rust's char::is_numeric: the Digits stage
};

Char char_at(std::string_view text, std::size_t at) noexcept {
  const auto byte = static_cast<unsigned char>(text[at]);
  if (byte < 0x80) {
    const CharClass c = kAsciiClass[byte];
    return {1, c, c == CharClass::number};
  }
  char32_t cp;
  const std::size_t length = utf8::decode(text, at, cp);
  if (length == 0) return {1, CharClass::other, false};  // not UTF-8: a broken precondition
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return {length, unknown_to_hf_regex(cp) ? CharClass::other : CharClass::letter, false};
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return {length, unknown_to_hf_regex(cp) ? CharClass::other : CharClass::number, true};
    default:
      return {length, bert::is_whitespace(cp) ? CharClass::space : CharClass::other, false};
  }
}

// The length of the contraction ('s 't 're 've 'm 'll 'd, lowercase only) at text[at], or 0.
std::size_t contraction_at(std::string_view text, std::size_t at) noexcept {
  if (text[at] != '\'' || at + 1 == text.size()) return 0;
  const char c = text[at + 1];
  if (c == 's' || c == 't' || c == 'm' || c == 'd') return 2;
  if (at + 2 == text.size()) return 0;
  const std::string_view two = text.substr(at + 1, 2);
  return two == "re" || two == "ve" || two == "ll" ? 3 : 0;
}

// GPT-2's pattern over `text`, a leftmost-first alternation tried at each piece's start:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// Calls sink(piece) for each piece while it returns true; returns false when it stopped.
template <typename Sink>
bool split_gpt2(std::string_view text, Sink& sink) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = at + contraction_at(text, at);
    if (end == at) {
      const Char first = char_at(text, at);
      std::size_t run = at;  // where the run of one class starts
      CharClass run_class = first.regex_class;
      if (text[at] == ' ' && at + 1 < text.size()) {
        const Char next = char_at(text, at + 1);
        if (next.regex_class != CharClass::space) {  // " ?" then letters, numbers or others
          run = at + 1;
          run_class = next.regex_class;
        }
      }
      end = run;
      std::size_t last = run;  // the start of the run's last character
      while (end < text.size()) {
        const Char c = char_at(text, end);
        if (c.regex_class != run_class) break;
        last = end;
        end += c.length;
      }
      // \s+(?!\S): a run of whitespace before a non-space leaves its last character to the
      // next piece (" word"), unless it is the only one (\s+).
      if (run_class == CharClass::space && end < text.size() && last > at) end = last;
    }
    if (!sink(text.substr(at, end - at))) return false;
    at = end;
  }
  return true;
}

// Digits(individual_digits=True), then GPT-2's pattern between the digits.
template <typename Sink>
bool split_smollm(std::string_view text, Sink& sink) {
  std::size_t between = 0;  // the text since the last numeric character
  std::size_t at = 0;
  while (at < text.size()) {
    const Char c = char_at(text, at);
    if (c.numeric) {
      if (at > between && !split_gpt2(text.substr(between, at - between), sink)) return false;
      if (!sink(text.substr(at, c.length))) return false;
      between = at + c.length;
    }
    at += c.length;
  }
  return between == text.size() || split_gpt2(text.substr(between), sink);
}

// One symbol of a piece being merged, in a doubly linked list over the piece's bytes.
struct Symbol {
  std::int32_t id;    // -1: merged into the symbol on its left
  std::int32_t prev;  // index, -1 at the start
  std::int32_t next;  // index, -1 at the end
};

// A pair of neighbours that a merge applies to, as it was when found: stale once either side
// has changed.
struct Candidate {
  std::uint32_t rank;
  std::int32_t left;  // symbol index
  std::int32_t left_id;
  std::int32_t right_id;
  std::int32_t merged;
};

// The lowest rank first, the leftmost of equal ranks first.
struct LaterCandidate {
  bool operator()(const Candidate& a, const Candidate& b) const noexcept {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  }
};

// Per-thread buffers for encode; the tokenizer itself stays immutable.
struct Scratch {
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
};
// A thread's scratch above this many symbols is released after use.
constexpr std::size_t kMaxRetainedSymbols = 1 << 16;

std::uint64_t pair_key(std::int32_t left, std::int32_t right) noexcept {
  return (std::uint64_t(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

std::size_t slot_of(std::uint64_t key, std::size_t mask) noexcept {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

std::string single_quoted(std::string_view text) {
  // Appended piece by piece: GCC 12 misreads "'" + std::string(text) (-Wstringop-overflow).
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out.append(text);
  out += '\'';
  return out;
}

}  // namespace

void ByteLevelBpeTokenizer::MergeTable::reserve(std::size_t count) {
  slots_.assign(std::bit_ceil(std::max<std::size_t>(2 * count, 16)), Slot{kEmpty, 0, -1});
}

bool ByteLevelBpeTokenizer::MergeTable::insert(std::uint64_t key, std::uint32_t rank,
                                               std::int32_t merged) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t at = slot_of(key, mask);; at = (at + 1) & mask) {
    if (slots_[at].key == key) return false;
    if (slots_[at].key == kEmpty) {
      slots_[at] = {key, rank, merged};
      return true;
    }
  }
}

const ByteLevelBpeTokenizer::MergeTable::Slot* ByteLevelBpeTokenizer::MergeTable::find(
    std::uint64_t key) const noexcept {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t at = slot_of(key, mask);; at = (at + 1) & mask) {
    if (slots_[at].key == key) return &slots_[at];
    if (slots_[at].key == kEmpty) return nullptr;
  }
}

ByteLevelBpeTokenizer::~ByteLevelBpeTokenizer() = default;

void pre_tokenize_smollm(std::string_view text, std::vector<std::string_view>& pieces) {
  auto sink = [&](std::string_view piece) {
    pieces.push_back(piece);
    return true;
  };
  split_smollm(text, sink);
}

Status ByteLevelBpeTokenizer::create(BpeVocabulary vocabulary,
                                     std::unique_ptr<ByteLevelBpeTokenizer>& out) {
  const std::size_t count = vocabulary.tokens.size();
  if (count == 0) return Status::invalid("the vocabulary has no tokens");
  if (count > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return Status::invalid("the vocabulary has " + std::to_string(count) + " tokens, more than " +
                           "an int32 id can number");
  }
  if (vocabulary.merges.size() > std::numeric_limits<std::uint32_t>::max()) {
    return Status::invalid("the vocabulary has too many merges");
  }
  if (vocabulary.pre_tokenizer != kPreTokenizerSmolLm) {
    return Status::invalid("unknown pre-tokenizer " + single_quoted(vocabulary.pre_tokenizer) +
                           " (known: " + std::string(kPreTokenizerSmolLm) + ")");
  }
  if (!vocabulary.token_types.empty() && vocabulary.token_types.size() != count) {
    return Status::invalid("token_types has " + std::to_string(vocabulary.token_types.size()) +
                           " entries for " + std::to_string(count) + " tokens");
  }
  const auto id_in_range = [&](std::int32_t id) {
    return id >= 0 && static_cast<std::size_t>(id) < count;
  };
  const auto range = "[0, " + std::to_string(count) + ")";
  for (const auto& [name, id] :
       {std::pair{"bos_id", vocabulary.bos_id}, std::pair{"eos_id", vocabulary.eos_id}}) {
    if (id != -1 && !id_in_range(id)) {
      return Status::invalid(std::string(name) + " " + std::to_string(id) +
                             " is outside the vocabulary " + range);
    }
  }
  if (vocabulary.add_bos && vocabulary.bos_id < 0) {
    return Status::invalid("add_bos is set but the vocabulary has no bos_id");
  }

  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer(new ByteLevelBpeTokenizer());
  tokenizer->tokens_ = std::move(vocabulary.tokens);
  tokenizer->types_ = std::move(vocabulary.token_types);
  if (tokenizer->types_.empty()) tokenizer->types_.assign(count, BpeVocabulary::normal);
  if (Status s = tokenizer->index_tokens(); !s.ok()) return s;
  if (Status s = tokenizer->index_merges(vocabulary.merges); !s.ok()) return s;
  tokenizer->index_whole_pieces();
  tokenizer->bos_id_ = vocabulary.bos_id;
  tokenizer->eos_id_ = vocabulary.eos_id;
  tokenizer->add_bos_ = vocabulary.add_bos;
  out = std::move(tokenizer);
  return {};
}

Status ByteLevelBpeTokenizer::index_tokens() {
  const auto where = [](std::size_t i) { return "tokens[" + std::to_string(i) + "]"; };
  ids_.reserve(tokens_.size());
  byte_ids_.fill(-1);
  decoded_offsets_.reserve(tokens_.size() + 1);
  decoded_offsets_.push_back(0);
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& token = tokens_[i];
    const auto id = static_cast<std::int32_t>(i);
    const std::int32_t type = types_[i];
    if (token.empty()) return Status::invalid(where(i) + ": empty token");
    if (const std::size_t bad = utf8::find_invalid(token); bad != utf8::npos) {
      return Status::invalid(where(i) + ": invalid UTF-8 at byte " + std::to_string(bad));
    }
    if (type < 0 || type > BpeVocabulary::byte) {
      return Status::invalid("token_types[" + std::to_string(i) + "]: unknown token type " +
                             std::to_string(type));
    }
    if (const auto [it, inserted] = ids_.emplace(token, id); !inserted) {
      return Status::invalid(where(i) + ": " + single_quoted(token) + " is also " +
                             where(static_cast<std::size_t>(it->second)));
    }
    const bool special = type == BpeVocabulary::control || type == BpeVocabulary::user_defined;
    if (special) {
      specials_.push_back({token, id});
      special_starts_[static_cast<unsigned char>(token[0])] = true;
    }
    if (type == BpeVocabulary::unknown && unknown_id_ < 0) unknown_id_ = id;

    // The token's bytes: the byte-level alphabet mapped back; special tokens, and (as Hugging
    // Face's ByteLevel decoder has it) tokens with a character outside the alphabet, as written.
    const std::size_t start = decoded_.size();
    bool in_alphabet = !special;
    for (std::size_t at = 0; in_alphabet && at < token.size();) {
      char32_t cp = 0;
      at += utf8::decode(token, at, cp);
      in_alphabet = cp < kAlphabetEnd && kCharToByte[cp] >= 0;
      if (in_alphabet) decoded_.push_back(static_cast<char>(kCharToByte[cp]));
    }
    if (!in_alphabet) {
      decoded_.resize(start);
      decoded_ += token;
    } else if (decoded_.size() == start + 1) {
      byte_ids_[static_cast<unsigned char>(decoded_.back())] = id;  // tokens are unique
    }
    if (decoded_.size() > std::numeric_limits<std::uint32_t>::max()) {
      return Status::invalid("the vocabulary's text is over 4 GiB");
    }
    decoded_offsets_.push_back(static_cast<std::uint32_t>(decoded_.size()));
  }
  std::stable_sort(specials_.begin(), specials_.end(), [](const Special& a, const Special& b) {
    return a.text.size() > b.text.size();
  });
  return {};
}

Status ByteLevelBpeTokenizer::index_merges(const std::vector<std::string>& merges) {
  merges_.reserve(merges.size());
  std::string joined;
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const std::string_view merge = merges[i];
    const auto where = [&] { return "merges[" + std::to_string(i) + "] " + single_quoted(merge); };
    // Split at the first space after the first character, as llama.cpp does: a left part may
    // start with a space in vocabularies that are not byte-level.
    const std::size_t space = merge.size() < 2 ? std::string_view::npos : merge.find(' ', 1);
    if (space == std::string_view::npos || space + 1 == merge.size()) {
      return Status::invalid(where() + ": not two tokens separated by a space");
    }
    const std::string_view left = merge.substr(0, space);
    const std::string_view right = merge.substr(space + 1);
    joined.assign(left).append(right);
    std::int32_t part_ids[3];
    for (int part = 0; const std::string_view text : {left, right, std::string_view(joined)}) {
      const auto it = ids_.find(text);
      if (it == ids_.end()) {
        return Status::invalid(where() + ": " + single_quoted(text) + " is not a token");
      }
      part_ids[part++] = it->second;
    }
    // A repeated merge keeps its first rank, as llama.cpp ranks it.
    merges_.insert(pair_key(part_ids[0], part_ids[1]), static_cast<std::uint32_t>(i), part_ids[2]);
  }
  return {};
}

void ByteLevelBpeTokenizer::index_whole_pieces() {
  whole_pieces_.reserve(tokens_.size());
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const auto id = static_cast<std::int32_t>(i);
    const std::string_view bytes(decoded_.data() + decoded_offsets_[i],
                                 decoded_offsets_[i + 1] - decoded_offsets_[i]);
    ids.clear();
    encode_piece(bytes, ids);
    if (ids.size() == 1 && ids[0] == id) whole_pieces_.emplace(bytes, id);
  }
}

std::string_view ByteLevelBpeTokenizer::token_text(std::int32_t id) const noexcept {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size()) return {};
  return tokens_[id];
}

Status ByteLevelBpeTokenizer::token_bytes(std::int32_t id, std::string& out) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size()) {
    return Status::invalid("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                           std::to_string(tokens_.size()) + ")");
  }
  out.append(decoded_, decoded_offsets_[id], decoded_offsets_[id + 1] - decoded_offsets_[id]);
  return {};
}

std::optional<std::int32_t> ByteLevelBpeTokenizer::token_id(std::string_view token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

bool ByteLevelBpeTokenizer::is_control(std::int32_t id) const noexcept {
  return id >= 0 && static_cast<std::size_t>(id) < types_.size() &&
         types_[id] == BpeVocabulary::control;
}

Status ByteLevelBpeTokenizer::encode(std::string_view utf8_text, std::vector<std::int32_t>& ids,
                                     std::size_t max_length) const {
  if (const std::size_t bad = utf8::find_invalid(utf8_text); bad != utf8::npos) {
    return Status::invalid("invalid UTF-8 at byte " + std::to_string(bad));
  }
  const std::size_t begin = ids.size();
  const std::size_t max_ids =
      max_length > no_truncation - begin ? no_truncation : begin + max_length;
  if (add_bos_ && ids.size() < max_ids) ids.push_back(bos_id_);
  std::size_t at = 0;
  while (at < utf8_text.size() && ids.size() < max_ids) {
    const auto [special_at, special] = find_special(utf8_text, at);
    encode_ordinary(utf8_text.substr(at, special_at - at), ids, max_ids);
    if (special == nullptr) break;
    if (ids.size() < max_ids) ids.push_back(special->id);
    at = special_at + special->text.size();
  }
  if (ids.size() > max_ids) ids.resize(max_ids);
  return {};
}

std::pair<std::size_t, const ByteLevelBpeTokenizer::Special*> ByteLevelBpeTokenizer::find_special(
    std::string_view text, std::size_t at) const noexcept {
  for (; at < text.size(); ++at) {
    if (!special_starts_[static_cast<unsigned char>(text[at])]) continue;
    const std::string_view rest = text.substr(at);
    for (const Special& special : specials_) {  // longest first
      if (rest.starts_with(special.text)) return {at, &special};
    }
  }
  return {text.size(), nullptr};
}

void ByteLevelBpeTokenizer::encode_ordinary(std::string_view text, std::vector<std::int32_t>& ids,
                                            std::size_t max_ids) const {
  auto sink = [&](std::string_view piece) {
    encode_piece(piece, ids);
    return ids.size() < max_ids;
  };
  split_smollm(text, sink);
}

void ByteLevelBpeTokenizer::encode_piece(std::string_view piece,
                                         std::vector<std::int32_t>& ids) const {
  if (const auto it = whole_pieces_.find(piece); it != whole_pieces_.end()) {
    ids.push_back(it->second);
    return;
  }
  thread_local Scratch scratch;
  std::vector<Symbol>& symbols = scratch.symbols;
  std::vector<Candidate>& heap = scratch.heap;
  symbols.clear();
  heap.clear();
  for (const char c : piece) {
    std::int32_t id = byte_ids_[static_cast<unsigned char>(c)];
    if (id < 0) id = unknown_id_;
    if (id < 0) continue;  // dropped, as Hugging Face's BPE without an unk_token drops it
    const auto index = static_cast<std::int32_t>(symbols.size());
    symbols.push_back({id, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
  }
  if (symbols.size() == 1) {
    ids.push_back(symbols[0].id);
    return;
  }
  const auto consider = [&](std::int32_t left) {
    const std::int32_t right = symbols[left].next;
    if (right < 0) return;
    const MergeTable::Slot* merge = merges_.find(pair_key(symbols[left].id, symbols[right].id));
    if (merge == nullptr) return;
    heap.push_back({merge->rank, left, symbols[left].id, symbols[right].id, merge->merged});
    std::push_heap(heap.begin(), heap.end(), LaterCandidate{});
  };
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) consider(static_cast<std::int32_t>(i));
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), LaterCandidate{});
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.left];
    // Stale: the left symbol was merged away or changed, or its right neighbour did.
    if (left.id != top.left_id || left.next < 0 || symbols[left.next].id != top.right_id) continue;
    Symbol& right = symbols[left.next];
    left.id = top.merged;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    right.id = -1;
    if (left.prev >= 0) consider(left.prev);
    consider(top.left);
  }
  for (std::int32_t i = 0; i >= 0 && static_cast<std::size_t>(i) < symbols.size();
       i = symbols[i].next) {
    ids.push_back(symbols[i].id);
  }
  if (symbols.capacity() > kMaxRetainedSymbols) {
    scratch.symbols = std::vector<Symbol>();
    scratch.heap = std::vector<Candidate>();
  }
}

Status ByteLevelBpeTokenizer::decode(std::span<const std::int32_t> ids, std::string& text,
                                     bool skip_special_tokens) const {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= tokens_.size()) {
      return Status::invalid("ids[" + std::to_string(i) + "]: token id " + std::to_string(ids[i]) +
                             " is outside the vocabulary [0, " + std::to_string(tokens_.size()) +
                             ")");
    }
    bytes += decoded_offsets_[ids[i] + 1] - decoded_offsets_[ids[i]];
  }
  text.clear();
  text.reserve(bytes);
  for (const std::int32_t id : ids) {
    if (skip_special_tokens && types_[id] == BpeVocabulary::control) continue;
    text.append(decoded_, decoded_offsets_[id], decoded_offsets_[id + 1] - decoded_offsets_[id]);
  }
  return {};
}

Status load_bpe_vocabulary(const GgufFile& file, BpeVocabulary& out) {
  BpeVocabulary vocabulary;
  if (file.find("tokenizer.ggml.model") != nullptr) {
    std::string model;
    if (Status s = file.get("tokenizer.ggml.model", model); !s.ok()) return s;
    if (model != "gpt2") {
      return Status::invalid("tokenizer.ggml.model is " + single_quoted(model) +
                             ", not a byte-level BPE vocabulary ('gpt2')");
    }
  }
  const std::vector<std::string>* strings = nullptr;
  if (Status s = file.get_strings("tokenizer.ggml.tokens", strings); !s.ok()) return s;
  vocabulary.tokens = *strings;
  if (Status s = file.get_strings("tokenizer.ggml.merges", strings); !s.ok()) return s;
  vocabulary.merges = *strings;
  if (file.find("tokenizer.ggml.token_type") != nullptr) {
    const std::vector<std::int64_t>* types = nullptr;
    if (Status s = file.get_integers("tokenizer.ggml.token_type", types); !s.ok()) return s;
    vocabulary.token_types.reserve(types->size());
    for (std::size_t i = 0; i < types->size(); ++i) {
      const std::int64_t type = (*types)[i];
      if (type < 0 || type > BpeVocabulary::byte) {
        return Status::invalid("tokenizer.ggml.token_type[" + std::to_string(i) +
                               "]: unknown token type " + std::to_string(type));
      }
      vocabulary.token_types.push_back(static_cast<std::int32_t>(type));
    }
  }
  if (Status s = file.get("tokenizer.ggml.pre", vocabulary.pre_tokenizer); !s.ok()) return s;
  for (const auto& [key, id] : {std::pair{"tokenizer.ggml.bos_token_id", &vocabulary.bos_id},
                                std::pair{"tokenizer.ggml.eos_token_id", &vocabulary.eos_id}}) {
    if (file.find(key) == nullptr) continue;
    std::int64_t value = 0;
    if (Status s = file.get(key, value); !s.ok()) return s;
    if (value < 0 || value >= static_cast<std::int64_t>(vocabulary.tokens.size())) {
      return Status::invalid(std::string(key) + ": token id " + std::to_string(value) +
                             " is outside the vocabulary [0, " +
                             std::to_string(vocabulary.tokens.size()) + ")");
    }
    *id = static_cast<std::int32_t>(value);
  }
  if (file.find("tokenizer.ggml.add_bos_token") != nullptr) {
    std::int64_t add_bos = 0;
    if (Status s = file.get("tokenizer.ggml.add_bos_token", add_bos); !s.ok()) return s;
    vocabulary.add_bos = add_bos != 0;
  }
  out = std::move(vocabulary);
  return {};
}

std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt,
                          std::string_view default_system_prompt) {
  std::string text;
  const auto append = [&](std::string_view role, std::string_view content) {
    text.append("<|im_start|>").append(role).append("\n").append(content).append("<|im_end|>\n");
  };
  if (!messages.empty() && messages.front().role != "system" && !default_system_prompt.empty()) {
    append("system", default_system_prompt);
  }
  for (const ChatMessage& message : messages) append(message.role, message.content);
  if (add_generation_prompt) text.append("<|im_start|>assistant\n");
  return text;
}

}  // namespace coinfer
