#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "coinfer/generation/grammar/grammar_cache.hpp"
#include "coinfer/generation/grammar/matcher.hpp"
#include "coinfer/generation/grammar/sources.hpp"
#include "coinfer/models/gguf.hpp"
#include "test_data.hpp"
#include "toy_generation.hpp"

namespace coinfer::generation::grammar {
namespace {

std::shared_ptr<const TokenVocabulary> toy_vocabulary() {
  static const auto tokenizer = test::toy_tokenizer();
  static const auto vocabulary = std::make_shared<const TokenVocabulary>(*tokenizer);
  return vocabulary;
}

template <class Build>
std::shared_ptr<const CompiledGrammar> compiled(Build build) {
  Grammar g;
  const Status st = build(g);
  REQUIRE_MESSAGE(st.ok(), st.message());
  std::shared_ptr<const CompiledGrammar> out;
  REQUIRE(CompiledGrammar::compile(std::move(g), toy_vocabulary(), out).ok());
  return out;
}

// The whole text is a sentence of the grammar.
bool matches(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
  Matcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

std::shared_ptr<const CompiledGrammar> schema(std::string_view s) {
  return compiled([&](Grammar& g) { return json_schema_grammar(s, g); });
}
std::shared_ptr<const CompiledGrammar> regex(std::string_view s) {
  return compiled([&](Grammar& g) { return regex_grammar(s, g); });
}
std::shared_ptr<const CompiledGrammar> gbnf(std::string_view s) {
  return compiled([&](Grammar& g) { return gbnf_grammar(s, g); });
}

Status schema_source(std::string_view text, Grammar& g) { return json_schema_grammar(text, g); }

void check_masks_along(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text);

template <class Source>
std::string error_of(Source source, std::string_view text) {
  Grammar g;
  const Status st = source(text, g);
  return st.ok() ? std::string("(no error)") : std::string(st.message());
}

void check_table(const std::shared_ptr<const CompiledGrammar>& g,
                 std::initializer_list<std::string_view> valid,
                 std::initializer_list<std::string_view> invalid) {
  for (const auto v : valid) CHECK_MESSAGE(matches(g, v), "should match: ", v);
  for (const auto v : invalid) CHECK_MESSAGE(!matches(g, v), "should not match: ", v);
}

TEST_CASE("code point ranges become UTF-8 byte sequences that cover exactly their encodings") {
  for (const auto& [lo, hi] : std::vector<std::pair<char32_t, char32_t>>{
           {0, 0x10FFFF}, {0x41, 0x5A}, {0x7F, 0x801}, {0xD000, 0xE100}, {0xFFFF, 0x10000}, {0x3A0, 0x2FFF1}}) {
    const auto seqs = utf8_sequences(lo, hi);
    std::string bytes;
    for (char32_t c = lo > 16 ? lo - 16 : 0; c <= std::min<char32_t>(hi + 16, 0x10FFFF); ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      if (c > lo + 3000 && c + 3000 < hi) c = hi - 3000;  // the middle of wide ranges: sampled
      bytes.clear();
      Grammar scratch;
      // Encode c and test membership in exactly one sequence.
      std::string enc;
      if (c < 0x80) {
        enc += static_cast<char>(c);
      } else if (c < 0x800) {
        enc += static_cast<char>(0xC0 | (c >> 6));
        enc += static_cast<char>(0x80 | (c & 0x3F));
      } else if (c < 0x10000) {
        enc += static_cast<char>(0xE0 | (c >> 12));
        enc += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        enc += static_cast<char>(0x80 | (c & 0x3F));
      } else {
        enc += static_cast<char>(0xF0 | (c >> 18));
        enc += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        enc += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        enc += static_cast<char>(0x80 | (c & 0x3F));
      }
      int hits = 0;
      for (const auto& seq : seqs) {
        if (seq.size() != enc.size()) continue;
        bool in = true;
        for (std::size_t i = 0; i < seq.size(); ++i) {
          const auto b = static_cast<unsigned char>(enc[i]);
          in = in && b >= seq[i].first && b <= seq[i].second;
        }
        hits += in;
      }
      CHECK_MESSAGE(hits == (c >= lo && c <= hi ? 1 : 0), "code point ", static_cast<std::uint32_t>(c));
    }
  }
}

TEST_CASE("a JSON schema's objects: properties in order, required ones present, no others unless allowed") {
  const auto g = schema(R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
      "tags":{"type":"array","items":{"type":"string"}}},"required":["name"]})");
  check_table(g,
              {R"({"name":"Ann"})", R"({"name":"Ann","age":3})", R"({"name":"","tags":[]})",
               R"({"name":"Ann","age":-12,"tags":["a","b"]})", R"({"name":"\u00e9\n\"q\""})"},
              {R"({})", R"({"age":3})", R"({"age":3,"name":"Ann"})", R"({"name":"Ann","x":1})",
               R"({"name":"Ann",})", R"({"name":"Ann","age":3.5})", R"({"name":"Ann","age":03})",
               R"({ "name":"Ann"})", R"({"name":"A
"})", R"({"name":"\x"})"});
  check_table(schema(R"({"type":"object"})"), {R"({})", R"({"a":[1,{"b":null}],"c":"d"})"}, {R"([])", R"({"a"})"});
  check_table(schema(R"({"properties":{"a":{"type":"boolean"}},"additionalProperties":{"type":"integer"}})"),
              {R"({"a":true,"x":1,"y":2})", R"({"x":1})", R"({})", R"({"ab":1})", R"({"":1})", R"({"\u0061":1})"},
              {R"({"x":"s"})", R"({"a":1})", R"({"a":true,"a":2})"});
}

