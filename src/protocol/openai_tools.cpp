#include "coinfer/protocol/openai_tools.hpp"

#include <span>

#include "coinfer/core/json_writer.hpp"
#include "generation_fields.hpp"

namespace coinfer::openai_tools {

namespace ondemand = simdjson::ondemand;
using generation_fields::read_bool;
using generation_fields::read_string;

namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::size_t kMaxTools = 128;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  }
  return true;
}

// One block's JSON: {"name": string, "arguments": object}; false if it is not a call.
bool read_call(std::string_view json, ToolCall& out) {
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc)) return false;
  std::string_view name;
  simdjson::dom::element arguments;
  if (doc["name"].get_string().get(name) || doc["arguments"].get(arguments) || !arguments.is_object()) {
    return false;
  }
  out.name = std::string(name);
  out.arguments = simdjson::minify(arguments);
  return true;
}

}  // namespace

Status read_tools(ondemand::value& value, Tools& out) {
  ondemand::array array;
  if (value.get_array().get(array)) return Status::invalid("tools: expected an array");
  std::size_t index = 0;
  for (auto element : array) {
    const std::string where = "tools[" + std::to_string(index++) + "]";
    if (index > kMaxTools) return Status::invalid("tools: at most " + std::to_string(kMaxTools));
    ondemand::object tool;
    if (element.get_object().get(tool)) return Status::invalid(where + ": expected an object");
    std::string type;
    bool has_function = false;
    generation::grammar::ToolFunction f;
    std::string listing;
    for (auto field : tool) {
      std::string_view key;
      ondemand::value v;
      if (field.unescaped_key().get(key) || field.value().get(v)) return Status::invalid(where + ": invalid JSON");
      if (key == "type") {
        if (auto s = read_string(v, where + ".type", type); !s.ok()) return s;
      } else if (key == "function") {
        has_function = true;
        ondemand::object function;
        std::string_view raw;
        if (v.get_object().get(function) || function.raw_json().get(raw)) {
          return Status::invalid(where + ".function: expected an object");
        }
        // Read again as a document: the listing keeps the object whole.
        thread_local simdjson::dom::parser parser;
        simdjson::dom::object fields;
        if (parser.parse(raw.data(), raw.size()).get(fields)) return Status::invalid(where + ".function: invalid JSON");
        for (auto [k, fv] : fields) {
          const std::string at = where + ".function." + std::string(k);
          if (k == "name") {
            std::string_view name;
            if (fv.get_string().get(name)) return Status::invalid(at + ": expected a string");
            f.name = std::string(name);
          } else if (k == "description") {
            if (!fv.is_string()) return Status::invalid(at + ": expected a string");
          } else if (k == "parameters") {
            if (!fv.is_object()) return Status::invalid(at + ": expected a JSON schema (an object)");
            f.parameters = simdjson::minify(fv);
          } else if (k == "strict") {
            if (!fv.is_bool()) return Status::invalid(at + ": expected a boolean");  // calls follow the schema either way
          } else {
            return Status::invalid(at + ": not supported");
          }
        }
        listing = R"({"type":"function","function":)" + simdjson::minify(fields) + "}";
      } else {
        return Status::invalid(where + "." + std::string(key) + ": not supported");
      }
    }
    if (type != "function") return Status::invalid(where + ".type: only \"function\" is supported");
    if (!has_function) return Status::invalid(where + ".function: missing");
    if (!valid_name(f.name)) {
      return Status::invalid(where + ".function.name: 1-64 letters, digits, underscores or dashes, got '" + f.name + "'");
    }
    for (const auto& other : out.functions) {
      if (other.name == f.name) return Status::invalid(where + ".function.name: '" + f.name + "' is listed twice");
    }
    out.functions.push_back(std::move(f));
    out.listings.push_back(std::move(listing));
  }
  return {};
}

Status read_tool_choice(ondemand::value& value, Tools& out) {
  out.choice_given = true;
  ondemand::json_type type;
  if (value.type().get(type)) return Status::invalid("tool_choice: invalid JSON");
  if (type == ondemand::json_type::string) {
    std::string choice;
    if (auto s = read_string(value, "tool_choice", choice); !s.ok()) return s;
    if (choice == "none") out.choice = Tools::Choice::none;
    else if (choice == "auto") out.choice = Tools::Choice::automatic;
    else if (choice == "required") out.choice = Tools::Choice::required;
    else return Status::invalid("tool_choice: expected none, auto, required or a function, got '" + choice + "'");
    return {};
  }
  ondemand::object object;
  if (value.get_object().get(object)) return Status::invalid("tool_choice: expected a string or an object");
  std::string kind;
  for (auto field : object) {
    std::string_view key;
    ondemand::value v;
    if (field.unescaped_key().get(key) || field.value().get(v)) return Status::invalid("tool_choice: invalid JSON");
    if (key == "type") {
      if (auto s = read_string(v, "tool_choice.type", kind); !s.ok()) return s;
    } else if (key == "function") {
      ondemand::object function;
      if (v.get_object().get(function)) return Status::invalid("tool_choice.function: expected an object");
      for (auto ff : function) {
        std::string_view k;
        ondemand::value fv;
        if (ff.unescaped_key().get(k) || ff.value().get(fv)) return Status::invalid("tool_choice.function: invalid JSON");
        if (k != "name") return Status::invalid("tool_choice.function." + std::string(k) + ": not supported");
        if (auto s = read_string(fv, "tool_choice.function.name", out.named); !s.ok()) return s;
      }
    } else {
      return Status::invalid("tool_choice." + std::string(key) + ": not supported");
    }
  }
  if (kind != "function") return Status::invalid("tool_choice.type: only \"function\" is supported");
  if (out.named.empty()) return Status::invalid("tool_choice.function.name: missing");
  out.choice = Tools::Choice::named;
  return {};
}

