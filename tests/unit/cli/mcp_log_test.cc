// cordon mcp's start-up log (cli/mcp_log.h): one line per server that could not start, a private
// file, and a full log moved aside rather than grown without end.
#include "cli/mcp_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
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

// A FIFO in the log's place would block the open, and with it the server's start.
TEST(McpLog, AFifoInPlaceOfTheLogIsRefusedAtOnce) {
  test_support::TempDir tmp;
  const std::filesystem::path log = tmp.path() / "mcp.log";
  ASSERT_EQ(::mkfifo(log.c_str(), 0600), 0);
  EXPECT_FALSE(AppendMcpLog(log, "/w", "x").has_value());
}

// A symlinked directory is not followed: no chmod or write lands where it points.
TEST(McpLog, ASymlinkedDirectoryIsRefused) {
  test_support::TempDir tmp;
  std::filesystem::create_directory(tmp.path() / "elsewhere");
  ::chmod((tmp.path() / "elsewhere").c_str(), 0755);
  std::filesystem::create_symlink(tmp.path() / "elsewhere", tmp.path() / "cordon");
  EXPECT_FALSE(AppendMcpLog(tmp.path() / "cordon/mcp.log", "/w", "x").has_value());
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "elsewhere/mcp.log"));
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() / "elsewhere").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST(McpLog, ControlCharactersCannotStartALineOrReachATerminal) {
  test_support::TempDir tmp;
  const std::filesystem::path log = tmp.path() / "mcp.log";
  ASSERT_TRUE(AppendMcpLog(log, "/w\nx", "bad\nforged line \x1b[31m").has_value());
  const std::string text = Read(log);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("in /w\\x0ax: bad\\x0aforged line \\x1b[31m"), std::string::npos) << text;
}

}  // namespace
}  // namespace cordon::cli
