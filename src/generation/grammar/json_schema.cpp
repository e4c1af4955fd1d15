// JSON Schema (and any JSON object) to the grammar IR, written compact.
#include <simdjson.h>

#include <cmath>
#include <optional>
#include <span>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "code_points.hpp"
#include "coinfer/core/json_writer.hpp"
#include "coinfer/generation/grammar/sources.hpp"

namespace coinfer::generation::grammar {

namespace {

namespace dom = simdjson::dom;

constexpr int kMaxDepth = 64;  // schemas inside schemas, not counting $ref
// Bounds are exact only where a double holds every integer.
constexpr double kMaxBound = 9007199254740992.0;  // 2^53

// Keywords that describe and do not constrain: accepted and left alone.
const std::set<std::string_view> kAnnotations = {
    "title",    "description", "default",  "examples",  "$schema", "$id",     "$comment",
    "deprecated", "readOnly",  "writeOnly", "$defs",    "definitions", "$anchor", "contentMediaType",
    "contentEncoding"};
const std::set<std::string_view> kSupported = {
    "type",    "properties", "required", "additionalProperties", "items",     "prefixItems",
    "minItems", "maxItems",  "enum",     "const",               "anyOf",     "oneOf",
    "allOf",   "$ref",       "minLength", "maxLength",          "pattern",   "format",
    "minimum", "maximum",    "exclusiveMinimum", "exclusiveMaximum"};

// Built-in formats as regular expressions over the string's characters.
const std::unordered_map<std::string_view, std::string_view> kFormats = {
    {"date", R"([0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]))"},
    {"time", R"(([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))"},
    {"date-time",
     R"([0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))"},
    {"uuid", R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"},
    {"email", R"([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+)"},
};

std::string json_literal(dom::element e) { return simdjson::minify(e); }

std::string json_quoted(std::string_view key) {
  std::string out;
  json_append_string(out, key);
  return out;
}

class SchemaCompiler {
 public:
  SchemaCompiler(Grammar& g, dom::element root) : g_(g), root_(root) {}

  // Whitespace allowed around JSON's punctuation: a regular expression (vLLM's
  // whitespace_pattern); none set, JSON is written compact.
  Status set_whitespace(std::string_view pattern) {
    Element e;
    if (auto st = add_regex(g_, pattern, false, e); !st.ok()) return Status::invalid("whitespace_pattern: " + std::string(st.message()));
    whitespace_ = e;
    return {};
  }

  Status compile_root(Element& out) {
    Sequence seq;
    if (auto st = value(root_, "schema", seq); !st.ok()) return st;
    out = g_.alternation("root-value", {seq});
    return g_.status;
  }

  // Any JSON value, object and array, as rules shared by every use.
  Element any_value() {
    if (any_value_) return {Element::Kind::rule, *any_value_};
    const auto value = g_.rule("value");
    any_value_ = value;
    const auto object = g_.rule("object");
    any_object_ = object;
    const auto array = g_.rule("array");
    const Element v{Element::Kind::rule, value};
    Sequence member = string_sequence(0, -1);
    append(member, punct(":"));
    member.push_back(v);
    Sequence more_member = punct(",");
    append(more_member, member);
    Sequence members = member;
    members.push_back(g_.repeat("members", more_member, 0, -1));
    Sequence obj = punct("{");
    obj.push_back(g_.alternation("object-body", {members, {}}));
    append(obj, punct("}"));
    g_.define(object, {obj});
    Sequence more_item = punct(",");
    more_item.push_back(v);
    Sequence items{v, g_.repeat("items", more_item, 0, -1)};
    Sequence arr = punct("[");
    arr.push_back(g_.alternation("array-body", {items, {}}));
    append(arr, punct("]"));
    g_.define(array, {arr});
    g_.define(value, {{{Element::Kind::rule, object}},
                      {{Element::Kind::rule, array}},
                      string_sequence(0, -1),
                      {number_element()},
                      g_.literal("true"),
                      g_.literal("false"),
                      g_.literal("null")});
    return v;
  }

  Element any_object() {
    any_value();
    return {Element::Kind::rule, *any_object_};
  }

 private:
  static void append(Sequence& to, const Sequence& from) { to.insert(to.end(), from.begin(), from.end()); }

  // A punctuation mark of JSON: `{` and `[` with the whitespace after them, `}` and `]` with
  // the whitespace before, `:` and `,` with both.
  Sequence punct(std::string_view mark) {
    Sequence seq;
    const bool before = mark == "}" || mark == "]" || mark == ":" || mark == ",";
    const bool after = mark == "{" || mark == "[" || mark == ":" || mark == ",";
    if (whitespace_ && before) seq.push_back(*whitespace_);
    append(seq, g_.literal(mark));
    if (whitespace_ && after) seq.push_back(*whitespace_);
    return seq;
  }

  Status error(std::string_view where, std::string what) const {
    return Status::invalid(std::string(where) + ": " + what);
  }

  // One JSON string character: anything but a quote, a backslash or a control character,
  // or an escape.
  Element string_char() {
    if (string_char_) return {Element::Kind::rule, *string_char_};
    CodePointRanges plain = complement({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}});
    const auto plain_element = g_.code_points("char-plain", plain);
    ByteSet simple, hex;
    for (const char c : std::string_view("\"\\/bfnrt")) simple.add(static_cast<unsigned char>(c), static_cast<unsigned char>(c));
    hex.add('0', '9');
    hex.add('a', 'f');
    hex.add('A', 'F');
    const auto h = g_.bytes(hex);
    Sequence escape = g_.literal("\\");
    escape.push_back(g_.bytes(simple));
    Sequence unicode = g_.literal("\\u");
    unicode.insert(unicode.end(), {h, h, h, h});
    escapes_ = {escape, unicode};
    const auto e = g_.alternation("char", {{plain_element}, escape, unicode});
    string_char_ = e.value;
    return e;
  }

  // A JSON string whose characters, written plainly, are none of `names` (the keys an object
  // declares, which additional properties must not repeat). Names are compared as written:
  // a key spelled with escapes counts as different.
  Sequence string_except(std::vector<std::string_view> names) {
    std::ranges::sort(names);
    names.erase(std::unique(names.begin(), names.end()), names.end());
    Sequence seq = g_.literal("\"");
    seq.push_back(except_from(names, 0));
    return seq;
  }

  // The rest of a key (through its closing quote) whose first `depth` bytes equal those of
  // every name in `names`.
  Element except_from(std::span<const std::string_view> names, std::size_t depth) {
    string_char();
    const Element rest = g_.repeat("string", {string_char()}, 0, -1);
    std::vector<Sequence> alts;
    CodePointRanges taken{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
    bool ends_here = false;
    for (std::size_t i = 0; i < names.size();) {
      if (names[i].size() == depth) {
        ends_here = true;
        ++i;
        continue;
      }
      const char b = names[i][depth];
      std::size_t j = i;
      while (j < names.size() && names[j].size() > depth && names[j][depth] == b) ++j;
      const auto c = static_cast<unsigned char>(b);
      if (c >= 0x80) {  // a name beyond ASCII: the rest of this branch is not told apart
        taken.emplace_back(0x80, kMaxCodePoint);
      } else {
        taken.emplace_back(c, c);
        Sequence branch = g_.literal(std::string_view(&b, 1));
        branch.push_back(except_from(names.subspan(i, j - i), depth + 1));
        alts.push_back(std::move(branch));
      }
      i = j;
    }
    // A first character that leaves every name, then anything.
    const auto other = complement(taken);
    if (!other.empty()) alts.push_back({g_.code_points("key-char", other), rest, g_.literal("\"")[0]});
    for (const auto& e : escapes_) {
      Sequence s = e;
      s.push_back(rest);
      append(s, g_.literal("\""));
      alts.push_back(std::move(s));
    }
    if (!ends_here) alts.push_back(g_.literal("\""));
    return g_.alternation("key", std::move(alts));
  }

  Sequence string_sequence(std::int64_t min, std::int64_t max) {
    Sequence seq = g_.literal("\"");
    seq.push_back(g_.repeat("string", {string_char()}, min, max));
    append(seq, g_.literal("\""));
    return seq;
  }

  Element number_element() {
    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    Element e;
    (void)add_regex(g_, R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)", false, e);
    return e;
  }

  // --- integer ranges ----------------------------------------------------------------------

  Element digits(char lo, char hi) {
    ByteSet s;
    s.add(static_cast<unsigned char>(lo), static_cast<unsigned char>(hi));
    return g_.bytes(s);
  }

  // Equal-length digit strings in [a, b].
  std::vector<Sequence> same_length(std::string_view a, std::string_view b) {
    if (a.empty()) return {{}};
    const auto rest = a.size() - 1;
    const bool a_low = a.substr(1).find_first_not_of('0') == std::string_view::npos;
    const bool b_high = b.substr(1).find_first_not_of('9') == std::string_view::npos;
    const auto prefixed = [&](char c, std::vector<Sequence> tails) {
      for (auto& t : tails) t.insert(t.begin(), digits(c, c));
      return tails;
    };
    const auto any_tail = [&](char lo, char hi) {
      Sequence s{digits(lo, hi)};
      for (std::size_t i = 0; i < rest; ++i) s.push_back(digits('0', '9'));
      return s;
    };
    if (a[0] == b[0]) return prefixed(a[0], same_length(a.substr(1), b.substr(1)));
    std::vector<Sequence> out;
    char lo = a[0], hi = b[0];
    if (!a_low) {
      auto t = prefixed(a[0], same_length(a.substr(1), std::string(rest, '9')));
      out.insert(out.end(), t.begin(), t.end());
      ++lo;
    }
    const char mid_hi = b_high ? hi : static_cast<char>(hi - 1);
    if (lo <= mid_hi) out.push_back(any_tail(lo, mid_hi));
    if (!b_high) {
      auto t = prefixed(b[0], same_length(std::string(rest, '0'), b.substr(1)));
      out.insert(out.end(), t.begin(), t.end());
    }
    return out;
  }

  // Decimal numerals (no leading zeros) of the integers in [lo, hi]; hi < 0: unbounded.
  std::vector<Sequence> magnitude(std::int64_t lo, std::int64_t hi) {
    std::vector<Sequence> out;
    const auto lo_s = std::to_string(lo);
    const std::size_t max_len = hi < 0 ? lo_s.size() : std::to_string(hi).size();
    for (std::size_t len = lo_s.size(); len <= max_len; ++len) {
      std::string a = lo_s;
      if (len != lo_s.size()) {
        a.assign(len, '0');
        a[0] = '1';
      }
      std::string b = hi >= 0 && len == max_len ? std::to_string(hi) : std::string(len, '9');
      auto alts = same_length(a, b);
      out.insert(out.end(), alts.begin(), alts.end());
    }
    if (hi < 0) {  // and every longer numeral
      Sequence longer{digits('1', '9')};
      longer.push_back(g_.repeat("digits", {digits('0', '9')}, static_cast<std::int64_t>(lo_s.size()), -1));
      out.push_back(std::move(longer));
    }
    return out;
  }

  Element integer_range(std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
    std::vector<Sequence> alts;
    if (!hi || *hi >= 0) {
      const auto m = magnitude(lo ? std::max<std::int64_t>(*lo, 0) : 0, hi ? *hi : -1);
      alts.insert(alts.end(), m.begin(), m.end());
    }
    if (!lo || *lo < 0) {
      const std::int64_t m_lo = hi && *hi < 0 ? -*hi : 1;
      for (auto s : magnitude(m_lo, lo ? -*lo : -1)) {
        s.insert(s.begin(), digits('-', '-'));
        alts.push_back(std::move(s));
      }
    }
    return g_.alternation("integer", std::move(alts));
  }

  // --- numbers with integral bounds ----------------------------------------------------------

  struct Bound {
    std::int64_t value;
    bool strict;
  };

  // Non-negative decimals m with m >= / > lo and, if hi, m <= / < hi; no exponent.
  void bounded_magnitudes(Bound lo, std::optional<Bound> hi, const Sequence& prefix,
                          std::vector<Sequence>& out) {
    Sequence any_fraction{g_.alternation("fraction", {Sequence{digits('.', '.'), g_.repeat("fraction-digits", {digits('0', '9')}, 1, -1)}, {}})};
    Sequence zero_fraction{g_.alternation("zero-fraction", {Sequence{digits('.', '.'), g_.repeat("zeros", {digits('0', '0')}, 1, -1)}, {}})};
    Sequence nonzero_fraction{digits('.', '.'), g_.repeat("zeros", {digits('0', '0')}, 0, -1),
                              digits('1', '9'), g_.repeat("fraction-digits", {digits('0', '9')}, 0, -1)};
    const auto add = [&](std::int64_t a, std::int64_t b, const Sequence& fraction) {
      if (b >= 0 && b < a) return;
      for (auto s : magnitude(a, b)) {
        s.insert(s.begin(), prefix.begin(), prefix.end());
        s.insert(s.end(), fraction.begin(), fraction.end());
        out.push_back(std::move(s));
      }
    };
    const auto any_lo = lo.strict ? lo.value + 1 : lo.value;
    if (!hi) {
      add(any_lo, -1, any_fraction);
      if (lo.strict) add(lo.value, lo.value, nonzero_fraction);
      return;
    }
    if (hi->value - 1 >= any_lo) add(any_lo, hi->value - 1, any_fraction);
    if (lo.strict && lo.value < hi->value) add(lo.value, lo.value, nonzero_fraction);
    if (!hi->strict && (hi->value > lo.value || (hi->value == lo.value && !lo.strict))) {
      add(hi->value, hi->value, zero_fraction);
    }
  }

  Status number_range(std::optional<Bound> lo, std::optional<Bound> hi, std::string_view where,
                      Sequence& out) {
    std::vector<Sequence> alts;
    // x >= 0 part.
    if (!hi || hi->value > 0 || (hi->value == 0 && !hi->strict)) {
      const Bound pos_lo = lo && lo->value >= 0 ? *lo : Bound{0, false};
      bounded_magnitudes(pos_lo, hi, {}, alts);
    }
    // x < 0 part: x = -m, m > 0.
    if (!lo || lo->value < 0) {
      const Bound m_lo = hi && hi->value < 0 ? Bound{-hi->value, hi->strict} : Bound{0, true};
      std::optional<Bound> m_hi;
      if (lo) m_hi = Bound{-lo->value, lo->strict};
      bounded_magnitudes(m_lo, m_hi, {digits('-', '-')}, alts);
    }
    if (alts.empty()) return error(where, "the bounds admit no number");
    out.push_back(g_.alternation("number", std::move(alts)));
    return {};
  }

  // --- schemas --------------------------------------------------------------------------------

  Status resolve(std::string_view ref, std::string_view where, dom::element& out) {
    if (ref.empty() || ref[0] != '#') {
      return error(where, "$ref '" + std::string(ref) + "': only references inside the schema (#/...) are supported");
    }
    dom::element at = root_;
    std::size_t i = 1;
    while (i < ref.size()) {
      if (ref[i] != '/') return error(where, "$ref '" + std::string(ref) + "': not a JSON pointer");
      const auto next = ref.find('/', i + 1);
      std::string token(ref.substr(i + 1, next == std::string_view::npos ? std::string_view::npos : next - i - 1));
      for (std::size_t k = 0; (k = token.find('~', k)) != std::string::npos; ++k) {
        if (k + 1 < token.size() && token[k + 1] == '1') token.replace(k, 2, "/");
        else if (k + 1 < token.size() && token[k + 1] == '0') token.replace(k, 2, "~");
        else return error(where, "$ref '" + std::string(ref) + "': a bad ~ escape");
      }
      dom::element child;
      if (at.is_object()) {
        if (at.get_object().at_key(token).get(child)) return error(where, "$ref '" + std::string(ref) + "' does not resolve");
      } else if (at.is_array()) {
        std::size_t index = 0;
        const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
        if (ec != std::errc() || p != token.data() + token.size() || at.get_array().at(index).get(child)) {
          return error(where, "$ref '" + std::string(ref) + "' does not resolve");
        }
      } else {
        return error(where, "$ref '" + std::string(ref) + "' does not resolve");
      }
      at = child;
      i = next == std::string_view::npos ? ref.size() : next;
    }
    out = at;
    return {};
  }

  Status reference(std::string_view ref, std::string_view where, Sequence& out) {
    const std::string key(ref);
    if (const auto it = refs_.find(key); it != refs_.end()) {
      out.push_back({Element::Kind::rule, it->second});
      return {};
    }
    dom::element target;
    if (auto st = resolve(ref, where, target); !st.ok()) return st;
    const auto rule = g_.rule("ref " + key);
    refs_.emplace(key, rule);
    Sequence body;
    const int saved = depth_;
    depth_ = 0;  // a definition starts its own nesting count
    auto st = value(target, key, body);
    depth_ = saved;
    if (!st.ok()) return st;
    g_.define(rule, {body});
    out.push_back({Element::Kind::rule, rule});
    return g_.status;
  }

  Status value(dom::element schema, std::string_view where, Sequence& out) {
    if (!g_.status.ok()) return g_.status;
    if (++depth_ > kMaxDepth) return error(where, std::string("schemas nested too deep (over 64 levels)"));
    auto st = value_inner(schema, where, out);
    --depth_;
    return st.ok() ? g_.status : st;
  }

  Status value_inner(dom::element schema, std::string_view where, Sequence& out) {
    bool boolean = false;
    if (!schema.get_bool().get(boolean)) {
      if (!boolean) return error(where, "the schema false matches nothing");
      out.push_back(any_value());
      return {};
    }
    dom::object object;
    if (schema.get_object().get(object)) return error(where, "a schema must be an object or a boolean");
    std::set<std::string_view> keys;
    for (auto field : object) {
      const auto key = field.key;
      if (kAnnotations.contains(key)) continue;
      if (!kSupported.contains(key)) return error(where, "keyword '" + std::string(key) + "' is not supported");
      keys.insert(key);
    }
    const auto only = [&](std::initializer_list<std::string_view> allowed, std::string_view what) -> Status {
      for (const auto k : keys) {
        if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
          std::string message = "'";
          message += k;
          message += "' beside '";
          message += what;
          message += "' is not supported";
          return error(where, message);
        }
      }
      return {};
    };
    if (keys.contains("$ref")) {
      if (auto st = only({"$ref"}, "$ref"); !st.ok()) return st;
      std::string_view ref;
      if (object["$ref"].get_string().get(ref)) return error(where, "$ref must be a string");
      return reference(ref, where, out);
    }
    if (keys.contains("const")) {
      if (auto st = only({"const", "type"}, "const"); !st.ok()) return st;
      append(out, g_.literal(json_literal(object["const"].value_unsafe())));
      return {};
    }
    if (keys.contains("enum")) {
      if (auto st = only({"enum", "type"}, "enum"); !st.ok()) return st;
      dom::array values;
      if (object["enum"].get_array().get(values) || values.size() == 0) {
        return error(where, "enum must be a non-empty array");
      }
      std::vector<Sequence> alts;
      for (auto v : values) alts.push_back(g_.literal(json_literal(v)));
      out.push_back(g_.alternation("enum", std::move(alts)));
      return {};
    }
    for (const auto* combinator : {"anyOf", "oneOf"}) {
      if (!keys.contains(combinator)) continue;
      if (auto st = only({combinator}, combinator); !st.ok()) return st;
      dom::array options;
      if (object[combinator].get_array().get(options) || options.size() == 0) {
        return error(where, std::string(combinator) + " must be a non-empty array");
      }
      std::vector<Sequence> alts;
      std::size_t index = 0;
      for (auto option : options) {
        Sequence alt;
        const auto at = std::string(where) + "." + combinator + "[" + std::to_string(index++) + "]";
        if (auto st = value(option, at, alt); !st.ok()) return st;
        alts.push_back(std::move(alt));
      }
      out.push_back(g_.alternation(combinator, std::move(alts)));
      return {};
    }
    if (keys.contains("allOf")) return all_of(object, where, out);

    // The types the schema allows: named, or implied by its keywords.
    std::vector<std::string_view> types;
    dom::element type;
    if (!object["type"].get(type)) {
      std::string_view single;
      dom::array many;
      if (!type.get_string().get(single)) {
        types.push_back(single);
      } else if (!type.get_array().get(many)) {
        for (auto t : many) {
          if (t.get_string().get(single)) return error(where, "type must be a string or an array of strings");
          types.push_back(single);
        }
      } else {
        return error(where, "type must be a string or an array of strings");
      }
      if (types.empty()) return error(where, "type is an empty array");
    } else {
      const auto has = [&](std::initializer_list<std::string_view> ks) {
        return std::ranges::any_of(ks, [&](std::string_view k) { return keys.contains(k); });
      };
      if (has({"properties", "required", "additionalProperties"})) types.push_back("object");
      if (has({"items", "prefixItems", "minItems", "maxItems"})) types.push_back("array");
      if (has({"minLength", "maxLength", "pattern", "format"})) types.push_back("string");
      if (has({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})) types.push_back("number");
      if (types.empty()) {
        out.push_back(any_value());
        return {};
      }
    }
    std::vector<Sequence> alts;
    for (const auto t : types) {
      Sequence alt;
      Status st;
      if (t == "object") {
        st = object_schema(object, where, alt);
      } else if (t == "array") {
        st = array_schema(object, where, alt);
      } else if (t == "string") {
        st = string_schema(object, where, alt);
      } else if (t == "integer" || t == "number") {
        st = number_schema(object, where, t == "integer", alt);
      } else if (t == "boolean") {
        alt.push_back(g_.alternation("boolean", {g_.literal("true"), g_.literal("false")}));
      } else if (t == "null") {
        alt = g_.literal("null");
      } else {
        return error(where, "type '" + std::string(t) + "' is not a JSON Schema type");
      }
      if (!st.ok()) return st;
      alts.push_back(std::move(alt));
    }
    if (alts.size() == 1) {
      append(out, alts[0]);
    } else {
      out.push_back(g_.alternation("types", std::move(alts)));
    }
    return {};
  }

  // allOf of object schemas: their properties and required lists merged.
  Status all_of(dom::object object, std::string_view where, Sequence& out) {
    dom::array parts;
    if (object["allOf"].get_array().get(parts) || parts.size() == 0) return error(where, "allOf must be a non-empty array");
    for (auto field : object) {
      if (field.key != "allOf" && !kAnnotations.contains(field.key)) {
        return error(where, "'" + std::string(field.key) + "' beside 'allOf' is not supported");
      }
    }
    if (parts.size() == 1) return value(*parts.begin(), std::string(where) + ".allOf[0]", out);
    std::vector<std::pair<std::string_view, dom::element>> properties;
    std::vector<std::string_view> required;
    std::optional<dom::element> additional;
    std::unordered_set<std::string_view> seen;
    std::size_t index = 0;
    for (auto part : parts) {
      const auto at = std::string(where) + ".allOf[" + std::to_string(index++) + "]";
      dom::object p;
      std::string_view ref;
      while (!part.get_object().get(p) && !p["$ref"].get_string().get(ref)) {
        if (auto st = resolve(ref, at, part); !st.ok()) return st;
      }
      if (part.get_object().get(p)) return error(at, "allOf is supported only over object schemas");
      for (auto field : p) {
        const auto k = field.key;
        if (kAnnotations.contains(k)) continue;
        if (k == "type") {
          std::string_view t;
          if (field.value.get_string().get(t) || t != "object") return error(at, "allOf is supported only over object schemas");
        } else if (k == "properties") {
          dom::object props;
          if (field.value.get_object().get(props)) return error(at, "properties must be an object");
          for (auto prop : props) {
            if (!seen.insert(prop.key).second) {
              return error(at, "property '" + std::string(prop.key) + "' is defined by two allOf schemas");
            }
            properties.emplace_back(prop.key, prop.value);
          }
        } else if (k == "required") {
          dom::array names;
          if (field.value.get_array().get(names)) return error(at, "required must be an array of strings");
          for (auto n : names) {
            std::string_view name;
            if (n.get_string().get(name)) return error(at, "required must be an array of strings");
            required.push_back(name);
          }
        } else if (k == "additionalProperties") {
          additional = field.value;
        } else {
          return error(at, "'" + std::string(k) + "' in an allOf part is not supported");
        }
      }
    }
    return object_body(properties, required, additional, properties.empty(), where, out);
  }

  Status object_schema(dom::object object, std::string_view where, Sequence& out) {
    std::vector<std::pair<std::string_view, dom::element>> properties;
    std::vector<std::string_view> required;
    std::optional<dom::element> additional;
    dom::element e;
    bool has_properties = false;
    if (!object["properties"].get(e)) {
      has_properties = true;
      dom::object props;
      if (e.get_object().get(props)) return error(where, "properties must be an object");
      for (auto prop : props) properties.emplace_back(prop.key, prop.value);
    }
    if (!object["required"].get(e)) {
      dom::array names;
      if (e.get_array().get(names)) return error(where, "required must be an array of strings");
      for (auto n : names) {
        std::string_view name;
        if (n.get_string().get(name)) return error(where, "required must be an array of strings");
        required.push_back(name);
      }
    }
    if (!object["additionalProperties"].get(e)) additional = e;
    return object_body(properties, required, additional, !has_properties, where, out);
  }

  Status object_body(const std::vector<std::pair<std::string_view, dom::element>>& properties,
                     const std::vector<std::string_view>& required,
                     std::optional<dom::element> additional, bool open_by_default,
                     std::string_view where, Sequence& out) {
    // Sets, not scans: a schema may list thousands of properties.
    std::unordered_set<std::string_view> declared, must;
    for (const auto& p : properties) declared.insert(p.first);
    for (const auto r : required) {
      if (!declared.contains(r)) {
        return error(where, "required property '" + std::string(r) + "' is not in properties");
      }
      must.insert(r);
    }
    // Additional properties: any key, a value of their schema.
    std::optional<Sequence> extra;
    bool allow_extra = open_by_default;
    dom::element extra_schema;
    if (additional) {
      bool b = false;
      if (!additional->get_bool().get(b)) {
        allow_extra = b;
      } else {
        allow_extra = true;
        extra_schema = *additional;
      }
    }
    if (allow_extra) {
      std::vector<std::string_view> names;
      for (const auto& p : properties) names.push_back(p.first);
      Sequence kv = names.empty() ? string_sequence(0, -1) : string_except(names);
      append(kv, punct(":"));
      if (additional && !additional->is_bool()) {
        if (auto st = value(extra_schema, std::string(where) + ".additionalProperties", kv); !st.ok()) return st;
      } else {
        kv.push_back(any_value());
      }
      extra = std::move(kv);
    }
    // first[i]: properties i.. with nothing written yet; next[i]: the same after something was
    // (each then starts with a comma). Properties in the schema's order, optional ones skippable.
    const auto n = properties.size();
    std::vector<std::uint32_t> first(n + 1), next(n + 1);
    for (std::size_t i = 0; i <= n; ++i) {
      first[i] = g_.rule("properties");
      next[i] = g_.rule("more-properties");
    }
    if (!g_.status.ok()) return g_.status;
    if (extra) {
      Sequence more = punct(",");
      append(more, *extra);
      const auto tail = g_.repeat("additional", more, 0, -1);
      Sequence some = *extra;
      some.push_back(tail);
      g_.define(first[n], {some, {}});
      g_.define(next[n], {{tail}});
    } else {
      g_.define(first[n], {{}});
      g_.define(next[n], {{}});
    }
    for (std::size_t i = n; i-- > 0;) {
      const auto& [name, schema] = properties[i];
      Sequence kv = g_.literal(json_quoted(name));
      append(kv, punct(":"));
      if (auto st = value(schema, std::string(where) + ".properties." + std::string(name), kv); !st.ok()) return st;
      const bool is_required = must.contains(name);
      Sequence take = kv;
      take.push_back({Element::Kind::rule, next[i + 1]});
      Sequence take_more = punct(",");
      append(take_more, take);
      if (is_required) {
        g_.define(first[i], {take});
        g_.define(next[i], {take_more});
      } else {
        g_.define(first[i], {take, {{Element::Kind::rule, first[i + 1]}}});
        g_.define(next[i], {take_more, {{Element::Kind::rule, next[i + 1]}}});
      }
    }
    append(out, punct("{"));
    out.push_back({Element::Kind::rule, first[0]});
    append(out, punct("}"));
    return g_.status;
  }

  Status count(dom::object object, std::string_view key, std::string_view where, std::int64_t& out) {
    dom::element e;
    if (object[key].get(e)) return {};
    double d = 0;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    if (!e.get_int64().get(i)) {
      d = static_cast<double>(i);
    } else if (!e.get_uint64().get(u)) {
      d = static_cast<double>(u);
    } else if (e.get_double().get(d)) {
      return error(where, std::string(key) + " must be a non-negative integer");
    }
    if (d < 0 || d != std::floor(d) || d > 1e6) {
      return error(where, std::string(key) + " must be a non-negative integer (at most 1000000)");
    }
    out = static_cast<std::int64_t>(d);
    return {};
  }

  Status array_schema(dom::object object, std::string_view where, Sequence& out) {
    std::int64_t min = 0, max = -1;
    if (auto st = count(object, "minItems", where, min); !st.ok()) return st;
    if (auto st = count(object, "maxItems", where, max); !st.ok()) return st;
    std::vector<dom::element> tuple;
    dom::element e;
    dom::array array;
    const bool has_prefix = !object["prefixItems"].get(e);
    if (has_prefix) {
      if (e.get_array().get(array)) return error(where, "prefixItems must be an array");
      for (auto p : array) tuple.push_back(p);
    }
    // items: a schema for every item after the prefix, false for none, or (draft 4) a tuple.
    Sequence item{};
    bool extra_items = true;
    if (!object["items"].get(e)) {
      bool b = true;
      if (!e.get_bool().get(b)) {
        extra_items = b;
        if (b) item = {any_value()};
      } else if (!has_prefix && !e.get_array().get(array)) {
        for (auto p : array) tuple.push_back(p);
        item = {any_value()};
      } else if (auto st = value(e, std::string(where) + ".items", item); !st.ok()) {
        return st;
      }
    } else {
      item = {any_value()};
    }
    std::vector<Sequence> prefix;
    for (std::size_t i = 0; i < tuple.size(); ++i) {
      Sequence s;
      if (auto st = value(tuple[i], std::string(where) + ".prefixItems[" + std::to_string(i) + "]", s); !st.ok()) return st;
      prefix.push_back(std::move(s));
    }
    const auto k = static_cast<std::int64_t>(prefix.size());
    if (!extra_items) max = max < 0 ? k : std::min(max, k);
    if (max >= 0 && min > max) return error(where, "minItems exceeds the items the schema allows");
    const auto item_at = [&](std::int64_t i) -> const Sequence& {
      return i < k ? prefix[static_cast<std::size_t>(i)] : item;
    };
    // after[i]: what may follow once i items are written; each further one after a comma.
    const std::int64_t top = std::max<std::int64_t>(1, max < 0 ? k : std::min(max, k));
    std::vector<std::uint32_t> after(static_cast<std::size_t>(top) + 1);
    for (std::int64_t i = 1; i <= top; ++i) after[static_cast<std::size_t>(i)] = g_.rule("items");
    if (!g_.status.ok()) return g_.status;
    for (std::int64_t i = top; i >= 1; --i) {
      std::vector<Sequence> alts;
      if (max >= 0 && i >= max) {
        alts.push_back({});
      } else if (i < k) {
        Sequence more = punct(",");
        append(more, item_at(i));
        more.push_back({Element::Kind::rule, after[static_cast<std::size_t>(i + 1)]});
        alts.push_back(std::move(more));
        if (i >= min) alts.push_back({});
      } else {
        Sequence more = punct(",");
        append(more, item);
        alts.push_back({g_.repeat("more-items", more, std::max<std::int64_t>(min - i, 0),
                                  max < 0 ? -1 : max - i)});
      }
      g_.define(after[static_cast<std::size_t>(i)], std::move(alts));
    }
    std::vector<Sequence> body;
    if (max != 0 && (k > 0 || extra_items)) {
      Sequence first = item_at(0);
      first.push_back({Element::Kind::rule, after[1]});
      body.push_back(std::move(first));
    }
    if (min == 0) body.push_back({});
    if (body.empty()) return error(where, "no array satisfies the schema");
    append(out, punct("["));
    out.push_back(g_.alternation("array", std::move(body)));
    append(out, punct("]"));
    return g_.status;
  }

  Status string_schema(dom::object object, std::string_view where, Sequence& out) {
    std::int64_t min = 0, max = -1;
    if (auto st = count(object, "minLength", where, min); !st.ok()) return st;
    if (auto st = count(object, "maxLength", where, max); !st.ok()) return st;
    if (max >= 0 && min > max) return error(where, "minLength exceeds maxLength");
    std::string_view pattern, format;
    const bool has_pattern = !object["pattern"].get_string().get(pattern);
    const bool has_format = !object["format"].get_string().get(format);
    if (!has_pattern && object["pattern"].error() != simdjson::NO_SUCH_FIELD) return error(where, "pattern must be a string");
    if (!has_format && object["format"].error() != simdjson::NO_SUCH_FIELD) return error(where, "format must be a string");
    if (has_pattern || has_format) {
      if (has_pattern && has_format) return error(where, "pattern and format together are not supported");
      if (min != 0 || max >= 0) return error(where, "minLength/maxLength beside pattern or format are not supported");
      if (has_format) {
        const auto it = kFormats.find(format);
        if (it == kFormats.end()) return error(where, "format '" + std::string(format) + "' is not supported (date, time, date-time, uuid, email are)");
        pattern = it->second;
      }
      Element e;
      if (auto st = add_regex(g_, pattern, true, e); !st.ok()) {
        return error(where, "pattern: " + std::string(st.message()));
      }
      append(out, g_.literal("\""));
      out.push_back(e);
      append(out, g_.literal("\""));
      return g_.status;
    }
    append(out, string_sequence(min, max));
    return g_.status;
  }

  Status number_schema(dom::object object, std::string_view where, bool integer, Sequence& out) {
    struct Raw {
      std::optional<double> value;
      bool strict = false;
    };
    Raw lo, hi;
    for (const auto* key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
      dom::element e;
      if (object[key].get(e)) continue;
      double d = 0;
      std::int64_t i = 0;
      if (!e.get_int64().get(i)) {
        d = static_cast<double>(i);
      } else if (e.get_double().get(d)) {
        return error(where, std::string(key) + " must be a number");
      }
      if (!(std::fabs(d) <= kMaxBound)) return error(where, std::string(key) + " beyond 2^53 is not supported");
      const std::string_view k = key;
      const bool lower = k == "minimum" || k == "exclusiveMinimum";
      auto& b = lower ? lo : hi;
      const bool strict = k.starts_with("exclusive");
      // Of two bounds on one side the tighter counts.
      const bool tighter = !b.value || (lower ? d > *b.value || (d == *b.value && strict)
                                                  : d < *b.value || (d == *b.value && strict));
      if (tighter) b = {d, strict};
    }
    if (integer) {
      std::optional<std::int64_t> a, z;
      if (lo.value) a = static_cast<std::int64_t>(lo.strict ? std::floor(*lo.value) + 1 : std::ceil(*lo.value));
      if (hi.value) z = static_cast<std::int64_t>(hi.strict ? std::ceil(*hi.value) - 1 : std::floor(*hi.value));
      if (a && z && *a > *z) return error(where, "the bounds admit no integer");
      if (!a && !z) {
        Element e;
        (void)add_regex(g_, "-?(0|[1-9][0-9]*)", false, e);
        out.push_back(e);
      } else {
        out.push_back(integer_range(a, z));
      }
      return g_.status;
    }
    if (!lo.value && !hi.value) {
      out.push_back(number_element());
      return g_.status;
    }
    std::optional<Bound> a, z;
    for (auto [raw, bound] : {std::pair{&lo, &a}, std::pair{&hi, &z}}) {
      if (!raw->value) continue;
      if (*raw->value != std::floor(*raw->value)) {
        return error(where, "a number's bounds must be integers (an integer type takes any bound)");
      }
      *bound = Bound{static_cast<std::int64_t>(*raw->value), raw->strict};
    }
    return number_range(a, z, where, out);
  }

  Grammar& g_;
  dom::element root_;
  std::unordered_map<std::string, std::uint32_t> refs_;
  std::optional<std::uint32_t> any_value_, any_object_, string_char_;
  std::optional<Element> whitespace_;
  std::vector<Sequence> escapes_;  // of a JSON string: \\x and \\uXXXX
  int depth_ = 0;
};

}  // namespace

Status add_json_schema(Grammar& g, std::string_view schema, Element& out,
                       std::string_view whitespace) {
  dom::parser parser;
  dom::element root;
  if (parser.parse(schema.data(), schema.size()).get(root)) return Status::invalid("schema: invalid JSON");
  SchemaCompiler compiler(g, root);
  if (!whitespace.empty()) {
    if (auto st = compiler.set_whitespace(whitespace); !st.ok()) return st;
  }
  return compiler.compile_root(out);
}

Status json_schema_grammar(std::string_view schema, Grammar& out, std::string_view whitespace) {
  Element e;
  if (auto st = add_json_schema(out, schema, e, whitespace); !st.ok()) return st;
  const auto r = out.rule("root");
  out.define(r, {{e}});
  return out.finish(r);
}

Status tool_calls_grammar(std::span<const ToolFunction> functions, bool parallel, Grammar& out) {
  if (functions.empty()) return Status::invalid("tools: empty");
  std::vector<Sequence> calls;
  for (const auto& f : functions) {
    Element arguments;
    const std::string_view schema = f.parameters.empty() ? std::string_view(R"({"type":"object","properties":{}})")
                                                         : std::string_view(f.parameters);
    if (auto st = add_json_schema(out, schema, arguments); !st.ok()) {
      return Status::invalid("function '" + f.name + "' parameters: " + std::string(st.message()));
    }
    std::string head = "<tool_call>\n{\"name\":";
    head += json_quoted(f.name);
    head += ",\"arguments\":";
    Sequence call = out.literal(head);
    call.push_back(arguments);
    const auto tail = out.literal("}\n</tool_call>");
    call.insert(call.end(), tail.begin(), tail.end());
    calls.push_back(std::move(call));
  }
  const auto call = out.alternation("tool-call", std::move(calls));
  Sequence root_seq{call};
  if (parallel) {
    Sequence more = out.literal("\n");
    more.push_back(call);
    root_seq.push_back(out.repeat("more-calls", more, 0, -1));
  }
  const auto r = out.rule("root");
  out.define(r, {root_seq});
  return out.finish(r);
}

Status json_object_grammar(Grammar& out, std::string_view whitespace) {
  dom::parser parser;
  dom::element root;
  if (parser.parse(std::string_view("true")).get(root)) return Status(Errc::internal, "JSON parser");
  SchemaCompiler compiler(out, root);
  if (!whitespace.empty()) {
    if (auto st = compiler.set_whitespace(whitespace); !st.ok()) return st;
  }
  const auto object = compiler.any_object();
  const auto r = out.rule("root");
  out.define(r, {{object}});
  return out.finish(r);
}

}  // namespace coinfer::generation::grammar
