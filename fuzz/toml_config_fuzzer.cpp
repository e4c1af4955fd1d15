// The TOML config reader (parse_config) and the effective-config printer (to_toml).
//
// Input: a config file's text. Whatever it holds, parse_config answers with a Status (no
// exception escapes). A config that parses prints as TOML that parses back to the same
// config: to_toml is what the start-up log shows, and must say what runs. toml++ is linked as
// the main build links it (Debian's library, not instrumented: see CMakeLists.txt), so
// coverage guides the fuzzer through coinfer's reader, not through the TOML grammar.
#include "coinfer/core/config.hpp"
#include "fuzz_support.hpp"

using namespace coinfer;
using coinfer::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Config config;
  if (!parse_config({reinterpret_cast<const char*>(data), size}, config)) return 0;
  const std::string printed = to_toml(config);
  Config again;
  const Status status = parse_config(printed, again);
  if (!status) fuzz::fail("to_toml's output does not parse: " + status.message() + "\n" + printed);
  check(to_toml(again) == printed, "to_toml's output parses back to the same config");
  return 0;
}
