#!/usr/bin/env python3
"""cordon inside a real container runtime: podman from Debian, with its default seccomp profile
and capability set, rootful and rootless (issue 27). The installed cordon (`cmake --install` of
the build under test) and a static busybox make the container's root file system; no image is
pulled. In each container cordon's default config must either enforce (a write in the workspace
lands, one outside is refused, both judged from outside the container) or refuse the run with
exit 125 and the fix `cordon doctor` names. The twins: the same write outside, without cordon,
lands in each container, so the refusal is cordon's.

  podman_test.py BUILD_DIR        (root; tests/e2e/container/setup.sh installs podman)
Exit 77 (ctest's skip) when podman is not installed or this is not root.

This machine's hybrid cgroup layout (v1 controllers with a v2 hierarchy) is what crun refuses:
runc with the cgroupfs manager runs there. Without CAP_SYS_RESOURCE podman's default
RLIMIT_NOFILE (raised to the maximum) cannot be set, so a containers.conf of the test's own
keeps the caller's limits.
"""

import os
import pwd
import resource
import shutil
import subprocess
import sys
import tempfile

# tests/e2e/verdicts.py: one directory up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from verdicts import Failures  # noqa: E402

TEST_USER = "cordon-test"  # scripts/run_unprivileged.sh creates it
SUBIDS = "200000-265535"


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)


def make_rootfs(build, root, owner=None):
    """The container's root: cordon as installed, busybox for the shell and tools."""
    installed = run(["cmake", "--install", build, "--prefix", os.path.join(root, "usr")])
    if installed.returncode != 0:
        raise RuntimeError(f"cmake --install: {installed.stderr}")
    for d in ("bin", "etc", "proc", "sys", "dev", "tmp", "root", "work/ws", "work/outside"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    shutil.copy("/bin/busybox", os.path.join(root, "bin/busybox"))
    for tool in ("sh", "touch", "cat", "ls", "echo", "id"):
        os.symlink("busybox", os.path.join(root, "bin", tool))
    with open(os.path.join(root, "etc/passwd"), "w") as out:
        out.write("root:x:0:0:root:/root:/bin/sh\n")
    with open(os.path.join(root, "etc/group"), "w") as out:
        out.write("root:x:0:\n")
    os.symlink("/proc/mounts", os.path.join(root, "etc/mtab"))  # podman would create it
    if owner is not None:  # rootless: the user's uid is the container's root, who owns it all
        for where, dirs, files in os.walk(root):
            for name in dirs + files:
                os.lchown(os.path.join(where, name), owner.pw_uid, owner.pw_gid)
        os.lchown(root, owner.pw_uid, owner.pw_gid)
    os.chmod(root, 0o755)


def write_config(root, config, owner=None):
    path = os.path.join(root, "root/.config/cordon")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as out:
        out.write(config)
    if owner is not None:
        for d in ("root/.config", "root/.config/cordon", "root/.config/cordon/config.json"):
            os.chown(os.path.join(root, d), owner.pw_uid, owner.pw_gid)


class Podman:
    def __init__(self, scratch, rootless):
        self.rootless = rootless
        conf = os.path.join(scratch, "containers.conf")
        files = resource.getrlimit(resource.RLIMIT_NOFILE)
        # runc is refused even the caller's own RLIMIT_NPROC here; a lower one is accepted.
        procs = min(4096, resource.getrlimit(resource.RLIMIT_NPROC)[0])
        with open(conf, "w") as out:
            out.write(f'[containers]\ndefault_ulimits = ["nofile={files[0]}:{files[1]}", '
                      f'"nproc={procs}:{procs}"]\n')
        os.chmod(conf, 0o644)
        self.env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "CONTAINERS_CONF": conf,
                    "LANG": "C.UTF-8"}
        self.prefix = []
        if rootless:
            user = pwd.getpwnam(TEST_USER)
            runtime = os.path.join(scratch, "runtime")
            os.makedirs(runtime, mode=0o700)
            os.chown(runtime, user.pw_uid, user.pw_gid)
            home = os.path.join(scratch, "home")
            os.makedirs(home)
            os.chown(home, user.pw_uid, user.pw_gid)
            self.env.update(HOME=home, XDG_RUNTIME_DIR=runtime)
            self.prefix = ["runuser", "-u", TEST_USER, "--", "env", "-i",
                           *[f"{k}={v}" for k, v in self.env.items()]]

    def run(self, root, command, options=()):
        argv = [*self.prefix, "podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs",
                "run", "--rm", "--network", "none", "-w", "/work/ws", "-e", "HOME=/root",
                "-e", "CORDON_RUN_SERVER=off", *options, "--rootfs", root, *command]
        return run(argv, env=self.env, cwd="/")


