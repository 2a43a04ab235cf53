// Git metadata (hooks, config, replacing or creating .git, a .git file) and privilege
// (capabilities, setns into PID 1's or a host process's namespaces, unshare + mount, chroot
// breakout, setuid, keyring, bpf, perf, io_uring).
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sstream>

#include "escape_cases.h"

namespace cordon::escape_test {
namespace {

void GitRepository(Fixture& f) {
  WriteFile(f.ws / ".git/HEAD", "ref: refs/heads/main\n");
  WriteFile(f.ws / ".git/config", "[core]\n\trepositoryformatversion = 0\n");
  std::filesystem::create_directories(f.ws / ".git/hooks");
  std::filesystem::create_directories(f.ws / ".git/objects");
  std::filesystem::create_directories(f.ws / ".git/refs/heads");
}

// A workspace whose .git is a file naming a git directory inside the workspace (worktrees and
// submodules look like this).
void GitFile(Fixture& f) {
  WriteFile(f.ws / ".git", "gitdir: .repo-meta\n");
  WriteFile(f.ws / ".repo-meta/HEAD", "ref: refs/heads/main\n");
  WriteFile(f.ws / ".repo-meta/config", "[core]\n\trepositoryformatversion = 0\n");
  std::filesystem::create_directories(f.ws / ".repo-meta/hooks");
}

bool ConfigChanged(const Fixture& f) {
  return ReadFile(f.ws / ".git/config").find("fsmonitor") != std::string::npos;
}

bool HasKey(const std::string& description) {
  return ReadFile("/proc/keys").find(description) != std::string::npos;
}

// Invalidates the keys a baseline added to the caller's user keyring.
void ForgetKeys(Fixture& f) {
  const std::string description = "cordon-escape-" + f.token;
  f.teardown.push_back([description] {
    std::istringstream keys(ReadFile("/proc/keys"));
    for (std::string line; std::getline(keys, line);) {
      if (line.find(description) == std::string::npos) continue;
      const long id = std::stol(line.substr(0, line.find(' ')), nullptr, 16);
      constexpr int kKeyctlInvalidate = 21;
      ::syscall(SYS_keyctl, kKeyctlInvalidate, id);
    }
  });
}

// A copy of escape_attack, owned by `nobody` and setuid: running it as anyone else changes the
// effective uid, unless the sandbox neutralises setuid.
void SetuidNobody(Fixture& f) {
  const auto copy = f.out / "suid-whoami";
  std::filesystem::copy_file(AttackBinary(), copy);
  if (::chown(copy.c_str(), 65534, 65534) != 0 || ::chmod(copy.c_str(), 04755) != 0) {
    f.not_applicable = "cannot make a setuid copy";
  }
  // Where the program, running as nobody, can say so.
  std::filesystem::create_directory(f.ws / "proof");
  ::chmod((f.ws / "proof").c_str(), 0777);
}

// Some hosts (a VM's init in another user namespace, a container) do not let even root open
// PID 1's namespaces: the attack cannot work there unsandboxed either.
void PidOneReachable(Fixture& f) {
  std::error_code ec;
  const auto ns = std::filesystem::read_symlink("/proc/1/ns/mnt", ec);
  if (ec) f.not_applicable = "PID 1's namespaces are not reachable from this host's root";
}

bool FileMode(const std::filesystem::path& path, mode_t bits) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & bits) != 0;
}

bool OutputHas(const Fixture& f, const std::string& text) {
  return f.output.find(text) != std::string::npos;
}

}  // namespace

std::vector<Case> GitCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string script, std::function<bool(const Fixture&)> landed,
                 std::function<void(Fixture&)> setup = GitRepository) {
    Case c;
    c.category = "git";
    c.name = std::move(name);
    c.script = std::move(script);
    c.landed = std::move(landed);
    c.setup = std::move(setup);
    cases.push_back(std::move(c));
    return &cases.back();
  };
  add("hook", "printf '#!/bin/sh\\ntouch pwned\\n' > @WS@/.git/hooks/pre-commit",
      [](const Fixture& f) { return Exists(f.ws / ".git/hooks/pre-commit"); });
  add("config-fsmonitor", "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> @WS@/.git/config",
      ConfigChanged);
  add("replace-git-directory",
      "mv @WS@/.git @WS@/.git-old && mkdir -p @WS@/.git/hooks && "
      "printf '[core]\\n\\tfsmonitor = touch pwned\\n' > @WS@/.git/config",
      [](const Fixture& f) { return ConfigChanged(f) || Exists(f.ws / ".git-old"); });
  add("create-git-in-workspace-without-one",
      "mkdir -p @WS@/.git/hooks && printf '#!/bin/sh\\n' > @WS@/.git/hooks/pre-commit",
      // The hook is what lands: a run holds an empty read-only .git placeholder there
      // while its command runs, which git ignores.
      [](const Fixture& f) { return Exists(f.ws / ".git/hooks/pre-commit"); }, {});
  add(
      "git-file-target-hook", "printf '#!/bin/sh\\n' > @WS@/.repo-meta/hooks/pre-commit",
      [](const Fixture& f) { return Exists(f.ws / ".repo-meta/hooks/pre-commit"); }, GitFile);
  add(
      "git-file-rewritten", "echo 'gitdir: /elsewhere' > @WS@/.git",
      [](const Fixture& f) { return ReadFile(f.ws / ".git") != "gitdir: .repo-meta\n"; }, GitFile);
  return cases;
}