TEST_CASE("a JSON schema's arrays: items, prefixItems, minItems and maxItems") {
  check_table(schema(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})"),
              {"[1,2]", "[1,2,3]"}, {"[]", "[1]", "[1,2,3,4]", "[1,\"a\"]", "[1,2,]"});
  check_table(schema(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"null"}],"items":false})"),
              {"[]", R"(["a"])", R"(["a",null])"}, {R"(["a",null,1])", "[null]"});
  check_table(schema(R"({"type":"array","prefixItems":[{"const":1}],"items":{"type":"boolean"},"minItems":2})"),
              {"[1,true]", "[1,false,true]"}, {"[1]", "[true,true]", "[1,1]"});
  check_table(schema(R"({"type":"array","maxItems":0})"), {"[]"}, {"[1]"});
}

TEST_CASE("a JSON schema's strings: lengths, patterns and formats, with JSON's escapes") {
  check_table(schema(R"({"type":"string","minLength":2,"maxLength":3})"),
              {R"("ab")", R"("abc")", R"("\n\t")", R"("é!")"}, {R"("a")", R"("abcd")", R"(ab)"});
  check_table(schema(R"({"type":"string","pattern":"^[A-Z]{2}-\\d+$"})"),
              {R"("AB-1")", R"("ZZ-0042")"}, {R"("A-1")", R"("AB-")", R"("ab-1")"});
  check_table(schema(R"({"type":"string","pattern":"a\"b\\\\c"})"), {R"("a\"b\\c")"}, {R"("a"b\c")"});
  check_table(schema(R"({"type":"string","format":"date"})"), {R"("2026-12-05")"},
              {R"("2026-13-05")", R"("2026-1-05")", R"("2026-12-32")"});
  check_table(schema(R"({"type":"string","format":"date-time"})"),
              {R"("2026-12-05T15:54:45Z")", R"("2026-12-05T15:54:45.123+01:00")"}, {R"("2026-12-05 15:54:45Z")"});
  check_table(schema(R"({"type":"string","format":"uuid"})"), {R"("123e4567-e89b-12d3-a456-426614174000")"},
              {R"("123e4567e89b12d3a456426614174000")"});
  check_table(schema(R"({"type":"string","format":"email"})"), {R"("a.b@example.com")"},
              {R"("a@b")", R"("@example.com")"});
  check_table(schema(R"({"type":"string","format":"time"})"), {R"("23:59:60Z")"}, {R"("24:00:00Z")"});
}

TEST_CASE("JSON strings: Unicode counted in characters, escapes, control characters refused") {
  const auto g = schema(R"({"type":"string","minLength":1,"maxLength":2})");
  check_table(g, {"\"😀\"", "\"é€\"", R"("\u00e9")", R"("\"\\")", R"("\/\b")", R"("\uD83D")", "\"a😀\""},
              {"\"😀😀😀\"", R"("")", "\"\x01\"", "\"\t\"", R"("\x41")", R"("\u00G1")", "\"\xC3\"",
               "\"\xED\xA0\x80\""});
  check_table(schema(R"({"enum":["naïve","日本","a\"b"]})"), {R"("naïve")", R"("日本")", R"("a\"b")"},
              {R"("naive")", R"("日")"});
  check_table(schema(R"({"type":"string","pattern":"^[α-ω]{2}\\.$"})"), {R"("αβ.")"}, {R"("ab.")", R"("αβ")"});
}

