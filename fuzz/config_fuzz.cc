// libFuzzer target for the config loader: arbitrary bytes through the whole parse + validate
// pipeline (ParseConfigText). Nothing is written to the filesystem; writable roots are only
// resolved with realpath. Checks two properties beyond "no crash, no sanitizer report":
// errors are kConfig with a message, and an accepted config round-trips through ToJson.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "config/load.h"
#include "config/to_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const cordon::config::Env env{.home = "/nonexistent-fuzz-home"};
  cordon::Result<cordon::Config> config = cordon::config::ParseConfigText(text, "fuzz.json", env);
  if (!config) {
    if (config.error().code != cordon::ErrorCode::kConfig || config.error().message.empty()) {
      std::fprintf(stderr, "unexpected error: %s\n", config.error().message.c_str());
      std::abort();
    }
    return 0;
  }
  std::string written = cordon::config::ToJson(*config);
  cordon::Result<cordon::Config> again =
      cordon::config::ParseConfigText(written, "fuzz-roundtrip.json", env);
  if (!again || cordon::config::ToJson(*again) != written) {
    std::fprintf(stderr, "round trip failed:\n%s\n%s\n", written.c_str(),
                 again ? "(reparsed differently)" : again.error().message.c_str());
    std::abort();
  }
  return 0;
}
