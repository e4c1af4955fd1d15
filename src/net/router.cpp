#include "coinfer/net/router.hpp"

#include <cassert>
#include <span>

namespace coinfer::net {
namespace {

// Splits "/a/b/c" into views {"a", "b", "c"}; a trailing '/' yields an empty last segment,
// so "/v2/" does not match "/v2". Returns the segment count, or max + 1 when there are more
// than `max` (such a path matches no route).
std::size_t split_path(std::string_view path, std::string_view* out, std::size_t max) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  std::size_t count = 0;
  while (true) {
    const auto slash = path.find('/');
    if (count == max) return max + 1;
    out[count++] = path.substr(0, slash);
    if (slash == std::string_view::npos) return count;
    path.remove_prefix(slash + 1);
  }
}

constexpr std::size_t kMaxSegments = 16;

bool is_param(std::string_view segment) noexcept {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::add(Method method, std::string_view pattern, Handler handler) {
  Route route{method, {}, std::move(handler)};
  std::string_view segments[kMaxSegments];
  const auto count = split_path(pattern, segments, kMaxSegments);
  assert(count <= kMaxSegments && "route pattern with too many segments");
  route.segments.assign(segments, segments + count);
  routes_.push_back(std::move(route));
}

Router::Outcome Router::match(HttpRequest& request, const Handler*& handler,
                              std::string& allowed) const {
  std::string_view segment_storage[kMaxSegments];
  const auto count = split_path(request.path, segment_storage, kMaxSegments);
  if (count > kMaxSegments) return Outcome::not_found;
  const std::span<const std::string_view> segments(segment_storage, count);

  bool path_known = false;
  allowed.clear();
  for (const auto& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    bool same_path = true;
    for (std::size_t i = 0; i < segments.size() && same_path; ++i) {
      same_path = is_param(route.segments[i]) ? !segments[i].empty()
                                              : route.segments[i] == segments[i];
    }
    if (!same_path) continue;
    const bool head_as_get = request.method == Method::head && route.method == Method::get;
    if (route.method == request.method || head_as_get) {
      request.path_params.clear();
      for (std::size_t i = 0; i < segments.size(); ++i) {
        if (!is_param(route.segments[i])) continue;
        std::string_view name = route.segments[i];
        request.path_params.emplace_back(name.substr(1, name.size() - 2), segments[i]);
      }
      handler = &route.handler;
      return Outcome::found;
    }
    path_known = true;
    if (!allowed.empty()) allowed += ", ";
    allowed += to_string(route.method);
  }
  return path_known ? Outcome::method_not_allowed : Outcome::not_found;
}

void Router::add_websocket(std::string_view path, WebSocketHandler handler) {
  websockets_.emplace_back(std::string(path), std::move(handler));
}

const WebSocketHandler* Router::websocket(std::string_view path) const noexcept {
  for (const auto& [route, handler] : websockets_) {
    if (route == path) return &handler;
  }
  return nullptr;
}

}  // namespace coinfer::net