TEST_CASE("numbers at the edges: 2^53 bounds, exponents, negative zero and leading zeros") {
  const auto big = schema(R"({"type":"integer","minimum":-9007199254740992,"maximum":9007199254740992})");
  check_table(big, {"9007199254740992", "-9007199254740992", "0", "123456789012345"},
              {"9007199254740993", "-9007199254740993", "10000000000000000", "-0", "00"});
  const auto positive = schema(R"({"type":"integer","exclusiveMinimum":0})");
  check_table(positive, {"1", "10", "99999999999999999999"}, {"0", "-1", "01"});
  check_table(schema(R"({"type":"number","minimum":-1,"maximum":1})"), {"-1", "1", "0.5", "-0.999", "1.000"},
              {"1.001", "-1.5", "1e0", "2"});
  CHECK(error_of(schema_source, R"({"type":"integer","minimum":1e300})").find("beyond 2^53") != std::string::npos);
}

TEST_CASE("a JSON schema's numbers: integer ranges exactly, number bounds with integral limits") {
  const auto g = schema(R"({"type":"integer","minimum":-15,"maximum":1234})");
  for (int i = -40; i <= 1300; ++i) {
    CHECK_MESSAGE(matches(g, std::to_string(i)) == (i >= -15 && i <= 1234), i);
  }
  CHECK(!matches(g, "-0"));
  CHECK(!matches(g, "007"));
  const auto e = schema(R"({"type":"integer","exclusiveMinimum":9,"exclusiveMaximum":100.5})");
  for (int i = 0; i <= 120; ++i) CHECK_MESSAGE(matches(e, std::to_string(i)) == (i > 9 && i <= 100), i);
  const auto open = schema(R"({"type":"integer","minimum":95})");
  for (int i : {94, 95, 99, 100, 1000, 123456789}) CHECK_MESSAGE(matches(open, std::to_string(i)) == (i >= 95), i);
  check_table(schema(R"({"type":"number","minimum":0,"exclusiveMaximum":1})"),
              {"0", "0.5", "0.999", "0.0"}, {"1", "1.0", "-0.1", "1.5"});
  check_table(schema(R"({"type":"number","exclusiveMinimum":-2,"maximum":3})"),
              {"-1.99", "-1", "0", "3", "3.000", "2.5"}, {"-2", "-2.0", "-2.5", "3.01", "4"});
  check_table(schema(R"({"type":"number"})"), {"0", "-1.5e-3", "12E+4", "3.25"}, {"01", "1.", ".5", "+1"});
  check_table(schema(R"({"type":"boolean"})"), {"true", "false"}, {"True", "1"});
  check_table(schema(R"({"type":"null"})"), {"null"}, {"nul"});
  check_table(schema(R"({"type":["string","null"]})"), {"null", R"("x")"}, {"1"});
}

TEST_CASE("a JSON schema's enum, const, anyOf, allOf and recursive $ref") {
  check_table(schema(R"({"enum":["red","green",3,null,{"a":[1]}]})"),
              {R"("red")", R"("green")", "3", "null", R"({"a":[1]})"}, {R"("blue")", "4", R"({"a":[2]})"});
  check_table(schema(R"({"const":"fixed"})"), {R"("fixed")"}, {R"("fixe")"});
  check_table(schema(R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})"), {"12", R"("a")"},
              {R"("ab")", "1.5"});
  check_table(schema(R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
                                   {"properties":{"b":{"type":"string"}}}]})"),
              {R"({"a":1})", R"({"a":1,"b":"x"})"}, {R"({"b":"x"})", R"({"a":1,"c":2})"});
  const auto tree = schema(R"({"$ref":"#/$defs/node","$defs":{"node":{"type":"object",
      "properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},
      "required":["v"],"additionalProperties":false}}})");
  check_table(tree, {R"({"v":1})", R"({"v":1,"kids":[{"v":2,"kids":[{"v":3}]},{"v":4}]})"},
              {R"({"v":1,"kids":[{}]})", R"({"kids":[]})"});
}

