// sandbox.home = "hidden" (decision 0038), judged from outside: a home laid out as people's
// are — the workspace in it, other projects beside it, twenty secret-like files where people
// keep them (dot-files, histories, XDG config, data and cache, documents, a browser profile), a
// credential the host creates while the command runs — shows the command nothing but what is
// granted: the workspace, a toolchain's bin directory on the PATH, a readable_paths entry.
// Through every path (CORDON_KERNEL_PATH) and backend (CORDON_TEST_BACKEND) the suite runs on.
//
// The test home lies outside /tmp and /var/tmp (the sandbox replaces both: a secret planted
// there would be invisible, not hidden): in $CORDON_ESCAPE_BASE (scripts/run_unprivileged.sh
// gives the test user one), else in /var/lib.
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;

class HomeViewTest : public KernelTest {
 protected:
  void SetUp() override {
    KernelTest::SetUp();
    const char* base = ::getenv("CORDON_ESCAPE_BASE");
    std::string pattern =
        fmt::format("{}/cordon-home-XXXXXX", base != nullptr && base[0] == '/' ? base : "/var/lib");
    if (::mkdtemp(pattern.data()) == nullptr) GTEST_SKIP() << "cannot make " << pattern;
    test_home_ = pattern;
    for (const auto& [path, text] : std::initializer_list<std::pair<const char*, const char*>>{
             {"other/.env", "SECRET-other-project\n"},
             {".bash_history", "SECRET-history\n"},
             {".vault-token", "SECRET-vault\n"},
             {".config/sometool/token.json", "SECRET-xdg-token\n"},
             {".ssh/id_ed25519", "SECRET-key\n"},
             // Where else people keep secrets that no built-in list names (twenty in all).
             {".pgpass", "SECRET-pgpass\n"},
             {".terraform.d/credentials.tfrc.json", "SECRET-terraform\n"},
             {".zsh_history", "SECRET-zsh-history\n"},
             {".psql_history", "SECRET-psql-history\n"},
             {".python_history", "SECRET-python-history\n"},
             {".local/share/keyrings/login.keyring", "SECRET-keyring\n"},
             {".local/share/sometool/session.db", "SECRET-xdg-data\n"},
             {".config/hub", "SECRET-hub\n"},
             {".config/Code/User/globalStorage/state.vscdb", "SECRET-editor-state\n"},
             {".mozilla/firefox/p.default/logins.json", "SECRET-browser\n"},
             {"Documents/passwords.txt", "SECRET-documents\n"},
             {"other2/.env.local", "SECRET-other2\n"},
             {"other/config/master.key", "SECRET-master-key\n"},
             {".cache/sometool/auth", "SECRET-cache-token\n"},
             {".s3cfg", "SECRET-s3cfg\n"},
             {"granted/notes.txt", "granted notes\n"},
             {".local/bin/mytool", "#!/bin/sh\necho mytool ran\n"},
             {"proj/README", "the workspace\n"}}) {
      std::filesystem::create_directories((test_home_ / path).parent_path());
      std::ofstream(test_home_ / path) << text;
    }
    std::filesystem::permissions(test_home_ / ".local/bin/mytool",
                                 std::filesystem::perms::owner_all);
    saved_path_ = ::getenv("PATH") != nullptr ? ::getenv("PATH") : "/usr/bin:/bin";
    ::setenv("HOME", test_home_.c_str(), 1);
    ::setenv("PATH", ((test_home_ / ".local/bin").string() + ":" + saved_path_).c_str(), 1);
  }
  void TearDown() override {
    ::setenv("PATH", saved_path_.c_str(), 1);
    ::unsetenv("JAVA_HOME");
    ::unsetenv("CARGO_HOME");
    std::error_code ignored;
    if (!test_home_.empty()) std::filesystem::remove_all(test_home_, ignored);
    KernelTest::TearDown();  // restores HOME
  }

  Config HiddenConfig() const {
    Config config = MakeConfig();
    config.sandbox.home = HomeView::kHidden;
    config.sandbox.readable_paths = {test_home_ / "granted"};
    return config;
  }

  // Every small file under the home the command can find and read, and what `ls -a` of the
  // home shows; then what only the granted paths give.
  std::string Walk() const {
    return fmt::format(
        "H={0}; ls -A $H | tr '\\n' ' '; echo; "
        "for f in $H/other/.env $H/.bash_history $H/.vault-token $H/.config/sometool/token.json "
        "$H/.ssh/id_ed25519; do cat $f 2>/dev/null; done; "
        "find $H -type f 2>/dev/null | while read f; do cat \"$f\" 2>/dev/null; done | "
        "grep -c SECRET; "
        "mytool; cat $H/granted/notes.txt; echo w > written && cat written; "
        "touch $H/new 2>/dev/null && echo 'created in the home'; true",
        test_home_.string());
  }

