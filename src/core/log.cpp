#include "coinfer/core/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <memory>
#include <span>
#include <string>

#include "coinfer/core/json_writer.hpp"

namespace coinfer::log {
namespace {

std::atomic<bool> access_on{false};

// The fields of the event being logged on this thread: set by event() around a synchronous
// logger call (the default logger is synchronous), read by the formatters.
thread_local std::span<const Field> current_fields;

void append(spdlog::memory_buf_t& dest, std::string_view s) { dest.append(s.data(), s.data() + s.size()); }

// Text: spdlog's usual line, the fields appended as key=value (values with blanks quoted).
class TextFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    pattern_.format(msg, dest);
    if (current_fields.empty()) return;
    // The line ends with the pattern's newline: the fields go before it.
    const bool newline = dest.size() > 0 && dest.data()[dest.size() - 1] == '\n';
    if (newline) dest.resize(dest.size() - 1);
    for (const Field& f : current_fields) {
      append(dest, " ");
      append(dest, f.key);
      append(dest, "=");
      const bool quote =
          f.value.empty() || f.value.find_first_of(" \t\"=") != std::string_view::npos;
      if (quote) {
        std::string quoted;
        json_append_string(quoted, f.value);
        append(dest, quoted);
      } else {
        append(dest, f.value);
      }
    }
    if (newline) append(dest, "\n");
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<TextFormatter>();
  }

 private:
  spdlog::pattern_formatter pattern_;
};

// JSON: one object per line: time (UTC, ms), level, logger, msg, then the fields.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
    const std::time_t t = static_cast<std::time_t>(seconds.count());
    std::tm utc{};
    gmtime_r(&t, &utc);
    char time[40];
    const std::size_t n = std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%S", &utc);
    line_.assign("{\"time\":\"");
    line_.append(time, n);
    char ms[8];
    std::snprintf(ms, sizeof ms, ".%03dZ", static_cast<int>(millis));
    line_ += ms;
    line_ += "\",\"level\":";
    const auto level = spdlog::level::to_string_view(msg.level);
    json_append_string(line_, std::string_view(level.data(), level.size()));
    line_ += ",\"logger\":";
    json_append_string(line_, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    line_ += ",\"msg\":";
    json_append_string(line_, std::string_view(msg.payload.data(), msg.payload.size()));
    for (const Field& f : current_fields) {
      line_ += ',';
      json_append_string(line_, f.key);
      line_ += ':';
      if (f.number && !f.value.empty()) {
        line_ += f.value;
      } else {
        json_append_string(line_, f.value);
      }
    }
    line_ += "}\n";
    append(dest, line_);
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }

 private:
  std::string line_;  // reused: a sink formats under its own lock
};

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::trace:
      return spdlog::level::trace;
    case Level::debug:
      return spdlog::level::debug;
    case Level::info:
      return spdlog::level::info;
    case Level::warn:
      return spdlog::level::warn;
    case Level::error:
      break;
  }
  return spdlog::level::err;
}

}  // namespace

void effective_config(std::string_view path, const Config& config) {
  spdlog::info("effective config ({}):\n{}", path, to_toml(config));
  spdlog::info("compute threads: {}{}", config.compute.threads,
               config.compute.threads_from_cores
                   ? " (every usable core; [compute] threads in the config sets another number)"
                   : " ([compute] threads)");
}

void configure(std::string_view name, const LogConfig& config) {
  const std::string logger_name(name);
  spdlog::drop(logger_name);
  std::shared_ptr<spdlog::logger> logger;
  if (config.format == "json") {
    logger = spdlog::stderr_logger_mt(logger_name);
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger = spdlog::stderr_color_mt(logger_name);
    logger->set_formatter(std::make_unique<TextFormatter>());
  }
  logger->set_level(spdlog::level::from_str(config.level));
  spdlog::set_default_logger(logger);
  access_on.store(config.access, std::memory_order_relaxed);
}

void event(Level level, std::string_view message, std::initializer_list<Field> fields) {
  spdlog::logger* logger = spdlog::default_logger_raw();
  const auto spd_level = to_spdlog(level);
  if (!logger->should_log(spd_level)) return;
  current_fields = std::span<const Field>(fields.begin(), fields.size());
  logger->log(spd_level, spdlog::string_view_t(message.data(), message.size()));
  current_fields = {};
}

bool access_enabled() noexcept { return access_on.load(std::memory_order_relaxed); }

}  // namespace coinfer::log