TEST_CASE("a whitespace pattern allows whitespace around JSON's punctuation, compact otherwise") {
  const std::string_view person =
      R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"array","items":{"type":"boolean"}}}})";
  const auto spaced = compiled([&](Grammar& g) { return json_schema_grammar(person, g, "[ \n]{0,2}"); });
  check_table(spaced, {R"({"a":1,"b":[true,false]})", "{ \"a\" : 1 ,\n \"b\": [ true , false ] }", "{ }"},
              {"{   \"a\":1}", "{\t\"a\":1}", " {\"a\":1}"});
  check_table(schema(person), {R"({"a":1})"}, {R"({ "a":1})", R"({"a": 1})"});
  const auto object = compiled([](Grammar& g) { return json_object_grammar(g, " ?"); });
  check_table(object, {R"({ "x" : [ 1 , 2 ] })", R"({"x":[1,2]})"}, {R"({  "x":1})"});
  Grammar g;
  CHECK(json_schema_grammar(person, g, "(?=a)").message() ==
        "whitespace_pattern: regex: lookaround is not supported at offset 2");
}

TEST_CASE("a JSON schema keyword that is not supported is an error naming it, never ignored") {
  const auto error = [](std::string_view s) { return error_of(schema_source, s); };
  CHECK(error(R"({"type":"array","uniqueItems":true})") == "schema: keyword 'uniqueItems' is not supported");
  CHECK(error(R"({"type":"object","properties":{"a":{"type":"string","minLength":1,"pattern":"x"}}})") ==
        "schema.properties.a: minLength/maxLength beside pattern or format are not supported");
  CHECK(error(R"({"type":"string","format":"hostname"})").starts_with("schema: format 'hostname' is not supported"));
  CHECK(error(R"({"type":"number","minimum":0.5})").starts_with("schema: a number's bounds must be integers"));
  CHECK(error(R"({"$ref":"#/$defs/missing"})") == "schema: $ref '#/$defs/missing' does not resolve");
  CHECK(error(R"({"$ref":"https://example.com/s.json"})").find("only references inside the schema") != std::string::npos);
  CHECK(error(R"({"type":"strin"})") == "schema: type 'strin' is not a JSON Schema type");
  CHECK(error(R"({"type":"object","required":["a"]})") == "schema: required property 'a' is not in properties");
  CHECK(error(R"(false)") == "schema: the schema false matches nothing");
  CHECK(error(R"({"type":)") == "schema: invalid JSON");
  CHECK(error(R"({"$ref":"#"})") == "the grammar matches nothing");
  CHECK(error(R"({"type":"string","pattern":"(a)\\1"})").find("backreferences are not supported") != std::string::npos);
}

TEST_CASE("regular expressions: classes, groups, alternation and counted repetition, and unsupported syntax is named") {
  check_table(regex(R"(^(cat|dog)s?\d{2,3}$)"), {"cat12", "dogs999"}, {"cat1", "cats1234", "bird12", "Cat12"});
  check_table(regex(R"([^a-c\s]+x*)"), {"dx", "zzz", "é"}, {"a", "d x", ""});
  check_table(regex(R"((?:ab|c){2}\.\x41\u00e9.)"), {"abc.Aé!", "cc.Aéé"}, {"abc.Aé\n", "ab.Aé!"});
  check_table(regex(R"(a{2,}b{,2})"), {"aab{,2}", "aaab{,2}"}, {"ab{,2}", "aab"});
  const auto error = [](std::string_view s) { return error_of(regex_grammar, s); };
  CHECK(error("(?=a)b") == "regex: lookaround is not supported at offset 2");
  CHECK(error("a\\bb").starts_with("regex: word boundaries are not supported"));
  CHECK(error("(a").starts_with("regex: missing ')'"));
  CHECK(error("a)").starts_with("regex: unmatched ')'"));
  CHECK(error("*a").starts_with("regex: nothing to repeat"));
  CHECK(error("a{3,2}").starts_with("regex: repetition {m,n} with n < m"));
  CHECK(error("a^b").starts_with("regex: '^' is supported only at the start"));
  CHECK(error("[z-a]").starts_with("regex: range out of order"));
  CHECK(error("a{100000}").starts_with("regex: repetition counts above 10000"));
}

TEST_CASE("GBNF as llama.cpp writes it: rules, literals, classes, groups, repetition and comments") {
  const auto g = gbnf(R"(# a list of moves
root ::= move ("," ws move)* "."
move ::= piece [a-h] [1-8]   # a square
piece ::= [KQRBN]?
ws ::= [ \t]{0,2}
)");
  check_table(g, {"e4.", "Nf3, e5,  Qh5."}, {"e9.", "Nf3,   e5.", "e4", "Ke4,"});
  check_table(gbnf("root ::= \"a\" (\n  \"b\" |\n  \"c\"\n) [^\\x00-\\x7F]"), {"abé", "ac€"}, {"abz", "ab"});
  check_table(gbnf("root ::= .{2} \"\\u00e9\""), {"xyé", "€€é"}, {"xé"});
  const auto error = [](std::string_view s) { return error_of(gbnf_grammar, s); };
  CHECK(error("root ::= item") == "grammar: rule 'item' is referenced but not defined");
  CHECK(error("item ::= \"a\"") == "grammar: no rule named 'root'");
  CHECK(error("root ::= root \"a\" | \"b\"") == "grammar: rule 'root' is left-recursive");
  CHECK(error("root ::= \"a\"\nroot ::= \"b\"") == "grammar: rule 'root' is defined twice at line 2, column 10");
  CHECK(error("root ::= \"a") == "grammar: unterminated string at line 1, column 12");
  CHECK(error("root = \"a\"") == "grammar: expected '::=' after 'root' at line 1, column 6");
  CHECK(error("root ::= x\nx ::= x \"a\" | \"b\"") == "grammar: rule 'x' is left-recursive");
  CHECK(error("root ::= x\nx ::= \"a\" x") == "grammar: the grammar matches nothing");
}

TEST_CASE("a grammar that would explode is refused, not built") {
  const auto error = [](std::string_view s) { return error_of(gbnf_grammar, s); };
  // Nested counts stay small (each level is a rule); a long body repeated many times does not.
  CHECK(error("root ::= ((((\"ab\"{1000}){1000}){1000}){1000})") == "(no error)");
  CHECK(error_of(regex_grammar, "(abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
                                "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz){10000}")
            .find("too large") != std::string::npos);
  CHECK(error_of(schema_source, R"({"type":"array","items":{"type":"string"},"minItems":1000000})")
            .find("too large") != std::string::npos);
  // Parts that can match nothing, one after another: a step from root would walk 64 x 64 of
  // them (a repetition of such a part repeats its non-empty part instead: the next test).
  std::string nested = "root ::=";
  for (int i = 0; i < 64; ++i) nested += " s";
  nested += "\ns ::=";
  for (int i = 0; i < 64; ++i) nested += " e";
  nested += "\ne ::= \"a\" | \"\"\n";
  CHECK(error(nested).find("too ambiguous") != std::string::npos);
  CHECK(error("root ::= (\"x\" | \"y\"){5000}") == "(no error)");  // each copy matches a byte
}

// x{m,n} where x can match the empty string is x'{0,n}, x' its non-empty part: as written,
// every copy would stand at the start of each byte (a regex the fuzzer found took 43 s for its
// first mask on SmolLM2's vocabulary), and x* would be left-recursive.
TEST_CASE("a repeated body that can match the empty string repeats its non-empty part" *
          doctest::timeout(10)) {
  const auto heads_after = [](const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
    Matcher m(g);
    REQUIRE(m.accept_bytes(text));
    return m.heads();
  };
  const auto many = regex("(a||||||||b|){3000}");
  check_table(many, {"", "a", "b", "abba", std::string(3000, 'a')}, {"c", std::string(3001, 'b')});
  CHECK(heads_after(many, "") <= 2);
  CHECK(heads_after(many, "ab") <= 2);
  check_table(regex("(a|)*b"), {"b", "aaab"}, {"", "aa", "ba"});
  check_table(regex("((a|){2}){3}"), {"", "aaa", "aaaaaa"}, {"aaaaaaa"});
  check_table(regex("(a?b?){2,3}c"), {"c", "abc", "ababc", "bac", "abababc"}, {"ababababc", "aaaac"});
  // A rule defined after the repetition that uses it, and one that only matches the empty string.
  const auto later = gbnf("root ::= x{2,5} \".\" z*\nx ::= \"a\" | \"\" | y\ny ::= \"b\"?\nz ::= \"\"\n");
  check_table(later, {".", "a.", "abab.", "aaaaa."}, {"aaaaaa.", "c."});
  CHECK(heads_after(later, "a") <= 3);
  // A repetition whose body reaches another, written later, through a rule defined after both.
  check_table(gbnf("root ::= n{2} \".\"\nn ::= (\"a\" | \"\"){1,3}\n"),
              {".", "a.", "aa.", "aaaa.", "aaaaaa."}, {"aaaaaaa.", "b."});
  // Left recursion inside the body leaves it as written, and says so; unused rules are not run.
  CHECK(error_of(gbnf_grammar, "root ::= x*\nx ::= y \"a\" | \"\"\ny ::= x") ==
        "grammar: rule 'x' is left-recursive");
  CHECK(error_of(gbnf_grammar, "root ::= \"a\"\nz ::= z \"b\" | \"c\"") == "(no error)");
  // Past 256 rules in front of the body the rewrite gives up, and the repetition stays as
  // written: a bounded count still compiles and matches, a star is refused by name.
  std::string chain;
  for (int i = 0; i < 300; ++i) chain += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " | \"a\"\n";
  chain += "r300 ::= \"\" | \"b\"\n";
  check_table(gbnf("root ::= r0{1,3} \"x\"\n" + chain), {"x", "ax", "abax", "bbbx"}, {"aaaax", "cx"});
  CHECK(error_of(gbnf_grammar, "root ::= r0* \"x\"\n" + chain).find("left-recursive") != std::string::npos);
  // The fuzz input, made printable: a few dozen empty alternatives in a group repeated 41 times.
  std::string pipes(45, '|');
  const auto found = regex("(ct|d-,|x" + pipes + "|." + pipes + " y){1,41} .\ny ::");
  check_table(found, {"ct a\ny ::", "xxct. y ?\ny ::"}, {"\ny ::", std::string(42, 'x') + " a\ny ::"});
  CHECK(heads_after(found, "x") <= 16);  // the next copy's alternatives ("." alone is 9), " "
  check_masks_along(found, "xd-, y .\ny ::");
}

// The bound is on the algorithm (linear: ~0.1 s here, 1-2 s under ASan; a pass per rule would
// take minutes), not a benchmark.
TEST_CASE("a chain of rules written last-first compiles in time linear in the grammar" *
          doctest::timeout(30)) {
  // root ::= r1, r1 ::= "a" r2, ..., each defined before the rule it uses is: a check that
  // passes over the rules until nothing changes needs one pass per rule (10^10 steps here).
  std::string text = "root ::= r1\n";
  constexpr int kRules = 100000;
  for (int i = 1; i < kRules; ++i) text += "r" + std::to_string(i) + " ::= \"a\" r" + std::to_string(i + 1) + "\n";
  text += "r" + std::to_string(kRules) + " ::= \"b\"\n";
  Grammar g;
  REQUIRE(gbnf_grammar(text, g).ok());
  std::shared_ptr<const CompiledGrammar> compiled;
  REQUIRE(CompiledGrammar::compile(std::move(g), toy_vocabulary(), compiled).ok());
  CHECK(matches(compiled, std::string(kRules - 1, 'a') + "b"));
  CHECK(!matches(compiled, std::string(kRules - 2, 'a') + "b"));
}

// Each head (a position and the frame below it) is expanded once per closure; expanding every
// path took 150^4 of them here (the fuzz input that found it timed out in the constructor).
TEST_CASE("a repeated group of empty alternatives expands each head once" * doctest::timeout(10)) {
  std::string text = "root ::= (\"X\" ";
  for (int i = 0; i < 150; ++i) text += "| ";
  text += "| y){2,4} \".\"\ny ::= [\\u00e0-\\u00ff] | \"A\"\n";
  const auto g = gbnf(text);
  check_table(g, {".", "X.", "XA.", "AXXA.", "é."}, {"XXXXX.", "XAXAX.", "X", "B."});
}

TEST_CASE("tool calls: one or several, each naming a listed function with arguments of its schema") {
  const std::vector<ToolFunction> functions{
      {"get_weather", R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"},
      {"now", ""}};
  const auto several = compiled([&](Grammar& g) { return tool_calls_grammar(functions, true, g); });
  const std::string weather = "<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}}\n</tool_call>";
  const std::string now = "<tool_call>\n{\"name\":\"now\",\"arguments\":{}}\n</tool_call>";
  check_table(several, {weather, now, weather + "\n" + now},
              {"<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{}}\n</tool_call>",
               "<tool_call>\n{\"name\":\"other\",\"arguments\":{}}\n</tool_call>",
               "<tool_call>\n{\"name\":\"now\",\"arguments\":{\"x\":1}}\n</tool_call>", weather + now, ""});
  const auto one = compiled([&](Grammar& g) { return tool_calls_grammar(functions, false, g); });
  check_table(one, {weather, now}, {weather + "\n" + now});
  Grammar g;
  const std::vector<ToolFunction> bad{{"f", R"({"type":"array","uniqueItems":true})"}};
  CHECK(tool_calls_grammar(bad, true, g).message() ==
        "function 'f' parameters: schema: keyword 'uniqueItems' is not supported");
}

TEST_CASE("a grammar past its bound on kept token sets computes them per step, masks unchanged") {
  Grammar g;
  REQUIRE(json_schema_grammar(R"({"type":"object","properties":{"msg":{"type":"string","maxLength":4}}})", g).ok());
  std::shared_ptr<const CompiledGrammar> keeps_none;
  REQUIRE(CompiledGrammar::compile(std::move(g), toy_vocabulary(), keeps_none, 0).ok());
  check_masks_along(keeps_none, R"({"msg":"Hi!"})");
  CHECK(keeps_none->positions_computed() == 0);
}

TEST_CASE("the grammar cache keeps the latest grammars by source and names the field in its errors") {
  const auto tokenizer = test::toy_tokenizer();
  GrammarCache cache(*tokenizer, 2);
  const auto regex_of = [](std::string pattern) {
    OutputConstraint c;
    c.kind = OutputConstraint::Kind::regex;
    c.source = std::move(pattern);
    c.field = "structured_outputs.regex";
    return c;
  };
  std::shared_ptr<const CompiledGrammar> a, a_again, b, c, a_later;
  REQUIRE(cache.get(regex_of("a+"), a).ok());
  REQUIRE(cache.get(regex_of("a+"), a_again).ok());
  CHECK(a == a_again);  // compiled once
  REQUIRE(cache.get(regex_of("b+"), b).ok());
  REQUIRE(cache.get(regex_of("c+"), c).ok());  // a, the least recently used, goes
  CHECK(cache.size() == 2);
  REQUIRE(cache.get(regex_of("a+"), a_later).ok());
  CHECK(a_later != a);
  std::shared_ptr<const CompiledGrammar> none;
  CHECK(cache.get(regex_of("(a"), none).message() ==
        "structured_outputs.regex: regex: missing ')' at offset 2");
  CHECK(cache.size() == 2);  // a refused source is not kept
}

TEST_CASE("choices: exactly one of the strings") {
  const std::vector<std::string> options{"yes", "no", "maybe so"};
  const auto g = compiled([&](Grammar& gr) { return choice_grammar(options, gr); });
  check_table(g, {"yes", "no", "maybe so"}, {"ye", "yesno", "maybe"});
}

// Every token the mask allows is one the matcher accepts, and no other: checked against
// trying each token of the vocabulary on a copy of the matcher, at every step of a walk.
void check_masks_along(const std::shared_ptr<const CompiledGrammar>& g, std::string_view text) {
  Matcher m(g);
  const auto& v = *g->vocabulary;
  TokenMask mask;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    m.fill_mask(mask);
    for (std::int32_t id = 0; id < v.size(); ++id) {
      Matcher copy = m;
      const bool allowed = (mask[static_cast<std::size_t>(id) >> 6] >> (id & 63)) & 1;
      CHECK_MESSAGE(allowed == copy.accept_token(id), "token ", id, " after ", i, " bytes of ", text);
    }
    if (i < text.size()) REQUIRE(m.accept_bytes(text.substr(i, 1)));
  }
}

TEST_CASE("the token mask equals trying every token, at every step") {
  check_masks_along(schema(R"({"type":"object","properties":{"msg":{"type":"string","maxLength":4},
      "n":{"type":"integer","minimum":-5,"maximum":20}},"required":["n"]})"),
                    R"({"msg":"Hi!","n":-5})");
  check_masks_along(gbnf(R"(root ::= "Hello" (" world" | " end")* "!")"), "Hello world end world!");
  check_masks_along(regex(R"(OP(\d|!)+ ST)"), "OP1!2 ST");
  check_masks_along(schema(R"({"type":"array","items":{"enum":["Hello","OP"]}})"), R"(["Hello","OP"])");
}

TEST_CASE("on SmolLM2's vocabulary the mask equals trying every token, along a JSON answer's real tokens") {
  const char* env = std::getenv("COINFER_SMOLLM2_GGUF");
  const std::filesystem::path path = env != nullptr && *env != '\0'
                                         ? std::filesystem::path(env)
                                         : test::source_path("assets/SmolLM2-135M-Instruct.Q4_1.gguf");
  if (!std::filesystem::exists(path)) {
    MESSAGE("SKIPPED: " << path << " is missing (run scripts/setup, or set COINFER_SMOLLM2_GGUF)");
    return;
  }
  GgufFile file;
  BpeVocabulary vocabulary;
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
  REQUIRE(GgufFile::open(path, file).ok());
  REQUIRE(load_bpe_vocabulary(file, vocabulary).ok());
  REQUIRE(ByteLevelBpeTokenizer::create(std::move(vocabulary), tokenizer).ok());
  Grammar g;
  REQUIRE(json_schema_grammar(R"({"type":"object","properties":{"city":{"type":"string"},
      "temp":{"type":"number"},"tags":{"type":"array","items":{"enum":["rain","sun"]}}},
      "required":["city","temp"]})", g).ok());
  std::shared_ptr<const CompiledGrammar> compiled;
  REQUIRE(CompiledGrammar::compile(std::move(g), std::make_shared<const TokenVocabulary>(*tokenizer), compiled).ok());
  std::vector<std::int32_t> ids;
  REQUIRE(tokenizer->encode(R"({"city":"Zürich \"old\" town","temp":-3.5,"tags":["rain"]})", ids).ok());
  Matcher m(compiled);
  TokenMask mask;
  for (std::size_t step = 0; step <= ids.size(); ++step) {
    m.fill_mask(mask);
    if (step % 3 == 0 || step == ids.size()) {  // every token tried at every third step
      for (std::int32_t id = 0; id < compiled->vocabulary->size(); ++id) {
        Matcher copy = m;
        const bool allowed = (mask[static_cast<std::size_t>(id) >> 6] >> (id & 63)) & 1;
        REQUIRE_MESSAGE(allowed == copy.accept_token(id), "token ", id, " at step ", step);
      }
    }
    if (step < ids.size()) {
      const bool in_mask = (mask[static_cast<std::size_t>(ids[step]) >> 6] >> (ids[step] & 63)) & 1;
      REQUIRE(in_mask);
      REQUIRE(m.accept_token(ids[step]));
    }
  }
  CHECK(m.can_end());
}

TEST_CASE("the processor masks what the grammar refuses and lets the sequence end only where it may") {
  const auto g = regex("OP!?");
  GrammarProcessor processor(g);
  const auto vocab = toy_vocabulary()->size();
  std::vector<float> logits(static_cast<std::size_t>(vocab), 1.0f);
  std::vector<std::int32_t> generated;
  processor.apply(logits, generated);
  const auto allowed = [&] {
    std::vector<std::int32_t> ids;
    for (std::int32_t i = 0; i < vocab; ++i) {
      if (std::isfinite(logits[static_cast<std::size_t>(i)])) ids.push_back(i);
    }
    return ids;
  };
  const auto O = *test::toy_tokenizer()->token_id("O");
  CHECK(allowed() == std::vector<std::int32_t>{test::op, O});
  generated.push_back(test::op);
  std::ranges::fill(logits, 1.0f);
  processor.apply(logits, generated);
  auto ids = allowed();
  CHECK(std::ranges::find(ids, test::im_end) != ids.end());
  CHECK(std::ranges::find(ids, test::bang) != ids.end());
  CHECK(std::ranges::find(ids, test::hello) == ids.end());
  generated.push_back(test::bang);
  std::ranges::fill(logits, 1.0f);
  processor.apply(logits, generated);
  ids = allowed();
  CHECK(ids == std::vector<std::int32_t>{test::im_end, test::endoftext});
}

}  // namespace
}  // namespace coinfer::generation::grammar
