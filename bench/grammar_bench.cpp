// Structured outputs' cost on SmolLM2's vocabulary (49,152 tokens): the vocabulary trie, a
// 30-property schema's compile time (cold, and a GrammarCache hit), and the work the grammar
// adds to every generated token (the matcher's step, the mask, the logits masked), walked over
// a valid answer's real tokens: on the first answer (each position's token sets computed as
// they are reached) and on a second (all found computed). Two grammars that make many parser
// states per step: a group of empty alternatives repeated (the grammar fuzzer's find; its
// non-empty part is what repeats), and a loop over a 676-way alternation.
//
//   coinfer-grammar-bench [PATH/TO/SmolLM2.gguf]   (default: assets/SmolLM2-135M-Instruct.Q4_1.gguf)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "coinfer/generation/grammar/grammar_cache.hpp"
#include "coinfer/generation/grammar/matcher.hpp"
#include "coinfer/generation/grammar/sources.hpp"
#include "coinfer/models/gguf.hpp"
#include "coinfer/tokenizers/bpe.hpp"

using namespace coinfer;
using namespace coinfer::generation::grammar;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Case {
  const char* name;
  OutputConstraint constraint;
  std::string answer;  // a valid output
};

OutputConstraint constraint(OutputConstraint::Kind kind, std::string source) {
  OutputConstraint c;
  c.kind = kind;
  c.source = std::move(source);
  c.field = "bench";
  return c;
}

std::string thirty_properties(std::string& answer) {
  std::string schema = R"({"type":"object","properties":{)";
  answer = "{";
  const char* types[] = {R"({"type":"string","maxLength":24})", R"({"type":"integer","minimum":0,"maximum":1000})",
                         R"({"type":"boolean"})", R"({"enum":["low","medium","high"]})",
                         R"({"type":"number"})", R"({"type":"array","items":{"type":"string"},"maxItems":4})"};
  const char* values[] = {R"("a short text")", "417", "true", R"("medium")", "3.25", R"(["x","yz"])"};
  for (int i = 0; i < 30; ++i) {
    const auto name = "field_" + std::to_string(i);
    if (i > 0) {
      schema += ',';
      answer += ',';
    }
    schema += '"' + name + "\":" + types[i % 6];
    answer += '"' + name + "\":" + values[i % 6];
  }
  schema += R"(},"required":["field_0","field_1","field_2"],"additionalProperties":false})";
  answer += '}';
  return schema;
}

