#include "config/enums.h"

#include <fmt/format.h>

#include "config/diagnostics.h"

namespace cordon::config {
namespace {

// Looks `text` up among the values of an enum whose names run 0..N-1 in `names` order.
template <typename Enum, std::size_t N>
Result<Enum> ParseEnum(std::string_view what, std::string_view text,
                       const std::array<std::string_view, N>& names, const char* (*name_of)(Enum)) {
  for (std::size_t i = 0; i < N; ++i) {
    auto value = static_cast<Enum>(i);
    if (text == name_of(value)) return value;
  }
  return Fail(ErrorCode::kInvalidArgument, fmt::format("invalid {} {}: expected one of {}", what,
                                                       Quote(text), QuoteList(names)));
}

}  // namespace

Result<SandboxMode> ParseSandboxMode(std::string_view text) {
  return ParseEnum<SandboxMode>("sandbox mode", text, kSandboxModeNames, &SandboxModeName);
}

Result<NetworkPolicy> ParseNetworkPolicy(std::string_view text) {
  return ParseEnum<NetworkPolicy>("network policy", text, kNetworkPolicyNames, &NetworkPolicyName);
}

Result<BackendChoice> ParseBackendChoice(std::string_view text) {
  return ParseEnum<BackendChoice>("backend", text, kBackendChoiceNames, &BackendChoiceName);
}

Result<HomeView> ParseHomeView(std::string_view text) {
  return ParseEnum<HomeView>("home view", text, kHomeViewNames, &HomeViewName);
}

Result<ToolCaches> ParseToolCaches(std::string_view text) {
  return ParseEnum<ToolCaches>("tool caches setting", text, kToolCachesNames, &ToolCachesName);
}

}  // namespace cordon::config
