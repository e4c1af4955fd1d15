// The WordPiece tokenizer: encode, truncation, pairs, decode, and the vocabulary reader.
//
// Input: text (any bytes). It is encoded with a small vocabulary (fuzz_support.hpp): invalid
// UTF-8 is an error that leaves `ids` as it was; otherwise the ids are [CLS] ... [SEP], all in
// the vocabulary, truncation keeps the untruncated prefix, and the ids decode. The same bytes
// are also read as token ids to decode (any id outside the vocabulary is an error), and as a
// vocab.txt, whose tokenizer, if it loads, encodes and decodes the text too.
#include <algorithm>
#include <cstring>
#include <vector>

#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

namespace {

void encode_and_decode(const WordPieceTokenizer& tokenizer, std::string_view text,
                       std::size_t max_length) {
  std::vector<std::int32_t> ids = {7};  // encode appends: what was there stays
  const Status status = tokenizer.encode(text, ids);
  if (!status) {
    check(ids.size() == 1 && ids[0] == 7, "a failed encode leaves ids as they were");
    return;
  }
  const std::span<const std::int32_t> full = std::span(ids).subspan(1);
  check(full.size() >= 2 && full.front() == tokenizer.cls_id() && full.back() == tokenizer.sep_id(),
        "[CLS] ... [SEP]");
  for (std::int32_t id : full) {
    check(id >= 0 && static_cast<std::size_t>(id) < tokenizer.vocab_size(), "id in vocabulary");
  }

  std::vector<std::int32_t> cut;
  check(tokenizer.encode(text, cut, max_length).ok(), "truncated encode succeeds");
  if (full.size() <= max_length) {
    check(std::equal(cut.begin(), cut.end(), full.begin(), full.end()),
          "within max_length nothing is cut");
  } else {
    check(cut.size() == max_length && cut.back() == tokenizer.sep_id() &&
              std::equal(cut.begin(), cut.end() - 1, full.begin()),
          "truncation keeps the first max_length - 1 ids, then [SEP]");
  }

  std::string decoded;
  check(tokenizer.decode(full, decoded, true).ok(), "encoded ids decode");
  check(tokenizer.decode(full, decoded, false).ok(), "encoded ids decode with specials");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto tokenizer = fuzz::small_tokenizer();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t max_length = 2 + (size > 0 ? data[0] % 16 : 0);
  encode_and_decode(*tokenizer, text, max_length);

  // The bytes split in two as a pair: [CLS] a [SEP] b [SEP], within max_length when it cuts.
  const std::size_t half = size / 2;
  std::vector<std::int32_t> pair = {7};
  std::size_t needed = 0;
  const std::size_t pair_max = 3 + max_length;
  if (encode_pair(*tokenizer, text.substr(0, half), text.substr(half), pair_max, pair, needed)
          .ok() &&
      pair.size() > 1) {
    const std::span<const std::int32_t> row = std::span(pair).subspan(1);
    check(row.size() == std::min(needed, pair_max), "a pair is cut to max_length, no shorter");
    check(row.front() == tokenizer->cls_id() && row.back() == tokenizer->sep_id() &&
              std::count(row.begin(), row.end(), tokenizer->sep_id()) >= 2,
          "[CLS] a [SEP] b [SEP]");
  } else {
    check(pair.size() == 1, "a pair that fails appends nothing");
  }

  // The bytes as token ids: decodes only when every id is in the vocabulary.
  std::vector<std::int32_t> ids(size / sizeof(std::int32_t));
  if (!ids.empty()) std::memcpy(ids.data(), data, ids.size() * sizeof(std::int32_t));
  const bool in_vocabulary = std::all_of(ids.begin(), ids.end(), [&](std::int32_t id) {
    return id >= 0 && static_cast<std::size_t>(id) < tokenizer->vocab_size();
  });
  std::string decoded = "stale";
  check(tokenizer->decode(ids, decoded, size % 2 == 0).ok() == in_vocabulary,
        "decode fails exactly on ids outside the vocabulary");

  // The bytes as a vocab.txt.
  WordPieceTokenizer own;
  if (WordPieceTokenizer::parse(text, "fuzz", own)) {
    check(own.vocab_size() > 0, "a loaded vocabulary is not empty");
    check(own.token_to_id("[CLS]") == own.cls_id() && own.token_to_id("[SEP]") == own.sep_id() &&
              own.token_to_id("[UNK]") == own.unk_id() && own.token_to_id("[PAD]") == own.pad_id(),
          "the special tokens are found by text");
    encode_and_decode(own, text, max_length);
    encode_and_decode(own, "Hello, [SEP] w\xC3\xB6rld\xE4\xB8\xAD!", max_length);
  }
  return 0;
}
