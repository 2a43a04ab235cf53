#!/usr/bin/env python3
"""Real tools failing for cordon's reasons, each reported as a denial with its kind, target,
layer and fix (docs/denials.md); and their twins, the same tools failing for their own reasons,
with no denial. Through every way a command reaches the sandbox: `cordon run` one-shot, served
by a run server, and `run_command` of `cordon mcp`. Run as root and as an unprivileged user
(scripts/run_unprivileged.sh). Network denied (the default); nothing leaves the machine: the
names looked up are never answered, the addresses are a documentation range or the loopback.

  corpus_test.py CORDON     exit 0: all passed; 1: a failure; 77: a tool is missing
                            (a failure instead when CORDON_TEST_MUST_WORK=1)
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

# tests/e2e/mcp_run.py: one directory up in the tree, beside this file where it is staged.
_here = os.path.dirname(os.path.realpath(__file__))
sys.path[:0] = [_here, os.path.dirname(_here)]
import mcp_run  # noqa: E402

CORDON = os.path.realpath(sys.argv[1])
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"
ROOT = os.geteuid() == 0
SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"

missing = [t for t in ("git", "curl", "ssh", "ssh-add", "npm", "python3")
           if shutil.which(t, path=SEARCH_PATH) is None]
if subprocess.run(["python3", "-m", "pip", "--version"], capture_output=True,
                  env={"PATH": SEARCH_PATH}).returncode != 0:
    missing.append("pip")
if missing:
    print(f"denial corpus: missing {' '.join(missing)} (install with scripts/setup_toolchains.sh)")
    sys.exit(1 if MUST_WORK else 77)

# Outside /tmp and /var/tmp, which the sandbox replaces: what a case names there would be
# invisible, not refused.
base = os.environ.get("CORDON_ESCAPE_BASE", "/var/lib")
work = tempfile.mkdtemp(prefix="cordon-corpus-", dir=base)
home = os.path.join(work, "home")
ws = os.path.join(home, "proj")  # the workspace inside the home, as people keep it
runtime = os.path.join(work, "runtime")
for d in (ws, runtime, os.path.join(work, "sockets"), os.path.join(home, ".ssh")):
    os.makedirs(d, mode=0o700)
ENV = {"PATH": SEARCH_PATH, "HOME": home, "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": runtime,
       "npm_config_update_notifier": "false"}


def host(*args, cwd=ws):
    subprocess.run(args, cwd=cwd, env=ENV, check=True, capture_output=True)


# A repository with one commit, an agent's settings, a small npm project.
git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
host(*git, "-c", "init.defaultBranch=main", "init", "-q")
with open(os.path.join(ws, "tracked"), "w") as f:
    f.write("one\n")
host(*git, "add", "tracked")
host(*git, "commit", "-qm", "one")
os.makedirs(os.path.join(ws, ".claude"))
with open(os.path.join(ws, ".claude/settings.json"), "w") as f:
    f.write("{}\n")
os.makedirs(os.path.join(ws, "npmproj"))
with open(os.path.join(ws, "npmproj/package.json"), "w") as f:
    f.write('{ "name": "corpus", "version": "1.0.0", "private": true }\n')

# The host's services: a TCP listener on its loopback (a dev server, a database behind ssh); a
# Docker socket (the sandbox masks every host socket it finds outside the writable areas) and
# an ssh agent's in the hidden home.
service = socket.socket()
service.bind(("127.0.0.1", 0))
service.listen(8)
service_port = service.getsockname()[1]
closed = socket.socket()
closed.bind(("127.0.0.1", 0))
closed_port = closed.getsockname()[1]
closed.close()  # free again: nothing listens there, on the host or in the sandbox
unix_sockets = []
for path in (os.path.join(work, "sockets/docker.sock"), os.path.join(home, ".ssh/agent.sock")):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(8)
    unix_sockets.append(s)
docker_sock, agent_sock = (s.getsockname() for s in unix_sockets)

server = None


def start_server():
    global server
    server = subprocess.Popen([CORDON, "serve", "--idle-timeout", "120"], env=ENV, cwd=ws,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = os.path.join(runtime, "cordon/run.sock")
    for _ in range(100):
        if os.path.exists(sock):
            return
        subprocess.run(["sleep", "0.05"])
    raise RuntimeError("the run server did not start")


def run(way, text):
    """The run's result as `cordon run --json` and MCP's structuredContent give it."""
    if way == "mcp":
        return mcp_run.run_command([CORDON, "mcp", "--structured-output", "--workspace", ws], text, env=ENV, cwd=ws,
                                   client="corpus")
    args = [CORDON, "run", "--json", "-c", text]
    env = dict(ENV)
    if way == "one-shot":
        args.insert(2, "--no-server")
    else:
        env["CORDON_RUN_SERVER"] = "use"
    out = subprocess.run(args, env=env, cwd=ws, capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout)


failures = []


def check(way, name, text, expected, exit_nonzero=True):
    """`expected`: (kind or kinds, target test, layer, words the fix has) of a denial that must
    be there; none: the run reports no denial."""
    r = run(way, text)
    listed = [(d["kind"], d["target"], d["layer"]) for d in r["denials"]]
    problem = None
    if exit_nonzero and r["exit_code"] == 0:
        problem = "exited 0"
    elif expected is None and r["denials"]:
        problem = f"reported {listed}"
    elif expected is not None:
        kinds, target, layer, fix = expected
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        found = [d for d in r["denials"] if d["kind"] in kinds and target(d["target"])]
        if not found:
            problem = f"no {kind} denial of that target; got {listed}"
        elif found[0]["layer"] != layer:
            problem = f"layer {found[0]['layer']}, not {layer}"
        elif fix not in found[0]["fix"]:
            problem = f"fix {found[0]['fix']!r} does not say {fix!r}"
    if problem:
        failures.append(f"{way}: {name}: {problem}\n    stderr: {r['stderr'][-300:]!r}")
        print(f"FAIL: {way}: {name}: {problem}")
    else:
        print(f"ok: {way}: {name}")


def is_(value):
    return lambda target: target == value


def port_53(target):
    return target.endswith(":53")


# A package manager's registry: looked up by name (refused at the resolver's port), or, where
# it is configured as an address, connected to directly.
REGISTRY = (("dns", "connect"), lambda target: True, "network", "--network allow")


NETWORK_FIX = "--network allow"
BY_DESIGN = "by design"
npm = "cd npmproj && npm install --no-audit --no-fund --fetch-retries=0 --fetch-timeout=5000"
pip = "python3 -m pip download --no-deps --retries 0 --timeout 5 -d /tmp/dl"

try:
    start_server()
    for way in ("one-shot", "served", "mcp"):
        # git: .git is read-only inside; the fix is the host-side commit.
        check(way, "git add", "echo two > tracked && git add tracked",
              ("create", is_(f"{ws}/.git/index.lock"), "mount view", "git_commit"))
        check(way, "git commit", f"{' '.join(git)} commit -qam two",
              ("create", is_(f"{ws}/.git/index.lock"), "mount view", "git_commit"))
        check(way, "git stash", "echo three > tracked && git stash",
              ("create", lambda t: t.startswith(f"{ws}/.git/"), "mount view", "git_commit"))
        check(way, "git with an unknown option (twin)", "git log --no-such-option", None)
        # Package managers with the network denied: the name lookup is refused at once.
        check(way, "npm install", f"{npm} corpus-dependency", REGISTRY)
        check(way, "npm install of a missing directory (twin)", f"{npm} ./no-such-dir", None)
        check(way, "pip download", f"{pip} corpus-dependency", REGISTRY)
        check(way, "pip with an unknown option (twin)", "python3 -m pip download --no-such-flag",
              None)
        # curl: an address beyond the loopback, a name, and its twin (a closed sandbox port).
        check(way, "curl to an address", "curl -sS -m 5 http://192.0.2.1/",
              ("connect", is_("192.0.2.1:80"), "network", NETWORK_FIX))
        check(way, "curl to a name", "curl -sS -m 5 http://corpus.example.invalid/",
              ("dns", port_53, "network", NETWORK_FIX))
        check(way, "curl to a closed loopback port (twin)",
              f"curl -sS -m 5 http://127.0.0.1:{closed_port}/", None)
        # A raw socket: cordon's doing only where the caller could have made one (root).
        raw = "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 1)'"
        check(way, "a raw socket", raw,
              ("socket", is_("raw AF_INET socket (protocol 1)"), "capabilities", BY_DESIGN)
              if ROOT else None)
        # ssh to the host's service, an ssh agent in the hidden home, a Docker-like socket.
        ssh = "ssh -o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=no"
        check(way, "ssh to a host service", f"{ssh} -p {service_port} 127.0.0.1 true",
              ("connect", is_(f"127.0.0.1:{service_port}"), "network", NETWORK_FIX))
        check(way, "ssh with an unknown option (twin)", f"{ssh} -o NoSuchOption=1 127.0.0.1 true",
              None)
        check(way, "ssh-add to the host's agent", f"SSH_AUTH_SOCK={agent_sock} ssh-add -l",
              ("unix_socket", is_(agent_sock), "mount view", BY_DESIGN))
        check(way, "the Docker socket",
              f"curl -sS -m 5 --unix-socket {docker_sock} http://localhost/version",
              ("unix_socket", is_(docker_sock), "mount view", BY_DESIGN))
        check(way, "a socket path with nothing behind it (twin)",
              f"curl -sS -m 5 --unix-socket {work}/sockets/none.sock http://localhost/", None)
        # Writes the view refuses: a system directory, an agent's own settings.
        check(way, "a write to /etc", "echo x > /etc/cordon-corpus",
              ("create", is_("/etc/cordon-corpus"), "mount view", BY_DESIGN))
        check(way, "a directory in /usr/lib", "mkdir /usr/lib/cordon-corpus",
              ("create", is_("/usr/lib/cordon-corpus"), "mount view", BY_DESIGN))
        check(way, "an agent's settings", "echo '{\"hooks\": 1}' > .claude/settings.json",
              ("write", is_(f"{ws}/.claude/settings.json"), "mount view", BY_DESIGN))
        check(way, "a write into a missing directory (twin)", "echo x > no/such/dir", None)
        # What the end of a run discards: a server left running, a cache in the private home.
        check(way, "a background server",
              "python3 -m http.server 0 >/dev/null 2>&1 & sleep 0.5",
              ("killed_at_exit", lambda t: "python3" in t, "pid namespace", BY_DESIGN),
              exit_nonzero=False)
        check(way, "a cache in the private home",
              "mkdir -p ~/.cache/corpus && head -c 200000 /dev/zero > ~/.cache/corpus/blob",
              ("discarded", lambda t: "left in the private" in t, "mount view", BY_DESIGN),
              exit_nonzero=False)
finally:
    if server is not None:
        server.terminate()
        server.wait(timeout=30)
    for s in unix_sockets + [service]:
        s.close()
    # Nothing reached the host: the commit, the agent's settings, /etc and /usr/lib are as
    # they were.
    log = subprocess.run(["git", "log", "--oneline"], cwd=ws, env=ENV, capture_output=True,
                         text=True).stdout
    if len(log.splitlines()) != 1:
        failures.append(f"the repository changed: {log!r}")
    with open(os.path.join(ws, ".claude/settings.json")) as f:
        if f.read() != "{}\n":
            failures.append("the agent's settings changed")
    for planted in ("/etc/cordon-corpus", "/usr/lib/cordon-corpus"):
        if os.path.lexists(planted):
            failures.append(f"{planted} was made on the host")
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print(f"denial corpus: {len(failures)} failed")
    for f in failures:
        print(f)
    sys.exit(1)
print("denial corpus: all passed")
