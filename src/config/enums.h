// Text <-> enum for the three configuration enums. The JSON reader and the CLI flags share these
// so that "read_only" means the same thing in the file and on the command line.
#pragma once

#include <array>
#include <string_view>

#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// The accepted spellings, in documentation order. The names come from cordon::*Name().
inline constexpr std::array<std::string_view, 3> kSandboxModeNames = {"off", "read_only",
                                                                      "workspace_write"};
inline constexpr std::array<std::string_view, 3> kNetworkPolicyNames = {"deny", "allow", "domains"};
inline constexpr std::array<std::string_view, 4> kBackendChoiceNames = {"auto", "native", "bwrap",
                                                                        "seatbelt"};
inline constexpr std::array<std::string_view, 3> kHomeViewNames = {"read_only", "hidden", "auto"};
inline constexpr std::array<std::string_view, 3> kToolCachesNames = {"shared", "workspace", "off"};

// kInvalidArgument naming the valid values when `text` is not one of them:
//   invalid sandbox mode "readonly": expected one of "off", "read_only", "workspace_write"
[[nodiscard]] Result<SandboxMode> ParseSandboxMode(std::string_view text);
[[nodiscard]] Result<NetworkPolicy> ParseNetworkPolicy(std::string_view text);
[[nodiscard]] Result<BackendChoice> ParseBackendChoice(std::string_view text);
[[nodiscard]] Result<HomeView> ParseHomeView(std::string_view text);
[[nodiscard]] Result<ToolCaches> ParseToolCaches(std::string_view text);

}  // namespace cordon::config
