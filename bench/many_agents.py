#!/usr/bin/env python3
"""Many agents on one machine (issue 33): N agents at once, each in a workspace of its own (or
all in one), each running its share of COMMANDS commands back to back through a plain command
line, as an agent's shell tool does. Every result is checked: the command's output, its exit
code, the file it wrote, and that it ran exactly once. Side by side in one run:

  bare        sh -c ...
  bwrap       bubblewrap with a read-only root, the workspace writable, all namespaces new
  one-shot    cordon run --no-server
  default     cordon run (the run server, started for this run in its own runtime directory)

For each: commands per second, p50 and p99 latency, and CPU per command (user + system of the
whole process tree, the run server's included). For the default rows, the run server's
resources (descriptors, threads, the processes below it, their resident memory) at their peak
during the load and --settle seconds (5) after it.

  many_agents.py CORDON [ROOT] [--agents 1,8,16,64] [--commands 640] [--shared] [--smoke]

ROOT: where a directory for the workspaces is made and removed afterwards (default:
$CORDON_ESCAPE_BASE, else /var/lib; not below /tmp or /var/tmp: cordon's view replaces them).
--smoke: 2 agents, 6 commands, correctness only (no table): what CI runs (ctest
e2e_many_agents_smoke).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def cpu_of(pid):
    """User + system seconds of `pid` and its reaped children (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def server_resources(pid):
    """(descriptors, threads, descendant processes, resident MiB of the server and its
    descendants) of the run server `pid` now, from /proc."""
    tree, frontier = {pid}, [pid]
    while frontier:  # /proc/PID/task/TID/children: no walk of all of /proc under the load
        parent = frontier.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except (OSError, ValueError):
                continue
            for child in children:
                if child not in tree:
                    tree.add(child)
                    frontier.append(child)
    rss_kib = 0
    for member in tree:
        try:
            with open(f"/proc/{member}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss_kib += int(line.split()[1])
        except (OSError, ValueError):
            continue
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        threads = len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return (0, 0, 0, 0.0)
    return (fds, threads, len(tree) - 1, rss_kib / 1024)


class Sampler:
    """Samples the server's resources every 200 ms while a load runs; keeps each one's peak."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, (0, 0, 0, 0.0), threading.Event()
        self.thread = threading.Thread(target=self.loop)
        self.thread.start()

    def loop(self):
        while not self.stop.wait(0.2):
            now = server_resources(self.pid)
            self.peak = tuple(max(a, b) for a, b in zip(self.peak, now))

    def finish(self):
        self.stop.set()
        self.thread.join()
        return self.peak


def children_cpu():
    r = os.times()
    return r.children_user + r.children_system


class Mode:
    def __init__(self, name, argv_for, env=None):
        self.name = name
        self.argv_for = argv_for  # (workspace, text) -> argv
        self.env = env


def run_load(mode, agents, commands, root, shared):
    """Runs `commands` commands spread over `agents` threads; returns (wall, latencies, cpu,
    failures)."""
    per_agent = [commands // agents + (1 if i < commands % agents else 0) for i in range(agents)]
    latencies = []
    failures = []
    lock = threading.Lock()
    workspaces = []
    for i in range(agents):
        ws = os.path.join(root, "shared" if shared else f"agent-{i}")
        os.makedirs(ws, exist_ok=True)
        workspaces.append(ws)

    def agent(i):
        ws = workspaces[i]
        for j in range(per_agent[i]):
            token = f"{mode.name}-{agents}-{i}-{j}"
            out = os.path.join(ws, f"out-{i}-{j}")
            # Appends: run twice, the file would say so.
            text = f"echo {token} >> out-{i}-{j} && cat out-{i}-{j}"
            start = time.monotonic()
            p = subprocess.run(mode.argv_for(ws, text), cwd=ws, capture_output=True, text=True,
                               env=mode.env)
            took = time.monotonic() - start
            ok = p.returncode == 0 and p.stdout == token + "\n"
            try:
                with open(out) as f:
                    ok = ok and f.read() == token + "\n"
                os.unlink(out)
            except OSError:
                ok = False
            with lock:
                latencies.append(took)
                if not ok:
                    failures.append(f"{token}: exit {p.returncode}, stdout {p.stdout!r}, "
                                    f"stderr {p.stderr[-300:]!r}")

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(agents)]
    cpu_before = children_cpu()
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    return wall, latencies, children_cpu() - cpu_before, failures


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cordon")
    parser.add_argument("root", nargs="?",
                        default=os.environ.get("CORDON_ESCAPE_BASE", "/var/lib"))
    parser.add_argument("--agents", default="1,8,16,64")
    parser.add_argument("--commands", type=int, default=640)
    parser.add_argument("--shared", action="store_true", help="one workspace for every agent")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--modes", default="bare,bwrap,one-shot,default")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds after each load when the server's resources are read again")
    args = parser.parse_args()
    cordon = os.path.realpath(args.cordon)
    base = os.path.realpath(args.root)
    if base.startswith(("/tmp/", "/var/tmp/")) or base in ("/tmp", "/var/tmp"):
        sys.exit("many_agents.py: ROOT must not be below /tmp or /var/tmp")
    root = tempfile.mkdtemp(prefix="cordon-many-agents-", dir=base)
    try:
        return measure(args, cordon, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def measure(args, cordon, root):
    agents_list = [2] if args.smoke else [int(a) for a in args.agents.split(",")]
    commands = 6 if args.smoke else args.commands

    runtime = os.path.join(root, "runtime")
    os.makedirs(runtime, mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
    modes = []
    wanted = args.modes.split(",")
    if "bare" in wanted:
        modes.append(Mode("bare", lambda ws, text: ["sh", "-c", text]))
    if "bwrap" in wanted and shutil.which("bwrap"):
        modes.append(Mode("bwrap", lambda ws, text: [
            "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs",
            "/tmp", "--bind", ws, ws, "--chdir", ws, "--unshare-all", "--die-with-parent",
            "--new-session", "sh", "-c", text]))
    if "one-shot" in wanted:
        modes.append(Mode("one-shot", lambda ws, text: [cordon, "run", "--no-server", "--", "sh",
                                                         "-c", text], env))
    server = None
    if "default" in wanted:
        server = subprocess.Popen([cordon, "serve", "--idle-timeout", "600"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        modes.append(Mode("default", lambda ws, text: [cordon, "run", "--", "sh", "-c", text],
                          env))
    failed = False
    rows = []
    resources = []  # (agents, the server's peak, its resources args.settle s after the load)
    try:
        for agents in agents_list:
            for mode in modes:
                ws_root = os.path.join(root, f"{mode.name}-{agents}")
                served = server is not None and mode.name == "default"
                server_cpu = cpu_of(server.pid) if served else 0.0
                sampler = Sampler(server.pid) if served and not args.smoke else None
                wall, lat, cpu, failures = run_load(mode, agents, commands, ws_root, args.shared)
                if served:
                    cpu += cpu_of(server.pid) - server_cpu
                if sampler:
                    peak = sampler.finish()
                    time.sleep(args.settle)
                    resources.append((agents, peak, server_resources(server.pid)))
                if failures:
                    failed = True
                    print(f"{mode.name}, {agents} agents: {len(failures)} of {commands} wrong:")
                    for f in failures[:5]:
                        print("  " + f)
                rows.append((agents, mode.name, commands / wall, percentile(lat, 50) * 1000,
                             percentile(lat, 99) * 1000, cpu / commands * 1000))
                shutil.rmtree(ws_root, ignore_errors=True)
    finally:
        if server:
            server.terminate()
            server.wait()
    if args.smoke:
        print("many agents: smoke run " + ("FAILED" if failed else "passed") +
              f" ({', '.join(m.name for m in modes)})")
        return 1 if failed else 0
    print(f"| agents | mode | commands/s | p50 ms | p99 ms | CPU ms/command |")
    print("|---|---|---|---|---|---|")
    for agents, name, rate, p50, p99, cpu in rows:
        print(f"| {agents} | {name} | {rate:.0f} | {p50:.1f} | {p99:.1f} | {cpu:.1f} |")
    if resources:
        print(f"\nThe run server (descriptors / threads / processes below it / resident MiB of "
              f"them all), at its peak and {args.settle:g} s after the load:\n")
        print("| agents | peak | after |")
        print("|---|---|---|")
        for agents, peak, after in resources:
            print(f"| {agents} | {peak[0]} / {peak[1]} / {peak[2]} / {peak[3]:.0f} | "
                  f"{after[0]} / {after[1]} / {after[2]} / {after[3]:.0f} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
