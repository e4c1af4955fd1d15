// The language model's text paths on SmolLM2's real vocabulary (read from the GGUF that
// scripts/setup installs; without it the target fails, it does not pass): ChatML rendering and
// byte-level BPE encoding of what a client sends, and the output processor's incremental
// detokenization with stop strings, stop token ids, end-of-sequence tokens and the UTF-8
// hold-back (src/generation/output_processor.cpp).
//
// Input: a control byte, then fields separated by NUL bytes.
//   control bit 0 clear, chat: each field is a message (its first byte picks the role among
//     system, user, assistant, tool and an unknown one; the rest is its content), rendered with
//     render_chatml (bit 1: add_generation_prompt, bit 2: SmolLM2's default system prompt) and
//     encoded. Valid UTF-8 encodes, and the ids decode to exactly the rendered text (control
//     tokens included), less the bytes the vocabulary has no token for; the first L ids of a truncated encoding are the whole one's first L.
//     Invalid UTF-8 is refused, with the ids left as they were.
//   control bit 0 set, detokenizer: field 0 holds token ids (two bytes each, modulo the
//     vocabulary), fields 1-4 stop strings, bit 1 skip_special_tokens, bit 2 ignore_eos, bits
//     3-4 a stop token id from the ids, bits 5-7 max_tokens. The ids go through the output
//     processor one at a time as the engine feeds them. The text it sends, joined, is what
//     the ids decode to, cut where the first stop string begins (none survives in it), or
//     before the token that ended it; an ending by length sends all of it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "coinfer/generation/output_processor.hpp"
#include "coinfer/generation/sequence.hpp"
#include "coinfer/models/gguf.hpp"
#include "coinfer/tokenizers/bpe.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

