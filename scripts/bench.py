#!/usr/bin/env python3
"""redis-benchmark against the core's listener and a real Redis, in one run.

Called by scripts/bench.sh (which starts both servers on loopback and stops them).
For each server: fill a 1,000,000-member zset `bench:z` (members m:000000000000 …,
the shape redis-benchmark's __rand_int__ produces with -r 1000000) by pipelined
ZADDs, read used_memory before and after (bytes per member), then run
redis-benchmark with 50 clients, without and with -P 16, for SET, GET, INCR, ZADD,
ZINCRBY, ZSCORE, ZREVRANK and ZRANGE 0 9 on the big key (requests per second,
p50 and p99 latency). Each command runs --rounds times (3 by default) on each
server, the servers alternating inside a round and taking turns going first, so
that a noisy neighbour hits both alike; each figure is the median of its
rounds, and the figures compared are the ratios core/Redis of those medians
(requests per second: higher is better for the core; p99: lower is), with the
lowest and highest per-round ratio beside them (one redis-benchmark run moved
a ratio by up to 0.1 on this 2-core machine).

Before that, on the same private Redis while it is still empty, bench_inprocess
(crates/harness/src/bin/bench_inprocess.rs) builds the same data in a core in
its own process and on Redis, and gives (1) each command's in-process cost on
the core (Server::run + RESP encode, ns/op, median and mean, best of 3 rounds)
beside Redis's usec_per_call for the same calls (INFO commandstats, pipelined),
with the ratio core mean / Redis; (2) memory per element for each type: the
core's real heap (counting allocator) beside Redis's used_memory growth for the
same commands. It empties the Redis when done.
Writes <out>/bench.txt and <out>/bench.json.
Only the Python standard library is used.
"""
import argparse
import csv
import io
import json
import os
import platform
import socket
import subprocess
import time

MEMBERS = 1_000_000

TESTS = [
    ("SET", ["SET", "bench:k:__rand_int__", "xxx"]),
    ("GET", ["GET", "bench:k:__rand_int__"]),
    ("INCR", ["INCR", "bench:n:__rand_int__"]),
    ("ZADD", ["ZADD", "bench:z", "__rand_int__", "m:__rand_int__"]),
    ("ZINCRBY", ["ZINCRBY", "bench:z", "1", "m:__rand_int__"]),
    ("ZSCORE", ["ZSCORE", "bench:z", "m:__rand_int__"]),
    ("ZREVRANK", ["ZREVRANK", "bench:z", "m:__rand_int__"]),
    ("ZRANGE 0 9", ["ZRANGE", "bench:z", "0", "9"]),
]


def resp(*args):
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def reply(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t in (b"+", b":"):
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            return data.decode(errors="replace")
        if t == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")

    def call(self, *args):
        self.s.sendall(resp(*args))
        return self.reply()

    def info_field(self, section, field):
        for line in self.call("INFO", section).splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1]
        return None


def fill(port):
    c = Conn(port)
    if c.call("DBSIZE") != "0":
        raise SystemExit(f"bench: the server on {port} is not empty; bench only uses servers it started")
    before = int(c.info_field("memory", "used_memory"))
    batch = 1000
    for start in range(0, MEMBERS, batch):
        args = ["ZADD", "bench:z"]
        for i in range(start, start + batch):
            args += [str(i), "m:%012d" % i]
        c.s.sendall(resp(*args))
    for _ in range(0, MEMBERS, batch):
        c.reply()
    time.sleep(0.5)
    after = int(c.info_field("memory", "used_memory"))
    card = int(c.call("ZCARD", "bench:z"))
    return {"members": card, "used_memory_growth": after - before,
            "bytes_per_member": (after - before) / card}