Status read_parallel_tool_calls(ondemand::value& value, Tools& out) {
  return read_bool(value, "parallel_tool_calls", out.parallel);
}

Status apply(const Tools& tools, GenerationCall& call) {
  if (tools.functions.empty()) {
    if (tools.choice_given && tools.choice != Tools::Choice::none && tools.choice != Tools::Choice::automatic) {
      return Status::invalid("tool_choice: needs tools");
    }
    return {};
  }
  if (!tools.active()) return {};
  std::vector<generation::grammar::ToolFunction> callable;
  if (tools.choice == Tools::Choice::named) {
    for (const auto& f : tools.functions) {
      if (f.name == tools.named) callable.push_back(f);
    }
    if (callable.empty()) return Status::invalid("tool_choice.function.name: '" + tools.named + "' is not in tools");
  }
  if (tools.choice == Tools::Choice::required || tools.choice == Tools::Choice::named) {
    if (!call.constraint.empty()) {
      return Status::invalid("tool_choice: a required tool call cannot be combined with " + call.constraint.field);
    }
    call.constraint.kind = generation::grammar::OutputConstraint::Kind::tool_calls;
    call.constraint.field = "tools";
    call.constraint.functions = callable.empty() ? tools.functions : std::move(callable);
    call.constraint.parallel = tools.parallel && tools.choice == Tools::Choice::required;
  }
  std::string& p = call.system_suffix;
  p = "# Tools\n\nYou may call functions to answer. They are listed within <tools></tools>, one JSON "
      "object per line:\n<tools>\n";
  for (const auto& listing : tools.listings) {
    p += listing;
    p += '\n';
  }
  p += "</tools>\n\nTo call a function, reply with its name and arguments as a JSON object within "
       "<tool_call></tool_call> tags:\n<tool_call>\n{\"name\":\"<function name>\",\"arguments\":"
       "{<arguments as JSON>}}\n</tool_call>";
  return {};
}

std::string render_calls(std::span<const std::pair<std::string, std::string>> calls) {
  std::string out;
  for (const auto& [name, arguments] : calls) {
    if (!out.empty()) out += '\n';
    out += kOpen;
    out += "\n{\"name\":";
    json_append_string(out, name);
    out += ",\"arguments\":";
    out += trim(arguments).empty() ? std::string_view("{}") : trim(arguments);
    out += "}\n";
    out += kClose;
  }
  return out;
}

std::string render_response(std::string_view content) {
  std::string out = "<tool_response>\n";
  out += content;
  out += "\n</tool_response>";
  return out;
}

void parse(std::string_view text, bool parallel, std::string& content, std::vector<ToolCall>& calls) {
  std::string said;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto open = text.find(kOpen, at);
    if (open == std::string_view::npos) break;
    const auto close = text.find(kClose, open + kOpen.size());
    if (close == std::string_view::npos) break;
    ToolCall call;
    const auto body = text.substr(open + kOpen.size(), close - open - kOpen.size());
    if (read_call(trim(body), call) && (parallel || calls.empty())) {
      said += text.substr(at, open - at);
      calls.push_back(std::move(call));
    } else {
      said += text.substr(at, close + kClose.size() - at);
    }
    at = close + kClose.size();
  }
  said += text.substr(std::min(at, text.size()));
  content = std::string(trim(said));
}

void StreamSplitter::feed(std::string_view piece, std::string& content, std::vector<ToolCall>& calls) {
  pending_ += piece;
  for (;;) {
    const auto open = pending_.find(kOpen);
    if (open == std::string::npos) {
      // Keep back what could be the start of "<tool_call>".
      std::size_t keep = 0;
      for (std::size_t n = std::min(pending_.size(), kOpen.size() - 1); n > 0; --n) {
        if (std::string_view(pending_).substr(pending_.size() - n) == kOpen.substr(0, n)) {
          keep = n;
          break;
        }
      }
      content += pending_.substr(0, pending_.size() - keep);
      pending_.erase(0, pending_.size() - keep);
      return;
    }
    content += pending_.substr(0, open);
    pending_.erase(0, open);
    const auto close = pending_.find(kClose);
    if (close == std::string::npos) return;  // held until the block closes
    ToolCall call;
    const auto body = std::string_view(pending_).substr(kOpen.size(), close - kOpen.size());
    if (read_call(trim(body), call) && (parallel_ || made_ == 0)) {
      calls.push_back(std::move(call));
      ++made_;
    } else {
      content += pending_.substr(0, close + kClose.size());
    }
    pending_.erase(0, close + kClose.size());
  }
}

void StreamSplitter::finish(std::string& content) {
  content += pending_;
  pending_.clear();
}

}  // namespace coinfer::openai_tools
