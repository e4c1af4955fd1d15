// The response cache's text inputs: the agreement checks on two request texts (a lookup
// compares a client's text with a stored one), and the bodies of POST /v2/cache/feedback and
// PUT /v2/cache/namespaces/{name}.
//
// Input: a first byte choosing the parser, then its bytes: 0 the agreement checks on two texts
// split at the first NUL (or the whole input against itself with its first half); 1 a feedback
// body; 2 a namespace-settings body. Checks: a text always agrees with itself, and leaving
// every check out always agrees; a body either parses into values in range or is refused with
// a message.
#include <cmath>
#include <string>
#include <string_view>

#include "../src/protocol/cache_fields.hpp"
#include "coinfer/cache/agreement.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const std::size_t nul = input.find('\0');
      const std::string_view a = nul == std::string_view::npos ? input : input.substr(0, nul);
      const std::string_view b =
          nul == std::string_view::npos ? input.substr(0, input.size() / 2) : input.substr(nul + 1);
      (void)cache::disagreement(a, b);
      (void)cache::disagreement(b, a);
      check(cache::disagreement(a, a) == cache::Disagreement::none, "a text agrees with itself");
      check(cache::disagreement(a, b, 0) == cache::Disagreement::none,
            "with no check on, any two texts agree");
      break;
    }
    case 1: {
      cache_fields::Feedback feedback;
      const Status status = cache_fields::parse_feedback(input, feedback);
      if (status.ok()) {
        check(feedback.entry > 0, "a parsed feedback names an entry");
        check(feedback.similarity == -1.0f ||
                  (feedback.similarity >= 0.0f && feedback.similarity <= 1.0f),
              "a parsed similarity is in [0, 1]");
      } else {
        check(!status.message().empty(), "a refused feedback body says why");
      }
      break;
    }
    default: {
      cache::NamespaceSettings settings;
      const Status status = cache_fields::parse_namespace_settings(input, settings);
      if (status.ok()) {
        check(settings.threshold >= 0.0f && settings.threshold <= 1.0f,
              "a parsed threshold is in [0, 1]");
        check(settings.target_error_rate == -1.0f ||
                  (settings.target_error_rate >= 0.0f && settings.target_error_rate <= 1.0f),
              "a parsed target error rate is in [0, 1]");
      } else {
        check(!status.message().empty(), "a refused settings body says why");
      }
      break;
    }
  }
  return 0;
}