def cpu_seconds(pid):
    """User + system CPU time of a process so far (None without /proc or a pid)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def median_run(runs):
    """One figure per field: the median of the rounds (all of them must have run)."""
    out = {k: median([r[k] for r in runs]) for k in runs[0] if k != "error"
           and all(k in r for r in runs)}
    out["rounds"] = runs
    return out


def bench(bench_bin, port, cmd, pipeline, requests, pid=None):
    cpu_before = cpu_seconds(pid)
    args = [bench_bin, "-h", "127.0.0.1", "-p", str(port), "-c", "50", "-n", str(requests),
            "-r", str(MEMBERS), "-P", str(pipeline), "--csv"] + cmd
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    rows = list(csv.reader(io.StringIO(p.stdout)))
    if p.returncode != 0 or len(rows) < 2:
        return {"error": (p.stderr or p.stdout).strip()[-300:]}
    head, vals = rows[0], rows[1]
    d = dict(zip(head, vals))
    out = {"rps": float(d["rps"]), "p50_ms": float(d["p50_latency_ms"]),
           "p99_ms": float(d["p99_latency_ms"]), "avg_ms": float(d["avg_latency_ms"])}
    cpu_after = cpu_seconds(pid)
    if cpu_before is not None and cpu_after is not None:
        # The server's own CPU per request: what a busy neighbour disturbs least.
        out["cpu_us_per_req"] = (cpu_after - cpu_before) / requests * 1e6
    return out


def inprocess_lines(inproc):
    """The in-process section and the memory per type, as text."""
    lines = []
    rows = inproc.get("inprocess") or []
    if rows:
        lines += ["", f"in process: the core's Server::run + RESP encode, each call timed from outside "
                  f"(ns/op, best of {inproc.get('inprocess_rounds', 3)} rounds; clock floor "
                  f"{inproc.get('inprocess_clock_ns', 0)} ns), and the core's own usec_per_call over "
                  "the same calls, beside Redis's usec_per_call for the same calls (INFO commandstats, pipelined)", "",
                  f"{'command':60} {'core p50':>9} {'core mean':>10} {'core upc':>9} {'redis upc':>9} "
                  f"{'ratio':>6} {'upc ratio':>9}"]
        def ns(us):
            return f"{us * 1000:>7,.0f}ns" if us is not None else f"{'-':>9}"
        def ratio(r, width):
            return f" {r:>{width}.2f}" if r is not None else f" {'-':>{width}}"
        for r in rows:
            c, red = r.get("core") or {}, r.get("redis") or {}
            lines.append(f"{r['command'][:60]:60} {c.get('median_ns', 0):>7,}ns {c.get('mean_ns', 0):>8,.0f}ns "
                         + ns(c.get("usec_per_call")) + " " + ns(red.get("usec_per_call"))
                         + ratio(r.get("ratio"), 6) + ratio(r.get("server_ratio"), 9))
        lines += ["ratio = core mean (whole Server::run + encode, timed from outside) / redis usec_per_call;",
                  "upc ratio = core usec_per_call / redis usec_per_call: each server's INFO commandstats over the same",
                  "calls, read the same way (differences of whole-microsecond clock readings). The windows differ in one",
                  "part: Redis's includes writing the reply into the client buffer, the core's ends at the reply value",
                  "(from its call(), after the lookup and checks, as Redis's; ZRANGE's members and scores are written as RESP",
                  "bytes inside it, the copy into the output buffer comes after), so for long replies the upc ratio leaves",
                  "that copy out. Below 1: the core is cheaper."]
    mem = inproc.get("memory_types") or []
    if mem:
        lines += ["", "memory per element, each type: the core's usable heap in process (counting allocator) "
                  "beside Redis's used_memory growth, same commands", "",
                  f"{'data':64} {'core':>12} {'redis':>12} {'ratio':>6}"]
        for m in mem:
            c, red = m.get("core") or {}, m.get("redis") or {}
            unit = m.get("unit", "B")
            lines.append(f"{m['label'][:64]:64} {c.get('per_element', 0):>8,.1f} {unit.split('/')[0]:>3} "
                         + (f"{red['per_element']:>8,.1f} {unit.split('/')[0]:>3}" if "per_element" in red else f"{'-':>12}")
                         + (f" {m['ratio']:>6.2f}" if m.get("ratio") is not None else f" {'-':>6}"))
        lines.append("per key/field/member/sketch as the label says; ratio = core / redis.")
    return lines


PEER_COLUMNS = [("core-command", "core command"), ("core-typed", "core typed"),
                ("core-btree-typed", "core btree"), ("yo-kv", "yo-kv")]


def peers_lines(peers):
    """The peers section (zset_peers: the core beside yo-kv in process), as text."""
    if not peers:
        return []
    n = peers.get("members", 0)
    impls = {i["key"]: i for i in peers.get("impls", [])}
    head = f"{'':44}" + "".join(f" {label:>13}" for _, label in PEER_COLUMNS)
    lines = ["", f"in process beside another Rust implementation (yo-kv {peers.get('yo_kv_version', '?')}, "
             f"crates.io), {n:,} members built by single ZADDs in the same process (zset_peers, "
             f"bench/peers); ns/op = mean of the best of {peers.get('rounds', 3)} rounds, clock floor "
             f"{peers.get('clock_ns', 0)} ns", "", head]

    def row(label, cell):
        out = f"{label[:44]:44}"
        for key, _ in PEER_COLUMNS:
            out += f" {cell(impls.get(key) or {}, key):>13}"
        return out

    lines.append(row("build: single ZADDs per second", lambda i, _: f"{i['build_per_sec']:,.0f}" if "build_per_sec" in i else "-"))
    lines.append(row("heap per member, requested (B)", lambda i, _: f"{i['heap']['requested_per_member']:.1f}" if "heap" in i else "-"))
    lines.append(row("heap per member, malloc usable (B)", lambda i, _: f"{i['heap']['usable_per_member']:.1f}" if "heap" in i else "-"))
    for op in peers.get("ops", []):
        lines.append(row(op["command"], lambda _, key: f"{op[key]['mean_ns']:,.0f}" if key in op else "-"))
    answers = peers.get("answers") or {}
    lines += ["core command = Server::call_into (command table, checks, statistics, RESP2 reply); core typed and",
              "core btree = the core's Keyspace and Zset called as Rust (skiplist, and the core's B+tree layout);",
              "yo-kv = its Keyspace methods. Every implementation gave the same answers before its times counted "
              f"(ZSCORE {answers.get('zscore')}, ZREVRANK {answers.get('zrevrank')}, ZCOUNT {answers.get('zcount')})."]
    ratios = []
    for op in peers.get("ops", []):
        yo = (op.get("yo-kv") or {}).get("mean_ns")
        typed = (op.get("core-typed") or {}).get("mean_ns")
        btree = (op.get("core-btree-typed") or {}).get("mean_ns")
        if yo and typed and btree:
            ratios.append(f"{op['key']} {typed / yo:.2f}/{btree / yo:.2f}")
    if ratios:
        lines.append("core typed ÷ yo-kv (skiplist/btree): " + ", ".join(ratios))
    h = peers.get("hashing") or {}
    if "siphash12_ns" in h and "wyhash_ns" in h:
        lines.append(f"hashing the key and the member, as one ZSCORE does: SipHash-1-2 (the core: Redis's hash, "
                     f"kept so its dicts' buckets, scans and draws are Redis's) {h['siphash12_ns']:.1f} ns, "
                     f"wyhash (yo-kv) {h['wyhash_ns']:.1f} ns")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-bin", required=True)
    ap.add_argument("--redis-port", type=int, required=True)
    ap.add_argument("--core-port", type=int, required=True)
    ap.add_argument("--redis-version", default="")
    ap.add_argument("--redis-pid", type=int, default=None)
    ap.add_argument("--core-pid", type=int, default=None)
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="runs")
    ap.add_argument("--inprocess-bin", default=None)
    ap.add_argument("--peers-bin", default=None)
    a = ap.parse_args()
    inproc = {}
    peers = None
    if a.peers_bin:
        print("bench: the core beside yo-kv in process (zset_peers)", flush=True)
        path = os.path.join(a.out, "bench-peers.json")
        os.makedirs(a.out, exist_ok=True)
        started = time.time()
        subprocess.run([a.peers_bin, "--out", path], check=True, timeout=900)
        print(f"bench: peers section done in {time.time() - started:.0f} s", flush=True)
        with open(path) as f:
            peers = json.load(f)
        os.remove(path)
    if a.inprocess_bin:
        print("bench: in-process section and memory per type (bench_inprocess)", flush=True)
        path = os.path.join(a.out, "bench-inprocess.json")
        os.makedirs(a.out, exist_ok=True)
        started = time.time()
        subprocess.run([a.inprocess_bin, "--redis-url", f"redis://127.0.0.1:{a.redis_port}",
                        "--out", path], check=True, timeout=900)
        print(f"bench: in-process section done in {time.time() - started:.0f} s", flush=True)
        with open(path) as f:
            inproc = json.load(f)
        os.remove(path)
    servers = {"core": a.core_port, "redis": a.redis_port}
    pids = {"core": a.core_pid, "redis": a.redis_pid}
    memory = {}
    for name, port in servers.items():
        print(f"bench: filling {MEMBERS:,} members on {name}", flush=True)
        memory[name] = fill(port)
    # Which clock each server times its commands with (INFO server's
    # monotonic_clock): part of every command's cost, and of usec_per_call.
    clocks = {name: Conn(port).info_field("server", "monotonic_clock") or "not reported"
              for name, port in servers.items()}
    results = []
    for label, cmd in TESTS:
        for pipeline in (1, 16):
            row = {"command": label, "pipeline": pipeline}
            runs = {name: [] for name in servers}
            for round_no in range(a.rounds):
                # Take turns going first, so neither always runs on a machine
                # the other has just warmed (or heated).
                order = list(servers.items())
                if round_no % 2:
                    order.reverse()
                for name, port in order:
                    runs[name].append(bench(a.bench_bin, port, cmd, pipeline,
                                            a.requests * (4 if pipeline > 1 else 1), pids[name]))
            for name in servers:
                failed = [r for r in runs[name] if "error" in r]
                row[name] = failed[0] if failed else median_run(runs[name])
            c, r = row["core"], row["redis"]
            if "rps" in c and "rps" in r:
                row["rps_ratio"] = c["rps"] / r["rps"]
                row["p99_ratio"] = c["p99_ms"] / r["p99_ms"] if r["p99_ms"] else None
                per_round = [x["rps"] / y["rps"] for x, y in zip(c["rounds"], r["rounds"])]
                row["rps_ratio_range"] = [min(per_round), max(per_round)]
            if c.get("cpu_us_per_req") and r.get("cpu_us_per_req"):
                row["cpu_ratio"] = c["cpu_us_per_req"] / r["cpu_us_per_req"]
            print(f"bench: {label:11} -P {pipeline:2}  core {c.get('rps', 0):>10,.0f}/s  "
                  f"redis {r.get('rps', 0):>10,.0f}/s", flush=True)
            results.append(row)
    machine = f"{platform.node()} · {os.cpu_count()} CPUs · {platform.machine()} · {platform.platform()}"
    doc = {"bench": "redis-benchmark -c 50 -r 1000000", "rounds": a.rounds,
           "redis_version": a.redis_version,
           "machine": machine, "measured": time.strftime("%Y-%m-%d %H:%M"), "memory": memory,
           "monotonic_clock": clocks,
           "results": results, **inproc}
    if peers:
        doc["peers"] = peers
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    lines = [f"redis-benchmark against the core's listener and Redis {a.redis_version}, same run",
             f"machine: {machine}", f"measured: {doc['measured']}",
             f"command clock (INFO monotonic_clock): core {clocks['core']}; redis {clocks['redis']}",
             f"-c 50, -n {a.requests:,} (×4 with -P 16), -r {MEMBERS:,}; ZSET commands on a "
             f"{MEMBERS:,}-member key; each figure the median of {a.rounds} rounds, the servers "
             f"alternating (range = lowest and highest ratio of one round)", "",
             f"{'command':12} {'-P':>3} {'core req/s':>12} {'redis req/s':>12} {'ratio':>6} {'range':>9} "
             f"{'core p50':>9} {'redis p50':>9} {'core p99':>9} {'redis p99':>9} {'p99 ratio':>9} "
             f"{'core cpu':>9} {'redis cpu':>9} {'cpu ratio':>9}"]
    for row in results:
        c, r = row["core"], row["redis"]
        if "rps" not in c or "rps" not in r:
            lines.append(f"{row['command']:12} {row['pipeline']:>3}  error: {c.get('error') or r.get('error')}")
            continue
        p99_ratio = f"{row['p99_ratio']:>9.2f}" if row.get("p99_ratio") is not None else f"{'-':>9}"
        if row.get("cpu_ratio") is not None:
            cpu = (f" {c['cpu_us_per_req']:>7.2f}µs {r['cpu_us_per_req']:>7.2f}µs "
                   f"{row['cpu_ratio']:>9.2f}")
        else:
            cpu = ""
        low, high = row["rps_ratio_range"]
        lines.append(f"{row['command']:12} {row['pipeline']:>3} {c['rps']:>12,.0f} {r['rps']:>12,.0f} "
                     f"{row['rps_ratio']:>6.2f} {low:>4.2f}-{high:<4.2f} {c['p50_ms']:>7.3f}ms {r['p50_ms']:>7.3f}ms "
                     f"{c['p99_ms']:>7.3f}ms {r['p99_ms']:>7.3f}ms {p99_ratio}{cpu}")
    lines.append("")
    lines.append("cpu = the server process's user+system CPU time per request during its run "
                 "(/proc/<pid>/stat), the figure a busy neighbour moves least.")
    lines.append("")
    lines.append("used_memory growth for the 1,000,000-member zset (INFO memory; the core's is its real heap):")
    for name in ("core", "redis"):
        m = memory[name]
        lines.append(f"  {name:6} {m['used_memory_growth']:>12,} B  {m['bytes_per_member']:.1f} B/member")
    lines.append(f"  ratio core/redis {memory['core']['bytes_per_member'] / memory['redis']['bytes_per_member']:.2f}")
    lines += inprocess_lines(inproc)
    lines += peers_lines(peers)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "bench.txt"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
