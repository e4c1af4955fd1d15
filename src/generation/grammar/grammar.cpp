#include "coinfer/generation/grammar/grammar.hpp"

#include <algorithm>
#include <functional>
#include <limits>

namespace coinfer::generation::grammar {

namespace {

constexpr std::uint8_t kLeadBytes[4] = {0x00, 0xC0, 0xE0, 0xF0};

int utf8_length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

void encode(char32_t c, int length, std::uint8_t* out) {
  for (int i = length - 1; i > 0; --i) {
    out[i] = static_cast<std::uint8_t>(0x80 | (c & 0x3F));
    c >>= 6;
  }
  out[0] = static_cast<std::uint8_t>(kLeadBytes[length - 1] | c);
}

using ByteRanges = std::vector<std::pair<std::uint8_t, std::uint8_t>>;

void split_utf8(char32_t lo, char32_t hi, std::vector<ByteRanges>& out) {
  if (lo > hi) return;
  if (lo <= 0xDFFF && hi >= 0xD800) {  // no surrogates
    if (lo < 0xD800) split_utf8(lo, 0xD7FF, out);
    if (hi > 0xDFFF) split_utf8(0xE000, hi, out);
    return;
  }
  for (const char32_t max : {char32_t{0x7F}, char32_t{0x7FF}, char32_t{0xFFFF}}) {
    if (lo <= max && max < hi) {
      split_utf8(lo, max, out);
      split_utf8(max + 1, hi, out);
      return;
    }
  }
  // Same length now; split until every continuation byte spans a full or a single range.
  const int length = utf8_length(lo);
  for (int i = 1; i < length; ++i) {
    const char32_t m = (char32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_utf8(lo, lo | m, out);
        split_utf8((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_utf8(lo, (hi & ~m) - 1, out);
        split_utf8(hi & ~m, hi, out);
        return;
      }
    }
  }
  std::uint8_t a[4], b[4];
  encode(lo, length, a);
  encode(hi, length, b);
  ByteRanges seq;
  for (int i = 0; i < length; ++i) seq.emplace_back(a[i], b[i]);
  out.push_back(std::move(seq));
}

// The rules that derive a string (bytes_count: any; else: the empty one), in time linear in
// the grammar (Dowling-Gallier): each alternative counts the references it still waits for,
// and a rule found true releases the alternatives that use it. A pass-until-no-change loop is
// quadratic on a chain of rules written in the wrong order.
std::vector<char> least_fixpoint(const std::vector<Grammar::Rule>& rules, bool bytes_count) {
  const auto n = rules.size();
  std::vector<char> found(n, 0);
  std::vector<std::uint32_t> waiting;  // per alternative, in rule order
  std::vector<std::vector<std::uint32_t>> uses(n);  // rule -> alternatives referencing it
  std::vector<std::uint32_t> owner;                 // alternative -> its rule
  std::vector<std::uint32_t> queue;
  for (std::uint32_t i = 0; i < n; ++i) {
    for (const auto& alt : rules[i].alternatives) {
      const auto id = static_cast<std::uint32_t>(waiting.size());
      std::uint32_t count = 0;
      bool possible = true;
      for (const auto& e : alt) {
        if (e.kind == Element::Kind::rule) {
          ++count;
          uses[e.value].push_back(id);
        } else if (e.kind == Element::Kind::bytes && !bytes_count) {
          possible = false;
        }
      }
      waiting.push_back(possible ? count : std::numeric_limits<std::uint32_t>::max());
      owner.push_back(i);
      if (possible && count == 0 && !found[i]) {
        found[i] = 1;
        queue.push_back(i);
      }
    }
  }
  while (!queue.empty()) {
    const auto r = queue.back();
    queue.pop_back();
    for (const auto alt : uses[r]) {
      if (waiting[alt] == std::numeric_limits<std::uint32_t>::max() || --waiting[alt] != 0) continue;
      if (!found[owner[alt]]) {
        found[owner[alt]] = 1;
        queue.push_back(owner[alt]);
      }
    }
  }
  return found;
}

}  // namespace

std::vector<ByteRanges> utf8_sequences(char32_t lo, char32_t hi) {
  std::vector<ByteRanges> out;
  split_utf8(lo, std::min<char32_t>(hi, 0x10FFFF), out);
  return out;
}

bool Grammar::grow(std::size_t elements) {
  if (!status.ok()) return false;
  elements_ += elements;
  if (elements_ > kMaxElements || rules_.size() >= kMaxRules) {
    status = Status::invalid("the grammar is too large (over " + std::to_string(kMaxElements) +
                             " elements or " + std::to_string(kMaxRules) +
                             " rules); repetition counts and nesting multiply its size");
    return false;
  }
  return true;
}

std::uint32_t Grammar::rule(std::string name) {
  grow(0);
  if (!status.ok() && !rules_.empty()) return 0;
  rules_.push_back({std::move(name), {}, false});
  return static_cast<std::uint32_t>(rules_.size() - 1);
}

void Grammar::define(std::uint32_t rule, std::vector<Sequence> alternatives) {
  std::size_t size = 0;
  for (const auto& a : alternatives) size += a.size() + 1;
  if (!grow(size)) return;
  auto& r = rules_[rule];
  r.alternatives = std::move(alternatives);
  r.defined = true;
}

Element Grammar::alternation(std::string_view name, std::vector<Sequence> alternatives) {
  const auto id = rule(std::string(name));
  if (!status.ok()) return {Element::Kind::rule, 0};
  define(id, std::move(alternatives));
  return {Element::Kind::rule, id};
}

Element Grammar::bytes(const ByteSet& set) {
  // Sets repeat (every JSON string has the same character classes): share them.
  for (std::size_t i = sets_.size(); i-- > 0 && sets_.size() - i <= 64;) {
    if (sets_[i] == set) return {Element::Kind::bytes, static_cast<std::uint32_t>(i)};
  }
  sets_.push_back(set);
  return {Element::Kind::bytes, static_cast<std::uint32_t>(sets_.size() - 1)};
}

Sequence Grammar::literal(std::string_view text) {
  Sequence seq;
  seq.reserve(text.size());
  for (const char c : text) {
    ByteSet set;
    set.add(static_cast<unsigned char>(c), static_cast<unsigned char>(c));
    seq.push_back(bytes(set));
  }
  return seq;
}

Element Grammar::code_points(std::string_view name,
                             std::vector<std::pair<char32_t, char32_t>> ranges) {
  // Merge the leading bytes of single-byte sequences into one set; the rest are alternatives.
  ByteSet ascii;
  bool any_ascii = false;
  std::vector<Sequence> alternatives;
  for (const auto& [lo, hi] : ranges) {
    for (const auto& seq : utf8_sequences(lo, hi)) {
      if (seq.size() == 1) {
        ascii.add(seq[0].first, seq[0].second);
        any_ascii = true;
        continue;
      }
      Sequence s;
      for (const auto& [a, b] : seq) {
        ByteSet set;
        set.add(a, b);
        s.push_back(bytes(set));
      }
      alternatives.push_back(std::move(s));
    }
  }
  if (any_ascii) {
    if (alternatives.empty()) return bytes(ascii);
    alternatives.insert(alternatives.begin(), Sequence{bytes(ascii)});
  }
  return alternation(name, std::move(alternatives));
}

Element Grammar::repeat(std::string_view name, const Sequence& body, std::int64_t min,
                        std::int64_t max) {
  const auto id = rule(std::string(name));
  if (!status.ok()) return {Element::Kind::rule, 0};
  define_repeat(id, body, min, max);
  // Only a body with a reference can match the empty string (an empty body repeats nothing).
  if (status.ok() && std::ranges::any_of(body, [](const Element& e) { return e.kind == Element::Kind::rule; })) {
    if (!grow(body.size())) return {Element::Kind::rule, id};
    repetitions_.push_back({id, body, max});
  }
  return {Element::Kind::rule, id};
}

void Grammar::define_repeat(std::uint32_t id, const Sequence& body, std::int64_t min, std::int64_t max) {
  // x{min,max} = x x ... (min times) then nested optionals: o_k ::= x o_{k-1} | (empty);
  // unbounded: r ::= x r | (empty).
  const std::string name = rules_[id].name;
  if (body.empty() || max == 0) {  // nothing to repeat: the empty string
    define(id, {Sequence{}});
    return;
  }
  const std::int64_t optional = max < 0 ? 0 : max - min;
  if (min < 0 || min + optional > static_cast<std::int64_t>(kMaxElements)) {
    grow(kMaxElements + 1);
    return;
  }
  if (!grow(body.size() * static_cast<std::size_t>(std::max<std::int64_t>(min, 0) + optional))) return;
  Element tail{Element::Kind::rule, 0};
  bool has_tail = false;
  if (max < 0) {
    const auto star = rule(name + "-star");
    Sequence loop = body;
    loop.push_back({Element::Kind::rule, star});
    define(star, {loop, {}});
    tail = {Element::Kind::rule, star};
    has_tail = true;
  } else {
    for (std::int64_t k = 0; k < optional && status.ok(); ++k) {
      Sequence more = body;
      if (has_tail) more.push_back(tail);
      tail = alternation(name + "-opt", {more, {}});
      has_tail = true;
    }
  }
  Sequence seq;
  for (std::int64_t k = 0; k < min; ++k) seq.insert(seq.end(), body.begin(), body.end());
  if (has_tail) seq.push_back(tail);
  define(id, {seq});
}

namespace {

// A body's non-empty part (x' with L(x') = L(x) minus the empty string), built from the rules'
// nullable flags: a sequence e1..ek is e1' e2..ek | e2' e3..ek | ... as far as its elements
// can be empty, and a rule's is the union of its alternatives', each rule's made once. It
// follows only references that come first after parts that can be empty, which is the graph
// finish() checks for left recursion: a cycle (or a chain deeper than kMaxDepth) abandons the
// rewrite, and the repetition stays as written, under the checks that follow.
class NonEmpty {
 public:
  NonEmpty(Grammar& g, std::vector<char>& nullable, std::vector<Grammar::Rule>& rules)
      : g_(g), nullable_(nullable), rules_(rules), made_(rules.size(), kUnmade) {}

