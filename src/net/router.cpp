#include "coinfer/net/router.hpp"

namespace coinfer::net {
namespace {

// Splits "/a/b/c" into views {"a", "b", "c"}; a trailing '/' yields an empty last segment,
// so "/v2/" does not match "/v2".
template <class Out>
void split_path(std::string_view path, Out& out) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    out.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
}

bool is_param(std::string_view segment) noexcept {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::add(Method method, std::string_view pattern, Handler handler) {
  Route route{method, {}, std::move(handler)};
  split_path(pattern, route.segments);
  routes_.push_back(std::move(route));
}

Router::Outcome Router::match(HttpRequest& request, const Handler*& handler,
                              std::string& allowed) const {
  // Paths have a handful of segments; a small inline-capacity vector is not worth it here.
  std::vector<std::string_view> segments;
  segments.reserve(8);
  split_path(request.path, segments);

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

}  // namespace coinfer::net
