#include "coinfer/tokenizers/wordpiece.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "coinfer/tokenizers/bert_normalizer.hpp"
#include "coinfer/tokenizers/bert_pre_tokenizer.hpp"
#include "test_data.hpp"

using namespace coinfer;
using coinfer::test::source_path;
using namespace std::literals;

namespace {

// all-MiniLM-L6-v2's vocabulary (bert-base-uncased's): [PAD] 0, [UNK] 100, [CLS] 101,
// [SEP] 102, [MASK] 103, 30522 tokens. Loaded once; encode and decode are const.
const WordPieceTokenizer& minilm() {
  static const WordPieceTokenizer tokenizer = [] {
    const auto path = source_path("assets/all-MiniLM-L6-v2/vocab.txt");
    REQUIRE_MESSAGE(std::filesystem::exists(path), path << " is missing: run scripts/setup");
    WordPieceTokenizer loaded;
    const Status status = WordPieceTokenizer::load(path, loaded);
    REQUIRE_MESSAGE(status.ok(), status.message());
    return loaded;
  }();
  return tokenizer;
}

std::vector<std::int32_t> encode(std::string_view text,
                                 std::size_t max_length = WordPieceTokenizer::no_truncation) {
  std::vector<std::int32_t> ids;
  const Status status = minilm().encode(text, ids, max_length);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return ids;
}

std::string decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens = true) {
  std::string text;
  const Status status = minilm().decode(ids, text, skip_special_tokens);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return text;
}

std::string normalize(std::string_view text, BertNormalizer normalizer = {}) {
  std::string out;
  const Status status = normalizer.normalize(text, out);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return out;
}

std::vector<std::string_view> pre_tokenize(std::string_view text) {
  std::vector<std::string_view> words;
  BertPreTokenizer{}.pre_tokenize(text, words);
  return words;
}

// A small vocabulary, parsed from memory.
WordPieceTokenizer toy_vocab() {
  WordPieceTokenizer tokenizer;
  const Status status = WordPieceTokenizer::parse(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\nun\n##aff\n##able\n##a\nx\n##\xC3\x9F\n", "toy", tokenizer);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return tokenizer;
}

// Golden cases written by Hugging Face tokenizers: {"cases": [{"text", "ids", ...}]}, where
// `ids` is `field` ("ids": untruncated encodings; "decoded": the decoder's text).
struct GoldenCase {
  std::string text;
  std::vector<std::int32_t> ids;
  std::string decoded;
};

std::vector<GoldenCase> load_golden(const char* relative, bool with_decoded) {
  const auto path = source_path(relative);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE_MESSAGE(parser.load(path.string()).get(root) == simdjson::SUCCESS,
                  "cannot read " << path);
  std::vector<GoldenCase> cases;
  for (simdjson::dom::element c : root["cases"].get_array()) {
    GoldenCase golden;
    golden.text = std::string(std::string_view(c["text"].get_string()));
    for (simdjson::dom::element id : c["ids"].get_array()) {
      golden.ids.push_back(static_cast<std::int32_t>(std::int64_t(id)));
    }
    if (with_decoded) golden.decoded = std::string(std::string_view(c["decoded"].get_string()));
    cases.push_back(std::move(golden));
  }
  REQUIRE(!cases.empty());
  return cases;
}

}  // namespace

TEST_CASE("every reference text encodes to the ids Hugging Face tokenizers gives") {
  const auto cases = load_golden("tests/fixtures/minilm/reference.json", false);
  std::size_t identical = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i << ": " << cases[i].text);
    const auto ids = encode(cases[i].text);
    CHECK(ids == cases[i].ids);
    identical += ids == cases[i].ids;
  }
  MESSAGE(identical << " of " << cases.size() << " reference cases identical");
}

TEST_CASE("every reference id sequence decodes to the text Hugging Face tokenizers gives") {
  const auto cases = load_golden("tests/fixtures/minilm/decode.json", true);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i << ": " << cases[i].text);
    CHECK(decode(cases[i].ids) == cases[i].decoded);
    CHECK(encode(cases[i].text) == cases[i].ids);
  }
}