std::vector<Case> PrivilegeCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string script, std::function<bool(const Fixture&)> landed,
                 bool needs_root, std::function<void(Fixture&)> setup = {}) {
    Case c;
    c.category = "privilege";
    c.name = std::move(name);
    c.script = std::move(script);
    c.landed = std::move(landed);
    c.needs_root = needs_root;
    c.setup = std::move(setup);
    cases.push_back(std::move(c));
    return &cases.back();
  };
  const auto out_file = [](std::string name) {
    return [name](const Fixture& f) { return Exists(f.out / name); };
  };
  add(
      "effective-capabilities", "grep CapEff /proc/self/status",
      [](const Fixture& f) {
        return OutputHas(f, "CapEff:") && !OutputHas(f, "CapEff:\t0000000000000000");
      },
      true);
  add("setns-into-pid-1", "nsenter -t 1 -m -- sh -c 'echo pwned > @OUT@/via-setns-1'",
      out_file("via-setns-1"), true, PidOneReachable);
  add("setns-into-host-process",
      "nsenter -t @VICTIM@ -m -- sh -c 'echo pwned > @OUT@/via-setns-host'",
      out_file("via-setns-host"), true, [](Fixture& f) { StartVictim(f, {}, f.out); });
  add("unshare-then-mount",
      "mkdir @WS@/m && unshare -Urm sh -c 'mount --bind @OUT@ @WS@/m && "
      "mount -o remount,bind,rw @WS@/m && echo pwned > @WS@/m/via-unshare'",
      out_file("via-unshare"), false);
  add("chroot-breakout", "cd @WS@ && @BIN@ chroot-breakout @OUT@/via-chroot",
      out_file("via-chroot"), true);
  add("unshare-then-chroot-breakout",
      "cd @WS@ && unshare -Ur @BIN@ chroot-breakout @OUT@/via-chroot", out_file("via-chroot"),
      false);
  add(
      "setuid-binary-of-another-user", "@OUT@/suid-whoami whoami @WS@/proof/euid",
      [](const Fixture& f) { return ReadFile(f.ws / "proof/euid") == "euid=65534\n"; }, true,
      SetuidNobody);
  // A setuid-root program left in the workspace runs as root for every host user who can
  // reach it: planting one is a privilege escalation on the host.
  add(
      "plant-setuid-root-binary", "cp @BIN@ @WS@/planted && chmod 4755 @WS@/planted",
      [](const Fixture& f) { return FileMode(f.ws / "planted", S_ISUID); }, true);
  add(
      "plant-setgid-root-binary", "cp @BIN@ @WS@/planted && chmod 2755 @WS@/planted",
      [](const Fixture& f) { return FileMode(f.ws / "planted", S_ISGID); }, true);
  add(
      "keyring", "@BIN@ keyctl cordon-escape-@TOKEN@",
      [](const Fixture& f) { return HasKey("cordon-escape-" + f.token); }, false, ForgetKeys);
  add(
      "bpf", "echo \"bpf: $(@BIN@ bpf)\"", [](const Fixture& f) { return OutputHas(f, "bpf: ok"); },
      true);
  add(
      "perf-event-open", "echo \"perf: $(@BIN@ perf)\"",
      [](const Fixture& f) { return OutputHas(f, "perf: ok"); }, false);
  add(
      "io-uring", "echo \"io_uring: $(@BIN@ io-uring)\"",
      [](const Fixture& f) { return OutputHas(f, "io_uring: ok"); }, false);
  return cases;
}

std::vector<Case> AllCases() {
  std::vector<Case> all;
  for (auto* category : {WriteCases, SecretCases, EnvironmentCases, NetworkCases, ProcessCases,
                         GitCases, HostRunCases, PrivilegeCases}) {
    for (Case& c : category()) all.push_back(std::move(c));
  }
  return all;
}

}  // namespace cordon::escape_test
