// Writes outside the allowed places: direct, through links, through /proc, through an inherited
// descriptor, through the host's shared scratch directories, and (as root) through mounts,
// device nodes and /proc/sys.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape_cases.h"

namespace cordon::escape_test {
namespace {

std::function<bool(const Fixture&)> FileIn(const char* dir, std::string name) {
  return [dir, name](const Fixture& f) {
    const std::string d = dir;
    const std::filesystem::path base = d == "out" ? f.out : d == "ws" ? f.ws : f.root;
    return Exists(base / name);
  };
}

// A host path outside the run's tree, named after the run's token; removed at the end.
std::function<void(Fixture&)> HostScratch(std::string dir) {
  return [dir](Fixture& f) {
    const std::filesystem::path path = dir + "/cordon-escape-" + f.token;
    f.vars["SCRATCH"] = path.string();
    f.teardown.push_back([path] {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    });
  };
}

bool ScratchLanded(const Fixture& f) { return Exists(f.vars.at("SCRATCH")); }

// out/ro: a read-only bind mount of itself on the host (as root), so that uncovering or
// remounting it is what makes a write land.
void ReadOnlyBind(Fixture& f) {
  const auto dir = f.out / "ro";
  std::filesystem::create_directory(dir);
  if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
      ::mount(nullptr, dir.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
    f.not_applicable = "cannot make a read-only bind mount on the host";
  }
  f.teardown.push_back([dir] { ::umount2(dir.c_str(), MNT_DETACH); });
}

bool IsDevice(const std::filesystem::path& path, mode_t type) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

constexpr const char* kSysctl = "/proc/sys/kernel/printk_ratelimit_burst";

}  // namespace

std::vector<Case> WriteCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string script, std::function<bool(const Fixture&)> landed,
                 std::function<void(Fixture&)> setup = {}) {
    Case c;
    c.category = "write";
    c.name = std::move(name);
    c.script = std::move(script);
    c.landed = std::move(landed);
    c.setup = std::move(setup);
    cases.push_back(std::move(c));
    return &cases.back();
  };
  add("direct-outside-workspace", "echo pwned > @OUT@/direct", FileIn("out", "direct"));
  add("workspace-parent", "echo pwned > @WS@/../parent-file", FileIn("root", "parent-file"));
  add("caller-home-bashrc", "echo pwned >> @HOME@/.bashrc", FileIn("root", "home/.bashrc"));
  add("symlink-created-inside", "ln -s @OUT@/via-link @WS@/link && echo pwned > @WS@/link",
      FileIn("out", "via-link"));
  add("symlink-to-directory", "ln -s @OUT@ @WS@/dirlink && echo pwned > @WS@/dirlink/via-dirlink",
      FileIn("out", "via-dirlink"));
  add("symlink-planted-before-run", "echo pwned > @WS@/planted", FileIn("out", "planted-target"),
      [](Fixture& f) {
        std::filesystem::create_symlink(f.out / "planted-target", f.ws / "planted");
      });
  add(
      "hardlink-created-inside", "ln @OUT@/victim @WS@/hardlink && echo pwned > @WS@/hardlink",
      [](const Fixture& f) { return ReadFile(f.out / "victim") != "original\n"; },
      [](Fixture& f) { WriteFile(f.out / "victim", "original\n"); });
  add("proc-self-root", "echo pwned > /proc/self/root@OUT@/via-proc-self-root",
      FileIn("out", "via-proc-self-root"));
  add(
      "proc-pid-root",
      "for p in /proc/[0-9]*; do echo pwned 2>/dev/null > $p/root@OUT@/via-pid-root; done\n"
      "echo pwned > /proc/@VICTIM@/root@OUT@/via-host-pid-root",
      [](const Fixture& f) {
        return Exists(f.out / "via-pid-root") || Exists(f.out / "via-host-pid-root");
      },
      [](Fixture& f) { StartVictim(f, {}, f.out); });
  add("proc-pid-cwd-of-host-process", "echo pwned > /proc/@VICTIM@/cwd/via-host-cwd",
      FileIn("out", "via-host-cwd"), [](Fixture& f) { StartVictim(f, {}, f.out); });
  // cordon must close every descriptor above 2 before the command runs.
  Case* c = add("inherited-directory-fd-via-proc", "echo pwned > /proc/self/fd/9/via-inherited-fd",
                FileIn("out", "via-inherited-fd"), [](Fixture& f) {
                  f.inherited_fd = ::open(f.out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                });
  c->baseline = Baseline::kBare;
  c = add(
      "inherited-file-fd", "echo pwned >&9",
      [](const Fixture& f) { return !ReadFile(f.out / "victim").empty(); },
      [](Fixture& f) {
        WriteFile(f.out / "victim", "");
        f.inherited_fd = ::open((f.out / "victim").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      });
  c->baseline = Baseline::kBare;
  add("host-dev-shm", "echo pwned > @SCRATCH@", ScratchLanded, HostScratch("/dev/shm"));
  add("host-var-tmp", "echo pwned > @SCRATCH@", ScratchLanded, HostScratch("/var/tmp"));
  add("host-tmp", "echo pwned > @SCRATCH@", ScratchLanded, HostScratch("/tmp"));
  add("read-only-mode-workspace", "echo pwned > @WS@/in-read-only-mode",
      FileIn("ws", "in-read-only-mode"))
      ->mode = SandboxMode::kReadOnly;

  // As root: the privileged routes.
  c = add("etc", "echo pwned > @SCRATCH@", ScratchLanded, HostScratch("/etc"));
  c->needs_root = true;
  c = add("remount-read-only-bind-rw",
          "mount -o remount,rw,bind @OUT@/ro && echo pwned > @OUT@/ro/f", FileIn("out", "ro/f"),
          ReadOnlyBind);
  c->needs_root = true;
  c = add("unmount-read-only-cover", "umount @OUT@/ro && echo pwned > @OUT@/ro/f",
          FileIn("out", "ro/f"), ReadOnlyBind);
  c->needs_root = true;
  c = add("bind-mount-outside-into-workspace",
          "mkdir @WS@/m && mount --bind @OUT@ @WS@/m && mount -o remount,rw,bind @WS@/m && "
          "echo pwned > @WS@/m/via-bind",
          FileIn("out", "via-bind"));
  c->needs_root = true;
  c = add("move-mount", "mkdir @WS@/m && mount --move @OUT@/ro @WS@/m && echo pwned > @OUT@/ro/f",
          FileIn("out", "ro/f"), [](Fixture& f) {
            ReadOnlyBind(f);
            ::mount(nullptr, (f.out / "ro").c_str(), nullptr, MS_PRIVATE, nullptr);
          });
  c->needs_root = true;
  c = add("mknod-char-device", "mknod @WS@/nulldev c 1 3 && echo pwned > @WS@/nulldev",
          [](const Fixture& f) { return IsDevice(f.ws / "nulldev", S_IFCHR); });
  c->needs_root = true;
  c = add("mknod-block-device-planted", "mknod @WS@/loopdev b 7 0",
          [](const Fixture& f) { return IsDevice(f.ws / "loopdev", S_IFBLK); });
  c->needs_root = true;
  // A sysctl that is not namespaced, harmless to change and restored afterwards.
  c = add(
      "proc-sys", std::string("echo $(( $(cat ") + kSysctl + ") + 1 )) > " + kSysctl,
      [](const Fixture& f) { return ReadFile(kSysctl) != f.vars.at("SYSCTL"); },
      [](Fixture& f) {
        const std::string old = ReadFile(kSysctl);
        f.vars["SYSCTL"] = old;
        f.teardown.push_back([old] { WriteFile(kSysctl, old); });
      });
  c->needs_root = true;
  return cases;
}

}  // namespace cordon::escape_test
