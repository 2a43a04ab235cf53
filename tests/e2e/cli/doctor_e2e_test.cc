// `cordon doctor` end to end: the findings on this machine, its exit codes, and the same binary
// run where user namespaces are refused — under a seccomp filter like a container runtime's,
// and inside cordon's own sandbox — reporting them missing with a fix.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using Doctor = CliTest;

bool MustWork() {
  const char* value = std::getenv("CORDON_TEST_MUST_WORK");
  return value != nullptr && std::string(value) == "1";
}

const nlohmann::json& Feature(const nlohmann::json& report, const std::string& id) {
  for (const nlohmann::json& f : report["features"]) {
    if (f["id"] == id) return f;
  }
  ADD_FAILURE() << "no feature " << id;
  static const nlohmann::json kNone = nlohmann::json::object();
  return kNone;
}

// The exit code follows "ok": 0 when every needed feature is there, 1 otherwise.
void ExpectExitMatchesVerdict(const Outcome& o, const nlohmann::json& report) {
  EXPECT_EQ(o.exit_code, report["ok"].get<bool>() ? 0 : 1) << o.err;
  if (!report["ok"].get<bool>()) {
    bool required_missing = false;
    for (const nlohmann::json& f : report["features"]) {
      if (f["required"].get<bool>() && !f["present"].get<bool>()) required_missing = true;
    }
    EXPECT_TRUE(required_missing || !report["capabilities"]["missing"].empty());
  }
}

TEST_F(Doctor, JsonListsEveryFeatureWithWhatIsLostAndTheFix) {
  Outcome o = Cordon({"doctor", "--json"});
  nlohmann::json report = nlohmann::json::parse(o.out);
  ExpectExitMatchesVerdict(o, report);
  for (const char* id : {"user_namespace", "mount_namespace", "pid_namespace", "net_namespace",
                         "ipc_namespace", "uts_namespace", "proc_mount", "mount_setattr",
                         "landlock", "seccomp", "pidfd", "cgroups", "bubblewrap", "init_reaper"}) {
    const nlohmann::json& f = Feature(report, id);
    EXPECT_TRUE(f["present"].is_boolean()) << id;
    EXPECT_TRUE(f["required"].is_boolean()) << id;
    EXPECT_FALSE(f["used_for"].get<std::string>().empty()) << id;
    EXPECT_FALSE(f["without"].get<std::string>().empty()) << id;
    EXPECT_EQ(f["present"].get<bool>(), f["fixes"].empty()) << id;
  }
  // The build puts cordon-init where cordon looks for it. (A second link, such as perf's
  // build-id cache makes on a developer's machine, is the one case doctor is there to name.)
  const nlohmann::json& reaper = Feature(report, "init_reaper");
  if (reaper["detail"].get<std::string>().find("single-link") == std::string::npos) {
    EXPECT_TRUE(reaper["present"].get<bool>()) << reaper["detail"];
  }
  EXPECT_TRUE(report["sysctls"].contains("user.max_user_namespaces"));
  EXPECT_EQ(report["landlock_abi_levels"].size(), 7u);
  EXPECT_EQ(report["configuration"]["mode"], "workspace_write");
  if (MustWork()) {
    // This machine has every feature the default configuration needs.
    EXPECT_TRUE(report["ok"].get<bool>()) << o.out;
    EXPECT_EQ(o.exit_code, 0);
    EXPECT_TRUE(Feature(report, "user_namespace")["present"].get<bool>());
  }
}

TEST_F(Doctor, HumanOutputNamesEachFeatureAndTheVerdict) {
  Outcome o = Cordon({"doctor"});
  EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << o.err;
  for (const char* name : {"user namespaces", "Landlock", "seccomp filters", "pidfd",
                           "cgroups for per-run limits", "bubblewrap", "without it:",
                           "Landlock ABI levels", "kernel.apparmor_restrict_unprivileged_userns"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
  EXPECT_NE(o.out.find(o.exit_code == 0 ? "OK: every feature" : "NOT OK"), std::string::npos);
}

TEST_F(Doctor, ModeOffNeedsNothingAndExitsZero) {
  Outcome o = Cordon({"doctor", "--json", "--mode", "off"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json report = nlohmann::json::parse(o.out);
  EXPECT_TRUE(report["ok"].get<bool>());
  for (const nlohmann::json& f : report["features"]) EXPECT_FALSE(f["required"].get<bool>());
}

TEST_F(Doctor, BadFlagsAreASetupError) {
  Outcome o = Cordon({"doctor", "--mode", "readonly"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("read_only"), std::string::npos) << o.err;
}

TEST_F(Doctor, UnderASeccompFilterRefusingUserNamespacesTheyAreMissingWithAFix) {
  Invocation inv = CordonInvocation({"doctor", "--json"});
  inv.refuse_user_namespaces = true;
  Outcome o = RunBinary(inv);
  nlohmann::json report = nlohmann::json::parse(o.out);
  const nlohmann::json& userns = Feature(report, "user_namespace");
  EXPECT_FALSE(userns["present"].get<bool>()) << o.out;
  ASSERT_FALSE(userns["fixes"].empty());
  EXPECT_NE(userns["fixes"][0].get<std::string>().find("seccomp filter"), std::string::npos)
      << userns["fixes"];
  EXPECT_NE(userns["fixes"].dump().find("seccomp=unconfined"), std::string::npos);
  EXPECT_EQ(report["host"]["seccomp_mode"], 2);
  EXPECT_EQ(report["host"]["inside_cordon"], false);
  ExpectExitMatchesVerdict(o, report);
  // What still works is reported as present.
  EXPECT_TRUE(Feature(report, "seccomp")["present"].get<bool>());
}

TEST_F(Doctor, InsideCordonsOwnSandboxUserNamespacesAreMissingWithAFix) {
  // The binary is copied into the workspace: the build tree may lie under the host's /tmp,
  // which the sandbox replaces with a private one.
  StageCordon(workspace_ / "staged");
  Outcome o = Cordon({"run", "--", "./staged/bin/cordon", "doctor", "--json"});
  nlohmann::json report = nlohmann::json::parse(o.out);
  const nlohmann::json& userns = Feature(report, "user_namespace");
  EXPECT_FALSE(userns["present"].get<bool>()) << o.out;
  ASSERT_FALSE(userns["fixes"].empty());
  EXPECT_NE(userns["fixes"][0].get<std::string>().find("inside a cordon sandbox"),
            std::string::npos)
      << userns["fixes"];
  EXPECT_EQ(report["host"]["inside_cordon"], true);
  EXPECT_GE(report["host"]["seccomp_filters"].get<int>(), 1);
  ExpectExitMatchesVerdict(o, report);
}

}  // namespace
}  // namespace cordon::e2e
