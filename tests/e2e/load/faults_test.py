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
  crowd        12 agents in 12 workspaces, more than the server keeps sessions (8), every
               result checked; then 8 workspaces each running a 4 s command keep every session
               busy: a ninth workspace's run is left to its client, which runs it itself
               (twin: once they are idle, a tenth workspace's run is served)

Through `cordon mcp` (each agent an MCP client of a server of its own, every call checked the
same way; a server whose input ends must exit within 10 s, its running command cancelled):

  mcp-kill     two agents' servers killed (SIGKILL) mid-call; those agents start new ones
  mcp-client   two agents' clients vanish mid-call (the servers' input closed)
  mcp-stop     every server stopped (SIGSTOP) for 3 s mid-load, then continued
  mcp-nofile   every server with a descriptor limit of 64
  mcp-full     $XDG_RUNTIME_DIR full

  faults_test.py CORDON [ROOT]   exit 0: all passed; 1: a failure; 77: not root
  CORDON_FAULTS_ONLY=NAME        run only that case
"""
import json
import os
import random
import resource
import select
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
    """`agents` threads (AGENTS) of COMMANDS runs each, in workspaces of their own under
    `root`."""

    def __init__(self, root, runtime, victims=0, agents=AGENTS):
        self.root, self.runtime, self.agents = root, runtime, agents
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
            result = self.one(i, ws, token, text)
            if result is None:
                continue  # failed already, or killed (judged below for running twice)
            code, stdout, stderr = result
            self.judge(token, out, code, stdout, stderr)
            with self.lock:
                self.done += 1
                first = stderr.strip().splitlines()[0] if stderr.strip() else ""
                said = first.removeprefix("cordon: ")[:70]
                key = f"exit {code}" + (f" ({said})" if said else "")
                self.outcomes[key] = self.outcomes.get(key, 0) + 1
        self.finish(i)

    def one(self, i, ws, token, text):
        """Runs `text` for agent `i`: (exit code, stdout, stderr), or None."""
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
            return None
        finally:
            with self.lock:
                self.running.pop(token, None)
        return p.returncode, stdout, stderr

    def finish(self, i):
        pass

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
        while len(self.killed) < self.victims and self.done < self.agents * COMMANDS:
            time.sleep(random.uniform(0.05, 0.3))
            with self.lock:
                if not self.running:
                    continue
                token, p = random.choice(list(self.running.items()))
                self.killed.add(token)
            time.sleep(random.uniform(0.0, 0.05))
            p.send_signal(signal.SIGKILL)

    def run(self, fault=None):
        threads = [threading.Thread(target=self.agent, args=(i,)) for i in range(self.agents)]
        if self.victims:
            threads.append(threading.Thread(target=self.kill_clients))
        for t in threads:
            t.start()
        if fault:
            while self.done < self.agents * 3:  # under way, with a server started on demand
                time.sleep(0.05)
            fault()
        for t in threads:
            t.join()


class McpSession:
    """One agent's `cordon mcp` over stdio, as an MCP client drives it."""

    def __init__(self, ws, env, preexec=None):
        self.proc = subprocess.Popen([CORDON, "mcp", "--structured-output", "--workspace", ws], cwd=ws, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, preexec_fn=preexec)
        self.buffer, self.next_id = b"", 1
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "faults", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError) as e:
            raise EOFError from e

    def request(self, method, params):
        """The reply to `method`; EOFError when the server went, TimeoutError after SLOW s."""
        ident = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + SLOW
        while True:
            line, sep, rest = self.buffer.partition(b"\n")
            if sep:
                self.buffer = rest
                reply = json.loads(line)
                if reply.get("id") == ident:
                    return reply
                continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise TimeoutError
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk

    def close(self):
        """Closes its input as a client that is done does; True when it then exits in 10 s."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
            return True
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return False


class McpLoad(Load):
    """The same load, each agent through a `cordon mcp` of its own (`preexec` run in each)."""

    def __init__(self, root, runtime, preexec=None):
        super().__init__(root, runtime)
        self.preexec = preexec
        self.sessions = [None] * AGENTS
        self.in_flight = [None] * AGENTS  # the token each agent's call is running

    def one(self, i, ws, token, text):
        if self.sessions[i] is None:
            self.sessions[i] = McpSession(ws, self.env, self.preexec)
        session = self.sessions[i]
        with self.lock:
            self.in_flight[i] = token
        try:
            reply = session.request("tools/call", {"name": "run_command",
                                                   "arguments": {"command": text}})
        except TimeoutError:
            self.fail(token, f"no answer within {SLOW} s")
            session.proc.kill()
            self.sessions[i] = None
            return None
        except EOFError:
            # Its server went (killed by the test, or its input closed): it must be gone for
            # good, and is started anew for the next call.
            if not session.close():
                self.fail(token, "the MCP server outlived its client's input by 10 s")
            self.sessions[i] = None
            if token not in self.killed:
                self.fail(token, "the MCP server went away by itself")
            return None
        finally:
            with self.lock:
                self.in_flight[i] = None
        if "error" in reply:
            return -1, "", json.dumps(reply["error"])
        result = reply["result"].get("structuredContent") or {}
        return result.get("exit_code", -1), result.get("stdout", ""), result.get("stderr", "")

    def finish(self, i):
        if self.sessions[i] is not None and not self.sessions[i].close():
            self.fail(f"agent {i}", "its MCP server did not exit within 10 s of its input's end")

    def pids(self):
        return [s.proc.pid for s in self.sessions if s is not None]

    def victims_in_flight(self, count):
        """Up to `count` agents with a call running: (agent, session), their tokens marked."""
        chosen = []
        while len(chosen) < count:
            with self.lock:
                busy = [i for i in range(AGENTS) if self.in_flight[i] is not None and
                        self.sessions[i] is not None and i not in [c[0] for c in chosen]]
                if busy:
                    i = random.choice(busy)
                    self.killed.add(self.in_flight[i])
                    chosen.append((i, self.sessions[i]))
                    continue
            if self.done >= AGENTS * COMMANDS - AGENTS:
                break
            time.sleep(0.01)
        return chosen


failures = []


def case(name, setup=None, fault=None, victims=0, check_after=None, mcp=False, preexec=None,
         agents=AGENTS):
    only = os.environ.get("CORDON_FAULTS_ONLY")
    if only and only != name:
        return
    root = tempfile.mkdtemp(prefix=f"cordon-faults-{name}-", dir=BASE)
    runtime = os.path.join(root, "runtime")
    os.makedirs(runtime, mode=0o700)
    socket_path = os.path.join(runtime, "cordon", "run.sock")
    extra = []
    try:
        load = McpLoad(root, runtime, preexec) if mcp else Load(root, runtime, victims, agents)
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
            send(pid, signal.SIGKILL)
        if problems:
            failures.append(f"{name}: {len(problems)} problem(s)")
            print(f"FAIL: {name}: {len(problems)} of {load.agents * COMMANDS} runs")
            for p in problems[:8]:
                print("  " + p)
        else:
            print(f"ok: {name} ({load.agents * COMMANDS} runs in {took:.1f} s: " +
                  ", ".join(f"{n} {k}" for k, n in sorted(load.outcomes.items())) + ")")
    finally:
        for p in extra:
            if isinstance(p, subprocess.Popen):
                p.kill()
                p.wait()
        for pid in listeners(socket_path):
            send(pid, signal.SIGKILL)
        subprocess.run(["umount", "-l", runtime], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def send(pid, sig):
    """Sends `sig` to `pid`, which may have exited since it was found listening (a process that
    held the listener a moment, or a server ending on its own): nothing then."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def kill_server(load, socket_path):
    for pid in listeners(socket_path):
        send(pid, signal.SIGKILL)


