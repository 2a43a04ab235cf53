#!/usr/bin/env python3
"""Network by domain against a test internet this test builds itself (docs/network-domains.md):
two network namespaces joined by a veth pair, "client" (where cordon runs, like a laptop) and
"world" (a DNS server, dnsmasq, answering for names under .test, and HTTP servers on their own
addresses). cordon runs in the client namespace through `ip netns exec`, which gives it the
world's resolver in /etc/resolv.conf. Nothing leaves the machine.

Each refused case has its allowed twin: an allowed name through a proxy-unaware client (curl,
a blocking python connect), a name not allowed, an IP literal unlisted and listed, a name
resolving to the loopback (rebinding) and the same address listed, a denied subdomain under an
allowed wildcard, a port rule, and a DNS query sent past cordon's resolver. As root and as an
unprivileged user; one-shot, served and through `cordon mcp`.

  domains_test.py CORDON    exit 0: all passed; 1: a failure; 77: not root or a tool is
                            missing (a failure instead when CORDON_TEST_MUST_WORK=1)

  CORDON_DOMAINS_ONLY=TEXT  run only the cases whose "who: way: name" contains TEXT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# tests/e2e/mcp_run.py: one directory up in the tree, beside this file where it is staged.
_here = os.path.dirname(os.path.realpath(__file__))
sys.path[:0] = [_here, os.path.dirname(_here)]
import mcp_run  # noqa: E402

CORDON = os.path.realpath(sys.argv[1])
MUST_WORK = os.environ.get("CORDON_TEST_MUST_WORK") == "1"
SEARCH_PATH = "/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
USER = "cordon-test"


def skip(why):
    print(f"network by domain: {why}")
    sys.exit(1 if MUST_WORK else 77)


if os.geteuid() != 0:
    skip("needs root to build its test network (run it as root; it runs cordon unprivileged too)")
missing = [t for t in ("ip", "dnsmasq", "curl", "getent", "python3", "runuser", "openssl")
           if shutil.which(t, path=SEARCH_PATH) is None]
if missing:
    skip(f"missing {' '.join(missing)} (install with scripts/setup.sh)")

tag = str(os.getpid() % 100000)
WORLD = f"cordon-world-{tag}"
CLIENT = f"cordon-client-{tag}"
PKG = "198.51.100.10"     # pkg.test, *.pkg.test
OTHER = "198.51.100.11"   # other.test
PRIVATE = "10.77.0.10"    # private.test: a private address, with servers on 8080 and 8081
# big.test: 40 addresses, an answer of about 700 bytes (more than a plain 512-byte DNS message)
BIG = [f"198.51.100.{i}" for i in range(100, 140)]
# huge.test: 100 addresses, about 1.7 kB: truncated over UDP at every step, asked again over TCP
HUGE = [f"198.51.100.{i}" for i in range(140, 240)]
RESOLVER = "198.51.100.53"
HOST_PORT = 9090          # a service on the client's (the host's) loopback
PROXY = "127.0.0.1:1023"  # the sandbox's proxy, which the run's proxy variables name
base = os.environ.get("CORDON_ESCAPE_BASE", "/var/lib")
work = tempfile.mkdtemp(prefix="cordon-domains-", dir=base)
os.chmod(work, 0o755)
processes = []


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True,
                          env={"PATH": SEARCH_PATH})


def in_world(*args):
    p = subprocess.Popen(["ip", "netns", "exec", WORLD, *args], env={"PATH": SEARCH_PATH},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(p)


def teardown():
    for p in processes:
        p.kill()
        p.wait()
    for ns in (WORLD, CLIENT):
        sh("ip", "netns", "del", ns, check=False)
    shutil.rmtree(f"/etc/netns/{CLIENT}", ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


def setup():
    sh("ip", "netns", "add", WORLD)
    sh("ip", "netns", "add", CLIENT)
    sh("ip", "link", "add", f"cdc{tag}", "type", "veth", "peer", "name", f"cdw{tag}")
    sh("ip", "link", "set", f"cdc{tag}", "netns", CLIENT)
    sh("ip", "link", "set", f"cdw{tag}", "netns", WORLD)
    sh("ip", "-n", CLIENT, "addr", "add", "192.0.2.2/24", "dev", f"cdc{tag}")
    sh("ip", "-n", WORLD, "addr", "add", "192.0.2.1/24", "dev", f"cdw{tag}")
    for ns, dev in ((CLIENT, f"cdc{tag}"), (WORLD, f"cdw{tag}")):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "link", "set", dev, "up")
    sh("ip", "-n", CLIENT, "route", "add", "default", "via", "192.0.2.1")
    # The servers' own addresses, on the world's loopback (reached through the veth).
    for a in (PKG, OTHER, RESOLVER, PRIVATE):
        sh("ip", "-n", WORLD, "addr", "add", f"{a}/32", "dev", "lo")
    os.makedirs(f"/etc/netns/{CLIENT}", exist_ok=True)
    with open(f"/etc/netns/{CLIENT}/resolv.conf", "w") as f:
        f.write(f"nameserver {RESOLVER}\n")
    in_world("dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
             "--no-hosts", "--bind-interfaces", f"--listen-address={RESOLVER}",
             f"--pid-file={work}/dnsmasq.pid", f"--address=/pkg.test/{PKG}",
             f"--address=/other.test/{OTHER}", "--address=/rebind.test/127.0.0.1",
             f"--address=/private.test/{PRIVATE}", f"--address=/shared.test/{PKG}",
             *[f"--host-record=big.test,{a}" for a in BIG],
             *[f"--host-record=huge.test,{a}" for a in HUGE])
    for address, name in ((PKG, "pkg.test"), (OTHER, "other.test")):
        site = os.path.join(work, name)
        os.makedirs(site)
        with open(os.path.join(site, "hello.txt"), "w") as f:
            f.write(f"hello from {name}\n")
        in_world("python3", "-m", "http.server", "8080", "--bind", address, "--directory", site)
    site = os.path.join(work, "private.test")
    os.makedirs(site)
    with open(os.path.join(site, "hello.txt"), "w") as f:
        f.write("hello from private.test\n")
    for port in ("8080", "8081"):
        in_world("python3", "-m", "http.server", port, "--bind", PRIVATE, "--directory", site)
    # HTTPS on pkg.test:8443 (a certificate of its own, which the clients do not verify), and a
    # server that speaks first (as SSH does) on pkg.test:2222.
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
       "/CN=pkg.test", "-keyout", f"{work}/key.pem", "-out", f"{work}/cert.pem")
    with open(f"{work}/tls_server.py", "w") as f:
        f.write(TLS_SERVER)
    in_world("python3", f"{work}/tls_server.py", PKG, "8443", f"{work}/cert.pem",
             f"{work}/key.pem", os.path.join(work, "pkg.test"))
    with open(f"{work}/banner_server.py", "w") as f:
        f.write(BANNER_SERVER)
    in_world("python3", f"{work}/banner_server.py", PKG, "2222")
    # A service on the client's own loopback: the host's, which no allowed name may lead to.
    host_site = os.path.join(work, "host-service")
    os.makedirs(host_site)
    with open(os.path.join(host_site, "hello.txt"), "w") as f:
        f.write("hello from the host\n")
    p = subprocess.Popen(["ip", "netns", "exec", CLIENT, "python3", "-m", "http.server",
                          str(HOST_PORT), "--bind", "127.0.0.1", "--directory", host_site],
                         env={"PATH": SEARCH_PATH}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    processes.append(p)
    for _ in range(100):
        probe = subprocess.run(["ip", "netns", "exec", CLIENT, "curl", "-sf", "--max-time", "1",
                                "http://pkg.test:8080/hello.txt",
                                "http://other.test:8080/hello.txt",
                                f"http://127.0.0.1:{HOST_PORT}/hello.txt"],
                               capture_output=True, env={"PATH": SEARCH_PATH})
        if probe.returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError("the test network did not come up")


TLS_SERVER = """import functools, http.server, ssl, sys
address, port, cert, key, site = sys.argv[1:]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=site)
server = http.server.HTTPServer((address, int(port)), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"""

BANNER_SERVER = """import socket, sys, threading
listener = socket.create_server((sys.argv[1], int(sys.argv[2])))
def serve(c):
    with c:
        c.sendall(b"SSH-2.0-banner-from-pkg.test\\r\\n")
        line = c.recv(100)
        c.sendall(b"you said " + line)
while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""

# Clients of the sandbox's proxy that no tool offers, written into each workspace:
#   via_proxy.py tls HOST:PORT SERVER_NAME   CONNECT, then TLS naming SERVER_NAME, GET /hello.txt
#   via_proxy.py raw HOST:PORT               CONNECT, read the server's first line, answer it
#   via_proxy.py http URL HOST [URL HOST]... requests on one connection, each with that Host
VIA_PROXY = """import socket, ssl, sys
s = socket.create_connection(("127.0.0.1", 1023))
def head():
    r = b""
    while b"\\r\\n\\r\\n" not in r:
        b = s.recv(1)
        if not b:
            break
        r += b
    return r.split(b"\\r\\n")[0].decode()
mode = sys.argv[1]
if mode in ("tls", "raw"):
    s.sendall(("CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n" % (sys.argv[2], sys.argv[2])).encode())
    print(head())
    if mode == "raw":
        print(s.recv(100).decode().strip())
        s.sendall(b"hello\\n")
        print(s.recv(100).decode().strip())
    else:
        c = ssl.create_default_context()
        c.check_hostname = False
        c.verify_mode = ssl.CERT_NONE
        t = c.wrap_socket(s, server_hostname=sys.argv[3])
        t.sendall(b"GET /hello.txt HTTP/1.0\\r\\n\\r\\n")
        print(b"".join(iter(lambda: t.recv(4096), b"")).decode())
else:
    pairs = sys.argv[2:]
    for i in range(0, len(pairs), 2):
        s.sendall(("GET %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n" % (pairs[i], pairs[i + 1])).encode())
    s.settimeout(5)
    print(b"".join(iter(lambda: s.recv(4096), b"")).decode())
"""


def prepare_user():
    if sh("id", "-u", USER, check=False).returncode != 0:
        sh("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER)
    # The binaries where that user can run them (a build tree may not be reachable for it),
    # laid out as installed: the front (or the full executable) in bin/, the full executable,
    # its init, resolver and bubblewrap trampoline in libexec/cordon/, where each finds the next.
    stage = os.path.join(work, "stage")
    os.makedirs(os.path.join(stage, "bin"))
    os.makedirs(os.path.join(stage, "libexec/cordon"))
    src = os.path.dirname(os.path.dirname(CORDON))  # a build tree's src/
    for part in ("cli/cordon", "linux/cordon-init", "resolver/cordon-resolver",
                 "bwrap/cordon-bwrap-exec"):
        if os.path.exists(os.path.join(src, part)):
            shutil.copy2(os.path.join(src, part), os.path.join(stage, "libexec/cordon"))
    shutil.copy2(CORDON, os.path.join(stage, "bin/cordon"))
    for d in ("", "bin", "libexec", "libexec/cordon"):
        os.chmod(os.path.join(stage, d), 0o755)
    return os.path.join(stage, "bin/cordon")


class Who:
    def __init__(self, name, cordon, uid):
        self.name, self.cordon = name, cordon
        self.home = os.path.join(work, f"home-{name}")
        self.ws = os.path.join(self.home, "proj")
        self.runtime = os.path.join(work, f"runtime-{name}")
        for d in (self.ws, self.runtime):
            os.makedirs(d, mode=0o700)
        with open(os.path.join(self.ws, "via_proxy.py"), "w") as f:
            f.write(VIA_PROXY)
        for d in (self.home, self.ws, self.runtime, os.path.join(self.ws, "via_proxy.py")):
            os.chown(d, uid, uid)
        self.env = {"PATH": SEARCH_PATH, "HOME": self.home, "LANG": "C.UTF-8",
                    "XDG_RUNTIME_DIR": self.runtime}
        self.prefix = ["ip", "netns", "exec", CLIENT]
        if uid != 0:
            self.prefix += ["runuser", "-u", USER, "--"]
        self.prefix += ["env", "-i"] + [f"{k}={v}" for k, v in self.env.items()]
        self.server = None

    def start_server(self, flags):
        self.stop_server()
        self.server = subprocess.Popen(self.prefix + [self.cordon, "serve", "--idle-timeout",
                                                      "300", *flags], cwd=self.ws,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sock = os.path.join(self.runtime, "cordon/run.sock")
        for _ in range(100):
            if os.path.exists(sock):
                return
            time.sleep(0.05)
        raise RuntimeError("the run server did not start")

    def stop_server(self):
        if self.server is not None:
            self.server.terminate()
            self.server.wait()
            self.server = None
            time.sleep(0.1)

    def run(self, way, flags, text):
        if way == "mcp":
            return mcp_run.run_command(
                self.prefix + [self.cordon, "mcp", "--workspace", self.ws, *flags], text,
                cwd=self.ws, client="domains")
        args = [self.cordon, "run", "--json", *flags, "-c", text]
        env_prefix = list(self.prefix)
        if way == "one-shot":
            args.insert(2, "--no-server")
        else:
            env_prefix.append("CORDON_RUN_SERVER=use")
        out = subprocess.run(env_prefix + args, cwd=self.ws, capture_output=True, text=True,
                             timeout=120)
        try:
            return json.loads(out.stdout)
        except json.JSONDecodeError:
            return {"exit_code": -1, "stdout": out.stdout, "stderr": out.stderr, "denials": []}


failures = []


def check(who, way, flags, name, text, *, ok, output=None, denial=None, fast=False, absent=None):
    """ok: the command must exit 0 (and print `output`), else fail; `denial`: (kind, target,
    words of the rule) that must be reported; none reported when ok."""
    only = os.environ.get("CORDON_DOMAINS_ONLY")
    if only and only not in f"{who.name}: {way}: {name}":
        return
    started = time.monotonic()
    r = who.run(way, flags, text)
    took = time.monotonic() - started
    listed = [(d["kind"], d["target"], d["rule"]) for d in r.get("denials", [])]
    problem = None
    if ok and r["exit_code"] != 0:
        problem = f"exited {r['exit_code']}: {r.get('stderr', '')[-300:]!r}"
    elif ok and output is not None and output not in r.get("stdout", ""):
        problem = f"printed {r.get('stdout', '')[-200:]!r}"
    elif ok and listed:
        problem = f"reported {listed}"
    elif not ok and r["exit_code"] == 0:
        problem = "exited 0"
    elif absent is not None and absent in r.get("stdout", "") + r.get("stderr", ""):
        problem = f"printed {absent!r}: it got through"
    elif denial is not None:
        kind, target, words = denial
        found = [d for d in r.get("denials", []) if d["kind"] == kind and d["target"] == target]
        if not found:
            problem = f"no {kind} denial of {target}; got {listed}"
        elif words not in found[0]["rule"] + " " + found[0]["fix"]:
            problem = f"rule/fix {found[0]['rule']!r} / {found[0]['fix']!r} lack {words!r}"
    if problem is None and fast and took > 5:
        problem = f"took {took:.1f} s: a refused name must fail at once, not after retries"
    label = f"{who.name}: {way}: {name}"
    if problem:
        failures.append(f"{label}: {problem}")
        print(f"FAIL: {label}: {problem}")
    else:
        print(f"ok: {label}")


# Through the sandbox's proxy (the run's proxy variables), and past it (transparently).
CURL = "curl -sS --max-time 20 "
CURL_DIRECT = "curl -sS --max-time 20 --noproxy '*' "
VIA = "python3 via_proxy.py "
PY_CONNECT = ("python3 -c \"import socket,sys; s=socket.create_connection((sys.argv[1], "
              "int(sys.argv[2]))); s.sendall(b'GET /hello.txt HTTP/1.0\\r\\n\\r\\n'); "
              "print(b''.join(iter(lambda: s.recv(4096), b'')).decode())\" ")
PY_UDP = ("python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
          "s.settimeout(1); s.sendto(b'\\x12\\x34' + bytes(10), ('" + RESOLVER + "', 53)); "
          "s.recv(512)\"")


# Connects to pkg.test, then tries to make the socket cordon connected outside a free one of
# the host's: disconnect it (AF_UNSPEC) and connect it to the host's loopback service. Prints
# what the host service said, if it was reached.
PY_RECONNECT = ("python3 -c \"import ctypes,socket,sys; s=socket.create_connection(('pkg.test', "
                "8080)); libc=ctypes.CDLL(None, use_errno=True); "
                "r=libc.connect(s.fileno(), bytes(16), 16); "
                "print('disconnect', r, ctypes.get_errno()); "
                "s.connect(('127.0.0.1', " + str(HOST_PORT) + ")); "
                "s.sendall(b'GET /hello.txt HTTP/1.0\\r\\n\\r\\n'); print(s.recv(4096))\"")


# A non-blocking connect to a closed port of pkg.test: the reset closes the socket while the
# kernel still holds it as connecting, and a TCP fast-open sendto() would then disconnect it
# (its first try) and connect it anew (its second), to the host's loopback service, if it were
# the host's socket. Prints what the host service said, if it was reached.
PY_FASTOPEN = ("python3 -c \"import socket,time; s=socket.socket(); s.setblocking(False); "
               "print('connect', s.connect_ex(('pkg.test', 8081))); time.sleep(0.5); "
               "s.setblocking(True); s.settimeout(3)\n"
               "for attempt in range(2):\n"
               "  try: s.sendto(b'GET /hello.txt HTTP/1.0\\r\\n\\r\\n', socket.MSG_FASTOPEN, "
               "('127.0.0.1', " + str(HOST_PORT) + "))\n"
               "  except OSError as e: print(attempt, e)\n"
               "time.sleep(0.3); s.send(b'GET /hello.txt HTTP/1.0\\r\\n\\r\\n'); "
               "print(s.recv(4096))\"")


# shared.test resolves to pkg.test's address: once both names were handed out for it, a deny
# rule of either one for the port wins over the other's allow.
SHARED = "getent hosts shared.test >/dev/null; " + PY_CONNECT + "pkg.test 8080"
# A listener on the sandbox's 0.0.0.0 is reached by a connect to 0.0.0.0 (its own host).
PY_LOCAL_ANY = ("python3 -c \"import socket; l=socket.socket(); l.bind(('0.0.0.0', 0)); l.listen(); "
                "s=socket.create_connection(('0.0.0.0', l.getsockname()[1])); print('local ok')\"")


def cases(who, way, flags_for):
    a = flags_for
    check(who, way, a("pkg.test"), "allowed name, curl (non-blocking connect)",
          CURL_DIRECT + "http://pkg.test:8080/hello.txt", ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test"), "name not allowed fails at once",
          CURL_DIRECT + "http://other.test:8080/hello.txt", ok=False, fast=True,
          denial=("dns", "other.test", "--allow-domain other.test"))
    check(who, way, a("pkg.test"), "allowed name, python blocking connect",
          PY_CONNECT + "pkg.test 8080", ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test"), "IP literal not listed",
          PY_CONNECT + f"{OTHER} 8080", ok=False,
          denial=("connect", f"{OTHER}:8080", "no allowed name resolved to"))
    check(who, way, a("pkg.test", f"{OTHER}:8080"), "IP literal listed",
          PY_CONNECT + f"{OTHER} 8080", ok=True, output="hello from other.test")
    check(who, way, a("rebind.test"), "allowed name resolving to the loopback",
          "getent ahostsv4 rebind.test", ok=False,
          denial=("dns", "rebind.test -> 127.0.0.1", "rebinding"))
    check(who, way, a("rebind.test", "127.0.0.1"), "the loopback listed explicitly",
          "getent ahostsv4 rebind.test", ok=True, output="127.0.0.1")
    check(who, way, a("*.pkg.test", "!secret.pkg.test"), "denied subdomain under a wildcard",
          "getent hosts secret.pkg.test", ok=False, fast=True,
          denial=("dns", "secret.pkg.test", "secret.pkg.test"))
    check(who, way, a("*.pkg.test", "!secret.pkg.test"), "other subdomain under the wildcard",
          CURL_DIRECT + "http://www.pkg.test:8080/hello.txt", ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test:443"), "allowed name on another port",
          CURL_DIRECT + "http://pkg.test:8080/hello.txt", ok=False,
          denial=("connect", f"{PKG}:8080 (pkg.test)", "--allow-domain pkg.test:8080"))
    check(who, way, a("pkg.test:8080"), "allowed name on its port",
          CURL_DIRECT + "http://pkg.test:8080/hello.txt", ok=True, output="hello from pkg.test")
    check(who, way, a("big.test"), "an answer larger than 512 bytes",
          "getent ahostsv4 big.test | awk '{print $1}' | sort -u | wc -l", ok=True,
          output=str(len(BIG)))
    check(who, way, a("huge.test"), "an answer larger than a UDP message, over TCP",
          "getent ahostsv4 huge.test | awk '{print $1}' | sort -u | wc -l", ok=True,
          output=str(len(HUGE)))
    check(who, way, a("pkg.test"), "DNS past cordon's resolver", PY_UDP, ok=False,
          denial=("dns", f"{RESOLVER}:53", "resolver"))
    check(who, way, a("pkg.test"), "connected socket cannot be reconnected to the host",
          PY_RECONNECT, ok=False, absent="hello from the host")
    check(who, way, a("pkg.test"), "a reset socket fast-opened to the host",
          PY_FASTOPEN, ok=False, absent="hello from the host")
    check(who, way, a("private.test", f"{PRIVATE}:8080"), "an internal address on its listed port",
          PY_CONNECT + "private.test 8080", ok=True, output="hello from private.test")
    check(who, way, a("private.test", f"{PRIVATE}:8080"),
          "an internal address on another port than listed, by an allowed name",
          PY_CONNECT + "private.test 8081", ok=False,
          denial=("connect", f"{PRIVATE}:8081", "a name's rule never does"))
    check(who, way, a("pkg.test", "shared.test", "!shared.test:443"),
          "an address two allowed names share", SHARED, ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test", "shared.test", "!shared.test:8080"),
          "an address two names share, one denied on the port", SHARED, ok=False,
          denial=("connect", f"{PKG}:8080 (shared.test)", "shared.test:8080"))
    check(who, way, a("pkg.test"), "the unspecified address is the sandbox's own",
          PY_LOCAL_ANY, ok=True, output="local ok")
    check(who, way, a("pkg.test"), "the unspecified address never reaches the host",
          PY_CONNECT + f"0.0.0.0 {HOST_PORT}", ok=False, absent="hello from the host")
    check(who, way, a("pkg.test"), "the host's loopback service",
          CURL_DIRECT + f"http://127.0.0.1:{HOST_PORT}/hello.txt", ok=False,
          denial=("connect", f"127.0.0.1:{HOST_PORT}", "loopback is its own"))
    proxy_cases(who, way, flags_for)


def proxy_cases(who, way, flags_for):
    """Through the sandbox's proxy: HTTP (absolute URLs and CONNECT) and SOCKS5."""
    a = flags_for
    check(who, way, a("pkg.test"), "proxy: plain HTTP to an allowed name",
          CURL + "-f http://pkg.test:8080/hello.txt", ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test"), "proxy: plain HTTP to a name not allowed",
          CURL + "-f http://other.test:8080/hello.txt", ok=False, fast=True,
          denial=("connect", "other.test:8080", "--allow-domain other.test, or"))
    check(who, way, a("pkg.test"), "proxy: HTTPS through CONNECT to an allowed name",
          CURL + "-fk https://pkg.test:8443/hello.txt", ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test"), "proxy: CONNECT to a name not allowed",
          CURL + "-fk https://other.test:8443/hello.txt", ok=False, fast=True,
          denial=("connect", "other.test:8443", "--allow-domain other.test, or"))
    check(who, way, a("pkg.test"), "proxy: TLS naming the tunnel's own host",
          VIA + "tls pkg.test:8443 pkg.test", ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test"), "proxy: TLS naming another host than the tunnel's",
          VIA + "tls pkg.test:8443 other.test", ok=False, absent="hello from",
          denial=("connect", "pkg.test:8443", "other.test"))
    check(who, way, a("pkg.test"), "proxy: a server that speaks first, through a tunnel",
          VIA + "raw pkg.test:2222", ok=True, output="you said hello")
    check(who, way, a("pkg.test"), "proxy: requests on one connection, each for its host",
          VIA + "http http://pkg.test:8080/hello.txt pkg.test:8080 "
          "http://pkg.test:8080/hello.txt pkg.test:8080", ok=True, output="hello from pkg.test")
    check(who, way, a("pkg.test"), "proxy: a Host header naming another host",
          VIA + "http http://pkg.test:8080/hello.txt other.test:8080 && false", ok=False,
          absent="hello from", denial=("connect", "pkg.test:8080", "other.test:8080"))
    check(who, way, a("pkg.test"), "proxy: a later request on the connection for another host",
          VIA + "http http://pkg.test:8080/hello.txt pkg.test:8080 "
          "http://other.test:8080/hello.txt other.test:8080 && false", ok=False,
          absent="hello from other.test", denial=("connect", "pkg.test:8080", "other.test:8080"))
    check(who, way, a("rebind.test", "127.0.0.1"),
          "proxy: the loopback listed, reached by name, stays the sandbox's",
          CURL + f"-f http://rebind.test:{HOST_PORT}/hello.txt", ok=False,
          absent="hello from the host", denial=("connect", f"127.0.0.1:{HOST_PORT}", "own address"))
    check(who, way, a("pkg.test"), "socks5: an allowed name",
          CURL + f"-f --socks5-hostname {PROXY} http://pkg.test:8080/hello.txt", ok=True,
          output="hello from pkg.test")
    check(who, way, a("pkg.test"), "socks5: a name not allowed",
          CURL + f"-f --socks5-hostname {PROXY} http://other.test:8080/hello.txt", ok=False,
          fast=True, denial=("connect", "other.test:8080", "--allow-domain other.test, or"))
    check(who, way, a("pkg.test"), "socks5: an IP literal not listed",
          CURL + f"-f --socks5 {PROXY} http://{OTHER}:8080/hello.txt", ok=False,
          denial=("connect", f"{OTHER}:8080", "no allowed name resolved to"))
    check(who, way, a("pkg.test", f"{OTHER}:8080"), "socks5: an IP literal listed",
          CURL + f"-f --socks5 {PROXY} http://{OTHER}:8080/hello.txt", ok=True,
          output="hello from other.test")


def domain_flags(*patterns):
    flags = []
    for p in patterns:
        flags += ["--deny-domain", p[1:]] if p.startswith("!") else ["--allow-domain", p]
    return flags


try:
    setup()
    unprivileged_cordon = prepare_user()
    uid = int(sh("id", "-u", USER).stdout)
    for who in (Who("root", CORDON, 0), Who(USER, unprivileged_cordon, uid)):
        for way in ("one-shot", "served", "mcp"):
            # The run server takes each run's own flags (its sessions are keyed by them).
            if way == "served":
                who.start_server([])
            cases(who, way, domain_flags)
            who.stop_server()
    # Without cordon-resolver a domains run is refused before anything runs (its twin: every
    # case above, with it). The staged layout, without that one file.
    os.unlink(os.path.join(os.path.dirname(os.path.dirname(unprivileged_cordon)),
                           "libexec/cordon/cordon-resolver"))
    for who in (Who("root-bare", unprivileged_cordon, 0),
                Who(USER + "-bare", unprivileged_cordon, uid)):
        for way in ("one-shot", "served", "mcp"):
            marker = os.path.join(who.ws, f"ran-{way}")
            flags = ["--allow-domain", "pkg.test"]
            if way == "mcp":
                r = mcp_run.run_command(
                    who.prefix + [who.cordon, "mcp", "--workspace", who.ws, *flags],
                    f"touch {marker}", cwd=who.ws, client="domains") or {}
                code, said = r.get("exit_code", 125), r.get("error") or ""
            else:
                if way == "served":
                    who.start_server([])
                env = ["CORDON_RUN_SERVER=use"] if way == "served" else []
                args = ["run", "--no-server"] if way == "one-shot" else ["run"]
                out = subprocess.run(who.prefix + env + [who.cordon, *args, *flags, "--", "touch",
                                                         marker],
                                     cwd=who.ws, capture_output=True, text=True, timeout=120)
                code, said = out.returncode, out.stderr
                who.stop_server()
            name = f"{who.name}: {way}: without cordon-resolver the run is refused"
            if code != 125 or "needs cordon-resolver" not in said:
                failures.append(f"{name}: exited {code}: {said[-300:]!r}")
            elif os.path.exists(marker):
                failures.append(f"{name}: the command ran")
            else:
                print(f"ok: {name}")
finally:
    teardown()

if failures:
    print(f"\n{len(failures)} failure(s):")
    for f in failures:
        print("  " + f)
    sys.exit(1)
print("network by domain: all passed")
