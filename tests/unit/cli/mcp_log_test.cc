// cordon mcp's start-up log (cli/mcp_log.h): one line per server that could not start, a private
// file, and a full log moved aside rather than grown without end.
#include "cli/mcp_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace cordon::cli {
namespace {

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(McpLog, AppendsOneLineWithTheDirectoryAndTheReasonToAPrivateFile) {
  test_support::TempDir tmp;
  const std::filesystem::path log = tmp.path() / "state/cordon/mcp.log";
  ASSERT_TRUE(AppendMcpLog(log, "/w", "the workspace cannot be /").has_value());
  ASSERT_TRUE(AppendMcpLog(log, "/v", "bad config").has_value());
  const std::string text = Read(log);
  EXPECT_NE(text.find(" cordon mcp (pid "), std::string::npos) << text;
  EXPECT_NE(text.find(") in /w: the workspace cannot be /\n"), std::string::npos) << text;
  EXPECT_NE(text.find(") in /v: bad config\n"), std::string::npos) << text;
  struct stat st {};
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(log.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(McpLog, AFullLogIsMovedAside) {
  test_support::TempDir tmp;
  const std::filesystem::path log = tmp.path() / "mcp.log";
  std::ofstream(log) << std::string(1 << 20, 'x');
  ASSERT_TRUE(AppendMcpLog(log, "/w", "fresh").has_value());
  EXPECT_EQ(std::filesystem::file_size(tmp.path() / "mcp.log.1"), 1u << 20);
  EXPECT_NE(Read(log).find("fresh"), std::string::npos);
  EXPECT_LT(std::filesystem::file_size(log), 200u);
}

TEST(McpLog, ASymlinkInPlaceOfTheLogIsRefused) {
  test_support::TempDir tmp;
  const std::filesystem::path log = tmp.path() / "mcp.log";
  std::filesystem::create_symlink(tmp.path() / "elsewhere", log);
  Result<void> appended = AppendMcpLog(log, "/w", "x");
  ASSERT_FALSE(appended.has_value());
  EXPECT_NE(appended.error().message.find("open("), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "elsewhere"));
}

}  // namespace
}  // namespace cordon::cli
