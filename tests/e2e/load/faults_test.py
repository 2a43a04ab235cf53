#!/usr/bin/env python3
"""Faults under load (issue 33): agents run commands back to back through plain `cordon run`,
which starts the run server on demand and uses it, while the test does something bad to that
server or its directory. Each command appends a token to a file of its own and prints the
file, so a result says whether it ran, and how often. Every command must either have run once
with its exact output and exit 0, or have ended with exit 125 and a message saying why (the
server vanished during the run, say; it then ran once or not at all). Never a wrong result,
never a command run twice, never a wait past the documented ones (a command taking more than
30 s fails the case), never a message that blames something else ("another cordon executable")
or says "cordon:" twice. After each case at most one server listens.

  kill         the server is killed (SIGKILL) mid-load; the next runs start a new one
  stop         the server is stopped (SIGSTOP) for 3 s mid-load, then continued
  rundir       the run directory ($XDG_RUNTIME_DIR/cordon) is removed mid-load; the server
               that lost its socket exits, and leaves the next one's in place
  nofile       the server runs with a descriptor limit of 64 (ulimit -n 64)
  full         $XDG_RUNTIME_DIR is a file system with no space and no inode left
  client       clients are killed (SIGKILL) mid-run; the others' results stay right
  race         every agent's first run finds no server and starts one: one is left

  faults_test.py CORDON [ROOT]   exit 0: all passed; 1: a failure; 77: not root
  CORDON_FAULTS_ONLY=NAME        run only that case
"""
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

CORDON = os.path.realpath(sys.argv[1])
BASE = os.path.realpath(sys.argv[2] if len(sys.argv) > 2 else
                        os.environ.get("CORDON_ESCAPE_BASE", "/var/lib"))
AGENTS = 6
COMMANDS = 20  # per agent
SLOW = 30      # seconds: longer than any documented wait of a run


