#include "policy/raw_rules.h"

#include <fmt/format.h>

namespace cordon::policy {
namespace {

// A command word starts the text or follows a separator, a quote, a slash or "$(" / "`".
constexpr std::string_view kBefore = R"((?:^|[\s;&|()`"'/{]))";
constexpr std::string_view kAfter = R"((?:$|[\s;&|()`"'}]))";

}  // namespace

Result<RawRules> RawRules::Create(const std::vector<std::string>& agent_names) {
  std::string agents;
  for (const std::string& a : agent_names) {
    if (!agents.empty()) agents += '|';
    agents += RE2::QuoteMeta(a);
  }
  const std::vector<std::pair<std::string_view, std::string>> specs = {
      {rule::kPrivilege,
       fmt::format("{}(?:sudo|sudoedit|doas|su|pkexec|run0|ksu|nsenter){}", kBefore, kAfter)},
      {rule::kRmRoot, R"(\brm\s.*--no-preserve-root)"},
      {rule::kRmRoot,
       R"(\brm\s+(?:-\S+\s+)+["']?(?:/\*?|~/?\*?|\$\{?HOME\}?/?\*?)["']?(?:$|[\s;&|)]))"},
      {rule::kShellFeed, R"(\|\s*(?:\S*/)?(?:sudo\s+)?(?:ba|da|z|k|mk)?sh\b)"},
      {rule::kShellFeed, R"(\b(?:ba|da|z|k)?sh\s+<\()"},
      {rule::kShellFeed, R"((?:\beval|\bsource|(?:^|[\s;&|])\.)\s+["']?(?:\$\(|<\(|`))"},
      {rule::kShellFeed, R"(\s-c\s+["']?(?:\$\(|`))"},
      {rule::kFilesystem,
       fmt::format("{}(?:mkfs(?:\\.\\w+)?|mke2fs|mkswap|wipefs|fdisk|sfdisk|cfdisk|parted|gdisk|"
                   "sgdisk|blkdiscard){}",
                   kBefore, kAfter)},
      {rule::kDeviceWrite, R"(\bof=/dev/(?:sd|nvme|vd|xvd|hd|mmcblk|dm-|md|loop|nbd|disk))"},
      {rule::kDeviceWrite, R"(>\s*/dev/(?:sd|nvme|vd|xvd|hd|mmcblk|dm-|md|loop|nbd|disk))"},
      {rule::kCordonUnsafe, R"(\bcordon\s+(?:run|mcp)\b.*(?:--unsafe|--mode[=\s]+off|-m\s*off))"},
      {rule::kNestedAgent, fmt::format("{}(?:{}){}", kBefore, agents, kAfter)},
  };
  RawRules out;
  RE2::Options options;
  options.set_log_errors(false);
  for (const auto& [id, pattern] : specs) {
    auto re = std::make_unique<RE2>(pattern, options);
    if (!re->ok()) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("raw-text rule {} \"{}\": {}", id, pattern, re->error()));
    }
    out.rules_.push_back(Rule{id, pattern, std::move(re)});
  }
  return out;
}

std::optional<RuleHit> RawRules::Check(std::string_view text) const {
  re2::StringPiece piece(text.data(), text.size());
  for (const Rule& r : rules_) {
    if (RE2::PartialMatch(piece, *r.re)) return MakeHit(r.rule_id, r.pattern);
  }
  return std::nullopt;
}

}  // namespace cordon::policy
