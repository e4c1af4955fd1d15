#include "coinfer/protocol/openai_tools.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace coinfer::openai_tools {
namespace {

const std::string kText =
    "Let me check.\n<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call>\n"
    "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";

TEST_CASE("tool calls are read out of the text, the rest is content") {
  std::string content;
  std::vector<ToolCall> calls;
  parse(kText, true, content, calls);
  CHECK(content == "Let me check.");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].name == "get_weather");
  CHECK(calls[0].arguments == R"({"city":"Paris"})");
  CHECK(calls[1].name == "get_time");
  CHECK(calls[1].arguments == "{}");
  calls.clear();
  parse(kText, false, content, calls);
  CHECK(calls.size() == 1);  // without parallel_tool_calls only the first counts
}

TEST_CASE("a tool_call block that is not a call stays text") {
  for (const std::string text :
       {"<tool_call>\n{\"name\":1,\"arguments\":{}}\n</tool_call>", "<tool_call>not json</tool_call>",
        "<tool_call>\n{\"name\":\"f\",\"arguments\":\"x\"}\n</tool_call>", "<tool_call>{\"name\":\"f\",\"arguments\":{}}"}) {
    std::string content;
    std::vector<ToolCall> calls;
    parse(text, true, content, calls);
    CHECK_MESSAGE(calls.empty(), text);
    CHECK(content == text);
  }
}

TEST_CASE("streamed, the text splits into the same content and calls wherever the pieces break") {
  for (std::size_t cut = 0; cut <= kText.size(); ++cut) {
    for (std::size_t step : {std::size_t{1}, std::size_t{3}, std::size_t{7}}) {
      StreamSplitter splitter(true);
      std::string content;
      std::vector<ToolCall> calls;
      splitter.feed(std::string_view(kText).substr(0, cut), content, calls);
      for (std::size_t at = cut; at < kText.size(); at += step) {
        splitter.feed(std::string_view(kText).substr(at, step), content, calls);
      }
      splitter.finish(content);
      REQUIRE(calls.size() == 2);
      CHECK(calls[0].arguments == R"({"city":"Paris"})");
      CHECK(calls[1].name == "get_time");
      // What is said goes out as it comes; the separators between calls stay text.
      CHECK(content == "Let me check.\n\n");
      CHECK(splitter.calls_made() == 2);
    }
  }
  StreamSplitter open(true);  // a block that never closes is text after all
  std::string content;
  std::vector<ToolCall> calls;
  open.feed("Hi <tool_call>{\"name\":", content, calls);
  CHECK(content == "Hi ");
  open.finish(content);
  CHECK(content == "Hi <tool_call>{\"name\":");
  CHECK(calls.empty());
}

TEST_CASE("the history renders calls and tool results as the model writes and reads them") {
  const std::vector<std::pair<std::string, std::string>> calls{{"f", R"({"a":1})"}, {"g", ""}};
  CHECK(render_calls(calls) ==
        "<tool_call>\n{\"name\":\"f\",\"arguments\":{\"a\":1}}\n</tool_call>\n"
        "<tool_call>\n{\"name\":\"g\",\"arguments\":{}}\n</tool_call>");
  CHECK(render_response("18C") == "<tool_response>\n18C\n</tool_response>");
}

}  // namespace
}  // namespace coinfer::openai_tools
