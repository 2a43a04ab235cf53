#!/usr/bin/env bash
# What network by domain costs, timed as a user times it (hyperfine), against a test network
# this script builds in network namespaces (as tests/e2e/network/domains_test.py does): a
# "world" with a DNS server (dnsmasq) answering pkg.test and an HTTP server sending a file with
# sendfile, and a "client" where the commands run. Side by side in one run:
#
#   download  a 200 MB file with curl: no sandbox, cordon transparent (curl --noproxy '*'),
#             cordon through its proxy (the run's proxy variables), cordon with --network allow
#   connect   1000 new TCP connections (python, to the address looked up once), each sent one
#             request and answered one byte
#   lookup    5000 lookups of one name (python's socket.getaddrinfo, one process): pkg.test,
#             whose answer has a TTL of 0 (each asked of the host's resolver), and cached.test,
#             whose answer has one of 300 s (kept by cordon's resolver, decision 0057)
#   start     `true`, with and without --allow-domain (the resolver's start beside it)
#
# Each cordon case is one-shot (--no-server), so `start` is what each one pays before its work;
# per-connection and per-lookup costs are (cordon - cordon's start) - (bare - bare's start),
# divided by their number. Targets (issue 24): download >= 0.9x direct, < 1 ms per connection,
# < 0.2 ms per lookup. Needs root (namespaces), hyperfine, dnsmasq, curl, python3.
# Usage: bench/network_domains.sh [DIR]   (DIR: where the files go; not below /tmp or /var/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(realpath -m "${1:-build/release/bench-network-domains}")
case "$root" in /tmp/* | /var/tmp/*) echo "network_domains.sh: $root is below a private tmp" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "network_domains.sh: needs root (network namespaces)" >&2; exit 2; }
runs=${RUNS:-10}
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target cordon cordon-front cordon-init \
  cordon-resolver >/dev/null
cordon=$PWD/build/release/src/cli/cordon

tag=$$
world=cordon-bench-world-$tag
client=cordon-bench-client-$tag
pkg=198.51.100.10
resolver=198.51.100.53
cleanup() {
  [ -f "$root/dnsmasq.pid" ] && kill "$(cat "$root/dnsmasq.pid")" 2>/dev/null || true
  [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
  ip netns del "$world" 2>/dev/null || true
  ip netns del "$client" 2>/dev/null || true
  rm -rf "/etc/netns/$client"
}
trap cleanup EXIT
rm -rf "$root"
mkdir -p "$root/site" "$root/ws"
head -c 200000000 /dev/zero >"$root/site/big"
printf x >"$root/site/small"

ip netns add "$world"
ip netns add "$client"
ip link add "cbc$tag" type veth peer name "cbw$tag"
ip link set "cbc$tag" netns "$client"
ip link set "cbw$tag" netns "$world"
ip -n "$client" addr add 192.0.2.2/24 dev "cbc$tag"
ip -n "$world" addr add 192.0.2.1/24 dev "cbw$tag"
for ns in "$client" "$world"; do ip -n "$ns" link set lo up; done
ip -n "$client" link set "cbc$tag" up
ip -n "$world" link set "cbw$tag" up
ip -n "$client" route add default via 192.0.2.1
# Tens of thousands of connections to one server port within a minute: without reusing ports in
# TIME_WAIT the client's local port range runs out (EADDRNOTAVAIL) before the runs do.
ip netns exec "$client" sysctl -qw net.ipv4.tcp_tw_reuse=1
ip -n "$world" addr add "$pkg/32" dev lo
ip -n "$world" addr add "$resolver/32" dev lo
mkdir -p "/etc/netns/$client"
echo "nameserver $resolver" >"/etc/netns/$client/resolv.conf"
ip netns exec "$world" dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --bind-interfaces \
  --listen-address=$resolver --pid-file="$root/dnsmasq.pid" --address=/pkg.test/$pkg \
  --host-record=cached.test,$pkg,300
cat >"$root/server.py" <<'PY'
import os, socket, sys, threading
site = sys.argv[2]
def serve(c):
    with c:
        while True:
            head = b""
            while b"\r\n\r\n" not in head:
                more = c.recv(4096)
                if not more:
                    return
                head += more
            path = os.path.join(site, head.split(b" ")[1].decode().lstrip("/").split("?")[0])
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
                c.sendfile(f)
listener = socket.create_server((sys.argv[1], 8080), backlog=512)
while True:
    c, _ = listener.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
ip netns exec "$world" python3 "$root/server.py" "$pkg" "$root/site" &
server=$!
cat >"$root/ws/connect.py" <<'PY'
import socket
address = socket.getaddrinfo("pkg.test", 8080, socket.AF_INET, socket.SOCK_STREAM)[0][4]
for _ in range(1000):
    s = socket.create_connection(address)
    s.sendall(b"GET /small HTTP/1.1\r\nHost: pkg.test\r\n\r\n")
    while not s.recv(4096).endswith(b"x"):
        pass
    s.close()
PY
cat >"$root/ws/lookup.py" <<'PY'
import socket, sys
for _ in range(5000):
    socket.getaddrinfo(sys.argv[1], 8080, socket.AF_INET, socket.SOCK_STREAM)
PY
for _ in $(seq 50); do
  ip netns exec "$client" curl -sf -o /dev/null http://pkg.test:8080/small && break
  sleep 0.1
done

in_client="ip netns exec $client"
url=http://pkg.test:8080/big
one=(run --no-server --allow-domain pkg.test --allow-domain cached.test --)
cd "$root/ws"
hyperfine -N --warmup 2 --runs "$runs" --export-json "$root/download.json" \
  -n "no sandbox" "$in_client curl -s -o /dev/null $url" \
  -n "cordon, transparent" "$in_client $cordon ${one[*]} curl -s --noproxy * -o /dev/null $url" \
  -n "cordon, through its proxy" "$in_client $cordon ${one[*]} curl -s -o /dev/null $url" \
  -n "cordon, --network allow" \
  "$in_client $cordon run --no-server --network allow -- curl -s -o /dev/null $url"
hyperfine -N --warmup 3 --runs $((runs * 3)) --export-json "$root/work.json" \
  -n "bare: start" "$in_client python3 -c pass" \
  -n "bare: 1000 connects" "$in_client python3 connect.py" \
  -n "bare: 5000 lookups" "$in_client python3 lookup.py pkg.test" \
  -n "bare: 5000 lookups, TTL 300" "$in_client python3 lookup.py cached.test" \
  -n "cordon: start" "$in_client $cordon ${one[*]} python3 -c pass" \
  -n "cordon: 1000 connects" "$in_client $cordon ${one[*]} python3 connect.py" \
  -n "cordon: 5000 lookups" "$in_client $cordon ${one[*]} python3 lookup.py pkg.test" \
  -n "cordon: 5000 lookups, TTL 300" "$in_client $cordon ${one[*]} python3 lookup.py cached.test"
hyperfine -N --warmup 10 --runs $((runs * 10)) --export-json "$root/start.json" \
  -n "one-shot true" "$in_client $cordon run --no-server -- true" \
  -n "one-shot true, with --allow-domain" "$in_client $cordon ${one[*]} true"
python3 - "$root" <<'PY'
import json, sys
root = sys.argv[1]
def results(name):
    with open(f"{root}/{name}.json") as f:
        return {r["command"]: r for r in json.load(f)["results"]}
d = results("download")
bare = d["no sandbox"]["mean"]
print("| download, 200 MB | mean | throughput | vs no sandbox |")
print("|---|---|---|---|")
for name, r in d.items():
    print(f"| {name} | {r['mean'] * 1000:.0f} ± {r['stddev'] * 1000:.0f} ms | "
          f"{200 / r['mean']:.0f} MB/s | {bare / r['mean']:.2f}x |")
w = results("work")
def per(kind, count=1000):
    cordon = w[f"cordon: {count} {kind}"]["mean"] - w["cordon: start"]["mean"]
    naked = w[f"bare: {count} {kind}"]["mean"] - w["bare: start"]["mean"]
    return (cordon - naked) / count * 1e3
print()
print("| per operation, cordon over bare | ms |")
print("|---|---|")
print(f"| a new TCP connection (transparent), one request | {per('connects'):.3f} |")
print(f"| a lookup of an allowed name, TTL 0 (asked each time) | {per('lookups', 5000):.3f} |")
print(f"| a lookup of an allowed name, TTL 300 s (kept after the first) | "
      f"{per('lookups, TTL 300', 5000):.3f} |")
s = results("start")
print()
print("| start | mean |")
print("|---|---|")
for name, r in s.items():
    print(f"| {name} | {r['mean'] * 1000:.1f} ± {r['stddev'] * 1000:.1f} ms |")
PY
