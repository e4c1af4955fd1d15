#include "coinfer/serving/model_repository.hpp"

#include <charconv>

namespace coinfer {
namespace {

// Versions compare numerically when both are numbers ("10" > "9"), else as text.
bool version_less(std::string_view a, std::string_view b) {
  long long x = 0, y = 0;
  const bool a_num = std::from_chars(a.data(), a.data() + a.size(), x).ec == std::errc{};
  const bool b_num = std::from_chars(b.data(), b.data() + b.size(), y).ec == std::errc{};
  return a_num && b_num ? x < y : a < b;
}

}  // namespace

std::string_view to_string(ModelState state) noexcept {
  switch (state) {
    case ModelState::loading:
      return "LOADING";
    case ModelState::ready:
      return "READY";
    case ModelState::unavailable:
      return "UNAVAILABLE";
  }
  return "UNAVAILABLE";
}

Status ModelRepository::add(std::shared_ptr<Model> model) {
  const auto& meta = model->metadata();
  for (const auto& e : entries_) {
    if (e->metadata().name == meta.name && e->metadata().version == meta.version) {
      return Status::invalid("model '" + meta.name + "' version '" + meta.version +
                             "' is already in the repository");
    }
  }
  auto entry = std::make_unique<Entry>();
  entry->model = std::move(model);
  entry->state = ModelState::ready;
  entries_.push_back(std::move(entry));
  return {};
}

Status ModelRepository::find(std::string_view name, std::string_view version,
                             Entry*& out) const {
  out = nullptr;
  bool known = false;
  for (const auto& e : entries_) {
    if (e->metadata().name != name) continue;
    known = true;
    if (!version.empty()) {
      if (e->metadata().version == version) {
        out = e.get();
        return {};
      }
    } else if (!out || version_less(out->metadata().version, e->metadata().version)) {
      out = e.get();
    }
  }
  if (out) return {};
  if (!known) return Status::not_found("unknown model '" + std::string(name) + "'");
  return Status::not_found("model '" + std::string(name) + "' has no version '" +
                           std::string(version) + "'");
}

bool ModelRepository::all_ready() const noexcept {
  for (const auto& e : entries_) {
    if (e->state != ModelState::ready) return false;
  }
  return true;
}

}  // namespace coinfer