TEST_CASE("the vocabulary gives the special token ids and looks tokens up") {
  const WordPieceTokenizer& tokenizer = minilm();
  CHECK(tokenizer.vocab_size() == 30522);
  CHECK(tokenizer.pad_id() == 0);
  CHECK(tokenizer.unk_id() == 100);
  CHECK(tokenizer.cls_id() == 101);
  CHECK(tokenizer.sep_id() == 102);
  CHECK(tokenizer.token_to_id("hello") == 7592);
  CHECK(tokenizer.token_to_id("##ffa") == 20961);
  CHECK_FALSE(tokenizer.token_to_id("ffa##").has_value());
}

TEST_CASE("clean_text drops controls, format characters and U+FFFD and makes whitespace spaces") {
  // NUL, BEL, ZERO WIDTH SPACE (Cf), U+FFFD, NBSP (Zs), \t, \r\n, LINE SEPARATOR (Zl),
  // \v and NEL (Cc, not kept as whitespace), SOFT HYPHEN (Cf).
  CHECK(normalize("a\0b\x07"
                  "c\u200Bd\uFFFDe\u00A0f\tg\r\nh\u2028i\x0Bj\u0085k\u00ADl"sv) ==
        "abcde f g  h ijkl");
}

TEST_CASE("CJK ideographs get a space on each side, kana and Hangul do not") {
  CHECK(normalize("日本語のテキスト") == " 日  本  語 のテキスト");
  CHECK(normalize("ひらがな ｶﾀｶﾅ") == "ひらかな ｶﾀｶﾅ");  // NFD split the dakuten off, not NFKD
}

TEST_CASE("accents are stripped after NFD and the text is lowercased") {
  CHECK(normalize("Crème Brûlée ÅNGSTRÖM İstanbul") == "creme brulee angstrom istanbul");
  // Hangul syllables decompose into jamo under NFD.
  CHECK(normalize("한") == "\u1112\u1161\u11AB");
}

TEST_CASE("a final capital sigma lowercases to σ, as Rust does, not to ς as Python does") {
  CHECK(normalize("ΟΔΟΣ") == "οδοσ");
}

TEST_CASE("the marks that survive strip_accents stay in NFD's canonical order") {
  // MUSICAL SYMBOL COMBINING FLAG-1 (Mc, class 226) before COMBINING STEM (Mc, class 216):
  // NFD swaps them; the acute and grave-below in between are nonspacing and dropped.
  CHECK(normalize("x\U0001D16D\u0301\u0316\U0001D165") == "x\U0001D165\U0001D16D");
}

TEST_CASE("characters newer than Hugging Face's Unicode tables are treated as it treats them") {
  // COMBINING DOUBLED CIRCUMFLEX ACCENT (Mn since Unicode 14) is not stripped, TWO-EM DASH ...
  // (Pd since 9.0) is not split off: their tables (Unicode 8.0 categories) do not know them.
  CHECK(normalize("a\u1AC1 d\u0301") == "a\u1AC1 d");
  CHECK(pre_tokenize("a\u2E43b c\u2E42d") ==
        std::vector<std::string_view>{"a\u2E43b", "c", "\u2E42", "d"});
}

TEST_CASE("each stage can be turned off as BertNormalizer's options allow") {
  CHECK(normalize("Crème\tİ 日本", {.clean_text = false,
                                    .handle_chinese_chars = false,
                                    .strip_accents = false,
                                    .lowercase = true}) == "crème\ti\u0307 日本");
  CHECK(normalize("Crème 日", {.strip_accents = false, .lowercase = false}) == "Crème  日 ");
}

TEST_CASE("whitespace separates words and each punctuation character is a word of its own") {
  CHECK(pre_tokenize("Hey friend!     How are you?!?") ==
        std::vector<std::string_view>{"Hey", "friend", "!", "How", "are", "you", "?", "!", "?"});
  // ASCII symbols count as punctuation, as do Unicode P* characters.
  CHECK(pre_tokenize("$5+3=8 ¿qué? «x» a_b 1.5") ==
        std::vector<std::string_view>{"$", "5", "+", "3", "=", "8", "¿", "qué", "?", "«", "x", "»",
                                      "a", "_", "b", "1", ".", "5"});
}

TEST_CASE("a word is split greedily into the longest pieces, the later ones marked ##") {
  CHECK(encode("unaffable") == std::vector<std::int32_t>{101, 14477, 20961, 3468, 102});
  CHECK(encode("Hello, world! How are you?") ==
        std::vector<std::int32_t>{101, 7592, 1010, 2088, 999, 2129, 2024, 2017, 1029, 102});
}

