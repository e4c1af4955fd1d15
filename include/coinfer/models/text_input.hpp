#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "coinfer/tokenizers/tokenizer.hpp"

namespace coinfer {

// The text front of a model that takes token ids (one ragged INT32 input): clients send
// strings as the BYTES input `input_name` (shape [-1], one string a row) and the serving
// pipeline tokenizes them into the model's rows.
struct TextInput {
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string input_name = "text";
  // Token ids per input, special tokens included. Longer inputs are cut when the request
  // (parameter "truncate") or else the config (`truncate`) says so, and refused (400)
  // otherwise, as Hugging Face's TEI does.
  std::int64_t max_input_tokens = 256;
  bool truncate = false;
  // Set for a model of text pairs (a cross-encoder): the second BYTES input, one string per
  // string of `input_name`. Each pair becomes one row, [CLS] a [SEP] b [SEP]; truncation cuts
  // the longer text first, as Hugging Face's "longest_first".
  std::string pair_input_name;
};

}  // namespace coinfer