def scenario(f, podman, root, name, options, expect, owner):
    """`expect`: "enforce" or "refuse"."""
    made = os.path.join(root, "work/ws/made")
    planted = os.path.join(root, "work/outside/planted")
    for path in (made, planted):
        if os.path.exists(path):
            os.unlink(path)
    shell = "touch /work/ws/made; touch /work/outside/planted; echo ran"
    got = podman.run(root, ["/usr/bin/cordon", "run", "--", "/bin/sh", "-c", shell], options)
    said = (got.stdout + got.stderr).strip()
    f.check(not os.path.exists(planted),
            f"{name}: the write outside the workspace did not land (exit {got.returncode}): {said[-400:]!r}")
    if expect == "enforce":
        f.check(got.returncode == 0 and os.path.exists(made) and "refused" in said,
                f"{name}: cordon enforces: the workspace write landed and the outside one was refused")
    else:
        f.check(got.returncode == 125 and "podman --security-opt unmask=ALL" in said
                and not os.path.exists(made),
                f"{name}: cordon refuses (125) naming the fix, and nothing ran")
        doctor = podman.run(root, ["/usr/bin/cordon", "doctor"], options)
        f.check(doctor.returncode != 0 and "unmask=ALL" in doctor.stdout,
                f"{name}: `cordon doctor` fails and names podman's fix (exit {doctor.returncode})")
    # The twin: the container itself lets the same write land.
    twin = podman.run(root, ["/bin/sh", "-c", "touch /work/outside/planted"], options)
    f.check(twin.returncode == 0 and os.path.exists(planted),
            f"{name}: without cordon the write outside lands in this container ({twin.stderr.strip()[-200:]!r})")
    if os.path.exists(planted):
        os.unlink(planted)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0 or shutil.which("podman") is None or shutil.which("runc") is None:
        print("SKIP: needs root and podman with runc (tests/e2e/container/setup.sh)")
        return 77
    f = Failures()
    # Outside /tmp, which may hold the build tree: the rootless user must reach the container's
    # root, and the judged files are read from the host.
    scratch = tempfile.mkdtemp(prefix="cordon-container-",
                               dir=os.environ.get("CORDON_ESCAPE_BASE", "/var/lib"))
    os.chmod(scratch, 0o755)
    try:
        # The suites' unprivileged user (scripts/run_unprivileged.sh makes it too; this test may
        # run first on a fresh machine).
        if run(["id", "-u", TEST_USER]).returncode != 0:
            run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                 TEST_USER])
        user = pwd.getpwnam(TEST_USER)
        listed = run(["grep", "-q", f"^{TEST_USER}:", "/etc/subuid"])
        if listed.returncode != 0:
            run(["usermod", "--add-subuids", SUBIDS, "--add-subgids", SUBIDS, TEST_USER])
        for rootless in (False, True):
            who = "rootless" if rootless else "rootful"
            owner = user if rootless else None
            root = os.path.join(scratch, f"{who}-root")
            make_rootfs(build, root, owner)
            os.makedirs(os.path.join(scratch, f"{who}-podman"))
            podman = Podman(os.path.join(scratch, f"{who}-podman"), rootless)
            # The default config in podman's default container: /proc is masked, so the
            # namespaces cannot give a fresh /proc and the default guarantees (a read-only .git
            # and host-run files) need them: refused, naming the fix.
            scenario(f, podman, root, f"{who}, default", [], "refuse", owner)
            # The fix doctor names: an unmasked /proc. The full namespace sandbox.
            scenario(f, podman, root, f"{who}, unmask=ALL", ["--security-opt", "unmask=ALL"],
                     "enforce", owner)
            # The default container with the two guarantees that need a mount namespace off:
            # the Landlock-only fallback.
            write_config(root, '{"sandbox": {"protect_git_metadata": false, '
                               '"protect_host_run_files": false}}', owner)
            scenario(f, podman, root, f"{who}, Landlock fallback", [], "enforce", owner)
            os.unlink(os.path.join(root, "root/.config/cordon/config.json"))
    finally:
        if not f.items:
            shutil.rmtree(scratch, ignore_errors=True)
    if f.items:
        print(f"\n{len(f.items)} failed (scratch kept in {scratch}):", *f.items, sep="\n  ")
        return 1
    print("\nall container scenarios passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
