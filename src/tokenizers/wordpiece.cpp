#include "coinfer/tokenizers/wordpiece.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <fstream>
#include <functional>
#include <unordered_map>
#include <utility>

#include "utf8.hpp"

namespace coinfer {
namespace {

constexpr std::string_view kContinuationPrefix = "##";

// The special tokens of BERT's vocabularies: Hugging Face marks them "special" (matched verbatim
// in the raw text, left out of decode with skip_special_tokens). [MASK] may be absent.
constexpr std::string_view kCls = "[CLS]";
constexpr std::string_view kSep = "[SEP]";
constexpr std::string_view kUnk = "[UNK]";
constexpr std::string_view kPad = "[PAD]";
constexpr std::string_view kMask = "[MASK]";

// Text is normalized a chunk of about this many bytes at a time (cut before ASCII whitespace or
// punctuation, where no stage carries state across), so that scratch stays small and a truncated
// encode stops soon after it has enough tokens.
constexpr std::size_t kChunkBytes = 4096;
// A thread's scratch above this is released after use rather than kept for the next call.
constexpr std::size_t kMaxRetainedScratchBytes = 1 << 20;

std::uint64_t hash_of(std::string_view key) noexcept {
  return std::hash<std::string_view>{}(key);
}

bool is_chunk_boundary(char c) noexcept {
  const auto byte = static_cast<unsigned char>(c);
  // ' ' \t \n \r stay whitespace through every stage; printable ASCII punctuation is a word of
  // its own. Both are starters that end any run of combining marks.
  return byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r' ||
         (byte >= 0x21 && byte <= 0x2F) || (byte >= 0x3A && byte <= 0x40) ||
         (byte >= 0x5B && byte <= 0x60) || (byte >= 0x7B && byte <= 0x7E);
}

// Per-thread buffers for encode; the tokenizer itself stays immutable.
struct Scratch {
  std::string normalized;
  std::vector<std::string_view> words;  // view into normalized
};

// The WordPiece decoder's cleanup (tokenizers/src/decoders/wordpiece.rs), applied to each token
// with its joining space, in this order.
constexpr std::pair<std::string_view, std::string_view> kCleanup[] = {
    {" .", "."},   {" ?", "?"},     {" !", "!"},     {" ,", ","},
    {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},   {" do not", " don't"},
    {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
};

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

Status bad_line(std::string_view origin, std::size_t line, const std::string& what) {
  return Status::invalid(std::string(origin) + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

void WordPieceTokenizer::TokenIndex::build(std::vector<std::string_view> keys) {
  std::size_t count = 0;
  max_key_bytes_ = 0;
  for (std::string_view key : keys) {
    if (key.empty()) continue;
    ++count;
    max_key_bytes_ = std::max(max_key_bytes_, key.size());
  }
  slots_.assign(std::bit_ceil(std::max<std::size_t>(2 * count, 16)), Slot{});
  keys_ = std::move(keys);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t id = 0; id < keys_.size(); ++id) {
    if (keys_[id].empty()) continue;
    const std::uint64_t hash = hash_of(keys_[id]);
    std::size_t at = hash & mask;
    while (slots_[at].id >= 0) at = (at + 1) & mask;
    slots_[at] = {static_cast<std::uint32_t>(hash), static_cast<std::int32_t>(id)};
  }
}

std::int32_t WordPieceTokenizer::TokenIndex::find(std::string_view key) const noexcept {
  if (slots_.empty()) return -1;
  const std::uint64_t hash = hash_of(key);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const Slot& slot = slots_[at];
    if (slot.id < 0) return -1;
    if (slot.hash == static_cast<std::uint32_t>(hash) && keys_[slot.id] == key) return slot.id;
  }
}

Status WordPieceTokenizer::load(const std::filesystem::path& vocab_path, WordPieceTokenizer& out) {
  std::ifstream file(vocab_path, std::ios::binary);
  if (!file) return Status::not_found(vocab_path.string() + ": cannot open the vocabulary");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return Status::invalid(vocab_path.string() + ": cannot read the vocabulary");
  return parse(text, vocab_path.string(), out);
}

Status WordPieceTokenizer::parse(std::string_view vocab_text, std::string_view origin,
                                 WordPieceTokenizer& out) {
  WordPieceTokenizer vocab;
  vocab.vocab_text_ = std::make_unique<char[]>(vocab_text.size());
  std::memcpy(vocab.vocab_text_.get(), vocab_text.data(), vocab_text.size());
  const std::string_view text(vocab.vocab_text_.get(), vocab_text.size());

  std::unordered_map<std::string_view, std::size_t> line_of;  // token -> line, for duplicates
  std::vector<std::string_view> continuation_keys;
  for (std::size_t begin = 0, line = 1; begin < text.size(); ++line) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view token = text.substr(begin, end - begin);
    begin = end + 1;
    // As Hugging Face reads a vocab.txt: trailing whitespace (a '\r' of CRLF, ...) is not part
    // of the token.
    while (!token.empty() &&
           (token.back() == ' ' || (token.back() >= '\t' && token.back() <= '\r'))) {
      token.remove_suffix(1);
    }
    if (token.empty()) return bad_line(origin, line, "empty token");
    if (const std::size_t bad = utf8::find_invalid(token); bad != utf8::npos) {
      return bad_line(origin, line,
                      "invalid UTF-8 at byte " + std::to_string(bad) + " of the token");
    }
    if (vocab.tokens_.size() >=
        static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
      return bad_line(origin, line, "too many tokens");
    }
    const auto [it, inserted] = line_of.emplace(token, line);
    if (!inserted) {
      return bad_line(origin, line,
                      "duplicate token '" + std::string(token) + "' (first on line " +
                          std::to_string(it->second) + ")");
    }
    vocab.tokens_.push_back(token);
    continuation_keys.push_back(token.starts_with(kContinuationPrefix) ? token.substr(2)
                                                                       : std::string_view());
  }

  const auto id_of = [&](std::string_view token) -> std::int32_t {
    const auto it = line_of.find(token);
    return it == line_of.end() ? -1 : static_cast<std::int32_t>(it->second - 1);
  };
  for (std::string_view required : {kCls, kSep, kUnk, kPad}) {
    if (id_of(required) < 0) {
      return Status::invalid(std::string(origin) + ": no " + std::string(required) +
                             " token in the vocabulary");
    }
  }
  vocab.cls_id_ = id_of(kCls);
  vocab.sep_id_ = id_of(kSep);
  vocab.unk_id_ = id_of(kUnk);
  vocab.pad_id_ = id_of(kPad);
  for (std::string_view special : {kMask, kCls, kSep, kUnk, kPad}) {  // longest first
    if (const std::int32_t id = id_of(special); id >= 0) {
      vocab.specials_.push_back(vocab.tokens_[id]);
      vocab.special_ids_.push_back(id);
      vocab.special_starts_[static_cast<unsigned char>(special[0])] = true;
    }
  }
  vocab.word_starts_.build(vocab.tokens_);
  vocab.continuations_.build(std::move(continuation_keys));
  out = std::move(vocab);
  return {};
}

std::optional<std::int32_t> WordPieceTokenizer::token_to_id(std::string_view token) const noexcept {
  const std::int32_t id = word_starts_.find(token);
  if (id < 0) return std::nullopt;
  return id;
}

std::pair<std::size_t, std::size_t> WordPieceTokenizer::find_special(
    std::string_view text, std::size_t at) const noexcept {
  for (; at < text.size(); ++at) {
    if (!special_starts_[static_cast<unsigned char>(text[at])]) continue;
    for (std::size_t i = 0; i < specials_.size(); ++i) {
      if (text.substr(at).starts_with(specials_[i])) return {at, i};
    }
  }
  return {text.size(), 0};
}

bool WordPieceTokenizer::is_special(std::int32_t id) const noexcept {
  return std::find(special_ids_.begin(), special_ids_.end(), id) != special_ids_.end();
}

Status WordPieceTokenizer::encode(std::string_view utf8_text, std::vector<std::int32_t>& ids,
                                  std::size_t max_length) const {
  if (max_length < 2) {
    return Status::invalid("max_length " + std::to_string(max_length) +
                           " leaves no room for [CLS] and [SEP]");
  }
  if (const std::size_t bad = utf8::find_invalid(utf8_text); bad != utf8::npos) {
    return Status::invalid("invalid UTF-8 at byte " + std::to_string(bad));
  }
  assert(!tokens_.empty() && "load or parse a vocabulary first");
  const std::size_t begin = ids.size();
  // The [CLS] and the word pieces end before ids[max_ids], where [SEP] goes.
  const std::size_t max_ids =
      max_length - 1 > no_truncation - begin ? no_truncation : begin + max_length - 1;
  ids.push_back(cls_id_);
  std::size_t at = 0;
  while (at < utf8_text.size() && ids.size() < max_ids) {
    const auto [special_at, special] = find_special(utf8_text, at);
    encode_words(utf8_text.substr(at, special_at - at), ids, max_ids);
    if (special_at == utf8_text.size()) break;
    if (ids.size() < max_ids) ids.push_back(special_ids_[special]);
    at = special_at + specials_[special].size();
  }
  if (ids.size() > max_ids) ids.resize(max_ids);
  ids.push_back(sep_id_);
  return {};
}

void WordPieceTokenizer::encode_words(std::string_view text, std::vector<std::int32_t>& ids,
                                      std::size_t max_ids) const {
  thread_local Scratch scratch;
  std::size_t at = 0;
  while (at < text.size() && ids.size() < max_ids) {
    std::size_t end = std::min(text.size(), at + kChunkBytes);
    while (end < text.size() && !is_chunk_boundary(text[end])) ++end;
    scratch.normalized.clear();
    scratch.words.clear();
    // The text was checked for invalid UTF-8 up front, the only error normalize reports.
    [[maybe_unused]] const Status normalized =
        normalizer_.normalize(text.substr(at, end - at), scratch.normalized);
    assert(normalized.ok());
    pre_tokenizer_.pre_tokenize(scratch.normalized, scratch.words);
    for (std::string_view word : scratch.words) {
      if (ids.size() >= max_ids) break;
      encode_word(word, ids);
    }
    at = end;
  }
  if (scratch.normalized.capacity() > kMaxRetainedScratchBytes) {
    scratch.normalized = std::string();
    scratch.words = std::vector<std::string_view>();
  }
}

void WordPieceTokenizer::encode_word(std::string_view word, std::vector<std::int32_t>& ids) const {
  if (utf8::length(word) > max_input_chars_per_word) {
    ids.push_back(unk_id_);
    return;
  }
  const std::size_t first_piece = ids.size();
  std::size_t start = 0;
  while (start < word.size()) {
    const TokenIndex& index = start == 0 ? word_starts_ : continuations_;
    // Greedy longest match; no piece is longer than the longest key, so start there.
    std::size_t end = std::min(word.size(), start + index.max_key_bytes());
    while (end > start && end < word.size() &&
           utf8::is_continuation(static_cast<unsigned char>(word[end]))) {
      --end;
    }
    std::int32_t id = -1;
    while (end > start) {
      id = index.find(word.substr(start, end - start));
      if (id >= 0) break;
      do {
        --end;
      } while (end > start && utf8::is_continuation(static_cast<unsigned char>(word[end])));
    }
    if (id < 0) {
      ids.resize(first_piece);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(id);
    start = end;
  }
}

Status WordPieceTokenizer::decode(std::span<const std::int32_t> ids, std::string& text,
                                  bool skip_special_tokens) const {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || static_cast<std::size_t>(ids[i]) >= tokens_.size()) {
      return Status::invalid("ids[" + std::to_string(i) + "]: token id " + std::to_string(ids[i]) +
                             " is outside the vocabulary [0, " + std::to_string(tokens_.size()) +
                             ")");
    }
  }
  text.clear();
  std::string piece;
  bool first = true;
  for (const std::int32_t id : ids) {
    if (skip_special_tokens && is_special(id)) continue;
    const std::string_view token = tokens_[id];
    piece.clear();
    if (first) {
      piece = token;
    } else if (token.starts_with(kContinuationPrefix)) {
      piece = token.substr(kContinuationPrefix.size());
    } else {
      piece.push_back(' ');
      piece += token;
    }
    for (const auto& [from, to] : kCleanup) replace_all(piece, from, to);
    text += piece;
    first = false;
  }
  return {};
}

Status encode_pair(const Tokenizer& tokenizer, std::string_view first, std::string_view second,
                   std::size_t max_length, std::vector<std::int32_t>& ids, std::size_t& needed) {
  thread_local std::vector<std::int32_t> a, b;
  a.clear();
  b.clear();
  if (auto s = tokenizer.encode(first, a, Tokenizer::no_truncation); !s) return s;
  if (auto s = tokenizer.encode(second, b, Tokenizer::no_truncation); !s) return s;
  if (a.size() < 2 || b.size() < 2) {
    return {Errc::internal, "encode_pair: the tokenizer adds no special tokens"};
  }
  // The texts' own tokens: a without its two special tokens, b without its two.
  std::size_t na = a.size() - 2, nb = b.size() - 2;
  needed = na + nb + 3;
  if (needed > max_length) {
    if (max_length < 5) return {};
    // As Hugging Face's tokenizers: the shorter text (the first on a tie) keeps up to half
    // the budget (rounded down), or all it has, or what the longer leaves; the longer the rest.
    const std::size_t budget = max_length - 3;
    std::size_t& shorter = na <= nb ? na : nb;
    std::size_t& longer = na <= nb ? nb : na;
    shorter = std::min(shorter, std::max(budget / 2, budget > longer ? budget - longer : 0));
    longer = std::min(longer, budget - shorter);
  }
  ids.insert(ids.end(), a.begin(), a.begin() + static_cast<std::ptrdiff_t>(na + 1));
  ids.push_back(a.back());
  ids.insert(ids.end(), b.begin() + 1, b.begin() + 1 + static_cast<std::ptrdiff_t>(nb));
  ids.push_back(b.back());
  return {};
}

}  // namespace coinfer
