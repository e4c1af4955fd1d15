#pragma once

#include <span>
#include <string>
#include <string_view>

#include "coinfer/core/status.hpp"
#include "coinfer/generation/grammar/grammar.hpp"

namespace coinfer::generation::grammar {

// The four inputs a structured output can be given in, each compiled to the one Grammar IR
// (finished: ready for CompiledGrammar::compile). Errors are 400s that name what was wrong:
// the keyword or construct that is not supported, the offset of a syntax error, a rule not
// defined. Nothing unsupported is ignored.

// A JSON Schema (docs/LLM.md lists the keywords). JSON is written compact (no whitespace
// outside strings) unless `whitespace` is a regular expression for what may stand around its
// punctuation (vLLM's whitespace_pattern). Properties come in the schema's order; optional
// ones may be left out; with `properties` given and `additionalProperties` absent, no others
// are allowed (OpenAI's strict mode), with neither any are.
Status json_schema_grammar(std::string_view schema, Grammar& out, std::string_view whitespace = {});
// Any JSON object (OpenAI's response_format json_object).
Status json_object_grammar(Grammar& out, std::string_view whitespace = {});
// A regular expression the whole output must match (ECMAScript/Python syntax without
// backreferences, lookaround, word boundaries or flags; ^ and $ only at the ends).
Status regex_grammar(std::string_view pattern, Grammar& out);
// llama.cpp's GBNF; the start rule is `root`.
Status gbnf_grammar(std::string_view text, Grammar& out);
// Exactly one of the strings.
Status choice_grammar(std::span<const std::string> choices, Grammar& out);

// A function a chat model may call: its name and its parameters' JSON schema (empty: none,
// the arguments are {}).
struct ToolFunction {
  std::string name;
  std::string parameters;
};
// One tool call, or with `parallel` one or more separated by newlines, each
//   <tool_call>\n{"name":"NAME","arguments":{...}}\n</tool_call>
// with the arguments following the function's schema (compact JSON, as json_schema_grammar).
Status tool_calls_grammar(std::span<const ToolFunction> functions, bool parallel, Grammar& out);

// The schema as one element of `g` (for grammars that embed JSON, like tool calls).
Status add_json_schema(Grammar& g, std::string_view schema, Element& out,
                       std::string_view whitespace = {});

// The regular expression as one element of `g` (a JSON Schema's `pattern`). In a JSON string
// (`json_string`) the characters that JSON escapes (quote, backslash, control characters) are
// written escaped when the pattern names them literally, and left out of classes.
Status add_regex(Grammar& g, std::string_view pattern, bool json_string, Element& out);

}  // namespace coinfer::generation::grammar
