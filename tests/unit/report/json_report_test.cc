#include "report/json_report.h"

#include <gtest/gtest.h>

namespace cordon::report {
namespace {

TEST(JsonReport, RunResultCarriesStatusCodesAndOutputCounts) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.exit_code = 2;
  r.stdout_data = {"out", 3, 0};
  r.stderr_data = {"head\n[cordon: 10 bytes omitted]\ntail", 24, 10};
  auto j = RunResultToJson(r);
  EXPECT_EQ(j["status"], "exited");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["command_exit_code"], 2);
  EXPECT_EQ(j["stdout"], "out");
  EXPECT_EQ(j["stderr_truncated_bytes"], 10);
  EXPECT_FALSE(j.contains("signal"));
}

TEST(JsonReport, TimeoutReportsSignalAndExitCode124) {
  RunResult r;
  r.status = RunStatus::kTimedOut;
  r.signal = 9;
  auto j = RunResultToJson(r);
  EXPECT_EQ(j["timed_out"], true);
  EXPECT_EQ(j["exit_code"], 124);
  EXPECT_EQ(j["signal"], 9);
  EXPECT_FALSE(j.contains("command_exit_code"));
}

TEST(JsonReport, InvalidUtf8InOutputIsReplacedNotThrown) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.stdout_data.data = std::string("ok\xff\xfe", 4);
  std::string text = Dump(RunResultToJson(r));
  EXPECT_NE(text.find("ok\xEF\xBF\xBD"), std::string::npos);
  // Twin: valid UTF-8 passes unchanged.
  r.stdout_data.data = "caf\xC3\xA9";
  EXPECT_NE(Dump(RunResultToJson(r)).find("caf\xC3\xA9"), std::string::npos);
}

TEST(JsonReport, CapabilitiesSayWhetherCommandsCanRun) {
  Capabilities c;
  c.backend = "native";
  auto ok = CapabilitiesToJson(c);
  EXPECT_EQ(ok["can_run"], true);
  EXPECT_EQ(ok["mode"], "workspace_write");
  c.missing.push_back("user namespaces are disabled");
  auto refused = CapabilitiesToJson(c);
  EXPECT_EQ(refused["can_run"], false);
  EXPECT_EQ(refused["missing"][0], "user namespaces are disabled");
}

TEST(JsonReport, CapabilitiesNameTheParentProxyOrNull) {
  Capabilities c;
  EXPECT_TRUE(CapabilitiesToJson(c)["parent_proxy"].is_null());
  c.parent_proxy = "proxy.example:3128 (from HTTPS_PROXY)";
  EXPECT_EQ(CapabilitiesToJson(c)["parent_proxy"], "proxy.example:3128 (from HTTPS_PROXY)");
}

TEST(JsonReport, DenialCarriesRuleAndMatchedCommand) {
  Decision d;
  d.verdict = Verdict::kDeny;
  d.rule_id = "default.privilege";
  d.matched_command = "sudo ls";
  d.reason = "privilege escalation";
  auto j = DecisionToJson(d);
  EXPECT_EQ(j["verdict"], "deny");
  EXPECT_EQ(j["matched_command"], "sudo ls");
  EXPECT_FALSE(j.contains("pattern"));
}

}  // namespace
}  // namespace cordon::report

namespace cordon::report {
namespace {

TEST(JsonReportLimits, RunResultNamesTheLimitThatEndedIt) {
  RunResult r;
  r.status = RunStatus::kSignaled;
  r.signal = 9;
  r.limit = RunLimit::kMemory;
  r.limits_reached = {RunLimit::kProcesses, RunLimit::kMemory};
  auto j = RunResultToJson(r);
  EXPECT_EQ(j["limit"], "memory");
  EXPECT_EQ(j["limits_reached"], nlohmann::json::array({"processes", "memory"}));
}

TEST(JsonReportLimits, RunResultWithoutALimitSaysNull) {
  RunResult r;
  r.status = RunStatus::kExited;
  auto j = RunResultToJson(r);
  EXPECT_TRUE(j["limit"].is_null());
  EXPECT_TRUE(j["limits_reached"].empty());
}

TEST(JsonReportLimits, CapabilitiesListEachLimitWithItsMechanism) {
  Capabilities c;
  c.limits = {{"memory_bytes", 1 << 26, "cgroup v1 memory.limit_in_bytes", true},
              {"processes", 64, "", false}};
  auto j = CapabilitiesToJson(c);
  EXPECT_EQ(j["limits"]["memory_bytes"]["value"], 1 << 26);
  EXPECT_EQ(j["limits"]["memory_bytes"]["enforced"], true);
  EXPECT_EQ(j["limits"]["memory_bytes"]["mechanism"], "cgroup v1 memory.limit_in_bytes");
  EXPECT_EQ(j["limits"]["processes"]["enforced"], false);
  EXPECT_TRUE(j["limits"]["processes"]["mechanism"].is_null());
}

}  // namespace
}  // namespace cordon::report