TEST_CASE("a word with a piece missing from the vocabulary is one [UNK]") {
  const WordPieceTokenizer toy = toy_vocab();
  std::vector<std::int32_t> ids;
  REQUIRE(toy.encode("unaffable unaffablez xß", ids).ok());
  // un ##aff ##able; [UNK] (no "##z"); x ##ß
  CHECK(ids == std::vector<std::int32_t>{2, 4, 5, 6, 1, 8, 9, 3});
  CHECK(encode("a\U0001FAE8b ok") == std::vector<std::int32_t>{101, 100, 7929, 102});
}

TEST_CASE("a word of more than 100 characters is one [UNK], counted in code points") {
  std::string ab100, e100;
  for (int i = 0; i < 50; ++i) ab100 += "ab";
  for (int i = 0; i < 100; ++i) e100 += "é";  // 200 bytes, 100 characters
  CHECK(encode(ab100).size() == 52);          // aba ##ba x 48 ##b
  CHECK(encode(ab100 + "a") == std::vector<std::int32_t>{101, 100, 102});
  CHECK(encode(e100).size() == 52);  // ee ##ee x 49
  CHECK(encode(e100 + "é") == std::vector<std::int32_t>{101, 100, 102});
}

TEST_CASE("special tokens written in the text are kept whole, case and all") {
  CHECK(encode("a [SEP] b[MASK]c [sep]") ==
        std::vector<std::int32_t>{101, 1037, 102, 1038, 103, 1039, 1031, 19802, 1033, 102});
}

TEST_CASE("empty and blank text encodes to [CLS] [SEP]") {
  CHECK(encode("") == std::vector<std::int32_t>{101, 102});
  CHECK(encode(" \t\n\u200B ") == std::vector<std::int32_t>{101, 102});
}

TEST_CASE("encode appends to the ids already there") {
  std::vector<std::int32_t> ids{7, 8};
  REQUIRE(minilm().encode("hello", ids, 3).ok());
  REQUIRE(minilm().encode("hello world", ids).ok());
  CHECK(ids == std::vector<std::int32_t>{7, 8, 101, 7592, 102, 101, 7592, 2088, 102});
}

TEST_CASE("max_length keeps the first max_length - 1 tokens and ends with [SEP]") {
  const auto full = encode("The quick brown fox jumps over the lazy dog.");
  REQUIRE(full.size() == 12);
  for (std::size_t max_length = 2; max_length < full.size(); ++max_length) {
    std::vector<std::int32_t> expected(full.begin(), full.begin() + max_length - 1);
    expected.push_back(102);
    CHECK(encode("The quick brown fox jumps over the lazy dog.", max_length) == expected);
  }
  CHECK(encode("The quick brown fox jumps over the lazy dog.", 12) == full);
  CHECK(encode("The quick brown fox jumps over the lazy dog.", 512) == full);
  // A special token in the text counts as one token.
  CHECK(encode("a [SEP] b", 3) == std::vector<std::int32_t>{101, 1037, 102});
  CHECK(encode("a [MASK] b", 4) == std::vector<std::int32_t>{101, 1037, 103, 102});

  std::vector<std::int32_t> ids;
  const Status status = minilm().encode("hello", ids, 1);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(ids.empty());
}

TEST_CASE("long texts encode the same as their parts, truncated or not") {
  const std::string sentence = "Inference servers batch requests, naïvely or not. ";
  const auto one = encode(sentence);
  std::string text;
  std::vector<std::int32_t> expected{101};
  for (int i = 0; i < 400; ++i) {  // 20 KB: several normalization chunks
    text += sentence;
    expected.insert(expected.end(), one.begin() + 1, one.end() - 1);
  }
  expected.push_back(102);
  CHECK(encode(text) == expected);

  std::vector<std::int32_t> truncated(expected.begin(), expected.begin() + 255);
  truncated.push_back(102);
  CHECK(encode(text, 256) == truncated);
}