// Per-token cost of the processor over the answer's tokens: mean, p50, max (microseconds).
void walk(const std::shared_ptr<const CompiledGrammar>& g, const std::vector<std::int32_t>& ids,
          std::int32_t vocab, const char* label) {
  GrammarProcessor processor(g);
  std::vector<float> logits(static_cast<std::size_t>(vocab));
  std::vector<double> us;
  std::vector<std::int32_t> generated;
  for (std::size_t i = 0; i <= ids.size(); ++i) {
    std::fill(logits.begin(), logits.end(), 0.5f);
    const auto t = Clock::now();
    processor.apply(logits, generated);
    us.push_back(ms_since(t) * 1000.0);
    if (i < ids.size()) {
      if (!std::isfinite(logits[static_cast<std::size_t>(ids[i])])) {
        std::printf("  %s: token %zu of the answer was masked\n", label, i);
        return;
      }
      generated.push_back(ids[i]);
    }
  }
  double sum = 0;
  for (const auto u : us) sum += u;
  auto sorted = us;
  std::sort(sorted.begin(), sorted.end());
  std::printf("  %-7s %4zu tokens: mean %8.1f us, p50 %7.1f us, max %9.1f us per token\n", label,
              us.size(), sum / static_cast<double>(us.size()), sorted[sorted.size() / 2], sorted.back());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "assets/SmolLM2-135M-Instruct.Q4_1.gguf";
  GgufFile file;
  BpeVocabulary vocabulary;
  std::unique_ptr<ByteLevelBpeTokenizer> tokenizer;
  Status status = GgufFile::open(path, file);
  if (status.ok()) status = load_bpe_vocabulary(file, vocabulary);
  if (status.ok()) status = ByteLevelBpeTokenizer::create(std::move(vocabulary), tokenizer);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(status.message()).c_str());
    return 1;
  }
  auto t = Clock::now();
  auto vocab = std::make_shared<const TokenVocabulary>(*tokenizer);
  std::printf("vocabulary trie: %d tokens, %zu nodes, built in %.1f ms\n", vocab->size(),
              vocab->byte.size(), ms_since(t));

  std::string answer30;
  const std::string schema30 = thirty_properties(answer30);
  std::vector<double> compile_ms;
  for (int i = 0; i < 20; ++i) {
    t = Clock::now();
    Grammar g;
    std::shared_ptr<const CompiledGrammar> compiled;
    if (!json_schema_grammar(schema30, g).ok() || !CompiledGrammar::compile(std::move(g), vocab, compiled).ok()) {
      std::fprintf(stderr, "the 30-property schema did not compile\n");
      return 1;
    }
    compile_ms.push_back(ms_since(t));
  }
  std::sort(compile_ms.begin(), compile_ms.end());
  GrammarCache cache(*tokenizer);
  const OutputConstraint c30 = constraint(OutputConstraint::Kind::json_schema, schema30);
  std::shared_ptr<const CompiledGrammar> cached;
  (void)cache.get(c30, cached);
  t = Clock::now();
  for (int i = 0; i < 1000; ++i) (void)cache.get(c30, cached);
  std::printf("30-property schema (%zu bytes): compile p50 %.2f ms, max %.2f ms; cache hit %.1f us\n",
              schema30.size(), compile_ms[compile_ms.size() / 2], compile_ms.back(), ms_since(t));

  std::vector<Case> cases = {
      {"30-property schema", c30, answer30},
      {"8 records (bench/structured_bench.py)",
       constraint(OutputConstraint::Kind::json_schema, R"({"type":"array","minItems":8,"maxItems":8,"items":{"type":"object","additionalProperties":false,"required":["name","age","city"],"properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":99},"city":{"type":"string","maxLength":12}}}})"),
       R"([{"name":"John","age":25,"city":"New York"},{"name":"Jane","age":25,"city":"Los Angeles"},{"name":"John","age":25,"city":"New York"},{"name":"Jane","age":25,"city":"Los Angeles"},{"name":"John","age":25,"city":"New York"},{"name":"Jane","age":25,"city":"Los Angeles"},{"name":"John","age":25,"city":"New York"},{"name":"Jane","age":25,"city":"Los Angeles"}])"},
      {"json_object", constraint(OutputConstraint::Kind::json_object, ""),
       R"({"name":"Tom","age":3,"tags":["a","b"],"nested":{"x":[1,2.5,null,true]},"note":"déjà vu"})"},
      {"regex (phone)", constraint(OutputConstraint::Kind::regex, R"(\(\d{3}\) \d{3}-\d{4})"), "(201) 351-5591"},
      {"regex (45 empty alternatives){1,41}", constraint(OutputConstraint::Kind::regex, "(ct|d-,|x" + std::string(45, '|') + "|." + std::string(45, '|') + " y){1,41} .\ny ::"), "xxxxxxxxxxxxxxxxxx a\ny ::"},
      {"regex (676 two-letter words)*", constraint(OutputConstraint::Kind::regex, "(aa|ab|ac|ad|ae|af|ag|ah|ai|aj|ak|al|am|an|ao|ap|aq|ar|as|at|au|av|aw|ax|ay|az|ba|bb|bc|bd|be|bf|bg|bh|bi|bj|bk|bl|bm|bn|bo|bp|bq|br|bs|bt|bu|bv|bw|bx|by|bz|ca|cb|cc|cd|ce|cf|cg|ch|ci|cj|ck|cl|cm|cn|co|cp|cq|cr|cs|ct|cu|cv|cw|cx|cy|cz|da|db|dc|dd|de|df|dg|dh|di|dj|dk|dl|dm|dn|do|dp|dq|dr|ds|dt|du|dv|dw|dx|dy|dz|ea|eb|ec|ed|ee|ef|eg|eh|ei|ej|ek|el|em|en|eo|ep|eq|er|es|et|eu|ev|ew|ex|ey|ez|fa|fb|fc|fd|fe|ff|fg|fh|fi|fj|fk|fl|fm|fn|fo|fp|fq|fr|fs|ft|fu|fv|fw|fx|fy|fz|ga|gb|gc|gd|ge|gf|gg|gh|gi|gj|gk|gl|gm|gn|go|gp|gq|gr|gs|gt|gu|gv|gw|gx|gy|gz|ha|hb|hc|hd|he|hf|hg|hh|hi|hj|hk|hl|hm|hn|ho|hp|hq|hr|hs|ht|hu|hv|hw|hx|hy|hz|ia|ib|ic|id|ie|if|ig|ih|ii|ij|ik|il|im|in|io|ip|iq|ir|is|it|iu|iv|iw|ix|iy|iz|ja|jb|jc|jd|je|jf|jg|jh|ji|jj|jk|jl|jm|jn|jo|jp|jq|jr|js|jt|ju|jv|jw|jx|jy|jz|ka|kb|kc|kd|ke|kf|kg|kh|ki|kj|kk|kl|km|kn|ko|kp|kq|kr|ks|kt|ku|kv|kw|kx|ky|kz|la|lb|lc|ld|le|lf|lg|lh|li|lj|lk|ll|lm|ln|lo|lp|lq|lr|ls|lt|lu|lv|lw|lx|ly|lz|ma|mb|mc|md|me|mf|mg|mh|mi|mj|mk|ml|mm|mn|mo|mp|mq|mr|ms|mt|mu|mv|mw|mx|my|mz|na|nb|nc|nd|ne|nf|ng|nh|ni|nj|nk|nl|nm|nn|no|np|nq|nr|ns|nt|nu|nv|nw|nx|ny|nz|oa|ob|oc|od|oe|of|og|oh|oi|oj|ok|ol|om|on|oo|op|oq|or|os|ot|ou|ov|ow|ox|oy|oz|pa|pb|pc|pd|pe|pf|pg|ph|pi|pj|pk|pl|pm|pn|po|pp|pq|pr|ps|pt|pu|pv|pw|px|py|pz|qa|qb|qc|qd|qe|qf|qg|qh|qi|qj|qk|ql|qm|qn|qo|qp|qq|qr|qs|qt|qu|qv|qw|qx|qy|qz|ra|rb|rc|rd|re|rf|rg|rh|ri|rj|rk|rl|rm|rn|ro|rp|rq|rr|rs|rt|ru|rv|rw|rx|ry|rz|sa|sb|sc|sd|se|sf|sg|sh|si|sj|sk|sl|sm|sn|so|sp|sq|sr|ss|st|su|sv|sw|sx|sy|sz|ta|tb|tc|td|te|tf|tg|th|ti|tj|tk|tl|tm|tn|to|tp|tq|tr|ts|tt|tu|tv|tw|tx|ty|tz|ua|ub|uc|ud|ue|uf|ug|uh|ui|uj|uk|ul|um|un|uo|up|uq|ur|us|ut|uu|uv|uw|ux|uy|uz|va|vb|vc|vd|ve|vf|vg|vh|vi|vj|vk|vl|vm|vn|vo|vp|vq|vr|vs|vt|vu|vv|vw|vx|vy|vz|wa|wb|wc|wd|we|wf|wg|wh|wi|wj|wk|wl|wm|wn|wo|wp|wq|wr|ws|wt|wu|wv|ww|wx|wy|wz|xa|xb|xc|xd|xe|xf|xg|xh|xi|xj|xk|xl|xm|xn|xo|xp|xq|xr|xs|xt|xu|xv|xw|xx|xy|xz|ya|yb|yc|yd|ye|yf|yg|yh|yi|yj|yk|yl|ym|yn|yo|yp|yq|yr|ys|yt|yu|yv|yw|yx|yy|yz|za|zb|zc|zd|ze|zf|zg|zh|zi|zj|zk|zl|zm|zn|zo|zp|zq|zr|zs|zt|zu|zv|zw|zx|zy|zz)*"), "thequickbrownfoxjumpsoverthelazydogs"},
      {"GBNF (list)", constraint(OutputConstraint::Kind::grammar, "root ::= item (\", \" item)*\nitem ::= [a-z ]+"),
       "apples, bread and butter, milk, cheese"},
  };
  for (const auto& c : cases) {
    std::shared_ptr<const CompiledGrammar> g;
    t = Clock::now();
    GrammarCache one(*tokenizer);
    if (auto s = one.get(c.constraint, g); !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name, std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s (compiled with its trie in %.1f ms):\n", c.name, ms_since(t));
    std::vector<std::int32_t> ids;
    (void)tokenizer->encode(c.answer, ids);
    walk(g, ids, vocab->size(), "first");
    walk(g, ids, vocab->size(), "warm");
    std::printf("  positions computed: %zu\n", g->positions_computed());
  }
  return 0;
}