  // false: abandoned (above).
  bool of(const Sequence& seq, std::vector<Sequence>& out) {
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const Element e = seq[i];
      if (e.kind != Element::Kind::rule || !nullable_[e.value]) {
        out.emplace_back(seq.begin() + static_cast<std::ptrdiff_t>(i), seq.end());
        return true;
      }
      std::uint32_t part = 0;
      if (!rule(e.value, part)) return false;
      if (part == kEmpty) continue;  // it only matches the empty string
      Sequence alt{{Element::Kind::rule, part}};
      alt.insert(alt.end(), seq.begin() + static_cast<std::ptrdiff_t>(i) + 1, seq.end());
      out.push_back(std::move(alt));
    }
    return true;
  }

  // Rules made since `mark` are dropped (an abandoned rewrite).
  void forget_from(std::size_t mark) {
    if (made_.size() > mark) made_.resize(mark);
    for (auto& m : made_) {
      if (m >= mark && m < kMaking) m = kUnmade;  // a made part (the markers lie above rule ids)
    }
  }

  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;

 private:
  static constexpr std::uint32_t kUnmade = 0xFFFFFFFEu, kMaking = 0xFFFFFFFDu;
  static constexpr int kMaxDepth = 256;

  bool rule(std::uint32_t r, std::uint32_t& out) {
    if (r >= made_.size()) made_.resize(rules_.size(), kUnmade);  // a rewritten repetition's
    if (made_[r] == kMaking) return false;                          // left recursion
    if (made_[r] != kUnmade) {
      out = made_[r];
      return true;
    }
    if (depth_ >= kMaxDepth) return false;
    made_[r] = kMaking;
    ++depth_;
    std::vector<Sequence> alternatives;
    bool ok = true;
    for (std::size_t a = 0; ok && a < rules_[r].alternatives.size(); ++a) {
      const Sequence alt = rules_[r].alternatives[a];  // rules_ grows below
      ok = of(alt, alternatives);
    }
    --depth_;
    if (!ok || !g_.status.ok()) {
      made_[r] = kUnmade;
      return false;
    }
    if (alternatives.empty()) {
      made_[r] = kEmpty;
    } else {
      made_[r] = g_.alternation(rules_[r].name + "-nonempty", std::move(alternatives)).value;
      if (!g_.status.ok()) return false;
      nullable_.resize(rules_.size(), 0);
    }
    out = made_[r];
    return true;
  }

