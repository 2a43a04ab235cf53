#include "seatbelt/profile.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>

#include "../bwrap/golden.h"
#include "../bwrap/sample_plans.h"

namespace cordon::seatbelt {
namespace {

// The profile text, then each parameter as NAME=VALUE: what sandbox-exec receives.
std::string Describe(const SeatbeltProfile& profile) {
  std::string out = profile.text;
  out += "\n;; parameters\n";
  for (const auto& [name, value] : profile.params) out += ";; " + name + "=" + value + "\n";
  return out;
}

const std::filesystem::path kPrivateDir = "/private/var/folders/xy/T/cordon-run-1";

TEST(SeatbeltProfile, WorkspaceWriteWithNetworkDenyMatchesGolden) {
  auto policy = SeatbeltPolicyFromPlan(testing::WorkspaceWriteNetworkDeny(), kPrivateDir, false);
  testing::ExpectMatchesGolden(Describe(RenderSeatbelt(policy)),
                               "seatbelt_workspace_write_network_deny.sb");
}

TEST(SeatbeltProfile, ReadOnlyWithNetworkAllowMatchesGolden) {
  auto policy = SeatbeltPolicyFromPlan(testing::ReadOnlyNetworkAllow(), kPrivateDir, true);
  testing::ExpectMatchesGolden(Describe(RenderSeatbelt(policy)),
                               "seatbelt_read_only_network_allow.sb");
}

TEST(SeatbeltProfile, WorktreeWithExtraRootMatchesGolden) {
  auto policy = SeatbeltPolicyFromPlan(testing::WorktreeWithExtraRoot(), kPrivateDir, false);
  testing::ExpectMatchesGolden(Describe(RenderSeatbelt(policy)), "seatbelt_worktree_extra_root.sb");
}

TEST(SeatbeltProfile, PathsNeverAppearInTheProfileText) {
  SeatbeltPolicy policy;
  const std::string hostile = "/Users/me/x\")) (allow default) ((\"";
  policy.writable = {hostile};
  policy.hidden_files = {"/Users/me/.netrc"};
  policy.hidden_absent = {"/Users/me/.aws\"))(allow default)"};
  SeatbeltProfile profile = RenderSeatbelt(policy);
  EXPECT_EQ(profile.text.find("/Users"), std::string::npos);
  EXPECT_EQ(profile.text.find("(allow default)"), std::string::npos);
  EXPECT_EQ(profile.text.find(".netrc"), std::string::npos);
  EXPECT_EQ(profile.text.find("aws"), std::string::npos);
  ASSERT_FALSE(profile.params.empty());
  EXPECT_EQ(profile.params[0], (std::pair<std::string, std::string>{"WRITABLE_0", hostile}));
}

TEST(SeatbeltProfile, DenialsComeAfterTheAllowancesTheyNarrow) {
  // SBPL is last-match-wins among rules with a filter: a git-metadata or credential denial
  // before the write allowance would be overridden by it, and the terminals' denial must come
  // after the read allowance and before the pty allowance that narrows it again.
  auto policy = SeatbeltPolicyFromPlan(testing::WorkspaceWriteNetworkDeny(), kPrivateDir, false);
  const std::string text = RenderSeatbelt(policy).text;
  const auto allow_writes = text.find("(allow file-write*");
  const auto deny_git = text.find("(deny file-write* file-link");
  const auto deny_secrets = text.find("(deny file-read* file-write* file-link");
  const auto allow_reads = text.find("(allow file-read*)");
  const auto deny_ttys = text.find("(deny file-read* file-write* file-ioctl (regex #\"^/dev/tty");
  const auto allow_ptys = text.find("(extension \"com.apple.sandbox.pty\")");
  for (const auto at : {allow_writes, deny_git, deny_secrets, allow_reads, deny_ttys, allow_ptys}) {
    ASSERT_NE(at, std::string::npos) << text;
  }
  EXPECT_LT(allow_writes, deny_git);
  EXPECT_LT(allow_writes, deny_secrets);
  EXPECT_LT(allow_reads, deny_ttys);
  EXPECT_LT(deny_ttys, allow_ptys);
}

// The parameters of a rendered profile by name.
std::map<std::string, std::string> Params(const SeatbeltProfile& profile) {
  return {profile.params.begin(), profile.params.end()};
}

// The values of every parameter named PREFIX_N.
std::vector<std::string> Values(const SeatbeltProfile& profile, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& [name, value] : profile.params) {
    const auto digits = name.substr(std::min(name.size(), prefix.size() + 1));
    if (name.starts_with(prefix + "_") && !digits.empty() &&
        std::all_of(digits.begin(), digits.end(), ::isdigit)) {
      out.push_back(value);
    }
  }
  return out;
}

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Whether the profile's regex for protected path number N of PREFIX matches `path`, as the
// kernel would: the parent's text quoted, then the name's regex (POSIX extended here).
bool NameRegexMatches(const SeatbeltProfile& profile, const std::string& prefix, std::size_t n,
                      const std::string& path) {
  const auto params = Params(profile);
  const std::string parent = params.at(fmt::format("{}_PARENT_{}", prefix, n));
  const std::string name = params.at(fmt::format("{}_NAME_{}", prefix, n));
  if (!path.starts_with(parent)) return false;
  const std::regex re("^" + name, std::regex::extended);
  return std::regex_search(path.substr(parent.size()), re);
}

TEST(SeatbeltStructure, EveryWritableRootAndEveryAncestorOfAProtectedPathIsPinned) {
  // The rename round trip: mv "$WS" "$TMPDIR/w"; write .git/hooks there; mv back. Every
  // writable root and every directory between it and a protected or hidden path is pinned.
  SeatbeltPolicy policy;
  policy.writable = {"/Users/me/ws", "/Users/me/extra", "/private/var/folders/x/T/run"};
  policy.read_only = {"/Users/me/ws/.git", "/Users/me/ws/sub/project/.git"};
  policy.hidden_files = {"/Users/me/ws/deep/.env"};
  policy.hidden_absent = {"/Users/me/extra/a/b/token", "/Users/me/.aws"};
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  const std::vector<std::string> pinned = Values(profile, "PINNED");
  for (const char* dir : {"/Users/me/ws", "/Users/me/extra", "/private/var/folders/x/T/run",
                          "/Users/me/ws/sub", "/Users/me/ws/sub/project", "/Users/me/ws/deep",
                          "/Users/me/extra/a", "/Users/me/extra/a/b"}) {
    EXPECT_TRUE(Has(pinned, dir)) << dir;
  }
  // Twin: nothing outside the writable subtrees (read-only anyway), and no protected path
  // itself (its own rule already denies every write to it).
  for (const char* dir : {"/Users/me", "/Users", "/Users/me/ws/.git", "/Users/me/.aws"}) {
    EXPECT_FALSE(Has(pinned, dir)) << dir;
  }
  EXPECT_NE(profile.text.find("(deny file-write-unlink file-write-create\n  (literal (param "
                              "\"PINNED_0\"))"),
            std::string::npos)
      << profile.text;
}

TEST(SeatbeltStructure, CredentialPathsAbsentAtLaunchAreDeniedToo) {
  // ~/.aws does not exist when the command starts; `aws configure` on the host during the run
  // creates it. The plan's absent hidden paths reach the profile's read denial.
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.absent_hidden = {"/home/dev/.aws", "/home/dev/.config/gh"};
  const SeatbeltProfile profile = RenderSeatbelt(SeatbeltPolicyFromPlan(plan, kPrivateDir, false));
  const std::vector<std::string> hidden = Values(profile, "HIDDEN");
  EXPECT_TRUE(Has(hidden, "/home/dev/.aws"));
  EXPECT_TRUE(Has(hidden, "/home/dev/.config/gh"));
  EXPECT_TRUE(Has(hidden, "/home/dev/.ssh")) << "the present ones stay";
  // Twin: a plan without absent ones names only the present.
  plan.absent_hidden.clear();
  const SeatbeltProfile without = RenderSeatbelt(SeatbeltPolicyFromPlan(plan, kPrivateDir, false));
  EXPECT_FALSE(Has(Values(without, "HIDDEN"), "/home/dev/.aws"));
}

TEST(SeatbeltStructure, ProtectedNamesAreMatchedInAnyCase) {
  SeatbeltPolicy policy;
  policy.writable = {"/Users/me/ws"};
  policy.read_only = {"/Users/me/ws/.git"};
  policy.hidden_dirs = {"/Users/me/.ssh"};
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  for (const char* path : {"/Users/me/ws/.git", "/Users/me/ws/.GIT", "/Users/me/ws/.Git/hooks/x",
                           "/Users/me/ws/.gIt/"}) {
    EXPECT_TRUE(NameRegexMatches(profile, "READ_ONLY", 0, path)) << path;
  }
  for (const char* path : {"/Users/me/.SSH/id_rsa", "/Users/me/.Ssh"}) {
    EXPECT_TRUE(NameRegexMatches(profile, "HIDDEN", 0, path)) << path;
  }
  // Twins: another name, a longer one, the name elsewhere.
  for (const char* path : {"/Users/me/ws/.gitignore", "/Users/me/ws/git", "/Users/me/ws/x.git",
                           "/Users/me/ws/sub/.git"}) {
    EXPECT_FALSE(NameRegexMatches(profile, "READ_ONLY", 0, path)) << path;
  }
  EXPECT_FALSE(NameRegexMatches(profile, "HIDDEN", 0, "/Users/me/.sshd"));
  // Each protected path denied exactly, as a subtree and by that regex, in one rule.
  EXPECT_NE(profile.text.find("(deny file-write* file-link\n  (literal (param \"READ_ONLY_0\"))\n"
                              "  (subpath (param \"READ_ONLY_0\"))\n  (regex (string-append \"^\" "
                              "(regex-quote (param \"READ_ONLY_PARENT_0\")) (param "
                              "\"READ_ONLY_NAME_0\"))))"),
            std::string::npos)
      << profile.text;
}

TEST(SeatbeltStructure, NameRegexHoldsAnyCharacterSafely) {
  EXPECT_EQ(CaseInsensitiveNameRegex(".git"), "/[.][gG][iI][tT](/|$)");
  EXPECT_EQ(CaseInsensitiveNameRegex("a_b-1"), "/[aA]_[bB]-1(/|$)");
  // Regex operators are classes of themselves; the characters no class holds plainly match any
  // one character (a denial that covers more, never less).
  EXPECT_EQ(CaseInsensitiveNameRegex("x(y)|*+?{}$ "),
            "/[xX][(][yY][)][|][*][+][?][{][}][$][ ](/|$)");
  EXPECT_EQ(CaseInsensitiveNameRegex("a]b[c\\d^"), "/[aA].[bB].[cC].[dD].(/|$)");
  const std::regex re("^" + CaseInsensitiveNameRegex("we(ird]name"), std::regex::extended);
  EXPECT_TRUE(std::regex_search("/WE(IRD]NAME", re));
  EXPECT_FALSE(std::regex_search("/we(irdXnamf", re));
}

TEST(SeatbeltStructure, NoRuleLetsTheCommandUseTheHostsTerminals) {
  SeatbeltPolicy policy;
  policy.writable = {"/w"};
  for (const bool network : {false, true}) {
    policy.network_allowed = network;
    const std::string text = RenderSeatbelt(policy).text;
    // The only rules naming a terminal: the denial of the host's, the allowance bound to the
    // pty extension the kernel gives the process that opened the pseudo-terminal, and
    // /dev/tty (the process's own controlling terminal: none, it runs in a new session).
    std::size_t at = 0;
    int mentions = 0;
    while ((at = text.find("/dev/tty", at)) != std::string::npos) {
      const std::size_t line_start = text.rfind('\n', at) + 1;
      const std::string line = text.substr(line_start, text.find('\n', at) - line_start);
      if (line.starts_with(";")) {
        at += 1;
        continue;
      }
      ++mentions;
      const bool denial = line.starts_with("(deny file-read* file-write* file-ioctl (regex");
      const bool pty_line = line.find(
                                "require-all (regex #\"^/dev/ttys[0-9]+$\") (extension "
                                "\"com.apple.sandbox.pty\")") != std::string::npos;
      const bool dev_tty = line.find("(literal \"/dev/tty\")") != std::string::npos;
      EXPECT_TRUE(denial || pty_line || dev_tty) << line;
      at += 1;
    }
    EXPECT_GE(mentions, 3);
  }
}

// A Mac's home hidden (sandbox.home "hidden", the default): the workspace and a toolchain in
// it granted, a secret in the workspace masked.
plan::LaunchPlan HiddenHomePlan() {
  using K = plan::MountOpKind;
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.workspace = "/Users/dev/proj";
  plan.mounts = {{K::kHomeView, "/Users/dev"},
                 {K::kHomeView, "/Users"},
                 {K::kBindWritable, "/Users/dev/proj"},
                 {K::kBindReadOnly, "/Users/dev/proj/.git"},
                 {K::kMaskFile, "/Users/dev/proj/.env"},
                 {K::kBindReadOnly, "/Users/dev/.cargo/bin"},
                 {K::kBindReadOnly, "/Users/dev/.gitconfig"}};
  return plan;
}

TEST(SeatbeltProfile, HiddenHomeMatchesGolden) {
  auto policy = SeatbeltPolicyFromPlan(HiddenHomePlan(), kPrivateDir, false);
  testing::ExpectMatchesGolden(Describe(RenderSeatbelt(policy)), "seatbelt_hidden_home.sb");
}

TEST(SeatbeltStructure, TheHiddenHomeIsDeniedExceptItsGrantsAndTheWayToThem) {
  const SeatbeltProfile profile =
      RenderSeatbelt(SeatbeltPolicyFromPlan(HiddenHomePlan(), kPrivateDir, false));
  const std::vector<std::string> homes = Values(profile, "HOME");
  EXPECT_TRUE(Has(homes, "/Users/dev") && Has(homes, "/Users"));
  const std::vector<std::string> grants = Values(profile, "GRANT");
  for (const char* grant : {"/Users/dev/proj", "/Users/dev/.cargo/bin", "/Users/dev/.gitconfig"}) {
    EXPECT_TRUE(Has(grants, grant)) << grant;
  }
  // Stat, not listing, on the way: the home and ~/.cargo; never the grant's own parent beyond.
  const std::vector<std::string> way = Values(profile, "GRANT_PATH");
  EXPECT_TRUE(Has(way, "/Users/dev") && Has(way, "/Users/dev/.cargo") && Has(way, "/Users"));
  // Twins: nothing else of the home is granted, and the masked secret inside the granted
  // workspace is still denied, after the grant.
  EXPECT_FALSE(Has(grants, "/Users/dev"));
  EXPECT_FALSE(Has(grants, "/Users/dev/.cargo"));
  EXPECT_TRUE(Has(Values(profile, "HIDDEN"), "/Users/dev/proj/.env"));
  const auto reads = profile.text.find("(allow file-read*)");
  const auto deny_home = profile.text.find("(deny file-read*\n  (subpath (param \"HOME_0\"))");
  const auto grant = profile.text.find("(allow file-read*\n  (subpath (param \"GRANT_0\"))");
  const auto way_rule =
      profile.text.find("(allow file-read-metadata\n  (literal (param \"GRANT_PATH_0\"))");
  const auto secrets = profile.text.find("(deny file-read* file-write* file-link");
  for (const auto at : {reads, deny_home, grant, way_rule, secrets}) {
    ASSERT_NE(at, std::string::npos) << profile.text;
  }
  EXPECT_LT(reads, deny_home);
  EXPECT_LT(deny_home, grant);
  EXPECT_LT(grant, secrets);
  // Twin: a read-only home view (no kHomeView) has no home rule at all.
  const SeatbeltProfile plain = RenderSeatbelt(
      SeatbeltPolicyFromPlan(testing::WorkspaceWriteNetworkDeny(), kPrivateDir, false));
  EXPECT_TRUE(Values(plain, "HOME").empty());
  EXPECT_TRUE(Values(plain, "GRANT").empty());
}

TEST(SeatbeltStructure, ProbeVariantsHoldEveryKindOfRuleForBothNetworkSettings) {
  const std::vector<SeatbeltPolicy> variants = ProbeVariants("/private/tmp/probe");
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_NE(variants[0].network_allowed, variants[1].network_allowed);
  for (const SeatbeltPolicy& v : variants) {
    const std::string text = RenderSeatbelt(v).text;
    for (const char* rule :
         {"(allow file-write*", "(deny file-write* file-link",
          "(deny file-write-unlink file-write-create", "(deny file-read* file-write* file-link",
          "(regex (string-append", "(deny file-read*\n  (subpath", "(allow file-read-metadata"}) {
      EXPECT_NE(text.find(rule), std::string::npos) << rule;
    }
  }
}

TEST(SeatbeltProfile, NetworkAllowedOnlyWhenAsked) {
  SeatbeltPolicy policy;
  policy.writable = {"/w"};
  EXPECT_EQ(RenderSeatbelt(policy).text.find("(allow network*)"), std::string::npos);
  policy.network_allowed = true;
  EXPECT_NE(RenderSeatbelt(policy).text.find("(allow network*)"), std::string::npos);
}

TEST(SeatbeltPolicy, ReadOnlyBindsCountOnlyInsideWritableSubtrees) {
  // read_only mode binds the workspace read-only: outside every writable subtree, so no rule.
  auto policy = SeatbeltPolicyFromPlan(testing::ReadOnlyNetworkAllow(), kPrivateDir, true);
  EXPECT_TRUE(policy.read_only.empty());
  auto write = SeatbeltPolicyFromPlan(testing::WorkspaceWriteNetworkDeny(), kPrivateDir, false);
  EXPECT_EQ(write.read_only, std::vector<std::filesystem::path>{"/home/dev/project/.git"});
}

TEST(SeatbeltPolicy, AMissingGitAtTheTopOfAWritableRootCannotBeCreated) {
  // No mount placeholder on macOS: the denial of the subpath also denies creating it.
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.mounts.erase(std::remove_if(plan.mounts.begin(), plan.mounts.end(),
                                   [](const plan::MountOp& op) {
                                     return op.kind == plan::MountOpKind::kBindReadOnly;
                                   }),
                    plan.mounts.end());
  plan.absent_protected = {"/home/dev/project/.git", "/elsewhere/.git"};
  auto policy = SeatbeltPolicyFromPlan(plan, kPrivateDir, false);
  // Only the one inside a writable subtree needs a rule; the other is read-only anyway.
  EXPECT_EQ(policy.read_only, std::vector<std::filesystem::path>{"/home/dev/project/.git"});
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  EXPECT_EQ(Values(profile, "READ_ONLY"), std::vector<std::string>{"/home/dev/project/.git"});
  EXPECT_TRUE(NameRegexMatches(profile, "READ_ONLY", 0, "/home/dev/project/.GIT"));
  // Twin: without protect_git_metadata (no absent_protected) nothing about .git is denied.
  plan.absent_protected.clear();
  EXPECT_TRUE(SeatbeltPolicyFromPlan(plan, kPrivateDir, false).read_only.empty());
}

TEST(SeatbeltPolicy, PinsAreNotWritableSubtreesButDenyRenamingTheDirectoryItself) {
  auto policy = SeatbeltPolicyFromPlan(testing::WorktreeWithExtraRoot(), kPrivateDir, false);
  EXPECT_EQ(policy.pinned, std::vector<std::filesystem::path>{"/work/tree/config"});
  EXPECT_EQ(std::count(policy.writable.begin(), policy.writable.end(), "/work/tree/config"), 0);
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  EXPECT_EQ(Values(profile, "PINNED").front(), "/work/tree/config");
  EXPECT_NE(profile.text.find("(deny file-write-unlink file-write-create\n  (literal (param "
                              "\"PINNED_0\"))"),
            std::string::npos)
      << profile.text;
}

TEST(SeatbeltPolicy, ThePrivateDirectoryIsWritable) {
  auto policy = SeatbeltPolicyFromPlan(testing::ReadOnlyNetworkAllow(), kPrivateDir, true);
  EXPECT_EQ(policy.writable, std::vector<std::filesystem::path>{kPrivateDir});
}

TEST(SandboxExec, ArgvIsProfileParametersThenTheCommandUnchanged) {
  SeatbeltProfile profile{"(version 1)", {{"WRITABLE_0", "/a=b"}}};
  auto argv = SandboxExecArgv(profile, {"sh", "-c", "echo $HOME; ls"});
  EXPECT_EQ(argv,
            (std::vector<std::string>{kSandboxExec, "-p", "(version 1)", "-D", "WRITABLE_0=/a=b",
                                      "--", "sh", "-c", "echo $HOME; ls"}));
}

}  // namespace
}  // namespace cordon::seatbelt
