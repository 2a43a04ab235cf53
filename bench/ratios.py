#!/usr/bin/env python3
"""Prints the benchmark figures and the ratios the targets are stated in (docs/performance.md)."""
import json
import sys


def load(path):
    with open(path) as f:
        return {b["name"]: b for b in json.load(f)["benchmarks"]}


def ms(b):
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
    return b["real_time"] * scale


def main():
    policy = load(sys.argv[1])
    startup = load(sys.argv[2])
    print("policy evaluation:")
    for name, b in policy.items():
        print(f"  {name:60s} {b['real_time']:10.2f} {b['time_unit']}")
    # UseRealTime() names them "Run/<case>/real_time".
    get = lambda n: (startup.get("Run/" + n) or startup.get("Run/" + n + "/real_time")
                     or startup.get("RunThroughServer/" + n + "/real_time"))
    print("start-up (wall time per command):")
    for name, b in startup.items():
        if name.startswith("Run"):
            print(f"  {name:30s} {ms(b):8.2f} ms")
    # PeakRss/<case>/iterations:N, measured through bench/peak_rss.cc.
    peak = {n.split("/")[1]: b["peak_rss_kib"] for n, b in startup.items()
            if n.startswith("PeakRss/") and "peak_rss_kib" in b}
    print("peak resident set (floor of the measurement: PeakRss true_bare):")
    for name, kib in peak.items():
        print(f"  {name:30s} {kib:8.0f} KiB")
    for cmd in ("true", "short"):
        bare, bw, co = get(cmd + "_bare"), get(cmd + "_bwrap"), get(cmd + "_cordon")
        if bare and bw and co:
            cordon_cost, bwrap_cost = ms(co) - ms(bare), ms(bw) - ms(bare)
            print(f"  {cmd}: one-shot (--no-server) start-up cost {cordon_cost:.2f} ms, bubblewrap"
                  f" {bwrap_cost:.2f} ms, ratio {cordon_cost / bwrap_cost:.2f}")
        cs = get(cmd + "_cordon_server")
        if bare and bw and cs:
            cs_cost = ms(cs) - ms(bare)
            print(f"  {cmd}: through a run server (cordon serve) start-up cost {cs_cost:.2f} ms,"
                  f" ratio {cs_cost / bwrap_cost:.2f} (target <= 0.40)")
        sb, sw, ss = get(cmd + "_bare_spaced"), get(cmd + "_bwrap_spaced"), get(cmd + "_cordon_server_spaced")
        if sb and sw and ss:
            ss_cost, sw_cost = ms(ss) - ms(sb), ms(sw) - ms(sb)
            print(f"  {cmd}, 50 ms apart: through a run server start-up cost {ss_cost:.2f} ms,"
                  f" bubblewrap {sw_cost:.2f} ms, ratio {ss_cost / sw_cost:.2f} (target <= 0.40)")
        cb = get(cmd + "_cordon_bwrap")
        if bare and bw and cb:
            cb_cost = ms(cb) - ms(bare)
            print(f"  {cmd}: cordon's bwrap backend start-up cost {cb_cost:.2f} ms, ratio to bare "
                  f"bubblewrap {cb_cost / bwrap_cost:.2f}, to the native backend "
                  f"{cb_cost / (ms(co) - ms(bare)):.2f}")
    # Interleaved/<case>: bare, bubblewrap and the run server taking turns, medians.
    for name, b in startup.items():
        if name.startswith("Interleaved/") and "cordon_server_ms" in b:
            case = name.split("/")[1]
            bare_ms, bw_ms, cs_ms = b["bare_ms"], b["bwrap_ms"], b["cordon_server_ms"]
            print(f"  {case}, interleaved (medians of {b['iterations']}): bare {bare_ms:.2f} ms,"
                  f" bubblewrap +{bw_ms - bare_ms:.2f} ms, run server +{cs_ms - bare_ms:.2f} ms,"
                  f" ratio {(cs_ms - bare_ms) / (bw_ms - bare_ms):.2f} (target <= 0.40)")
    flood = startup.get("InterleavedFlood/iterations:30") or next(
        (b for n, b in startup.items() if n.startswith("InterleavedFlood")), None)
    if flood and "served_mb_s" in flood:
        print(f"  200 MB through cordon run (served, the default), interleaved (medians):"
              f" {flood['served_mb_s']:.0f} MB/s vs bare {flood['bare_mb_s']:.0f} MB/s, ratio "
              f"{flood['served_mb_s'] / flood['bare_mb_s']:.2f} (target >= 0.90)")
    if flood and "cordon_mb_s" in flood:
        print(f"  200 MB through cordon run --no-server, interleaved (medians):"
              f" {flood['cordon_mb_s']:.0f} MB/s vs bare {flood['bare_mb_s']:.0f} MB/s, ratio "
              f"{flood['cordon_mb_s'] / flood['bare_mb_s']:.2f}")
    bare, co = get("flood200mb_bare"), get("flood200mb_cordon")
    if bare and co:
        print(f"  200 MB through cordon run --no-server, separate cases: "
              f"{co['bytes_per_second'] / 1e6:.0f} MB/s vs bare "
              f"{bare['bytes_per_second'] / 1e6:.0f} MB/s, ratio "
              f"{co['bytes_per_second'] / bare['bytes_per_second']:.2f}")
    cordon_peaks = [peak[n] for n in ("true_cordon", "flood200mb_cordon") if n in peak]
    if cordon_peaks:
        print(f"  cordon run --no-server (supervisor in the process) peak RSS:"
              f" {max(cordon_peaks) / 1024:.2f} MiB (largest of true and the 200 MB flood;"
              f" target < 4)")
    server_peaks = {n: b["server_peak_rss_kib"] for n, b in startup.items()
                    if "server_peak_rss_kib" in b}
    if server_peaks:
        name = max(server_peaks, key=server_peaks.get)
        print(f"  run server (the supervisor of served runs) peak RSS: "
              f"{server_peaks[name] / 1024:.2f} MiB (largest, in {name}; target < 4)")
    if len(sys.argv) > 4:
        long_lived(load(sys.argv[3]), load(sys.argv[4]))


def long_lived(session, mcp):
    """Session::Run and the MCP round trip over a bare fork-exec (target < 2 ms)."""
    pick = lambda d, n: d.get(n) or d.get(n + "/real_time")
    print("long-lived session (wall time per command):")
    for name, b in list(session.items()) + list(mcp.items()):
        if b.get("time_unit") and not name.startswith("Probe"):
            extra = "".join(f"  {k}={b[k]:.0f}" for k in ("joined", "prepared") if k in b)
            print(f"  {name:34s} {ms(b):8.2f} ms{extra}")
    bare, bare_idle = pick(session, "BareForkExec/0"), pick(session, "BareForkExec/30")
    for label, b, base in (("one-shot", pick(session, "OneShot"), bare),
                           ("zygote", pick(session, "Zygote"), bare),
                           ("prepared (30 ms pause)", pick(session, "Prepared"), bare_idle)):
        if b and base:
            print(f"  Session::Run {label} - bare fork-exec: {ms(b) - ms(base):.2f} ms")
    for label, name, base in (("back to back", "McpRoundTrip/0", "BareForkExec/0"),
                              ("50 ms apart", "McpRoundTrip/50", "BareForkExec/50")):
        b, mcp_bare = pick(mcp, name), pick(mcp, base)
        if b and mcp_bare:
            print(f"  MCP round trip {label} - bare fork-exec: {ms(b) - ms(mcp_bare):.2f} ms "
                  f"(run_ms {b.get('run_ms', 0):.2f}; target < 2)")


if __name__ == "__main__":
    main()
