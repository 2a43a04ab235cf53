#include "seatbelt/profile.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <sstream>

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
  const auto deny_git = text.find("(deny file-write*\n");
  const auto deny_secrets = text.find("(deny file-read* file-write*\n");
  const auto allow_reads = text.find("(allow file-read*)");
  const auto deny_ttys =
      text.find("(deny file-read* file-write* file-ioctl (regex #\"^/dev/(tty|cu)");
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
// kernel would: the base's text quoted, then the rest's regex (POSIX extended here).
bool NameRegexMatches(const SeatbeltProfile& profile, const std::string& prefix, std::size_t n,
                      const std::string& path) {
  const auto params = Params(profile);
  const std::string base = params.at(fmt::format("{}_BASE_{}", prefix, n));
  const std::string rest = params.at(fmt::format("{}_NAME_{}", prefix, n));
  if (!path.starts_with(base)) return false;
  const std::regex re("^" + rest, std::regex::extended);
  return std::regex_search(path.substr(base.size()), re);
}

// The index of `value` among the parameters PREFIX_N.
std::size_t IndexOf(const SeatbeltProfile& profile, const std::string& prefix,
                    const std::string& value) {
  const std::vector<std::string> values = Values(profile, prefix);
  return static_cast<std::size_t>(std::find(values.begin(), values.end(), value) - values.begin());
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

TEST(SeatbeltStructure, AMissingDirectoryOnTheWayToAProtectedPathIsNotCreatedInAnyCase) {
  // .config/mise.toml protected and absent with no .config: `mkdir .Config` then writing
  // .Config/mise.toml would plant what the host's mise loads as .config/mise.toml (APFS is
  // case-insensitive), and `ln -s elsewhere .CONFIG` would send it through a link.
  SeatbeltPolicy policy;
  policy.writable = {"/Users/me/ws"};
  policy.read_only = {"/Users/me/ws/.config/mise.toml"};
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  for (const char* path : {"/Users/me/ws/.config/mise.toml", "/Users/me/ws/.Config/mise.toml",
                           "/Users/me/ws/.CONFIG/MISE.TOML"}) {
    EXPECT_TRUE(NameRegexMatches(profile, "READ_ONLY", 0, path)) << path;
  }
  const std::size_t pin = IndexOf(profile, "PINNED", "/Users/me/ws/.config");
  ASSERT_LT(pin, Values(profile, "PINNED").size());
  for (const char* path :
       {"/Users/me/ws/.config", "/Users/me/ws/.Config", "/Users/me/ws/.CONFIG"}) {
    EXPECT_TRUE(NameRegexMatches(profile, "PINNED", pin, path)) << path;
  }
  // Twins: what the directory holds stays writable; other names are not touched.
  for (const char* path :
       {"/Users/me/ws/.config/other", "/Users/me/ws/.configx", "/Users/me/ws/sub/.config"}) {
    EXPECT_FALSE(NameRegexMatches(profile, "PINNED", pin, path)) << path;
  }
  // The writable root itself is matched exactly: it is not created by the command anyway.
  const std::size_t root = IndexOf(profile, "PINNED", "/Users/me/ws");
  EXPECT_EQ(Params(profile).count(fmt::format("PINNED_BASE_{}", root)), 0u);
}

TEST(SeatbeltStructure, ATopLevelPathHasTheRootAsItsBase) {
  SeatbeltPolicy policy;
  policy.hidden_absent = {"/secrets"};
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  EXPECT_EQ(Params(profile).at("HIDDEN_BASE_0"), "/");
  EXPECT_TRUE(NameRegexMatches(profile, "HIDDEN", 0, "/SECRETS/x"));
  EXPECT_FALSE(NameRegexMatches(profile, "HIDDEN", 0, "/secretsx"));
  for (const auto& [name, value] : profile.params) EXPECT_FALSE(value.empty()) << name;
}

TEST(SeatbeltStructure, NoHardLinkIsMadeAnywhere) {
  // Whether Seatbelt checks a link's source or its new name is not documented: a link of a
  // hidden file into the workspace would be read there. All hard links are denied, after every
  // write allowance.
  SeatbeltPolicy policy;
  policy.writable = {"/Users/me/ws"};
  const std::string text = RenderSeatbelt(policy).text;
  const auto links = text.find("(deny file-link (subpath \"/\"))");
  ASSERT_NE(links, std::string::npos) << text;
  EXPECT_GT(links, text.find("(allow file-write*"));
}

TEST(SeatbeltStructure, TheHostsUnixSocketsStayOutWithTheNetworkAllowed) {
  // tmux's socket in /private/tmp, an ssh or gpg agent, Docker's socket: connect() is
  // network-outbound, which (allow network*) would open. Only the resolver's and the writable
  // subtrees' sockets are reachable, in both network settings.
  SeatbeltPolicy policy;
  policy.writable = {"/Users/me/ws"};
  for (const bool network : {true, false}) {
    policy.network_allowed = network;
    const SeatbeltProfile profile = RenderSeatbelt(policy);
    const std::string& text = profile.text;
    const auto own = text.find(
        "(allow network-outbound\n  (remote unix-socket (subpath (param "
        "\"SOCKET_0\"))))");
    ASSERT_NE(own, std::string::npos) << text;
    EXPECT_EQ(Values(profile, "SOCKET"), std::vector<std::string>{"/Users/me/ws"});
    if (network) {
      const auto all = text.find("(allow network*)");
      const auto deny = text.find("(deny network-outbound (remote unix-socket))");
      ASSERT_NE(deny, std::string::npos) << text;
      EXPECT_LT(all, deny);
      EXPECT_LT(deny, own);
      EXPECT_EQ(text.find("com.apple.SecurityServer"), std::string::npos) << "the keychain";
    } else {
      EXPECT_EQ(text.find("(allow network*)"), std::string::npos);
    }
  }
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
  EXPECT_NE(profile.text.find("(deny file-write*\n  (literal (param \"READ_ONLY_0\"))\n"
                              "  (subpath (param \"READ_ONLY_0\"))\n  (regex (string-append \"^\" "
                              "(regex-quote (param \"READ_ONLY_BASE_0\")) (param "
                              "\"READ_ONLY_NAME_0\"))))"),
            std::string::npos)
      << profile.text;
}

TEST(SeatbeltStructure, NameRegexHoldsAnyCharacterSafely) {
  EXPECT_EQ(CaseInsensitiveRegex(".git", true), "[.][gG][iI][tT](/|$)");
  EXPECT_EQ(CaseInsensitiveRegex(".git", false), "[.][gG][iI][tT]$");
  EXPECT_EQ(CaseInsensitiveRegex("a_b-1/c", true), "[aA]_[bB]-1/[cC](/|$)");
  // Regex operators are classes of themselves; the characters no class holds plainly match any
  // one character (a denial that covers more, never less).
  EXPECT_EQ(CaseInsensitiveRegex("x(y)|*+?{}$ ", true),
            "[xX][(][yY][)][|][*][+][?][{][}][$][ ](/|$)");
  EXPECT_EQ(CaseInsensitiveRegex("a]b[c\\d^", true), "[aA].[bB].[cC].[dD].(/|$)");
  // APFS folds U+017F (long s) to s and U+212A (Kelvin sign) to k: `.\u017Fsh` is `.ssh`.
  EXPECT_EQ(CaseInsensitiveRegex("sk", false), "([sS]|\xC5\xBF)([kK]|\xE2\x84\xAA)$");
  const std::regex folded("^" + CaseInsensitiveRegex(".ssh", true), std::regex::extended);
  EXPECT_TRUE(std::regex_search(".\xC5\xBFSh/id", folded));
  EXPECT_TRUE(std::regex_search(".sSH", folded));
  EXPECT_FALSE(std::regex_search(".sh", folded));
  const std::regex re("^" + CaseInsensitiveRegex("we(ird]name", true), std::regex::extended);
  EXPECT_TRUE(std::regex_search("WE(IRD]NAME", re));
  EXPECT_FALSE(std::regex_search("we(irdXnamf", re));
}

TEST(SeatbeltStructure, NoRuleLetsTheCommandUseTheHostsTerminals) {
  SeatbeltPolicy policy;
  policy.writable = {"/w"};
  const std::string deny =
      "(deny file-read* file-write* file-ioctl (regex #\"^/dev/(tty|cu)\") (literal "
      "\"/dev/console\"))";
  const std::string own_tty =
      "(allow file-read* file-write-data file-ioctl (literal \"/dev/tty\"))";
  const std::string own_pty =
      "  (require-all (regex #\"^/dev/ttys[0-9]+$\") (extension \"com.apple.sandbox.pty\")))";
  for (const bool network : {false, true}) {
    policy.network_allowed = network;
    const std::string text = RenderSeatbelt(policy).text;
    // The only rules naming a terminal, a serial line or the console: the denial of the host's,
    // /dev/tty (the process's own controlling terminal: none, it runs in a new session), and
    // the ttys bound to the pty extension the kernel gives the process that opened them.
    std::istringstream lines(text);
    std::vector<std::string> naming;
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with(";")) continue;
      for (const char* device : {"/dev/tty", "/dev/(tty", "/dev/cu", "/dev/console"}) {
        if (line.find(device) != std::string::npos) {
          naming.push_back(line);
          break;
        }
      }
    }
    EXPECT_EQ(naming, (std::vector<std::string>{deny, own_tty, own_pty})) << text;
    EXPECT_LT(text.find("(allow file-read*)"), text.find(deny));
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
  // The same files through the Data volume's mount point (firmlinks) are denied too, and so is
  // a hidden secret there.
  EXPECT_TRUE(Has(homes, "/System/Volumes/Data/Users/dev"));
  EXPECT_TRUE(Has(Values(profile, "HIDDEN"), "/System/Volumes/Data/Users/dev/proj/.env"));
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
  const auto secrets = profile.text.find("(deny file-read* file-write*\n");
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
         {"(allow file-write*", "(deny file-write*\n", "(deny file-link",
          "(deny file-write-unlink file-write-create", "(deny file-read* file-write*\n",
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