def stop_server(load, socket_path):
    pids = listeners(socket_path)
    for pid in pids:
        send(pid, signal.SIGSTOP)
    time.sleep(3)
    for pid in pids:
        send(pid, signal.SIGCONT)


def remove_run_dir(load, socket_path):
    shutil.rmtree(os.path.dirname(socket_path), ignore_errors=True)


def started_server(load, preexec=None):
    """A server started by the test (`preexec` run in it), listening once this returns; its
    log (run server lines) kept in load.log, in the load's root."""
    load.log = os.path.join(load.root, "server.log")
    with open(load.log, "w") as log:
        server = subprocess.Popen([CORDON, "serve", "--idle-timeout", "120"], env=load.env,
                                  preexec_fn=preexec, stdout=subprocess.DEVNULL, stderr=log)
    socket_path = os.path.join(load.runtime, "cordon", "run.sock")
    for _ in range(100):
        if listeners(socket_path):
            break
        time.sleep(0.05)
    return [server]


def server_with_few_descriptors(load):
    return started_server(load, preexec=few_descriptors)


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


def kill_mcp_servers(load, socket_path):
    for _, session in load.victims_in_flight(2):
        session.proc.kill()


def close_mcp_inputs(load, socket_path):
    for _, session in load.victims_in_flight(2):
        try:
            session.proc.stdin.close()
        except OSError:
            pass


