#pragma once

#include <initializer_list>
#include <string_view>

#include "coinfer/core/config.hpp"

// Logging: spdlog's default logger on stderr, as plain text or one JSON object per line
// ([log] format), and events with fields (request_id=..., status=...) that both formats
// carry: text appends them as key=value, JSON as keys of the line's object. Lines logged with
// spdlog directly carry no fields and go through the same format.
namespace coinfer::log {

enum class Level { trace, debug, info, warn, error };

// A field of an event. A number is written bare in JSON; anything else as a string.
struct Field {
  std::string_view key;
  std::string_view value;
  bool number = false;
};

// Installs the default logger `name` on stderr with [log]'s level, format and access log.
// Call once at start, before any thread logs.
void configure(std::string_view name, const LogConfig& config);

// Logs `message` with `fields` at `level` (dropped below the configured level).
void event(Level level, std::string_view message, std::initializer_list<Field> fields);

// Logs the config a service runs with (to_toml) and its compute team: the number of threads
// and whether [compute] threads set it or every usable core did.
void effective_config(std::string_view path, const Config& config);

// Whether [log] access is on: the HTTP server writes an access line per request.
bool access_enabled() noexcept;

}  // namespace coinfer::log