def listeners(socket_path):
    """Pids of the processes holding a listening socket bound at `socket_path`."""
    inodes = set()
    try:
        with open("/proc/net/unix") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if len(fields) >= 8 and fields[7] == socket_path and fields[5] == "01":
                    inodes.add(fields[6])
    except OSError:
        return set()
    pids = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    pids.add(int(pid))
                    break
        except OSError:
            continue
    # A server's child between its fork and its exec holds the socket too: not a server.
    return {pid for pid in pids if parent_of(pid) not in pids}


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def describe(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        return f"{cmdline.strip()} (parent {parent_of(pid)})"
    except OSError:
        return "gone"


class Load:
    """AGENTS threads of COMMANDS runs each, in workspaces of their own under `root`."""

    def __init__(self, root, runtime, victims=0):
        self.root, self.runtime = root, runtime
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": root,
                    "XDG_RUNTIME_DIR": runtime, "LANG": "C.UTF-8"}
        self.problems, self.done, self.killed = [], 0, set()
        self.victims = victims  # clients to kill mid-run
        self.lock = threading.Lock()
        self.running = {}  # token -> Popen, for the killer
        self.outcomes = {}  # "exit N (what stderr began with)" -> how many

    def agent(self, i):
        ws = os.path.join(self.root, f"agent-{i}")
        os.makedirs(ws, exist_ok=True)
        for j in range(COMMANDS):
            token = f"t-{i}-{j}"
            out = os.path.join(ws, f"out-{j}")
            text = f"echo {token} >> out-{j} && sleep 0.05 && cat out-{j}"
            p = subprocess.Popen([CORDON, "run", "--", "sh", "-c", text], cwd=ws, env=self.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            with self.lock:
                self.running[token] = p
            try:
                stdout, stderr = p.communicate(timeout=SLOW)
            except subprocess.TimeoutExpired:
                p.kill()
                stdout, stderr = p.communicate()
                self.fail(token, f"took more than {SLOW} s: {stderr[-300:]!r}")
                continue
            finally:
                with self.lock:
                    self.running.pop(token, None)
            self.judge(token, out, p.returncode, stdout, stderr)
            with self.lock:
                self.done += 1
                said = stderr.split(";")[0].split(":", 2)[-1].strip()[:60] if stderr else ""
                key = f"exit {p.returncode}" + (f" ({said})" if said else "")
                self.outcomes[key] = self.outcomes.get(key, 0) + 1

    def judge(self, token, out, code, stdout, stderr):
        try:
            with open(out) as f:
                written = f.read()
        except FileNotFoundError:
            written = ""
        killed = token in self.killed
        if written not in ("", token + "\n"):
            return self.fail(token, f"ran more than once: the file holds {written!r}")
        if "another cordon executable" in stderr:
            return self.fail(token, f"blamed another executable: {stderr[-300:]!r}")
        if "cordon: cordon:" in stderr:
            return self.fail(token, f"said cordon: twice: {stderr[-300:]!r}")
        if killed:
            return  # killed mid-run: once or not at all is right
        if code == 0:
            if stdout != token + "\n" or written != token + "\n":
                self.fail(token, f"exit 0 but printed {stdout!r}, wrote {written!r}")
        elif code == 125:
            if not stderr.startswith("cordon: "):
                self.fail(token, f"exit 125 without a reason: {stderr[-300:]!r}")
        else:
            self.fail(token, f"exit {code}: {stderr[-300:]!r}")

    def fail(self, token, what):
        with self.lock:
            self.problems.append(f"{token}: {what}")

    def kill_clients(self):
        """Kills `victims` clients, each some time into its run."""
        while len(self.killed) < self.victims and self.done < AGENTS * COMMANDS:
            time.sleep(random.uniform(0.05, 0.3))
            with self.lock:
                if not self.running:
                    continue
                token, p = random.choice(list(self.running.items()))
                self.killed.add(token)
            time.sleep(random.uniform(0.0, 0.05))
            p.send_signal(signal.SIGKILL)

    def run(self, fault=None):
        threads = [threading.Thread(target=self.agent, args=(i,)) for i in range(AGENTS)]
        if self.victims:
            threads.append(threading.Thread(target=self.kill_clients))
        for t in threads:
            t.start()
        if fault:
            while self.done < AGENTS * 3:  # under way, with a server started on demand
                time.sleep(0.05)
            fault()
        for t in threads:
            t.join()


failures = []


def case(name, setup=None, fault=None, victims=0, check_after=None):
    only = os.environ.get("CORDON_FAULTS_ONLY")
    if only and only != name:
        return
    root = tempfile.mkdtemp(prefix=f"cordon-faults-{name}-", dir=BASE)
    runtime = os.path.join(root, "runtime")
    os.makedirs(runtime, mode=0o700)
    socket_path = os.path.join(runtime, "cordon", "run.sock")
    extra = []
    try:
        load = Load(root, runtime, victims)
        if setup:
            extra = setup(load) or []
        started = time.monotonic()
        load.run((lambda: fault(load, socket_path)) if fault else None)
        took = time.monotonic() - started
        problems = list(load.problems)
        if check_after:
            problems += check_after(load, socket_path)
        servers = listeners(socket_path)
        if len(servers) > 1:
            problems.append(f"{len(servers)} servers listen at the end: " + "; ".join(
                f"{pid}: {describe(pid)}" for pid in servers))
        for pid in servers:
            os.kill(pid, signal.SIGKILL)
        if problems:
            failures.append(f"{name}: {len(problems)} problem(s)")
            print(f"FAIL: {name}: {len(problems)} of {AGENTS * COMMANDS} runs")
            for p in problems[:8]:
                print("  " + p)
        else:
            print(f"ok: {name} ({AGENTS * COMMANDS} runs in {took:.1f} s: " +
                  ", ".join(f"{n} {k}" for k, n in sorted(load.outcomes.items())) + ")")
    finally:
        for p in extra:
            if isinstance(p, subprocess.Popen):
                p.kill()
                p.wait()
        for pid in listeners(socket_path):
            os.kill(pid, signal.SIGKILL)
        subprocess.run(["umount", "-l", runtime], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def kill_server(load, socket_path):
    for pid in listeners(socket_path):
        os.kill(pid, signal.SIGKILL)


def stop_server(load, socket_path):
    pids = listeners(socket_path)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    time.sleep(3)
    for pid in pids:
        os.kill(pid, signal.SIGCONT)


def remove_run_dir(load, socket_path):
    shutil.rmtree(os.path.dirname(socket_path), ignore_errors=True)


def server_with_few_descriptors(load):
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    server = subprocess.Popen([CORDON, "serve", "--idle-timeout", "120"], env=load.env,
                              preexec_fn=limit, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    socket_path = os.path.join(load.runtime, "cordon", "run.sock")
    for _ in range(100):
        if listeners(socket_path):
            break
        time.sleep(0.05)
    return [server]


def full_runtime(load):
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,nr_inodes=8,mode=0700",
                    "cordon-faults", load.runtime], check=True)
    try:
        with open(os.path.join(load.runtime, "filler"), "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:
        pass
    for n in range(16):  # the inodes too
        try:
            os.mkdir(os.path.join(load.runtime, f"d{n}"))
        except OSError:
            break
    return []


def one_server_left(load, socket_path):
    time.sleep(0.5)  # the last one started on demand binds its socket
    servers = listeners(socket_path)
    return [] if len(servers) == 1 else [f"{len(servers)} servers listen after the load"]


def served_again(load, socket_path):
    """After the run directory was removed: the server that lost its socket has exited and
    left the new one's socket in place, which serves."""
    time.sleep(1)  # the old one checks its socket every 200 ms
    problems = one_server_left(load, socket_path)
    if not os.path.exists(socket_path):
        problems.append("the new server's socket is gone")
    served = subprocess.run([CORDON, "run", "--", "sh", "-c", "echo again"], env={
        **load.env, "CORDON_RUN_SERVER": "use"}, cwd=os.path.join(load.root, "agent-0"),
        capture_output=True, text=True)
    if served.returncode != 0 or served.stdout != "again\n" or served.stderr:
        problems.append(f"a run after the load was not served: {served.stderr[-300:]!r}")
    return problems


def main():
    if os.geteuid() != 0:
        print("faults: needs root (mounts a full file system, kills servers)")
        return 77
    if BASE.startswith(("/tmp/", "/var/tmp/")):
        print("faults: ROOT must not be below /tmp or /var/tmp")
        return 1
    case("kill", fault=kill_server)
    case("stop", fault=stop_server)
    case("rundir", fault=remove_run_dir, check_after=served_again)
    case("nofile", setup=server_with_few_descriptors)
    case("full", setup=full_runtime)
    case("client", victims=8)
    case("race", check_after=one_server_left)
    if failures:
        print(f"\n{len(failures)} failing case(s): {', '.join(failures)}")
        return 1
    print("faults under load: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