def stop_mcp_servers(load, socket_path):
    pids = load.pids()
    for pid in pids:
        send(pid, signal.SIGSTOP)
    time.sleep(3)
    for pid in pids:
        send(pid, signal.SIGCONT)


def few_descriptors():
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


def busy_sessions_hand_over(load, socket_path):
    """Eight workspaces, as many as the server keeps sessions, each running a command through
    it that lasts until the test releases it: every session is busy, none may be dropped, so a
    run in a ninth workspace is left to its client, which runs it itself, exactly once. Twin:
    once they are done, a run in a tenth workspace is served (an idle session makes room).
    (The server logs a run when it ends, so the long ones must outlast the ninth: a fixed sleep
    did not on a loaded machine. The load's own sessions must be idle long enough to make room
    first, or a long command finds none, runs itself, and the ninth takes the free session.)"""
    problems = []
    long_runs = []
    time.sleep(0.6)  # decision 0054: an idle session may go after 0.5 s
    # Released by a file the test puts in each workspace (which the sandbox shows live).
    hold = ("echo started > started; i=0; while [ ! -e release ] && [ $i -lt 600 ]; "
            "do sleep 0.05; i=$((i+1)); done; echo done")
    for i in range(8):
        ws = os.path.join(load.root, f"busy-{i}")
        os.makedirs(ws)
        long_runs.append(subprocess.Popen(
            [CORDON, "run", "--", "sh", "-c", hold],
            cwd=ws, env=load.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for _ in range(200):
        if all(os.path.exists(os.path.join(load.root, f"busy-{i}", "started")) for i in range(8)):
            break
        time.sleep(0.05)
    else:
        problems.append("the eight long commands did not all start")

    def served_count():
        with open(load.log) as f:
            return f.read().count("ran a command")

    def one_run(name):
        ws = os.path.join(load.root, name)
        os.makedirs(ws)
        p = subprocess.run([CORDON, "run", "--", "sh", "-c", f"echo {name} >> out && cat out"],
                           cwd=ws, env=load.env, capture_output=True, text=True, timeout=SLOW)
        with open(os.path.join(ws, "out")) as f:
            written = f.read()
        if p.returncode != 0 or p.stdout != name + "\n" or written != name + "\n":
            problems.append(f"{name}: exit {p.returncode}, printed {p.stdout!r}, wrote "
                            f"{written!r}: {p.stderr[-300:]!r}")

    before = served_count()
    one_run("ninth")
    if served_count() != before:
        problems.append("the ninth workspace's run was served while every session was busy")
    if any(p.poll() is not None for p in long_runs):
        problems.append("a long command ended before it was released")
    for i in range(8):
        with open(os.path.join(load.root, f"busy-{i}", "release"), "w"):
            pass
    after_ninth = served_count()
    for p in long_runs:
        out, err = p.communicate(timeout=SLOW)
        if p.returncode != 0 or out != "done\n":
            problems.append(f"a long command: exit {p.returncode}: {err[-300:]!r}")
    # The server logs each run as it ends: all eight long commands were its own, so every
    # session was busy while the ninth ran (fewer, and the ninth's verdict proves nothing).
    time.sleep(0.2)
    if served_count() - after_ninth != 8:
        problems.append(f"{served_count() - after_ninth} of the eight long commands were served")
    time.sleep(0.6)  # decision 0054: an idle session may go after 0.5 s
    before = served_count()
    one_run("tenth")
    if served_count() != before + 1:
        problems.append("the tenth workspace's run was not served once sessions were idle")
    return problems


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
    case("crowd", setup=started_server, check_after=busy_sessions_hand_over, agents=12)
    case("mcp-kill", fault=kill_mcp_servers, mcp=True)
    case("mcp-client", fault=close_mcp_inputs, mcp=True)
    case("mcp-stop", fault=stop_mcp_servers, mcp=True)
    case("mcp-nofile", mcp=True, preexec=few_descriptors)
    case("mcp-full", setup=full_runtime, mcp=True)
    if failures:
        print(f"\n{len(failures)} failing case(s): {', '.join(failures)}")
        return 1
    print("faults under load: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
