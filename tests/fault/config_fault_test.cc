// The user config under faults: `cordon sandbox network allow|deny` killed at random moments
// (the file is always valid JSON with one of the two values), and on a full filesystem (a clear
// error, the old file intact).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "fault_support.h"

namespace cordon::fault_test {
namespace {

using std::chrono::milliseconds;

class ConfigFault : public FaultTest {
 protected:
  // `cordon sandbox` writes the file; no run path is involved.
  void SetUp() override {
    if (ServedRuns() || McpRuns()) GTEST_SKIP() << "writes the config file; runs no command";
    FaultTest::SetUp();
  }

  std::filesystem::path ConfigFile() const { return home_ / ".config/cordon/config.json"; }

  // Empty when the file is a valid config naming network allow or deny, else why not.
  std::string CheckConfig() const {
    if (!Exists(ConfigFile())) return "";  // never written yet: the defaults apply
    const std::string text = ReadFile(ConfigFile());
    const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return "not valid JSON: '" + text + "'";
    const auto network = json.value("/sandbox/network"_json_pointer, std::string());
    if (network != "allow" && network != "deny") return "no sandbox.network: " + text;
    return "";
  }

  std::vector<std::string> TempFiles() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(ConfigFile().parent_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name != "config.json") names.push_back(name);
    }
    return names;
  }
};

TEST_F(ConfigFault, KilledWhileWritingTheFileIsAlwaysValid) {
  // How long one uninterrupted write takes here, so the kills spread over the whole of it.
  const auto start = std::chrono::steady_clock::now();
  Child first = Start({CordonBinary(), "sandbox", "network", "deny"}, Env(), root_);
  ASSERT_TRUE(first.Wait(milliseconds(10000)));
  ASSERT_EQ(first.ExitCode(), 0) << first.output;
  const auto span = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  std::mt19937 random{std::random_device{}()};
  int completed = 0;
  int killed = 0;
  for (int i = 0; i < 60; ++i) {
    const char* value = i % 2 == 0 ? "allow" : "deny";
    Child child = Start({CordonBinary(), "sandbox", "network", value}, Env(), root_);
    // Somewhere between "not started yet" and "done": a typical write takes a few ms.
    std::this_thread::sleep_for(std::chrono::microseconds(random() % (span + span / 4)));
    if (::kill(child.pid, SIGKILL) == 0) ++killed;
    ASSERT_TRUE(child.Wait(milliseconds(10000)));
    if (WIFEXITED(child.status)) ++completed;
    ASSERT_EQ(CheckConfig(), "") << "after run " << i << " (" << value << ")";
  }
  // A final uninterrupted write works and reads back.
  Child last = Start({CordonBinary(), "sandbox", "network", "allow"}, Env(), root_);
  ASSERT_TRUE(last.Wait(milliseconds(10000)));
  EXPECT_EQ(last.ExitCode(), 0) << last.output;
  EXPECT_EQ(CheckConfig(), "");
  EXPECT_NE(ReadFile(ConfigFile()).find("\"allow\""), std::string::npos);
  Child status = Start({CordonBinary(), "sandbox", "status"}, Env(), root_);
  ASSERT_TRUE(status.Wait(milliseconds(10000)));
  EXPECT_EQ(status.ExitCode(), 0) << status.output;
  // A SIGKILL between creating the temporary file and renaming it cannot be cleaned up by the
  // killed process; say how many were left (they never replace the config).
  std::string left;
  for (const auto& name : TempFiles()) left += name + " ";
  RecordProperty("temp_files_left", left);
  std::printf("config kill test: %d runs completed, %d killed mid-way, temp files left: %s\n",
              completed, 60 - completed, left.empty() ? "none" : left.c_str());
  EXPECT_GT(killed, 0);
}

// A full filesystem under the config directory: a tmpfs of 64 KiB mounted in a user and mount
// namespace of the test's own (so this runs unprivileged too), filled before the write.
TEST_F(ConfigFault, FullFilesystemGivesAClearErrorAndKeepsTheOldFile) {
  const auto dir = home_ / ".config/cordon";
  std::filesystem::create_directories(dir);
  const std::string script =
      "mount -t tmpfs -o size=64k tmpfs '" + dir.string() + "' || exit 99\n" +
      "printf '{\\n  \"sandbox\": {\\n    \"network\": \"deny\"\\n  }\\n}\\n' > '" + dir.string() +
      "/config.json'\n" + "dd if=/dev/zero of='" + dir.string() +
      "/filler' bs=4k 2>/dev/null\n"
      "'" +
      CordonBinary() + "' sandbox network allow; echo \"exit=$?\"\n" + "cat '" + dir.string() +
      "/config.json'\necho LISTING; ls -a '" + dir.string() + "'\n";
  WriteFile(root_ / "full.sh", script);
  Child child = Start({"unshare", "-Urm", "/bin/sh", (root_ / "full.sh").string()}, Env(), root_);
  ASSERT_TRUE(child.Wait(milliseconds(30000)));
  if (child.ExitCode() == 99 || child.output.find("unshare:") != std::string::npos) {
    if (MustWork()) FAIL() << "cannot mount a small tmpfs: " << child.output;
    GTEST_SKIP() << "cannot mount a small tmpfs in a user namespace: " << child.output;
  }
  const std::string& out = child.output;
  EXPECT_EQ(out.find("exit=0"), std::string::npos) << "the write claimed success:\n" << out;
  EXPECT_NE(out.find("exit=125"), std::string::npos) << out;
  EXPECT_NE(out.find("No space left"), std::string::npos) << "no clear reason:\n" << out;
  EXPECT_NE(out.find("\"network\": \"deny\""), std::string::npos) << "old file changed:\n" << out;
  const std::string listing = out.substr(std::min(out.find("LISTING"), out.size()));
  EXPECT_EQ(listing.find(".tmp"), std::string::npos) << "temporary file left:\n" << out;
}

}  // namespace
}  // namespace cordon::fault_test