TEST_CASE("invalid UTF-8 is an error that names the byte offset and leaves ids as they were") {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"ab\xC3(", "invalid UTF-8 at byte 2"},            // truncated sequence
      {"\xC0\xAF", "invalid UTF-8 at byte 0"},           // overlong '/'
      {"ok \xED\xA0\x80", "invalid UTF-8 at byte 3"},    // UTF-16 surrogate
      {"x\xF4\x90\x80\x80", "invalid UTF-8 at byte 1"},  // above U+10FFFF
      {"caf\xC3", "invalid UTF-8 at byte 3"},            // cut at the end
      {"\x80", "invalid UTF-8 at byte 0"},               // lone continuation byte
  };
  for (const auto& [text, message] : cases) {
    std::vector<std::int32_t> ids{42};
    const Status status = minilm().encode(text, ids);
    CHECK(status.code() == Errc::invalid_argument);
    CHECK(status.message() == message);
    CHECK(ids == std::vector<std::int32_t>{42});
  }
  std::string out;
  CHECK(BertNormalizer{}.normalize("ab\xC3(", out).message() == "invalid UTF-8 at byte 2");
}

TEST_CASE("decode glues ## pieces and drops the space before . ? ! ,") {
  CHECK(decode({101, 14477, 20961, 3468, 1010, 7592, 1012, 1029, 999, 102}) ==
        "unaffable, hello.?!");
  // Apostrophes keep their spaces: the cleanup applies to one token at a time.
  CHECK(decode({1045, 2123, 1005, 1056, 2113}) == "i don ' t know");
  // A ## piece first keeps its ##.
  CHECK(decode({20961, 3468}) == "##ffable");
}

TEST_CASE("decode keeps the special tokens when told to") {
  CHECK(decode({101, 7592, 100, 102, 0}) == "hello");
  CHECK(decode({101, 7592, 100, 102, 0}, false) == "[CLS] hello [UNK] [SEP] [PAD]");
}

TEST_CASE("decode rejects an id outside the vocabulary") {
  std::string text = "untouched";
  const Status status = minilm().decode(std::vector<std::int32_t>{7592, 30522}, text);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message() == "ids[1]: token id 30522 is outside the vocabulary [0, 30522)");
  CHECK(minilm().decode(std::vector<std::int32_t>{-1}, text).code() == Errc::invalid_argument);
}

TEST_CASE("a vocabulary that cannot be opened is not_found and names the file") {
  WordPieceTokenizer tokenizer;
  const Status status = WordPieceTokenizer::load("/nonexistent/vocab.txt", tokenizer);
  CHECK(status.code() == Errc::not_found);
  CHECK(status.message().find("/nonexistent/vocab.txt") != std::string::npos);
}

TEST_CASE("a broken vocabulary is an error that names the file and the line") {
  WordPieceTokenizer tokenizer;
  CHECK(WordPieceTokenizer::parse("[PAD]\n[UNK]\n[CLS]\n", "v.txt", tokenizer).message() ==
        "v.txt: no [SEP] token in the vocabulary");
  CHECK(WordPieceTokenizer::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\nab\nx\nab\n", "v.txt", tokenizer)
            .message() == "v.txt:7: duplicate token 'ab' (first on line 5)");
  CHECK(WordPieceTokenizer::parse("[PAD]\n\n[UNK]\n[CLS]\n[SEP]\n", "v.txt", tokenizer).message() ==
        "v.txt:2: empty token");
  CHECK(WordPieceTokenizer::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\na\xFF\n", "v.txt", tokenizer)
            .message() == "v.txt:5: invalid UTF-8 at byte 1 of the token");
  // CRLF line ends are not part of the tokens.
  REQUIRE(
      WordPieceTokenizer::parse("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhi\r\n", "v.txt", tokenizer)
          .ok());
  CHECK(tokenizer.token_to_id("hi") == 4);
  CHECK(tokenizer.vocab_size() == 5);
}

TEST_CASE("a vocabulary loads from a file") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("coinfer_wordpiece_test_" + std::to_string(getpid()) + ".txt");
  {
    std::ofstream file(path, std::ios::binary);
    file << "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##s";  // no newline at the end
  }
  WordPieceTokenizer tokenizer;
  const Status status = WordPieceTokenizer::load(path, tokenizer);
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(status.ok(), status.message());
  std::vector<std::int32_t> ids;
  REQUIRE(tokenizer.encode("Hellos hello!", ids).ok());
  CHECK(ids == std::vector<std::int32_t>{2, 4, 5, 4, 1, 3});
}

TEST_CASE("encode gives the same ids on many threads at once") {
  const auto cases = load_golden("tests/fixtures/minilm/reference.json", false);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (const GoldenCase& golden : cases) {
          std::vector<std::int32_t> ids;
          if (!minilm().encode(golden.text, ids).ok() || ids != golden.ids) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}
