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

Ports (decision 0055): on a narrowed ephemeral range, twice as many connects as it has ports,
each closed by the command first (TIME_WAIT); ports reserved for services passed over; every
port of the range held (EADDRNOTAVAIL); and a socket a reset closed, which the command must not
bind to a port of the host's.

Behind a parent proxy (sandbox.parent_proxy, the caller's HTTPS_PROXY): a third namespace,
"corp", joined to the world by a veth of its own and without a default route, reaches only
192.0.3.0/24, where the world runs a small CONNECT proxy (the parent) that logs every target it
is asked for. cordon runs there for the "parent" cases; the host's DNS is switched on and off
between them (/etc/netns/CORP/resolv.conf, which `ip netns exec` binds at each exec, and a route
to the world's resolver). Checked from outside: curl's output, the parent's log (a name, the
address literal, nothing at all), cordon's denials and its refusal of a parent it cannot use.

  domains_test.py CORDON    exit 0: all passed; 1: a failure; 77: not root or a tool is
                            missing (a failure instead when CORDON_TEST_MUST_WORK=1)

  CORDON_DOMAINS_ONLY=TEXT  run only the cases whose "who: way: name" contains TEXT
"""
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
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
CORP = f"cordon-corp-{tag}"  # behind a parent proxy: reaches only 192.0.3.0/24, no default route
PKG = "198.51.100.10"     # pkg.test, *.pkg.test
OTHER = "198.51.100.11"   # other.test
PRIVATE = "10.77.0.10"    # private.test: a private address, with servers on 8080 and 8081
# big.test: 40 addresses, an answer of about 700 bytes (more than a plain 512-byte DNS message)
BIG = [f"198.51.100.{i}" for i in range(100, 140)]
# huge.test: 100 addresses, about 1.7 kB: truncated over UDP at every step, asked again over TCP
HUGE = [f"198.51.100.{i}" for i in range(140, 240)]
RESOLVER = "198.51.100.53"
HOST_PORT = 9090          # a service on the client's (the host's) loopback
RESET_PORT = 2223         # pkg.test's server that resets every connection
PROXY = "127.0.0.1:1023"  # the sandbox's proxy, which the run's proxy variables name
CORP_ADDR = "192.0.3.2"   # corp's end of its veth (192.0.3.0/24); the world's is PARENT_HOST
PARENT_HOST = "192.0.3.1"
PARENT = f"http://{PARENT_HOST}:3128"       # the parent proxy, in the world
DEAD_PARENT = f"http://{PARENT_HOST}:3129"  # nothing listens there
LOCAL_PARENT_PORT = 3128  # a parent on corp's own addresses (its loopback, CORP_ADDR)
SILENT_PARENT_PORT = 3130  # on corp's loopback: takes connections and requests, never answers
DROPPING_PARENT = "203.0.113.99"  # routed from corp to the world, which drops it silently
NO_RESOLVER = "203.0.113.53"  # corp's "no host DNS": a nameserver with no route (ENETUNREACH)
INNER_RESOLVER = "198.51.100.54"  # a corporate DNS that knows no outside name: NXDOMAIN for .test
base = os.environ.get("CORDON_ESCAPE_BASE", "/var/lib")
work = tempfile.mkdtemp(prefix="cordon-domains-", dir=base)
os.chmod(work, 0o755)
processes = []
PARENT_LOG = os.path.join(work, "parent.log")  # each CONNECT target the parents were asked for
DNS_LOG = os.path.join(work, "dnsmasq.log")  # each question the world's resolver was asked


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
    for ns in (WORLD, CLIENT, CORP):
        sh("ip", "netns", "del", ns, check=False)  # and the veths with them
    for ns in (CLIENT, CORP):
        shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
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
             f"--pid-file={work}/dnsmasq.pid", "--log-queries", f"--log-facility={DNS_LOG}",
             f"--host-record=cached.test,{PKG},300",
             "--host-record=cached-rebind.test,127.0.0.1,300", f"--address=/pkg.test/{PKG}",
             f"--address=/other.test/{OTHER}", "--address=/rebind.test/127.0.0.1",
             f"--address=/private.test/{PRIVATE}", f"--address=/shared.test/{PKG}",
             f"--address=/parent.test/{PARENT_HOST}",
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
    with open(f"{work}/reset_server.py", "w") as f:
        f.write(RESET_SERVER)
    in_world("python3", f"{work}/reset_server.py", PKG, str(RESET_PORT))
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
    wait_until_up(CLIENT, ["curl", "-sf", "--max-time", "1", "http://pkg.test:8080/hello.txt",
                           "http://other.test:8080/hello.txt",
                           f"http://127.0.0.1:{HOST_PORT}/hello.txt"], "the test network")
    setup_corp()


def wait_until_up(ns, probe, what):
    """Runs `probe` in namespace `ns` until it succeeds (10 s at most)."""
    for _ in range(100):
        if subprocess.run(["ip", "netns", "exec", ns, *probe], capture_output=True,
                          env={"PATH": SEARCH_PATH}).returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not come up")


# The names the parent proxy resolves itself (as dnsmasq answers them): a parent asked for a
# name connects where it resolves it, which is what cordon must not let happen for a name the
# host's DNS answered (it asks for the address it checked).
PARENT_NAMES = {"pkg.test": PKG, "other.test": OTHER, "rebind.test": "127.0.0.1",
                "private.test": PRIVATE, "shared.test": PKG}


def setup_corp():
    """corp: a network where only the parent proxy goes out. Its veth to the world, no default
    route; the parent in the world on PARENT_HOST:3128, another on corp's own addresses."""
    sh("ip", "netns", "add", CORP)
    sh("ip", "link", "add", f"cdp{tag}", "type", "veth", "peer", "name", f"cdq{tag}")
    sh("ip", "link", "set", f"cdp{tag}", "netns", CORP)
    sh("ip", "link", "set", f"cdq{tag}", "netns", WORLD)
    sh("ip", "-n", CORP, "addr", "add", f"{CORP_ADDR}/24", "dev", f"cdp{tag}")
    sh("ip", "-n", WORLD, "addr", "add", f"{PARENT_HOST}/24", "dev", f"cdq{tag}")
    for ns, dev in ((CORP, f"cdp{tag}"), (WORLD, f"cdq{tag}")):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "link", "set", dev, "up")
    os.makedirs(f"/etc/netns/{CORP}", exist_ok=True)
    sh("ip", "-n", WORLD, "addr", "add", f"{INNER_RESOLVER}/32", "dev", "lo")
    in_world("dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv",
             "--no-hosts", "--bind-interfaces", f"--listen-address={INNER_RESOLVER}",
             f"--pid-file={work}/dnsmasq-inner.pid", "--address=/test/")
    open(PARENT_LOG, "w").close()
    with open(f"{work}/parent_proxy.py", "w") as f:
        f.write(PARENT_PROXY)
    names = json.dumps(PARENT_NAMES)
    in_world("python3", f"{work}/parent_proxy.py", PARENT_HOST, "3128", PARENT_LOG, names)
    p = subprocess.Popen(["ip", "netns", "exec", CORP, "python3", f"{work}/parent_proxy.py",
                          "0.0.0.0", str(LOCAL_PARENT_PORT), PARENT_LOG, names],
                         env={"PATH": SEARCH_PATH}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    processes.append(p)
    with open(f"{work}/silent_parent.py", "w") as f:
        f.write(SILENT_PARENT)
    p = subprocess.Popen(["ip", "netns", "exec", CORP, "python3", f"{work}/silent_parent.py",
                          "127.0.0.1", str(SILENT_PARENT_PORT)], env={"PATH": SEARCH_PATH},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    processes.append(p)
    # A parent whose SYNs are dropped without a word: the connect to it is retried for minutes.
    sh("ip", "-n", CORP, "route", "add", f"{DROPPING_PARENT}/32", "via", PARENT_HOST)
    sh("ip", "-n", WORLD, "route", "add", "blackhole", f"{DROPPING_PARENT}/32")
    corp_network(RESOLVER)
    # Up: the host's DNS answers, the parent tunnels by name, the local parent answers (405 to
    # a request that is not CONNECT); and the world is not reached without the parent.
    probe_text = (f"getent hosts pkg.test >/dev/null && curl -sf --max-time 1 -p -x {PARENT} "
                  "http://pkg.test:8080/hello.txt >/dev/null && test \"$(curl -s --max-time 1 "
                  f"-o /dev/null -w '%{{http_code}}' -x http://127.0.0.1:{LOCAL_PARENT_PORT} "
                  "http://pkg.test:8080/)\" = 405")
    wait_until_up(CORP, ["sh", "-c", probe_text], "the corp network or its parent proxy")
    direct = subprocess.run(["ip", "netns", "exec", CORP, "curl", "-sf", "--max-time", "2",
                             f"http://{PKG}:8080/hello.txt"], capture_output=True,
                            env={"PATH": SEARCH_PATH})
    if direct.returncode == 0:
        raise RuntimeError("corp reaches the world without its parent proxy")


def corp_network(nameserver, direct=False):
    """corp's host DNS: `nameserver` (RESOLVER, the world's, which answers; INNER_RESOLVER, which
    answers NXDOMAIN; each reached by a route of its own; NO_RESOLVER, without a route), and a
    direct route to pkg.test's address (`direct`, for no_proxy). resolv.conf is rewritten in
    place: a run server started in corp sees it too."""
    with open(f"/etc/netns/{CORP}/resolv.conf", "w") as f:
        f.write(f"nameserver {nameserver}\n")
    for address, on in ((RESOLVER, nameserver == RESOLVER),
                        (INNER_RESOLVER, nameserver == INNER_RESOLVER), (PKG, direct)):
        if on:
            sh("ip", "-n", CORP, "route", "replace", f"{address}/32", "via", PARENT_HOST)
        else:
            sh("ip", "-n", CORP, "route", "del", f"{address}/32", check=False)


def parent_log_size():
    return os.path.getsize(PARENT_LOG)


def parent_log_since(offset):
    with open(PARENT_LOG) as f:
        f.seek(offset)
        return f.read().splitlines()


TLS_SERVER = """import functools, http.server, ssl, sys
address, port, cert, key, site = sys.argv[1:]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=site)
server = http.server.HTTPServer((address, int(port)), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
"""

# A parent proxy that never answers: ADDRESS PORT. Takes each connection and what is sent on it,
# and holds it open without a byte back.
SILENT_PARENT = """import socket, sys, threading
listener = socket.create_server((sys.argv[1], int(sys.argv[2])), backlog=64)
def hold(c):
    while c.recv(4096):
        pass
while True:
    c, _ = listener.accept()
    threading.Thread(target=hold, args=(c,), daemon=True).start()
"""

# The parent proxy: ADDRESS PORT LOG NAMES. CONNECT host:port (a name of NAMES or its
# subdomain, or an address literal) with a Host header naming the same: the target appended to
# LOG, then "403" for port 8081 (a parent's own rule), else connected and relayed both ways.
# Anything but CONNECT: 405. An upstream that speaks first within 0.3 s has its first bytes sent
# in the same send as the "200" head (so a client that reads past the head would swallow them).
PARENT_PROXY = """import ipaddress, json, select, socket, sys, threading
address, port, log, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
lock = threading.Lock()
def note(line):
    with lock, open(log, "a") as f:
        f.write(line + "\\n")
def resolve(host):
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    host = host.lower().rstrip(".")
    for name, a in names.items():
        if host == name or host.endswith("." + name):
            return a
    return None
def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def answer(c, status):
    c.sendall(("HTTP/1.1 %s\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n"
               % status).encode())
def serve(c):
    with c:
        data = b""
        while b"\\r\\n\\r\\n" not in data and len(data) < 65536:
            got = c.recv(4096)
            if not got:
                return
            data += got
        head, _, rest = data.partition(b"\\r\\n\\r\\n")
        lines = head.decode("latin-1").split("\\r\\n")
        words = lines[0].split()
        if len(words) != 3 or words[0] != "CONNECT" or not words[2].startswith("HTTP/1."):
            note("! not a CONNECT: " + lines[0])
            return answer(c, "405 Method Not Allowed")
        target = words[1]
        note(target)
        hosts = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("host:")]
        if hosts != [target]:
            note("! Host %r for %s" % (hosts, target))
            return answer(c, "400 Bad Request")
        host, _, port = target.rpartition(":")
        if port == "8081":
            return answer(c, "403 Forbidden")
        to = resolve(host.strip("[]"))
        try:
            upstream = socket.create_connection((to, int(port)), timeout=5) if to else None
        except (OSError, ValueError):
            upstream = None
        if upstream is None:
            return answer(c, "502 Bad Gateway")
        with upstream:
            upstream.settimeout(None)
            reply = b"HTTP/1.1 200 Connection established\\r\\n\\r\\n"
            try:
                if select.select([upstream], [], [], 0.3)[0]:
                    reply += upstream.recv(65536)
            except OSError:
                pass
            c.sendall(reply)
            if rest:
                upstream.sendall(rest)
            back = threading.Thread(target=pipe, args=(upstream, c), daemon=True)
            back.start()
            pipe(c, upstream)
            back.join()
listener = socket.create_server((address, port))
while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
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

# Resets each connection half a second after accepting it (a linger of 0, then close).
RESET_SERVER = """import socket, struct, sys, threading, time
listener = socket.create_server((sys.argv[1], int(sys.argv[2])))
def serve(c):
    time.sleep(0.5)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
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
        self.name, self.cordon, self.uid = name, cordon, uid
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
        self.netns = CLIENT  # where cordon runs (and its run server starts): CORP behind a parent
        self.server = None

    @property
    def prefix(self):
        return self.prefix_with({})

    def prefix_with(self, env):
        """The words that run a program as this user in its namespace, in its environment and
        `env` (a variable such as HTTPS_PROXY of the caller: cordon's, or the MCP server's)."""
        prefix = ["ip", "netns", "exec", self.netns]
        if self.uid != 0:
            prefix += ["runuser", "-u", USER, "--"]
        return prefix + ["env", "-i"] + [f"{k}={v}" for k, v in {**self.env, **env}.items()]

    def set_config(self, config):
        """This user's config file (~/.config/cordon/config.json): `config`, or none."""
        directory = os.path.join(self.home, ".config", "cordon")
        path = os.path.join(directory, "config.json")
        if config is None:
            if os.path.exists(path):
                os.unlink(path)
            return
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with open(path, "w") as f:
            json.dump(config, f)
        for d in (os.path.dirname(directory), directory, path):
            os.chown(d, self.uid, self.uid)

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

    def run(self, way, flags, text, env=None):
        # MCP: the server's own environment is the caller's (an agent starts it with its own);
        # served: `cordon run` sends its environment along with the run.
        env = env or {}
        if way == "mcp":
            return mcp_run.run_command(
                self.prefix_with(env) + [self.cordon, "mcp", "--structured-output", "--workspace", self.ws, *flags],
                text, cwd=self.ws, client="domains")
        args = [self.cordon, "run", "--json", *flags, "-c", text]
        env_prefix = self.prefix_with(env)
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


def report(label, problem):
    """Records the case `label` as failed with `problem`, or as passed when that is None."""
    if problem:
        failures.append(f"{label}: {problem}")
        print(f"FAIL: {label}: {problem}")
    else:
        print(f"ok: {label}")


def check(who, way, flags, name, text, *, ok, output=None, denial=None, fast=False, absent=None,
          env=None, config=None, logged=None, unlogged=None, within=None):
    """ok: the command must exit 0 (and print `output`), else fail; `denial`: (kind, target or
    targets, words of the rule or fix) that must be reported, or (kind, target or targets, words
    of the rule, words of the fix); none reported when ok. `env`: the
    caller's variables (HTTPS_PROXY), `config`: the user's config file for this case alone.
    `logged`: targets the parent proxy must have been asked for in this case; `unlogged`: words
    no line of its log may hold (checked, with either, from the case's start). `within`: the
    seconds the run may take at most."""
    only = os.environ.get("CORDON_DOMAINS_ONLY")
    if only and only not in f"{who.name}: {way}: {name}":
        return
    watch = logged is not None or unlogged is not None
    offset = parent_log_size() if watch else 0
    if config is not None:
        who.set_config(config)
    started = time.monotonic()
    try:
        r = who.run(way, flags, text, env)
    finally:
        if config is not None:
            who.set_config(None)
    took = time.monotonic() - started
    if r is None:  # the MCP server gave no answer
        r = {"exit_code": -1, "stdout": "", "stderr": "no answer from cordon mcp", "denials": []}
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
        kind, target, words = denial[:3]
        fix_words = denial[3] if len(denial) > 3 else None
        targets = (target,) if isinstance(target, str) else target
        found = [d for d in r.get("denials", []) if d["kind"] == kind and d["target"] in targets]
        if not found:
            problem = f"no {kind} denial of {' or '.join(targets)}; got {listed}"
        elif fix_words is None and words not in found[0]["rule"] + " " + found[0]["fix"]:
            problem = f"rule/fix {found[0]['rule']!r} / {found[0]['fix']!r} lack {words!r}"
        elif fix_words is not None and words not in found[0]["rule"]:
            problem = f"rule {found[0]['rule']!r} lacks {words!r}"
        elif fix_words is not None and fix_words not in found[0]["fix"]:
            problem = f"fix {found[0]['fix']!r} lacks {fix_words!r}"
    if problem is None and fast and took > 5:
        problem = f"took {took:.1f} s: a refused name must fail at once, not after retries"
    if problem is None and within is not None and took > within:
        problem = f"took {took:.1f} s, more than {within} s"
    if watch:
        seen = parent_log_since(offset)
        missing = [t for t in logged or () if t not in seen]
        leaked = sorted({w for w in unlogged or () for line in seen if w in line})
        if problem is None and missing:
            problem = f"the parent proxy was not asked for {missing}"
        elif problem is None and leaked:
            problem = f"the parent proxy saw {leaked}"
        if problem is not None:
            problem += f" (the parent's log: {seen}; exit {r.get('exit_code')}, stderr " \
                       f"{r.get('stderr', '')[-200:]!r})"
    label = f"{who.name}: {way}: {name}"
    report(label, problem)


# Through the sandbox's proxy (the run's proxy variables), and past it (transparently).
CURL = "curl -sS --max-time 20 "
CURL_DIRECT = "curl -sS --max-time 20 --noproxy '*' "
VIA = "python3 via_proxy.py "
PY_CONNECT = ("python3 -c \"import socket,sys; s=socket.create_connection((sys.argv[1], "
              "int(sys.argv[2]))); s.sendall(b'GET /hello.txt HTTP/1.0\\r\\n\\r\\n'); "
              "print(b''.join(iter(lambda: s.recv(4096), b'')).decode())\" ")
# A server that speaks first, connected to directly (transparently): its first line in
# brackets (anything before the banner shows inside them), then its answer to "hello".
PY_BANNER = ("python3 -c \"import socket; s=socket.create_connection(('pkg.test', 2222)); "
             "f=s.makefile('rb'); line=f.readline(); s.sendall(b'hello\\n'); "
             "print('first[%s] %s' % (line.decode().rstrip(), f.readline().decode().strip()))\"")
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


def parent_cases(who, way, flags_for):
    """Behind a parent proxy, in corp: every connection cordon makes for the command is a CONNECT
    through the parent (to the address cordon checked; to the allowed name only where the
    host's DNS answers nothing and sandbox.parent_proxy_by_name is set), unless no_proxy names
    it; what cordon refuses never reaches the parent. Each case's twin without the parent (or
    with it, or without the opt-in) is beside it."""
    a = flags_for
    via = {"HTTPS_PROXY": PARENT}
    by_name = {"sandbox": {"parent_proxy_by_name": True}}  # the opt-in to by-name connects
    # By name without the opt-in: the proxy's "no address" 502, and the opt-in's denial.
    not_opted_in = ("connect", "pkg.test:8080", "sandbox.parent_proxy_by_name",
                    "parent_proxy_by_name")
    pkg_http = "http://pkg.test:8080/hello.txt"
    # Any of the forms a connect denial may name the destination in (the proxy's: the name).
    refused_8081 = ("pkg.test:8081", f"{PKG}:8081 (pkg.test)", f"{PKG}:8081")
    refused_8080 = ("pkg.test:8080", f"{PKG}:8080 (pkg.test)", f"{PKG}:8080")

    # A corporate DNS that knows no outside name: the proxy asks the parent for the name, when
    # the user opted in.
    corp_network(INNER_RESOLVER)
    check(who, way, a("pkg.test:8080"), "parent: NXDOMAIN from the host's DNS, by name through it",
          CURL + "-f " + pkg_http, env=via, config=by_name, ok=True, output="hello from pkg.test",
          logged=["pkg.test:8080"])
    check(who, way, a("pkg.test:8080"), "parent: NXDOMAIN from the host's DNS, not opted in",
          CURL + "-f " + pkg_http, env=via, ok=False, absent="hello from", denial=not_opted_in,
          unlogged=["pkg.test"])
    check(who, way, a("pkg.test:8080"), "parent: NXDOMAIN from the host's DNS, and no parent",
          CURL + "-f " + pkg_http, config=by_name, ok=False, absent="hello from",
          unlogged=["pkg.test"])

    # No host DNS at all (its nameserver unreachable): the same, by name through the parent.
    corp_network(NO_RESOLVER)
    check(who, way, a("pkg.test:8080"), "parent: no host DNS, plain HTTP by name through it",
          CURL + "-f " + pkg_http, env=via, config=by_name, ok=True, output="hello from pkg.test",
          logged=["pkg.test:8080"])
    check(who, way, a("pkg.test:8080"), "parent: no host DNS, by name not opted in",
          CURL + "-f " + pkg_http, env=via, ok=False, absent="hello from", denial=not_opted_in,
          unlogged=["pkg.test"])
    check(who, way, a("pkg.test:8080"), "parent: no host DNS and no parent, not reached",
          CURL + "-f " + pkg_http, config=by_name, ok=False, absent="hello from",
          unlogged=["pkg.test"])
    check(who, way, a("pkg.test:8080"), "parent: no host DNS, a name not allowed never reaches it",
          CURL + "-f http://other.test:8080/hello.txt", env=via, config=by_name, ok=False,
          fast=True, denial=("connect", "other.test:8080", "--allow-domain other.test, or"),
          unlogged=["other.test", OTHER])
    check(who, way, a("pkg.test"), "parent: no host DNS, HTTPS through the proxy's CONNECT",
          CURL + "-fk https://pkg.test:8443/hello.txt", env=via, config=by_name, ok=True,
          output="hello from pkg.test", logged=["pkg.test:8443"])
    check(who, way, a("pkg.test"), "parent: no host DNS, socks5 by name",
          CURL + f"-f --socks5-hostname {PROXY} " + pkg_http, env=via, config=by_name, ok=True,
          output="hello from pkg.test", logged=["pkg.test:8080"])
    check(who, way, a("pkg.test"), "parent: sandbox.parent_proxy none over HTTPS_PROXY",
          CURL + "-f " + pkg_http, env=via,
          config={"sandbox": {"parent_proxy": "none", "parent_proxy_by_name": True}},
          ok=False, absent="hello from", unlogged=["pkg.test"])
    check(who, way, a("pkg.test"), "parent: sandbox.parent_proxy names it (no HTTPS_PROXY)",
          CURL + "-f " + pkg_http,
          config={"sandbox": {"parent_proxy": PARENT, "parent_proxy_by_name": True}}, ok=True,
          output="hello from pkg.test", logged=["pkg.test:8080"])
    check(who, way, a("pkg.test"), "parent: sandbox.parent_proxy as host:port",
          CURL + "-f " + pkg_http,
          config={"sandbox": {"parent_proxy": f"{PARENT_HOST}:3128",
                              "parent_proxy_by_name": True}},
          ok=True, output="hello from pkg.test", logged=["pkg.test:8080"])
    check(who, way, a("pkg.test"), "parent: https_proxy before HTTPS_PROXY",
          CURL + "-f " + pkg_http, env={"https_proxy": PARENT, "HTTPS_PROXY": DEAD_PARENT},
          config=by_name, ok=True, output="hello from pkg.test", logged=["pkg.test:8080"])
    # Opted in, and still never by name to a parent on this host.
    for where, address in (("loopback", "127.0.0.1"), ("own address", CORP_ADDR)):
        check(who, way, a("pkg.test"), f"parent: on the host's {where}, never asked for a name",
              CURL + "-f " + pkg_http, env={"HTTPS_PROXY": f"http://{address}:{LOCAL_PARENT_PORT}"},
              config=by_name, ok=False, absent="hello from", unlogged=["pkg.test"])
    check(who, way, a("pkg.test"), "parent: the caller's HTTPS_PROXY is not the sandbox's",
          "printenv HTTPS_PROXY https_proxy", env=via, ok=True, output=PROXY, absent=PARENT_HOST,
          unlogged=[])

    # The host's DNS answers: the parent is asked for the address cordon checked.
    corp_network(RESOLVER)
    check(who, way, a("pkg.test:8080"), "parent: transparent connect, to the checked address",
          CURL_DIRECT + pkg_http, env=via, ok=True, output="hello from pkg.test",
          logged=[f"{PKG}:8080"], unlogged=["pkg.test"])
    check(who, way, a("pkg.test:8080"), "parent: transparent connect without the parent",
          CURL_DIRECT + pkg_http, ok=False, absent="hello from", unlogged=[PKG])
    check(who, way, a("pkg.test:8080"), "parent: the proxy asks it for the checked address",
          CURL + "-f " + pkg_http, env=via, config=by_name, ok=True, output="hello from pkg.test",
          logged=[f"{PKG}:8080"], unlogged=["pkg.test"])
    # A server that speaks first: the parent sends its first bytes with the "200" head, in one
    # send; cordon takes the head alone and the tunnel keeps them.
    check(who, way, a("pkg.test:2222"), "parent: a server that speaks first, transparent",
          PY_BANNER, env=via, ok=True, output="first[SSH-2.0-banner-from-pkg.test] you said hello",
          logged=[f"{PKG}:2222"], unlogged=["pkg.test"])
    check(who, way, a("pkg.test:2222"), "parent: a server that speaks first, through the proxy",
          VIA + "raw pkg.test:2222", env=via, ok=True,
          output="SSH-2.0-banner-from-pkg.test\nyou said hello", logged=[f"{PKG}:2222"],
          unlogged=["pkg.test"])
    check(who, way, a("pkg.test"), "parent: named by a host name the host resolves",
          CURL_DIRECT + pkg_http, env={"HTTPS_PROXY": "http://parent.test:3128"}, ok=True,
          output="hello from pkg.test", logged=[f"{PKG}:8080"])
    check(who, way, a("pkg.test"), "parent: a name not allowed fails at once, unseen by it",
          CURL_DIRECT + "http://other.test:8080/hello.txt", env=via, ok=False, fast=True,
          denial=("dns", "other.test", "--allow-domain other.test"),
          unlogged=["other.test", OTHER])
    check(who, way, a("pkg.test"), "parent: an IP literal not listed, unseen by it",
          PY_CONNECT + f"{OTHER} 8080", env=via, ok=False,
          denial=("connect", f"{OTHER}:8080", "no allowed name resolved to"), unlogged=[OTHER])
    check(who, way, a("pkg.test", f"{OTHER}:8080"), "parent: an IP literal listed, through it",
          PY_CONNECT + f"{OTHER} 8080", env=via, ok=True, output="hello from other.test",
          logged=[f"{OTHER}:8080"])
    check(who, way, a("rebind.test"), "parent: a name resolving to the loopback, withheld",
          "getent ahostsv4 rebind.test", env=via, ok=False,
          denial=("dns", "rebind.test -> 127.0.0.1", "rebinding"),
          unlogged=["rebind.test", "127.0.0.1"])
    check(who, way, a("rebind.test"), "parent: the proxy never asks it for a rebound name",
          CURL + "-f http://rebind.test:8080/hello.txt", env=via, config=by_name, ok=False,
          absent="hello from", unlogged=["rebind.test", "127.0.0.1"])
    check(who, way, a("pkg.test:8081"), "parent: it refuses the port, transparent",
          CURL_DIRECT + "http://pkg.test:8081/hello.txt", env=via, ok=False,
          denial=("connect", refused_8081, "parent proxy"), logged=[f"{PKG}:8081"])
    check(who, way, a("pkg.test:8081"), "parent: it refuses the port, through the proxy",
          CURL + "-f http://pkg.test:8081/hello.txt", env=via, ok=False,
          denial=("connect", refused_8081, "parent proxy"), logged=[f"{PKG}:8081"])
    check(who, way, a("pkg.test:8080"), "parent: unreachable",
          CURL_DIRECT + pkg_http, env={"HTTPS_PROXY": DEAD_PARENT}, ok=False,
          absent="hello from", denial=("connect", refused_8080, "parent proxy"),
          unlogged=["pkg.test", PKG])
    # One that takes the request and never answers (root's runs), one whose SYNs are dropped
    # (the unprivileged user's): the connect fails once the tunnel's 30 s are up (ETIMEDOUT,
    # recorded), not at the run's timeout. Their twin: the answering parent above. (One each:
    # each case waits its 30 s.)
    if who.uid == 0:
        check(who, way, a("pkg.test:8080"), "parent: silent, the connect times out",
              PY_CONNECT + "pkg.test 8080", ok=False, absent="hello from", within=50,
              env={"HTTPS_PROXY": f"http://127.0.0.1:{SILENT_PARENT_PORT}"},
              denial=("connect", refused_8080, "did not answer the CONNECT request within 30 s"))
    else:
        check(who, way, a("pkg.test:8080"), "parent: its SYNs dropped, the connect times out",
              PY_CONNECT + "pkg.test 8080", ok=False, absent="hello from", within=50,
              env={"HTTPS_PROXY": f"http://{DROPPING_PARENT}:3128"},
              denial=("connect", refused_8080, "could not be reached within 30 s"))

    # pkg.test's address reached directly too: no_proxy decides, not the routes.
    corp_network(RESOLVER, direct=True)
    check(who, way, a("pkg.test"), "parent: NO_PROXY names the host, connected directly",
          CURL_DIRECT + pkg_http, env={**via, "NO_PROXY": "pkg.test"}, ok=True,
          output="hello from pkg.test", unlogged=["pkg.test", PKG])
    check(who, way, a("pkg.test"), "parent: NO_PROXY naming others, through the parent",
          CURL_DIRECT + pkg_http, env={**via, "NO_PROXY": "other.test,10.0.0.0/8"}, ok=True,
          output="hello from pkg.test", logged=[f"{PKG}:8080"])
    check(who, way, a("*.pkg.test"), "parent: no_proxy with a leading dot, in a list",
          CURL_DIRECT + "http://www.pkg.test:8080/hello.txt",
          env={**via, "no_proxy": "example.org, .pkg.test"}, ok=True,
          output="hello from pkg.test", unlogged=["pkg.test", PKG])
    check(who, way, a("pkg.test"), "parent: NO_PROXY by CIDR block, connected directly",
          CURL_DIRECT + pkg_http, env={**via, "NO_PROXY": "198.51.100.0/24"}, ok=True,
          output="hello from pkg.test", unlogged=["pkg.test", PKG])
    check(who, way, a("pkg.test"), "parent: NO_PROXY on the proxy path, connected directly",
          CURL + "-f " + pkg_http, env={**via, "NO_PROXY": "pkg.test"}, ok=True,
          output="hello from pkg.test", unlogged=["pkg.test", PKG])
    check(who, way, a("pkg.test"), "parent: on the host's loopback, to a checked address",
          CURL_DIRECT + pkg_http, env={"HTTPS_PROXY": f"http://127.0.0.1:{LOCAL_PARENT_PORT}"},
          ok=True, output="hello from pkg.test", logged=[f"{PKG}:8080"], unlogged=["pkg.test"])
    corp_network(RESOLVER)

    # A parent cordon cannot use refuses the domains run before anything runs; a usable one,
    # or another network mode, runs.
    check_start(who, way, "parent: with credentials, refused", {"HTTPS_PROXY":
                f"http://u:s3cretpw@{PARENT_HOST}:3128"}, refused="credentials", hidden="s3cretpw")
    check_start(who, way, "parent: socks5://, refused",
                {"HTTPS_PROXY": f"socks5://{PARENT_HOST}:1080"}, refused="socks5://")
    check_start(who, way, "parent: https://, refused",
                {"HTTPS_PROXY": f"https://{PARENT_HOST}:3128"}, refused="https://")
    check_start(who, way, "parent: a plain http:// one, the run starts", via)
    check_start(who, way, "parent: with credentials, another network mode starts",
                {"HTTPS_PROXY": f"http://u:s3cretpw@{PARENT_HOST}:3128"},
                flags=("--network", "deny"), hidden="s3cretpw")


# The broker's outside sockets under connection churn (exec/outside_socket.h): each pinned to
# a local port of its own, found as the kernel finds an unbound connect's. Each case narrows the
# client's ephemeral range (net.ipv4.ip_local_port_range, the namespace's own) to ports no case
# before it used, since a closed connection holds its port for a minute (TIME_WAIT).
PY_CHURN = ("python3 -c \"import socket,sys\n"
            "targets = [('pkg.test', 8080), ('pkg.test', 8443), ('other.test', 8080)]\n"
            "for i in range(int(sys.argv[1])):\n"
            "  s = socket.create_connection(targets[i % 3], timeout=10); s.close()\n"
            "print('connected', sys.argv[1])\" ")
# The local ports of connects to three addresses (the host's socket's, put in the command's).
PY_PORTS = ("python3 -c \"import socket\n"
            "targets = [('pkg.test', 8080), ('pkg.test', 8443), ('other.test', 8080)]\n"
            "ports = set()\n"
            "for t in targets:\n"
            "  s = socket.create_connection(t, timeout=10); ports.add(s.getsockname()[1]); "
            "s.close()\n"
            "print('ports', sorted(ports))\"")
# A connect when every port of the range is held: the errno it gets.
PY_NO_PORT = ("python3 -c \"import socket\n"
              "try: socket.create_connection(('pkg.test', 8080), timeout=10); print('connected')\n"
              "except OSError as e: print('refused', e.errno)\"")
# Connects to the server that resets, then tries to bind the closed socket to SQUAT_PORT (a
# port of the host's network: the socket is the host's); marks that it tried and holds on.
PY_SQUAT = ("python3 -c \"import socket,sys,time\n"
            "s = socket.create_connection(('pkg.test', " + str(RESET_PORT) + "), timeout=10)\n"
            "try: s.recv(1)\n"
            "except OSError: pass\n"
            "try: s.bind(('0.0.0.0', int(sys.argv[1]))); print('bound')\n"
            "except OSError as e: print('bind refused', e.errno)\n"
            "open('squat-tried', 'w').close(); time.sleep(4)\" ")
port_block = [40000]


# Four lookups of NAME's addresses (three by getent, one by Python's connect): the answers of
# the world's resolver for --address names carry a TTL of 0, cached.test's one of 300 s.
LOOKUPS = ("for i in 1 2 3; do getent ahostsv4 {name} >/dev/null || exit 1; done; " +
           PY_CONNECT + "{name} 8080")


def dns_questions_since(offset, name):
    """The A questions for `name` the world's resolver logged from `offset` on."""
    with open(DNS_LOG) as f:
        f.seek(offset)
        return sum(1 for line in f if f"query[A] {name} from" in line)


def cache_cases(who, way, flags_for):
    """An answer with a TTL is kept by the run's resolver: asked once however often the command
    looks the name up, and connected to after; the twin: one with a TTL of 0 is asked each time."""
    for name, asked, what in (("cached.test", 1, "an answer with a TTL is asked for once"),
                              ("pkg.test", 4, "an answer with a TTL of 0 is asked for each time")):
        label = f"{who.name}: {way}: {what}"
        only = os.environ.get("CORDON_DOMAINS_ONLY")
        if only and only not in label:
            continue
        offset = os.path.getsize(DNS_LOG)
        before = len(failures)
        check(who, way, flags_for(name), what, LOOKUPS.format(name=name), ok=True,
              output="hello from pkg.test")
        if len(failures) > before:
            continue
        time.sleep(0.2)  # the resolver's log written
        n = dns_questions_since(offset, name)
        report(label + " (the world's resolver)",
               None if n == asked else f"asked {n} times for {name}, not {asked}")
    # The denied twin: an answer kept by the cache is filtered again each time it is used, so a
    # rebinding answer with a TTL stays withheld on its second lookup too, and is reported.
    check(who, way, flags_for("cached-rebind.test"), "a cached rebinding answer stays withheld",
          "getent ahostsv4 cached-rebind.test; getent ahostsv4 cached-rebind.test", ok=False,
          absent="127.0.0.1", denial=("dns", "cached-rebind.test -> 127.0.0.1", "rebinding"))


def port_range(size):
    """Narrows the client's ephemeral range to `size` ports no case used before; its first."""
    low = port_block[0]
    port_block[0] += 100
    sh("ip", "netns", "exec", CLIENT, "sysctl", "-qw",
       f"net.ipv4.ip_local_port_range={low} {low + size - 1}")
    return low


def port_cases(who, way, flags_for):
    a = flags_for
    label = f"{who.name}: {way}: ports: "
    only = os.environ.get("CORDON_DOMAINS_ONLY")
    if only and only not in label:
        return
    # Twice as many connects as the range has ports, each closed by the command first: its
    # side's port waits in TIME_WAIT, shared with connections to the other addresses, as an
    # unbound connect shares it (bare, below: the setup's own check).
    port_range(16)
    bare = subprocess.run(["ip", "netns", "exec", CLIENT, "sh", "-c", PY_CHURN + "32"],
                          capture_output=True, text=True, timeout=120)
    if "connected 32" not in bare.stdout:
        failures.append(f"{label}bare churn failed, the setup is wrong: {bare.stderr[-300:]!r}")
        return
    port_range(16)
    check(who, way, a("pkg.test", "other.test"), "ports: 32 connects over a 16-port range",
          PY_CHURN + "32", ok=True, output="connected 32")
    # Ports reserved for services (net.ipv4.ip_local_reserved_ports) are never pinned: of a
    # range of four with three reserved, every connect gets the fourth.
    low = port_range(4)
    sh("ip", "netns", "exec", CLIENT, "sysctl", "-qw",
       f"net.ipv4.ip_local_reserved_ports={low},{low + 1}-{low + 2}")
    try:
        check(who, way, a("pkg.test", "other.test"), "ports: the reserved ones are passed over",
              PY_PORTS, ok=True, output=f"ports [{low + 3}]")
    finally:
        sh("ip", "netns", "exec", CLIENT, "sysctl", "-qw", "net.ipv4.ip_local_reserved_ports=")
    # Twin: every port of the range held by a listener of the host's: the connect fails, as an
    # unbound one does (EADDRNOTAVAIL), never made from a port that is not the socket's own.
    low = port_range(2)
    holder = subprocess.Popen(
        ["ip", "netns", "exec", CLIENT, "python3", "-c",
         "import socket,sys,time\n"
         f"held = [socket.create_server(('0.0.0.0', p)) for p in ({low}, {low + 1})]\n"
         "print('held', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True)
    try:
        holder.stdout.readline()
        check(who, way, a("pkg.test"), "ports: every port of the range held",
              PY_NO_PORT, ok=True, output=f"refused {errno.EADDRNOTAVAIL}")
    finally:
        holder.kill()
        holder.wait()
    squat_case(who, way, a("pkg.test"))


def squat_case(who, way, flags):
    """A socket cordon connected outside, reset by the server, cannot be bound by the command
    to a port of the host's network: checked from outside, by binding that port meanwhile."""
    label = f"{who.name}: {way}: ports: a reset socket cannot squat a host port"
    squat_port = 45000 + port_block[0] // 100
    marker = os.path.join(who.ws, "squat-tried")
    if os.path.exists(marker):
        os.unlink(marker)
    result = {}
    runner = threading.Thread(
        target=lambda: result.update(who.run(way, flags, PY_SQUAT + str(squat_port)) or {}))
    runner.start()
    for _ in range(200):
        if os.path.exists(marker):
            break
        time.sleep(0.05)
    probe = subprocess.run(
        ["ip", "netns", "exec", CLIENT, "python3", "-c",
         "import socket; s = socket.socket(); "  # no SO_REUSEADDR: any holder conflicts
         f"s.bind(('0.0.0.0', {squat_port})); s.listen(); print('free')"],
        capture_output=True, text=True)
    runner.join()
    problem = None
    if not os.path.exists(marker):
        problem = f"the command never tried: {result.get('stderr', '')[-300:]!r}"
    elif "free" not in probe.stdout:
        problem = f"port {squat_port} was taken: {probe.stderr[-200:]!r}"
    elif "bind refused" not in result.get("stdout", ""):
        problem = f"printed {result.get('stdout', '')[-200:]!r}"
    report(label, problem)


def check_start(who, way, name, env, *, refused=None, flags=("--allow-domain", "pkg.test"),
                hidden=None):
    """The run with the caller's `env` is refused before its command runs (exit 125, the
    message holding `refused`), or, with refused None, its command runs. `hidden`: text (a
    password) that its message must not show."""
    label = f"{who.name}: {way}: {name}"
    only = os.environ.get("CORDON_DOMAINS_ONLY")
    if only and only not in label:
        return
    marker = os.path.join(who.ws, "ran")
    if os.path.exists(marker):
        os.unlink(marker)
    if way == "mcp":
        r = mcp_run.run_command(
            who.prefix_with(env) + [who.cordon, "mcp", "--structured-output", "--workspace", who.ws, *flags],
            f"touch {marker}", cwd=who.ws, client="domains") or {}
        code, said = r.get("exit_code", 125), r.get("error") or r.get("stderr") or ""
    else:
        args = ["run", "--no-server"] if way == "one-shot" else ["run"]
        extra = {} if way == "one-shot" else {"CORDON_RUN_SERVER": "use"}
        out = subprocess.run(who.prefix_with({**env, **extra}) +
                             [who.cordon, *args, *flags, "--", "touch", marker],
                             cwd=who.ws, capture_output=True, text=True, timeout=120)
        code, said = out.returncode, out.stderr
    ran = os.path.exists(marker)
    problem = None
    if refused is None and (code != 0 or not ran):
        problem = f"exited {code}, {'ran' if ran else 'did not run'}: {said[-300:]!r}"
    elif refused is not None and (code != 125 or refused not in said):
        problem = f"exited {code}: {said[-300:]!r}"
    elif refused is not None and ran:
        problem = "the command ran"
    elif hidden is not None and hidden in said:
        problem = f"showed {hidden!r}: {said[-300:]!r}"
    report(label, problem)


def domain_flags(*patterns):
    flags = []
    for p in patterns:
        flags += ["--deny-domain", p[1:]] if p.startswith("!") else ["--allow-domain", p]
    return flags


try:
    setup()
    unprivileged_cordon = prepare_user()
    uid = int(sh("id", "-u", USER).stdout)
    whos = (Who("root", CORDON, 0), Who(USER, unprivileged_cordon, uid))
    for who in whos:
        for way in ("one-shot", "served", "mcp"):
            # The run server takes each run's own flags (its sessions are keyed by them).
            if way == "served":
                who.start_server([])
            cases(who, way, domain_flags)
            cache_cases(who, way, domain_flags)
            who.stop_server()
    # Under connection churn, and a socket a reset closed: in the client, on narrowed ranges.
    for who in whos:
        for way in ("one-shot", "served", "mcp"):
            if way == "served":
                who.start_server([])
            port_cases(who, way, domain_flags)
            who.stop_server()
    sh("ip", "netns", "exec", CLIENT, "sysctl", "-qw", "net.ipv4.ip_local_port_range=32768 60999")
    # Behind a parent proxy: cordon (and its run server, whose environment has no HTTPS_PROXY:
    # each run's caller's counts) in corp.
    for who in whos:
        who.netns = CORP
        for way in ("one-shot", "served", "mcp"):
            if way == "served":
                who.start_server([])
            parent_cases(who, way, domain_flags)
            who.stop_server()
        who.netns = CLIENT
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
                    who.prefix + [who.cordon, "mcp", "--structured-output", "--workspace", who.ws, *flags],
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
