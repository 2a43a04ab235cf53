#include "policy/default_rules.h"

#include <fnmatch.h>

#include <array>
#include <utility>

#include "policy/wrappers.h"

namespace cordon::policy {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kReasons = {{
    {rule::kPrivilege,
     "sudo, doas, su, pkexec, run0 and similar tools escalate privileges, which commands run "
     "here may not do; run the command without them, on files inside the workspace."},
    {rule::kRmRoot,
     "recursive deletion of /, a top-level directory or the home directory is refused; delete "
     "the specific paths you mean, inside the workspace."},
    {rule::kShellFeed,
     "feeding downloaded or generated text into a shell or interpreter runs code that cannot "
     "be inspected first; save it to a file, read it, then run the commands you need directly."},
    {rule::kFilesystem,
     "creating filesystems or editing partition tables (mkfs, mkswap, wipefs, fdisk, parted, "
     "...) changes disks, not the workspace, and is refused."},
    {rule::kDeviceWrite,
     "writing to a device under /dev (dd of=/dev/..., > /dev/sdX, tee /dev/...) is refused; "
     "write to a file in the workspace instead."},
    {rule::kNestedAgent,
     "starting another coding agent from inside this session is refused; do the work directly "
     "with ordinary commands."},
    {rule::kCordonUnsafe,
     "starting an unsandboxed cordon session or changing cordon's sandbox settings is refused; "
     "ask the user to change the configuration if it is really needed."},
}};

constexpr std::array<std::string_view, 10> kPrivilegeNames = {
    "sudo", "sudoedit", "doas", "su", "pkexec", "run0", "ksu", "nsenter", "calife", "please"};

constexpr std::array<std::string_view, 17> kFilesystemNames = {
    "mke2fs", "mkswap",    "wipefs",  "fdisk",      "sfdisk",   "cfdisk",
    "parted", "gdisk",     "sgdisk",  "cgdisk",     "fixparts", "mkdosfs",
    "mkntfs", "mkexfatfs", "mkudffs", "blkdiscard", "partx"};

// Package runner spellings of the agents: npx @anthropic-ai/claude-code, uvx aider-chat, ...
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kAgentPackages = {{
    {"claude-code", "claude"},
    {"gemini-cli", "gemini"},
    {"aider-chat", "aider"},
    {"opencode-ai", "opencode"},
    {"qwen-code", "qwen"},
    {"goose-ai", "goose"},
}};

template <std::size_t N>
std::optional<std::string_view> NameIn(const Word& word,
                                       const std::array<std::string_view, N>& names) {
  for (std::string_view n : names) {
    if (NameIs(word, n)) return n;
  }
  return std::nullopt;
}

bool HasArg(const Command& c, std::string_view arg) {
  for (std::size_t i = 1; i < c.argv.size(); ++i) {
    if (c.argv[i].text == arg) return true;
  }
  return false;
}

std::optional<RuleHit> CheckPrivilege(const Command& c) {
  const Word& w = c.argv[0];
  if (auto n = NameIn(w, kPrivilegeNames)) {
    return MakeHit(rule::kPrivilege, "command word " + std::string(*n));
  }
  if (NameIs(w, "machinectl") && c.argv.size() > 1 && (HasArg(c, "shell") || HasArg(c, "login"))) {
    return MakeHit(rule::kPrivilege, "machinectl shell");
  }
  if (NameIs(w, "systemd-run") && !HasArg(c, "--user")) {
    return MakeHit(rule::kPrivilege, "systemd-run without --user");
  }
  return std::nullopt;
}

std::optional<RuleHit> CheckFilesystem(const Command& c) {
  const Word& w = c.argv[0];
  if (auto n = NameIn(w, kFilesystemNames)) {
    return MakeHit(rule::kFilesystem, "command word " + std::string(*n));
  }
  if (Basename(w.text).starts_with("mkfs") || NameIs(w, "mkfs") || NameIs(w, "mkfs.ext4")) {
    return MakeHit(rule::kFilesystem, "command word mkfs*");
  }
  if (NameIs(w, "cryptsetup") && (HasArg(c, "luksFormat") || HasArg(c, "erase"))) {
    return MakeHit(rule::kFilesystem, "cryptsetup luksFormat/erase");
  }
  return std::nullopt;
}

// cordon run --unsafe / --mode off, cordon mcp --unsafe, cordon sandbox <change>.
std::optional<RuleHit> CheckCordon(const Command& c) {
  if (!NameIs(c.argv[0], "cordon")) return std::nullopt;
  std::size_t sub = 1;
  while (sub < c.argv.size() && c.argv[sub].text.starts_with("-")) ++sub;
  if (sub >= c.argv.size()) return std::nullopt;
  const std::string& verb = c.argv[sub].text;
  if (verb == "sandbox") {
    if (sub + 1 < c.argv.size() && c.argv[sub + 1].text != "status" &&
        !c.argv[sub + 1].text.starts_with("-")) {
      return MakeHit(rule::kCordonUnsafe, "cordon sandbox <change>");
    }
    return std::nullopt;
  }
  if (verb != "run" && verb != "mcp") return std::nullopt;
  for (std::size_t i = sub + 1; i < c.argv.size(); ++i) {
    const std::string& a = c.argv[i].text;
    if (a == "--") break;
    bool next_off = i + 1 < c.argv.size() && c.argv[i + 1].text == "off";
    if (a == "--unsafe" || a == "--mode=off" || a == "-moff" ||
        ((a == "--mode" || a == "-m") && next_off)) {
      return MakeHit(rule::kCordonUnsafe, "cordon " + verb + " " + a + (next_off ? " off" : ""));
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view RuleReason(std::string_view rule_id) {
  for (const auto& [id, reason] : kReasons) {
    if (id == rule_id) return reason;
  }
  return {};
}

RuleHit MakeHit(std::string_view rule_id, std::string pattern) {
  return RuleHit{std::string(rule_id), std::move(pattern), std::string(RuleReason(rule_id))};
}

bool NameIs(const Word& word, std::string_view name) {
  std::string_view base = Basename(word.text);
  if (base == name) return true;
  if (!word.Has(kWordGlob)) return false;
  std::string pattern(base);
  std::string subject(name);
  return fnmatch(pattern.c_str(), subject.c_str(), 0) == 0;
}

const std::vector<std::string>& DefaultAgentNames() {
  static const std::vector<std::string> kNames = {"claude",   "codex", "gemini",       "aider",
                                                  "opencode", "goose", "cursor-agent", "amp",
                                                  "qwen",     "crush"};
  return kNames;
}

DefaultRules::DefaultRules(const std::vector<std::string>& extra_agents)
    : agents_(DefaultAgentNames()) {
  agents_.insert(agents_.end(), extra_agents.begin(), extra_agents.end());
}

std::optional<RuleHit> DefaultRules::CheckNestedAgent(const Command& c) const {
  // Package runners leave a package spec as the command word: @openai/codex@latest.
  std::string name(Basename(c.argv[0].text));
  if (std::size_t at = name.find('@', 1); at != std::string::npos) name.resize(at);
  for (const auto& [package, agent] : kAgentPackages) {
    if (name == package) name = agent;
  }
  Word word{name, c.argv[0].flags};
  for (const std::string& agent : agents_) {
    if (NameIs(word, agent)) return MakeHit(rule::kNestedAgent, "agent CLI " + agent);
  }
  // python -m aider: an agent run as a Python module.
  if (name.starts_with("python")) {
    for (std::size_t i = 1; i + 1 < c.argv.size(); ++i) {
      if (c.argv[i].text != "-m") continue;
      std::string module = c.argv[i + 1].text.substr(0, c.argv[i + 1].text.find('.'));
      for (const std::string& agent : agents_) {
        if (module == agent) return MakeHit(rule::kNestedAgent, "agent module " + agent);
      }
      break;
    }
  }
  return std::nullopt;
}

std::optional<RuleHit> DefaultRules::Check(const Command& c, const RuleContext& context) const {
  if (c.argv.empty() || c.query_only) {
    return CheckDeviceWrite(c);  // "> /dev/sda" needs no command word
  }
  if (auto hit = CheckPrivilege(c)) return hit;
  if (auto hit = CheckRmRoot(c)) return hit;
  if (auto hit = CheckShellFeed(c, context)) return hit;
  if (auto hit = CheckFilesystem(c)) return hit;
  if (auto hit = CheckDeviceWrite(c)) return hit;
  if (auto hit = CheckCordon(c)) return hit;
  if (auto hit = CheckNestedAgent(c)) return hit;
  return std::nullopt;
}

}  // namespace cordon::policy
