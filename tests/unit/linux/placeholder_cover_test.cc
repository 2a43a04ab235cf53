// The placeholder cover (linux/placeholder_cover.h) in a user and mount namespace of a forked
// child: what the covered names let a process with no capability there do, and which
// placeholders it refuses to cover.
#include "linux/placeholder_cover.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace cordon::linux_native {
namespace {

namespace fs = std::filesystem;

bool WriteProc(const char* path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// Runs `body` in a forked child that is root of its own user namespace (mapped to our ids)
// with a private mount namespace; returns what it wrote on its pipe, or "skipped".
std::string InOwnNamespaces(const std::function<std::string()>& body) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string out;
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 || !WriteProc("/proc/self/setgroups", "deny") ||
        !WriteProc("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !WriteProc("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1") ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      out = "skipped";
    } else {
      out = body();
    }
    (void)!::write(pipe_fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) out.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return out;
}

// "ok" or the errno name-ish number of the call.
std::string Outcome(int rc) { return rc >= 0 ? "ok" : std::string(std::strerror(errno)); }

// What can be done to the covered names, one line per attempt. A busy mount point and a
// read-only mount refuse these whatever the capabilities (the command has none, so it cannot
// unmount the covers either: tests/kernel).
std::string Attempts(const fs::path& root) {
  std::string out;
  auto line = [&](const char* what, int rc) {
    out += std::string(what) + ": " + Outcome(rc) + "\n";
  };
  const std::string link = root / ".mcp.json";
  const std::string dir = root / ".claude";
  line("write link", ::open(link.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  line("unlink link", ::unlink(link.c_str()));
  line("rename link", ::rename(link.c_str(), (root / "moved").c_str()));
  line("symlink over link", ::symlink("/elsewhere", link.c_str()));
  char target[128] = {};
  if (::readlink(link.c_str(), target, sizeof target - 1) > 0) {
    out += std::string("read link: ") + target + "\n";
  }
  line("create in dir",
       ::open((dir + "/settings.json").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  line("rmdir dir", ::rmdir(dir.c_str()));
  line("rename dir", ::rename(dir.c_str(), (root / "moved-dir").c_str()));
  line("beside", ::open((root / "notes.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  return out;
}

class PlaceholderCoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/cordon-cover-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    root_ = fs::canonical(dir);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(PlaceholderCoverTest, CoveredNamesCannotBeWrittenRemovedRenamedOrReplaced) {
  fs::create_symlink(kPlaceholderLinkTarget, root_ / ".mcp.json");
  fs::create_directory(root_ / ".claude");
  const std::string out = InOwnNamespaces([&] {
    std::string covered =
        "link " + Outcome(CoverPlaceholder((root_ / ".mcp.json").c_str(), false)) + ", dir " +
        Outcome(CoverPlaceholder((root_ / ".claude").c_str(), true)) + "\n";
    return covered + Attempts(root_);
  });
  if (out == "skipped") GTEST_SKIP() << "no user namespaces here";
  EXPECT_EQ(out,
            "link ok, dir ok\n"
            "write link: No such file or directory\n"
            "unlink link: Device or resource busy\n"
            "rename link: Device or resource busy\n"
            "symlink over link: File exists\n"
            "read link: /proc/cordon-absent-during-sandboxed-run\n"
            "create in dir: Read-only file system\n"
            "rmdir dir: Device or resource busy\n"
            "rename dir: Device or resource busy\n"
            "beside: ok\n");
  // On the host the placeholders are as they were: the mounts lived in the child's namespace.
  EXPECT_TRUE(fs::is_symlink(root_ / ".mcp.json"));
  EXPECT_FALSE(fs::exists(root_ / ".mcp.json"));  // dangling: absent to every tool
  EXPECT_TRUE(fs::is_empty(root_ / ".claude"));
}

TEST_F(PlaceholderCoverTest, AnythingButThePlaceholderCordonMadeIsRefused) {
  fs::create_symlink("/elsewhere", root_ / "other-link");
  fs::create_symlink(kPlaceholderLinkTarget, root_ / "link");
  fs::create_directory(root_ / "dir");
  std::ofstream(root_ / "file") << "x";
  fs::create_directory(root_ / "real");
  fs::create_symlink(kPlaceholderLinkTarget, root_ / "real/link");
  fs::create_directory_symlink(root_ / "real", root_ / "via");
  const std::string out = InOwnNamespaces([&] {
    auto cover = [&](const char* name, bool directory) {
      return std::string(name) + " " +
             Outcome(CoverPlaceholder((root_ / name).c_str(), directory)) + "\n";
    };
    return cover("other-link", false) + cover("link", true) + cover("dir", false) +
           cover("file", false) + cover("via/link", false) + cover("missing", false) +
           cover("real/link", false);
  });
  if (out == "skipped") GTEST_SKIP() << "no user namespaces here";
  EXPECT_EQ(out,
            "other-link Too many links\n"
            "link Not a directory\n"
            "dir Is a directory\n"
            "file Too many links\n"
            "via/link Too many levels of symbolic links\n"
            "missing No such file or directory\n"
            "real/link ok\n");
}

}  // namespace
}  // namespace cordon::linux_native