  Grammar& g_;
  std::vector<char>& nullable_;
  std::vector<Grammar::Rule>& rules_;
  std::vector<std::uint32_t> made_;  // rule -> its non-empty part, kEmpty, kUnmade or kMaking
  int depth_ = 0;
};

}  // namespace

void Grammar::repeat_non_empty_bodies() {
  auto nullable = least_fixpoint(rules_, false);
  NonEmpty non_empty(*this, nullable, rules_);
  for (const auto& rep : repetitions_) {
    if (!std::ranges::all_of(rep.body, [&](const Element& e) {
          return e.kind == Element::Kind::rule && nullable[e.value];
        })) {
      continue;
    }
    const auto rules_mark = rules_.size();
    const auto elements_mark = elements_;
    std::vector<Sequence> parts;
    if (!non_empty.of(rep.body, parts) || !status.ok()) {
      if (!status.ok()) return;
      non_empty.forget_from(rules_mark);
      rules_.resize(rules_mark);
      nullable.resize(rules_mark);
      elements_ = elements_mark;
      continue;
    }
    // The rules of the repetition as written stay: a non-empty part made earlier (of a rule
    // that reaches this repetition) may refer to them. Unreachable, they are never checked.
    Sequence body;
    if (parts.size() == 1) {
      body = std::move(parts.front());
    } else if (!parts.empty()) {
      body = {alternation(rules_[rep.rule].name + "-nonempty", std::move(parts))};
    }
    const auto made = rules_.size();
    define_repeat(rep.rule, body, 0, rep.max);
    if (!status.ok()) return;
    // The new helpers can match the empty string; the body's non-empty parts cannot.
    nullable.resize(rules_.size(), 0);
    for (auto r = made; r < rules_.size(); ++r) nullable[r] = 1;
  }
  repetitions_.clear();
}

Status Grammar::finish(std::uint32_t root) {
  if (!status.ok()) return status;
  root_ = root;
  for (const auto& r : rules_) {
    if (!r.defined) return Status::invalid("rule '" + r.name + "' is referenced but not defined");
  }
  repeat_non_empty_bodies();
  if (!status.ok()) return status;
  const auto n = rules_.size();
  // Productive rules derive some finite string; alternatives through others are dead ends
  // a generation could enter and never leave, so they go.
  const auto productive = least_fixpoint(rules_, true);
  if (!productive[root]) return Status::invalid("the grammar matches nothing");
  for (auto& r : rules_) {
    std::erase_if(r.alternatives, [&](const Sequence& alt) {
      return std::ranges::any_of(
          alt, [&](const Element& e) { return e.kind == Element::Kind::rule && !productive[e.value]; });
    });
  }
  // Left recursion: an edge A -> B where B can come first in A (after nullable elements only);
  // the matcher expands references without consuming input, so a cycle would not end.
  const auto nullable = least_fixpoint(rules_, false);
  std::vector<char> color(n, 0);  // 0 unvisited, 1 on the path, 2 done
  std::vector<std::pair<std::uint32_t, std::size_t>> path;  // rule, next edge
  std::vector<std::vector<std::uint32_t>> firsts(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& alt : rules_[i].alternatives) {
      for (const auto& e : alt) {
        if (e.kind != Element::Kind::rule) break;
        firsts[i].push_back(e.value);
        if (!nullable[e.value]) break;
      }
    }
  }
  // The heads a closure from a rule's start expands (Matcher::closure, each once): an element
  // is one, a reference adds the referenced rule's, and the walk goes on past elements that
  // can match the empty string. Without left recursion the rules that come first form no
  // cycle, so each rule's figure is computed once its firsts' are (when the walk leaves it).
  // A part that can match the empty string repeated n times adds n times its own: a grammar
  // whose figure far exceeds its size would take that many steps for every byte matched.
  const std::size_t max_heads = kMaxClosureBase + kMaxClosurePerElement * elements_;
  std::vector<std::size_t> heads(n, 0);
  const auto closure_heads = [&](std::uint32_t r) {
    std::size_t total = 0;
    for (const auto& alt : rules_[r].alternatives) {
      std::size_t i = 0;
      for (; i < alt.size(); ++i) {
        total += alt[i].kind == Element::Kind::rule ? 1 + heads[alt[i].value] : 1;
        if (alt[i].kind != Element::Kind::rule || !nullable[alt[i].value]) break;
      }
      if (i == alt.size()) ++total;  // the end element
      total = std::min(total, max_heads + 1);
    }
    return total;
  };
  // Only the rules the start rule reaches run (unused GBNF rules, repetitions as written
  // before finish() rewrote them).
  std::vector<char> reachable(n, 0);
  std::vector<std::uint32_t> stack{root};
  reachable[root] = 1;
  while (!stack.empty()) {
    const auto r = stack.back();
    stack.pop_back();
    for (const auto& alt : rules_[r].alternatives) {
      for (const auto& e : alt) {
        if (e.kind == Element::Kind::rule && !reachable[e.value]) {
          reachable[e.value] = 1;
          stack.push_back(e.value);
        }
      }
    }
  }
  for (std::uint32_t start = 0; start < n; ++start) {
    if (color[start] != 0 || !reachable[start]) continue;
    path.push_back({start, 0});
    color[start] = 1;
    while (!path.empty()) {
      auto& [at, next] = path.back();
      if (next == firsts[at].size()) {
        color[at] = 2;
        heads[at] = closure_heads(at);
        if (heads[at] > max_heads) {
          return Status::invalid("the grammar is too ambiguous: rule '" + rules_[at].name + "' alone may hold over " +
                                 std::to_string(max_heads) + " parser states at one step (a part that can match "
                                 "the empty string, repeated many times, does that)");
        }
        path.pop_back();
        continue;
      }
      const auto to = firsts[at][next++];
      if (color[to] == 1) return Status::invalid("rule '" + rules_[to].name + "' is left-recursive");
      if (color[to] == 0) {
        color[to] = 1;
        path.push_back({to, 0});
      }
    }
  }
  return {};
}

}  // namespace coinfer::generation::grammar