  std::filesystem::path test_home_;
  std::string saved_path_;
};

TEST_F(HomeViewTest, TheHiddenHomeShowsOnlyTheWorkspaceAndWhatIsGranted) {
  auto session = SessionOrSkip(HiddenConfig(), test_home_ / "proj");
  if (!session) return;
  const RunResult result = Shell(*session, Walk());
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  // .cache holds cordon's tool caches (decision 0041) and nothing of the home's own .cache.
  EXPECT_EQ(result.stdout_data.data,
            ".cache .local granted proj \n0\nmytool ran\ngranted notes\nw\n")
      << Describe(result);
  EXPECT_EQ(ReadFile(test_home_ / "proj/written"), "w\n");
  EXPECT_FALSE(std::filesystem::exists(test_home_ / "new"));
}

// The twin that shows the walk finds what is there: today's read-only home gives all of it.
TEST_F(HomeViewTest, AReadOnlyHomeShowsEverySecretToTheSameWalk) {
  Config config = HiddenConfig();
  config.sandbox.home = HomeView::kReadOnly;
  auto session = SessionOrSkip(config, test_home_ / "proj");
  if (!session) return;
  const RunResult result = Shell(*session, Walk());
  // The walk reads nineteen of the twenty (the ssh key is on the built-in list).
  EXPECT_NE(result.stdout_data.data.find("\n19\n"), std::string::npos) << Describe(result);
  EXPECT_NE(result.stdout_data.data.find("SECRET-other-project"), std::string::npos)
      << Describe(result);
  EXPECT_NE(result.stdout_data.data.find("SECRET-xdg-token"), std::string::npos)
      << Describe(result);
  EXPECT_NE(result.stdout_data.data.find("mytool ran"), std::string::npos) << Describe(result);
}

