#include "report/run_outcome.h"

#include <gtest/gtest.h>

#include "report/json_report.h"

namespace cordon::report {
namespace {

Denial Network(const std::string& target) {
  return {"connect", target, "network", "sandbox.network: deny", "allow the network"};
}

TEST(Denials, EachSandboxRefusalGetsALineWithItsLayerRuleAndFix) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.exit_code = 7;
  r.denials = {Network("192.0.2.1:443"),
               {"unix_socket", "/run/docker.sock", "seccomp",
                "unix sockets only beneath the "
                "writable roots",
                "by design: use the service from outside cordon"}};
  const RunOutcome out = RenderRunOutcome(r, false, std::chrono::seconds(1));
  EXPECT_EQ(out.stderr_text,
            "cordon: connect 192.0.2.1:443 refused (network: sandbox.network: deny); fix: allow "
            "the network\n"
            "cordon: unix_socket /run/docker.sock refused (seccomp: unix sockets only beneath "
            "the writable roots); by design: use the service from outside cordon\n");
  // --quiet: none of them.
  EXPECT_EQ(RenderRunOutcome(r, false, std::chrono::seconds(1), false).stderr_text, "");
}

TEST(Denials, AtMostFiveLinesAndACountOfTheRest) {
  RunResult r;
  r.status = RunStatus::kExited;
  for (int i = 0; i < 8; ++i) r.denials.push_back(Network("192.0.2." + std::to_string(i) + ":80"));
  const std::string text = RenderRunOutcome(r, false, std::chrono::seconds(1)).stderr_text;
  EXPECT_NE(text.find("192.0.2.4:80"), std::string::npos);
  EXPECT_EQ(text.find("192.0.2.5:80"), std::string::npos);
  EXPECT_NE(text.find("...and 3 more refused (--json lists them)"), std::string::npos) << text;
}

TEST(Denials, ThePolicyAndTheLimitsKeepTheirOwnLinesOnly) {
  RunResult r;
  r.status = RunStatus::kTimedOut;
  r.limit = RunLimit::kTimeout;
  r.limits_reached = {RunLimit::kTimeout};
  r.denials = {{"limit", "timeout", "limits", "limits.timeout_seconds", "a higher limit"}};
  const std::string text = RenderRunOutcome(r, false, std::chrono::seconds(2)).stderr_text;
  EXPECT_EQ(text, "cordon: timed out after 2 s; every process of the command was killed\n");
}

TEST(Denials, TheJsonReportListsEveryOne) {
  RunResult r;
  r.status = RunStatus::kExited;
  EXPECT_EQ(RunResultToJson(r)["denials"], nlohmann::json::array());
  r.denials = {Network("192.0.2.1:443")};
  const nlohmann::json j = RunResultToJson(r)["denials"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["kind"], "connect");
  EXPECT_EQ(j[0]["target"], "192.0.2.1:443");
  EXPECT_EQ(j[0]["layer"], "network");
  EXPECT_EQ(j[0]["rule"], "sandbox.network: deny");
  EXPECT_EQ(j[0]["fix"], "allow the network");
  // And --json prints it whatever --quiet says.
  EXPECT_NE(RenderRunOutcome(r, true, std::chrono::seconds(1), false).stdout_text.find("192.0.2.1"),
            std::string::npos);
}

}  // namespace
}  // namespace cordon::report
