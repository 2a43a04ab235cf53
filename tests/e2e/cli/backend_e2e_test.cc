// `--backend` end to end: `cordon status` names the backend and why, `cordon run --backend
// bwrap` runs through bubblewrap with the same confinement, and a backend this machine cannot
// run is refused with exit 125 before anything starts.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using BackendCommand = CliTest;
namespace fs = std::filesystem;

bool HaveBwrap() { return ::access("/usr/bin/bwrap", X_OK) == 0; }

TEST_F(BackendCommand, StatusNamesTheAutoChoiceAndAConfiguredBwrapWithItsReason) {
  if (!HaveBwrap()) GTEST_SKIP() << "bubblewrap not installed";
  Outcome automatic = Cordon({"status", "--json"});
  ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
  auto a = nlohmann::json::parse(automatic.out);
  EXPECT_NE(a["backend_reason"].get<std::string>().find("auto"), std::string::npos) << a;
  Outcome bwrap = Cordon({"status", "--json", "--backend", "bwrap"});
  ASSERT_EQ(bwrap.exit_code, 0) << bwrap.err;
  auto b = nlohmann::json::parse(bwrap.out);
  EXPECT_EQ(b["backend"], "bwrap") << b;
  EXPECT_NE(b["backend_reason"].get<std::string>().find("bubblewrap"), std::string::npos) << b;
}

TEST_F(BackendCommand, RunOnBwrapWritesTheWorkspaceButNotEtc) {
  if (!HaveBwrap()) GTEST_SKIP() << "bubblewrap not installed";
  const std::string etc = "/etc/cordon-e2e-bwrap-" + std::to_string(::getpid());
  Outcome o = Cordon({"run", "--backend", "bwrap", "--json", "-c",
                      "echo x > made; echo y > " + etc + " 2>/dev/null; exit 0"});
  const bool landed = fs::exists(etc);  // judged from outside
  fs::remove(etc);
  EXPECT_FALSE(landed) << "the write outside the workspace landed";
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["enforcement"]["backend"], "bwrap") << j;
  EXPECT_TRUE(fs::exists(workspace_ / "made"));
}

TEST_F(BackendCommand, SeatbeltOnLinuxIsRefusedWith125AndStartsNothing) {
  Outcome o = Cordon({"run", "--backend", "seatbelt", "-c", "touch started"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("macOS"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(workspace_ / "started"));
  // Twin: the same command on the default backend runs.
  EXPECT_EQ(Cordon({"run", "-c", "touch started"}).exit_code, 0);
  EXPECT_TRUE(fs::exists(workspace_ / "started"));
}

}  // namespace
}  // namespace cordon::e2e