// A credential the host writes into the home while the command runs (`aws configure`, a login)
// is not there for the command either, nor is one written between two commands of a session.
TEST_F(HomeViewTest, ASecretTheHostCreatesDuringOrBetweenCommandsStaysHidden) {
  auto session = SessionOrSkip(HiddenConfig(), test_home_ / "proj");
  if (!session) return;
  RunResult during;
  std::thread run([&] {
    during = Shell(*session, fmt::format("touch started; while [ ! -e go ]; do sleep 0.01; done; "
                                         "cat {0}/.late-token {0}/.config/late 2>/dev/null; "
                                         "ls -A {0} | grep -c late",
                                         test_home_.string()));
  });
  for (int i = 0; i < 1000 && !std::filesystem::exists(test_home_ / "proj/started"); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  std::ofstream(test_home_ / ".late-token") << "SECRET-late\n";
  std::ofstream(test_home_ / ".config/late") << "SECRET-late-config\n";
  std::ofstream(test_home_ / "proj/go") << "";
  run.join();
  EXPECT_EQ(during.stdout_data.data, "0\n") << Describe(during);
  const RunResult after =
      Shell(*session, fmt::format("cat {0}/.late-token 2>/dev/null; true", test_home_.string()));
  EXPECT_EQ(after.stdout_data.data, "") << Describe(after);
  EXPECT_EQ(after.status, RunStatus::kExited) << Describe(after);
}

// A granted directory shows what the host adds to it during the run (the grant is a bind),
// except where a secret belongs: `gh auth login` on the host while a command runs, with
// ~/.config granted, writes ~/.config/gh/hosts.yml, which Landlock's read allow-list keeps
// unreadable. The twin: another file in the grant reads.
TEST_F(HomeViewTest, ASecretTheHostCreatesInsideAGrantStaysUnreadable) {
  Config config = HiddenConfig();
  config.sandbox.readable_paths = {test_home_ / ".config"};
  auto session = SessionOrSkip(config, test_home_ / "proj");
  if (!session) return;
  if (session->GetCapabilities().enforcement.landlock_abi < 1) {
    GTEST_SKIP() << "the carve-out inside a grant is Landlock's";
  }
  RunResult during;
  std::thread run([&] {
    during = Shell(*session, fmt::format("touch started; while [ ! -e go ]; do sleep 0.01; done; "
                                         "cat {0}/.config/gh/hosts.yml 2>/dev/null; "
                                         "cat {0}/.config/sometool/later.txt",
                                         test_home_.string()));
  });
  for (int i = 0; i < 1000 && !std::filesystem::exists(test_home_ / "proj/started"); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  std::filesystem::create_directories(test_home_ / ".config/gh");
  std::ofstream(test_home_ / ".config/gh/hosts.yml") << "SECRET-gh-token\n";
  std::ofstream(test_home_ / ".config/sometool/later.txt") << "plain\n";
  std::ofstream(test_home_ / "proj/go") << "";
  run.join();
  EXPECT_EQ(during.stdout_data.data, "plain\n") << Describe(during);
}

// A toolchain installed in the home as rustup lays one out — proxies in ~/.cargo/bin that find
// the toolchain through RUSTUP_HOME, else $HOME/.rustup — runs unmodified although the
// command's HOME is private, with the home read-only and with it hidden; so does a JDK that
// JAVA_HOME names in the home. The twins: CARGO_HOME (a cache location, decision 0002) does not
// pass, and the cargo credentials beside the proxies stay unreadable.
TEST_F(HomeViewTest, AToolchainInTheHomeRunsUnmodifiedWithTheHomeReadOnlyOrHidden) {
  for (const auto& [path, text] : std::initializer_list<std::pair<const char*, const char*>>{
           {".rustup/settings.toml", "default_toolchain = \"test-chain\"\n"},
           {".rustup/toolchains/test-chain/bin/rustc", "#!/bin/sh\necho rustc from test-chain\n"},
           {".cargo/bin/rustc",
            "#!/bin/sh\nR=${RUSTUP_HOME:-$HOME/.rustup}\n"
            "t=$(sed -n 's/^default_toolchain = \"\\(.*\\)\"/\\1/p' \"$R/settings.toml\")\n"
            "[ -n \"$t\" ] || { echo 'rustup could not choose a version' >&2; exit 1; }\n"
            "exec \"$R/toolchains/$t/bin/${0##*/}\" \"$@\"\n"},
           {".cargo/credentials.toml", "SECRET-cargo-token\n"},
           {"jdk/bin/java", "#!/bin/sh\necho java from the home\n"}}) {
    std::filesystem::create_directories((test_home_ / path).parent_path());
    std::ofstream(test_home_ / path) << text;
  }
  for (const char* tool :
       {".rustup/toolchains/test-chain/bin/rustc", ".cargo/bin/rustc", "jdk/bin/java"}) {
    std::filesystem::permissions(test_home_ / tool, std::filesystem::perms::owner_all);
  }
  ::setenv("PATH", ((test_home_ / ".cargo/bin").string() + ":" + saved_path_).c_str(), 1);
  ::setenv("JAVA_HOME", (test_home_ / "jdk").c_str(), 1);
  ::setenv("CARGO_HOME", (test_home_ / ".cargo").c_str(), 1);
  for (const HomeView mode : {HomeView::kReadOnly, HomeView::kHidden}) {
    SCOPED_TRACE(mode == HomeView::kHidden ? "hidden" : "read_only");
    Config config = HiddenConfig();
    config.sandbox.home = mode;
    auto session = SessionOrSkip(config, test_home_ / "proj");
    if (!session) return;
    const RunResult result =
        Shell(*session, fmt::format("rustc; \"$JAVA_HOME/bin/java\"; echo ${{CARGO_HOME-unset}}; "
                                    "cat {}/.cargo/credentials.toml 2>/dev/null; true",
                                    test_home_.string()));
    // The caller's CARGO_HOME (its credentials.toml) is not passed: cargo gets cordon's cache.
    EXPECT_EQ(result.stdout_data.data,
              fmt::format("rustc from test-chain\njava from the home\n{}\n",
                          (test_home_ / ".cache/cordon/tool-caches/shared/cargo").string()))
        << Describe(result);
  }
}

// A tool path inside a writable root that an earlier command re-pointed at another part of the
// home (`rm -rf ~/go/bin; ln -s ~/other ~/go/bin`, with ~/go writable) grants nothing to the
// next command: where the link leads was the command's choice. Before, ~/other was granted
// and its .env read. The twin: a real ~/go/bin directory is the root's own and its tool runs.
TEST_F(HomeViewTest, AToolPathAnEarlierCommandRepointedGrantsNothing) {
  std::filesystem::create_directories(test_home_ / "go/bin");
  std::ofstream(test_home_ / "go/bin/gotool") << "#!/bin/sh\necho gotool ran\n";
  std::filesystem::permissions(test_home_ / "go/bin/gotool", std::filesystem::perms::owner_all);
  Config config = HiddenConfig();
  config.sandbox.writable_roots = {test_home_ / "go"};
  auto session = SessionOrSkip(config, test_home_ / "proj");
  if (!session) return;
  const std::string h = test_home_.string();
  RunResult result = Shell(*session, fmt::format("{}/go/bin/gotool", h));
  EXPECT_EQ(result.stdout_data.data, "gotool ran\n") << Describe(result);
  result = Shell(*session, fmt::format("rm -rf {0}/go/bin && ln -s {0}/other {0}/go/bin", h));
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  result = Shell(*session, fmt::format("cat {0}/other/.env {0}/go/bin/.env 2>&1; true", h));
  EXPECT_EQ(result.stdout_data.data.find("SECRET-other-project"), std::string::npos)
      << Describe(result);
}

// The test home mounted a second time elsewhere (a bind, as of /home into /srv, decision 0040):
// hidden there, with the home hidden and with it read-only (whose masks are by path), and a
// writable root that holds that mount, through which the whole home would be writable, is
// refused. The twin: the read-only home shows the same secret at its own path, so the probe
// reads what is there. Root only: it mounts on the host.
TEST_F(HomeViewTest, TheHomeMountedASecondTimeIsHiddenThereTooAndARootHoldingItIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "binds the test home on the host, which needs root";
  const std::filesystem::path outer = test_home_.string() + "-alias";
  const std::filesystem::path view = outer / "view";
  std::filesystem::create_directories(view);
  struct Unmount {
    std::filesystem::path outer, view;
    ~Unmount() {
      ::umount2(view.c_str(), MNT_DETACH);
      std::error_code ignored;
      std::filesystem::remove_all(outer, ignored);
    }
  } unmount{outer, view};
  ASSERT_EQ(::mount(test_home_.c_str(), view.c_str(), nullptr, MS_BIND, nullptr), 0)
      << std::strerror(errno);
  const std::string read =
      fmt::format("cat {0}/.vault-token {0}/other/.env 2>/dev/null; ls -A {0} 2>/dev/null | wc -l",
                  view.string());
  {
    auto session = SessionOrSkip(HiddenConfig(), test_home_ / "proj");
    if (!session) return;
    const RunResult hidden = Shell(*session, read);
    EXPECT_EQ(hidden.stdout_data.data, "0\n") << Describe(hidden);
  }
  {
    Config config = HiddenConfig();
    config.sandbox.home = HomeView::kReadOnly;
    auto session = SessionOrSkip(config, test_home_ / "proj");
    if (!session) return;
    const RunResult alias = Shell(*session, read);
    EXPECT_EQ(alias.stdout_data.data, "0\n") << Describe(alias);
    const RunResult shown = Shell(*session, "cat " + (test_home_ / ".vault-token").string());
    EXPECT_EQ(shown.stdout_data.data, "SECRET-vault\n") << Describe(shown);
  }
  {
    Config config = HiddenConfig();
    config.sandbox.writable_roots = {outer};
    auto session = SessionOrSkip(config, test_home_ / "proj");
    if (!session) return;
    const RunResult refused = Shell(*session, "echo ran");
    EXPECT_EQ(refused.status, RunStatus::kSetupFailed) << Describe(refused);
    EXPECT_NE(refused.error.find("mounted a second time"), std::string::npos) << refused.error;
    EXPECT_EQ(refused.stdout_data.data, "");
  }
  // A part of the home bound into the workspace (~/.config at proj/cfg) would be writable
  // there, tokens and all: refused too.
  const std::filesystem::path cfg = test_home_ / "proj/cfg";
  std::filesystem::create_directories(cfg);
  ASSERT_EQ(::mount((test_home_ / ".config").c_str(), cfg.c_str(), nullptr, MS_BIND, nullptr), 0)
      << std::strerror(errno);
  struct UnmountCfg {
    std::filesystem::path path;
    ~UnmountCfg() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount_cfg{cfg};
  auto session = SessionOrSkip(HiddenConfig(), test_home_ / "proj");
  if (!session) return;
  const RunResult part = Shell(*session, "cat cfg/sometool/token.json; echo ran");
  EXPECT_EQ(part.status, RunStatus::kSetupFailed) << Describe(part);
  EXPECT_NE(part.error.find(".config"), std::string::npos) << part.error;
  EXPECT_EQ(part.stdout_data.data, "");
}

// Other users' homes (/home) and, for a caller that is not root, /root: empty too.
TEST_F(HomeViewTest, OtherHomesAreEmptyToo) {
  auto session = SessionOrSkip(HiddenConfig(), test_home_ / "proj");
  if (!session) return;
  const RunResult result =
      Shell(*session,
            "{ [ -d /home ] && ls -A /home; } | wc -l; touch /home/x 2>/dev/null && echo made; "
            "true");
  EXPECT_EQ(result.stdout_data.data, "0\n") << Describe(result);
}

}  // namespace
}  // namespace cordon::kernel_test