namespace {

const ByteLevelBpeTokenizer& smollm2() {
  static const ByteLevelBpeTokenizer* tokenizer = [] {
    const char* env = std::getenv("COINFER_SMOLLM2_GGUF");
    const std::filesystem::path path =
        env ? env : std::filesystem::path(COINFER_SOURCE_DIR) / "assets/SmolLM2-135M-Instruct.Q4_1.gguf";
    GgufFile file;
    if (auto s = GgufFile::open(path, file); !s.ok()) {
      fuzz::fail("SmolLM2's GGUF (scripts/setup installs it): " + s.message());
    }
    BpeVocabulary vocabulary;
    if (auto s = load_bpe_vocabulary(file, vocabulary); !s.ok()) fuzz::fail(s.message());
    std::unique_ptr<ByteLevelBpeTokenizer> out;
    if (auto s = ByteLevelBpeTokenizer::create(std::move(vocabulary), out); !s.ok()) {
      fuzz::fail(s.message());
    }
    return out.release();  // reachable: not a leak
  }();
  return *tokenizer;
}

// The bytes the vocabulary has a token of their own for. Byte-level BPE starts from one token
// per byte; SmolLM2's vocabulary lacks 21 of them (6 control characters and bytes that start
// rare 4-byte characters or never occur in UTF-8), which its tokenizer drops, as Hugging Face's
// BPE without an unknown token does.
const std::array<bool, 256>& byte_tokens() {
  static const std::array<bool, 256> table = [] {
    std::array<bool, 256> out{};
    const auto& tokenizer = smollm2();
    std::string bytes;
    for (std::int32_t id = 0; id < static_cast<std::int32_t>(tokenizer.vocab_size()); ++id) {
      bytes.clear();
      if (!tokenizer.is_control(id) && tokenizer.token_bytes(id, bytes).ok() && bytes.size() == 1) {
        out[static_cast<unsigned char>(bytes[0])] = true;
      }
    }
    return out;
  }();
  return table;
}

std::vector<std::string_view> fields(std::string_view rest) {
  std::vector<std::string_view> out;
  while (true) {
    const auto nul = rest.find('\0');
    out.push_back(rest.substr(0, nul));
    if (nul == std::string_view::npos) return out;
    rest.remove_prefix(nul + 1);
  }
}

void chat(std::uint8_t control, std::span<const std::string_view> parts) {
  static constexpr std::string_view roles[] = {"system", "user", "assistant", "tool", "narrator"};
  std::vector<ChatMessage> messages;
  for (std::string_view part : parts) {
    if (part.empty()) continue;
    messages.push_back({std::string(roles[static_cast<std::uint8_t>(part[0]) % 5]),
                        std::string(part.substr(1))});
  }
  const std::string text = render_chatml(messages, (control & 2) != 0,
                                         (control & 4) ? smollm2_system_prompt : "");
  const auto& tokenizer = smollm2();
  std::vector<std::int32_t> ids = {7};
  const Status status = tokenizer.encode(text, ids);
  if (!status.ok()) {
    check(ids == std::vector<std::int32_t>{7}, "a refused text leaves the ids as they were");
    check(status.message().find("UTF-8") != std::string::npos, "a refusal names the UTF-8");
    return;
  }
  ids.erase(ids.begin());
  std::string decoded;
  check(tokenizer.decode(ids, decoded, false).ok(), "encoded ids decode");
  // The rendered text, less the bytes the vocabulary has no token for (the special tokens'
  // texts are printable ASCII: no such byte).
  std::string expected;
  for (const char c : text) {
    if (byte_tokens()[static_cast<unsigned char>(c)]) expected.push_back(c);
  }
  fuzz::print_answer("rendered", text);
  fuzz::print_answer("decoded", decoded);
  check(decoded == expected, "the ids decode to the rendered text (less bytes without a token)");
  const std::size_t limit = ids.size() / 2;
  std::vector<std::int32_t> first;
  check(tokenizer.encode(text, first, limit).ok(), "a truncated encoding succeeds");
  check(first.size() == limit && std::equal(first.begin(), first.end(), ids.begin()),
        "a truncated encoding is the whole one's first ids");
}

// Where the first of the stop strings begins in `text`; npos if none does.
std::size_t first_stop(std::string_view text, const std::vector<std::string>& stops) {
  std::size_t at = std::string_view::npos;
  for (const auto& s : stops) at = std::min(at, text.find(s));
  return at;
}

void detokenize(std::uint8_t control, std::span<const std::string_view> parts) {
  const auto& tokenizer = smollm2();
  const auto vocab = static_cast<std::int32_t>(tokenizer.vocab_size());
  std::vector<std::int32_t> ids;
  const std::string_view raw = parts[0];
  for (std::size_t i = 0; i + 1 < raw.size(); i += 2) {
    const auto v = static_cast<std::uint8_t>(raw[i]) | (static_cast<std::uint8_t>(raw[i + 1]) << 8);
    ids.push_back(static_cast<std::int32_t>(v % vocab));
  }
  generation::GenerationRequest request;
  request.prompt = {1};
  for (std::size_t i = 1; i < parts.size() && i <= 4; ++i) {
    if (!parts[i].empty()) request.stop.emplace_back(parts[i]);
  }
  request.skip_special_tokens = (control & 2) != 0;
  request.ignore_eos = (control & 4) != 0;
  if (const std::size_t pick = (control >> 3) & 3; pick != 0 && !ids.empty()) {
    request.stop_token_ids = {ids[(pick * 3) % ids.size()]};
  }
  request.max_tokens = 1 + ((control >> 5) & 7) * 8;

  static generation::GenerationMetrics metrics;
  generation::OutputProcessor processor(tokenizer, 1 << 20, metrics);
  auto seq = generation::make_sequence(std::move(request), nullptr);
  std::string sent;
  std::size_t fed = 0;
  for (const std::int32_t id : ids) {
    if (seq->finished()) break;
    processor.append(*seq, generation::SampleResult{id, -1.0f, {}});
    ++fed;
    sent += seq->update.text;
    processor.flush(*seq);
  }
  if (!seq->finished()) {
    processor.finish(*seq, generation::FinishReason::length);
    sent += seq->update.text;
    processor.flush(*seq);
  }
  const auto generated = seq->generated_tokens();
  check(generated.size() == fed, "every token fed is in the sequence");
  const auto& r = seq->request;
  std::string all, before_last;
  check(tokenizer.decode(generated, all, r.skip_special_tokens).ok(), "the tokens decode");
  check(tokenizer.decode(generated.first(generated.size() - (generated.empty() ? 0 : 1)),
                         before_last, r.skip_special_tokens)
            .ok(),
        "the tokens decode");
  check(first_stop(sent, r.stop) == std::string_view::npos, "no stop string is in the text sent");
  check(all.compare(0, sent.size(), sent) == 0, "the text sent is the start of the tokens' text");
  if (seq->finish == generation::FinishReason::length) {
    check(sent == all, "an ending by length sends all the text");
  } else {
    check(seq->finish == generation::FinishReason::stop, "the ending is stop or length");
    const std::size_t cut = first_stop(all, r.stop);
    check(sent == before_last || (cut != std::string_view::npos && sent == all.substr(0, cut)),
          "a stop sends the text before the ending token or before the first stop string");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const auto parts = fields({reinterpret_cast<const char*>(data) + 1, size - 1});
  if (control & 1) {
    detokenize(control, parts);
  } else {
    chat(control, parts);
  }
  return 0;
}
