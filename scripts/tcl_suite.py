#!/usr/bin/env python3
"""Run Redis's own Tcl test files (external mode) against a private Redis and the core.

Called by scripts/redis-tcl-suite.sh, which finds Redis, tclsh and the core's binary.
Only the Python standard library is used.

For every file it runs, once per server,

    tclsh tests/test_helper.tcl --host 127.0.0.1 --port P --singledb --single <file> \
        --durable [--skipfile <this file's exclusions>]

(what ./runtest runs) in the Redis source tree: external mode, --singledb because the
core has one database, --durable so that one test's runtime error is counted as that
test's failure instead of aborting the rest of the file, and the runner's own tag
filtering (external:skip etc.). Redis is started as Redis's external-server CI job
starts it (--save "" --enable-debug-command yes ...). Each file has a time limit; a
test counts as passed on a server only when its "[ok]" line was printed. Tests in the
exclusions file are skipped by the runner on both servers and count for neither; the
core's count only includes tests that also pass on Redis.

Results: a table on stdout, OUT/tcl-suite.json and OUT/tcl-suite.txt, one log per
file and server under LOGDIR.
"""

import argparse
import collections
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

FILES = [
    "unit/type/zset", "unit/type/incr", "unit/type/string", "unit/type/hash",
    "unit/type/set", "unit/type/list-2", "unit/type/list-3",
    "unit/hyperloglog", "unit/geo", "unit/bitops", "unit/bitfield", "unit/expire",
    "unit/keyspace", "unit/scan", "unit/pubsub", "unit/multi", "unit/scripting",
    "unit/protocol", "unit/info-command", "unit/dump",
]
# Run and reported, never counted: it stalls even on Redis in external mode.
REPORT_ONLY = {"unit/type/list": 180}

ANSI = re.compile(r"\x1b\[[0-9;]*m")
STATUS = re.compile(r"^\[(ok|err|exception|skip|ignore|ready|done|testing|TIMEOUT|[0-9]+/[0-9]+ done)\]: ?(.*)$")
OK_LINE = re.compile(r"^(.*) \((\d+) ms\)$")

PROCS = []  # Popen objects we started (each in its own process group)
TMPDIRS = []


def log(msg):
    print(f"tcl-suite: {msg}", file=sys.stderr, flush=True)


def cleanup(*_):
    for p in PROCS:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.time() + 5
    for p in PROCS:
        try:
            p.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    PROCS.clear()
    for d in TMPDIRS:
        subprocess.run(["rm", "-rf", d], check=False)
    TMPDIRS.clear()


def on_signal(signum, _frame):
    log(f"signal {signum}: stopping the servers")
    cleanup()
    sys.exit(130)


def stop_proc(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    if p in PROCS:
        PROCS.remove(p)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ping(port, proc, what, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"tcl-suite: ERROR: {what} exited with status {proc.returncode} at startup")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"*1\r\n$4\r\nPING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"tcl-suite: ERROR: {what} did not answer PING on 127.0.0.1:{port}")


def start_redis(bindir):
    d = tempfile.mkdtemp(prefix="tcl-suite-redis.")
    TMPDIRS.append(d)
    port = free_port()
    cmd = [os.path.join(bindir, "redis-server"), "--port", str(port), "--bind", "127.0.0.1",
           "--save", "", "--appendonly", "no", "--dir", d, "--logfile", os.path.join(d, "redis.log"),
           "--daemonize", "no", "--enable-protected-configs", "yes",
           "--enable-debug-command", "yes", "--enable-module-command", "yes"]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    PROCS.append(p)
    wait_ping(port, p, "redis-server")
    return port, p


def start_core(core_bin):
    d = tempfile.mkdtemp(prefix="tcl-suite-core.")
    TMPDIRS.append(d)
    port = free_port()
    out = open(os.path.join(d, "core.log"), "wb")
    p = subprocess.Popen([core_bin, "--port", str(port)], stdin=subprocess.DEVNULL, stdout=out,
                         stderr=subprocess.STDOUT, start_new_session=True, cwd=d)
    PROCS.append(p)
    wait_ping(port, p, "the core's listener")
    return port, p


# ---------------------------------------------------------------------------------------
# Analysis only (--shim-preamble): a byte-transparent proxy in front of the core that
# rewrites the commands of the suite's per-block preamble (run_external_server_test:
# FUNCTION FLUSH, CONFIG RESETSTAT, CONFIG GET *) into commands the core has, with an
# equivalent reply. It measures what the core would pass once it has those three, which
# is how the gap list counts what each missing piece unlocks. Never a score.

SHIM_REWRITES = {
    (b"FUNCTION", b"FLUSH"): [b"ECHO", b"OK"],
    (b"CONFIG", b"RESETSTAT"): [b"ECHO", b"OK"],
    (b"CONFIG", b"GET", b"*"): [b"SMEMBERS", b"__redislab_tcl_suite_no_such_key__"],
}


def encode(argv):
    out = [b"*%d\r\n" % len(argv)]
    for a in argv:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def parse_requests(buf):
    """Split complete requests off buf. Returns (list of (raw, argv or None), rest)."""
    out = []
    pos = 0
    while pos < len(buf):
        if buf[pos:pos + 1] != b"*":  # inline command: pass through untouched
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            out.append((buf[pos:nl + 1], None))
            pos = nl + 1
            continue
        nl = buf.find(b"\r\n", pos)
        if nl < 0:
            break
        n = int(buf[pos + 1:nl])
        p = nl + 2
        argv = []
        complete = True
        for _ in range(max(n, 0)):
            nl2 = buf.find(b"\r\n", p)
            if nl2 < 0:
                complete = False
                break
            ln = int(buf[p + 1:nl2])
            if len(buf) < nl2 + 2 + ln + 2:
                complete = False
                break
            argv.append(buf[nl2 + 2:nl2 + 2 + ln])
            p = nl2 + 2 + ln + 2
        if not complete:
            break
        out.append((buf[pos:p], argv))
        pos = p
    return out, buf[pos:]


class Shim:
    def __init__(self, target_port):
        self.target = target_port
        self.counts = collections.Counter()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                c.close()
                continue
            threading.Thread(target=self.up, args=(c, u), daemon=True).start()
            threading.Thread(target=self.down, args=(u, c), daemon=True).start()

    def up(self, c, u):
        buf = b""
        try:
            while True:
                data = c.recv(65536)
                if not data:
                    break
                buf += data
                reqs, buf = parse_requests(buf)
                out = []
                for raw, argv in reqs:
                    key = tuple(a.upper() if i < 2 else a for i, a in enumerate(argv or []))
                    if key in SHIM_REWRITES:
                        self.counts[b" ".join(key).decode()] += 1
                        out.append(encode(SHIM_REWRITES[key]))
                    else:
                        out.append(raw)
                u.sendall(b"".join(out))
        except OSError:
            pass
        finally:
            shut_both(u, c)

    @staticmethod
    def down(u, c):
        try:
            while True:
                data = u.recv(65536)
                if not data:
                    break
                c.sendall(data)
        except OSError:
            pass
        finally:
            shut_both(u, c)


def shut_both(*socks):
    """Shuts both directions of each socket, ignoring the ones already closed."""
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


# ---------------------------------------------------------------------------------------

def parse_log(text):
    """Counts what the runner printed. Returns a dict with passed/failed/ignored names."""
    passed, failed, ignored, skipped = [], [], [], []
    exception = None
    timeout = False
    cur = None  # the failure whose message lines follow
    for raw in text.splitlines():
        line = ANSI.sub("", raw).rstrip("\r")
        m = STATUS.match(line)
        if m:
            cur = None
            kind, data = m.group(1), m.group(2)
            if kind == "ok":
                om = OK_LINE.match(data)
                passed.append(om.group(1) if om else data)
            elif kind == "err":
                name = data
                if " in tests/" in data:
                    name = data.rsplit(" in tests/", 1)[0]
                cur = {"name": name, "lines": []}
                failed.append(cur)
            elif kind == "exception":
                exception = {"name": "(exception)", "lines": [data]}
                cur = exception
            elif kind == "skip":
                skipped.append(data)
            elif kind == "ignore":
                ignored.append(data)
            elif kind == "TIMEOUT":
                timeout = True
            continue
        if cur is not None and len(cur["lines"]) < 40:
            cur["lines"].append(line)
    for f in failed + ([exception] if exception else []):
        f["reason"] = failure_reason(f["lines"])
        del f["lines"]
    return {"passed": passed, "failed": failed, "ignored": ignored, "skipped": skipped,
            "exception": exception, "runner_timeout": timeout}


def failure_reason(lines):
    """One line saying why: the server error if there is one, else the assertion."""
    text = [l.strip() for l in lines if l.strip()]
    for l in text:  # errorInfo's first line is the full error (durable mode)
        if re.match(r"^(ERR|WRONGTYPE|NOSCRIPT|BUSY|NOPROTO|EXECABORT|NOAUTH|WRONGPASS|NOPERM|OOM|LOADING|MISCONF|CROSSSLOT|Executing test client)", l):
            return l[:300]
    for l in text:
        if l.startswith("Expected") or "assertion" in l.lower():
            return l[:300]
    return (text[0] if text else "")[:300]


def run_file(src, port, tclsh, fname, limit, tags, durable, logpath, extra, skip_names):
    cmd = [tclsh, "tests/test_helper.tcl", "--host", "127.0.0.1", "--port", str(port),
           "--singledb", "--single", fname, "--timeout", str(limit)]
    if skip_names:
        # The excluded tests are skipped by the runner itself, on both servers: they
        # count for neither, and one that would stall (SYNC) cannot stall the file.
        skipfile = logpath + ".skip"
        with open(skipfile, "w") as f:
            f.write("\n".join(sorted(skip_names)) + "\n")
        cmd += ["--skipfile", os.path.abspath(skipfile)]
    if tags:
        cmd += ["--tags", tags]
    if durable:
        cmd.append("--durable")
    cmd += extra
    env = dict(os.environ, TERM="dumb")
    t0 = time.time()
    with open(logpath, "wb") as out:
        out.write(("$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        p = subprocess.Popen(cmd, cwd=src, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT, env=env, start_new_session=True)
        PROCS.append(p)
        killed = False
        try:
            p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            killed = True
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        try:  # the runner's test clients are in the same process group
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        PROCS.remove(p)
    with open(logpath, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    res = parse_log(text)
    res["time_limit_hit"] = killed
    res["exit_status"] = None if killed else p.returncode
    res["seconds"] = round(time.time() - t0, 1)
    return res


def load_exclusions(path):
    """Lines: `<file> | <test name> | <reason>`; '#' comments. Returns {(file, name): reason}."""
    ex = {}
    if not path or not os.path.exists(path):
        return ex
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 3:
            raise SystemExit(f"tcl-suite: ERROR: {path}:{n}: expected '<file> | <test name> | <reason>'")
        ex[(parts[0], parts[1])] = parts[2]
    return ex


def counted(names, fname, ex):
    """Multiset of names that count (not excluded)."""
    return collections.Counter(n for n in names if (fname, n) not in ex)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="Redis source tree (has runtest, tests/)")
    ap.add_argument("--redis-bin", help="directory with redis-server")
    ap.add_argument("--core-bin", help="the core's redislab-core-server binary")
    ap.add_argument("--tclsh", default="tclsh")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--redis-only", action="store_true",
                      help="measure Redis only and write the baseline file")
    mode.add_argument("--core-only", action="store_true",
                      help="run the core only, compare with the committed baseline")
    ap.add_argument("--baseline", required=True, help="baseline JSON (read, or written by --redis-only)")
    ap.add_argument("--exclusions", help="exclusions file (tests that count on neither side)")
    ap.add_argument("--out", default="out", help="directory for tcl-suite.json / .txt")
    ap.add_argument("--logdir", default="target/tcl-suite", help="per-file runner logs")
    ap.add_argument("--files", help="comma-separated subset of the files")
    ap.add_argument("--time-limit", type=int, default=420, help="seconds per file and server")
    ap.add_argument("--tags", default="", help="runner --tags (same on both servers; default none: the runner's own external-mode filtering)")
    ap.add_argument("--no-durable", action="store_true", help="do not pass --durable to the runner")
    ap.add_argument("--no-report-only", action="store_true", help="skip unit/type/list")
    ap.add_argument("--min-file-ratio", type=float, default=None)
    ap.add_argument("--min-overall", type=float, default=None)
    ap.add_argument("--floor", help="JSON {file: minimum core passes}: the ratchet CI holds "
                                    "(a file below its floor fails the run; the ratio target "
                                    "is then reported, not enforced)")
    ap.add_argument("--shim-preamble", action="store_true",
                    help="ANALYSIS ONLY: put a proxy before the core that answers FUNCTION FLUSH, "
                         "CONFIG RESETSTAT and CONFIG GET * (see the gap notes); never a score")
    ap.add_argument("--from-logs", help="re-tally the runner logs under this directory (as --logdir "
                                        "of an earlier run) instead of running anything")
    ap.add_argument("--enforce-target", action="store_true",
                    help="with --floor: the ratio target fails the run too (not only reported)")
    ap.add_argument("--write-floor", help="write this run's core counts as the floor JSON "
                                          "(2%% margin per file for timing-sensitive tests)")
    ap.add_argument("--runner-arg", action="append", default=[], help="extra runner argument (both servers)")
    a = ap.parse_args()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    files = a.files.split(",") if a.files else list(FILES)
    report_only = {} if (a.no_report_only or a.files) else dict(REPORT_ONLY)
    durable = not a.no_durable
    ex = load_exclusions(a.exclusions)
    os.makedirs(a.out, exist_ok=True)
    run_redis = not a.core_only
    run_core = not a.redis_only
    options = {"tags": a.tags, "durable": durable, "singledb": True, "time_limit": a.time_limit,
               "extra": a.runner_arg}

    baseline = None
    if not run_redis:
        if not os.path.exists(a.baseline):
            raise SystemExit(f"tcl-suite: ERROR: no baseline at {a.baseline}; run with --redis-only first")
        baseline = json.load(open(a.baseline))
        if baseline.get("options", {}).get("tags") != a.tags or baseline["options"].get("durable") != durable:
            log(f"WARNING: baseline was measured with options {baseline.get('options')}, now {options}")

    try:
        # The runner writes and cleans tests/tmp: run from a private copy of tests/ (11 MB)
        # so that two runs, or a run and Redis's own `make test`, cannot disturb each other.
        tree = tempfile.mkdtemp(prefix="tcl-suite-tree.")
        TMPDIRS.append(tree)
        subprocess.run(["cp", "-r", os.path.join(a.src, "tests"), os.path.join(tree, "tests")], check=True)
        os.symlink(os.path.join(os.path.abspath(a.src), "src"), os.path.join(tree, "src"))
        a.src = tree
        redis_version = None
        sides = (["redis"] if run_redis else []) + (["core"] if run_core else [])
        if run_redis:
            v = subprocess.run([os.path.join(a.redis_bin, "redis-server"), "--version"],
                               capture_output=True, text=True).stdout
            m = re.search(r"v=(\S+)", v)
            redis_version = m.group(1) if m else v.strip()
        shim = a.shim_preamble
        shim_counts = collections.Counter()
        results = {}
        for fname in files + list(report_only):
            limit = report_only.get(fname, a.time_limit)
            results[fname] = {}
            for side in sides:
                if a.from_logs:  # re-tally the logs of an earlier run, start nothing
                    side_dir = side + ("-shim" if side == "core" and shim else "")
                    logpath = os.path.join(a.from_logs, side_dir, fname + ".log")
                    if not os.path.exists(logpath):
                        log(f"WARNING: no log {logpath}")
                        continue
                    with open(logpath, "rb") as f:
                        r = parse_log(f.read().decode("utf-8", "replace"))
                    r.update({"log": logpath, "time_limit_hit": None, "exit_status": None,
                              "seconds": None, "server_alive_at_end": None})
                    results[fname][side] = r
                    continue
                # A fresh server per file and side: what one file leaves behind (a stuck
                # background child, a config) cannot change the next file's count.
                if side == "redis":
                    port, proc = start_redis(a.redis_bin)
                else:
                    port, proc = start_core(a.core_bin)
                    if shim:
                        sh = Shim(port)
                        port = sh.port
                logdir = os.path.join(a.logdir, side + ("-shim" if side == "core" and shim else ""))
                os.makedirs(os.path.dirname(os.path.join(logdir, fname)), exist_ok=True)
                logpath = os.path.join(logdir, fname + ".log")
                skip = [n for (f, n) in ex if f == fname]
                r = run_file(a.src, port, a.tclsh, fname, limit, a.tags, durable, logpath,
                             a.runner_arg, skip)
                r["log"] = logpath
                r["server_alive_at_end"] = proc.poll() is None
                stop_proc(proc)
                if side == "core" and shim:
                    sh.close()
                    shim_counts.update(sh.counts)
                results[fname][side] = r
                note = " (time limit)" if r["time_limit_hit"] else ""
                if not r["server_alive_at_end"]:
                    note += " (the server died)"
                log(f"{fname:22} {side:5} ok={len(r['passed']):4} err={len(r['failed']):4} "
                    f"{r['seconds']:6.1f}s{note}")
    finally:
        cleanup()

    # ---- tally --------------------------------------------------------------------------
    rows = []
    tot_r = tot_c = 0
    for fname in files + list(report_only):
        res = results[fname]
        if run_redis:
            rp = counted(res["redis"]["passed"], fname, ex)
            redis_passed_names = sorted(rp.elements())
        else:
            b = baseline["files"].get(fname)
            if b is None:
                log(f"WARNING: {fname} is not in the baseline")
                rp = collections.Counter()
            else:
                rp = counted(b["passed_names"], fname, ex)
            redis_passed_names = sorted(rp.elements())
        row = {"file": fname, "counts": fname not in report_only,
               "redis_passed": sum(rp.values())}
        if run_redis:
            rr = res["redis"]
            row["redis_failed"] = [f["name"] for f in rr["failed"]]
            row["redis_time_limit_hit"] = rr["time_limit_hit"]
            row["redis_seconds"] = rr["seconds"]
            row["passed_names"] = redis_passed_names
        if run_core:
            cr = res["core"]
            cp = counted(cr["passed"], fname, ex)
            # Only tests that pass on Redis count for the core (a test that fails on Redis
            # and passes on the core is reported, not counted).
            both = cp & rp
            row["core_passed"] = sum(both.values())
            row["core_passed_not_on_redis"] = sorted((cp - rp).elements())
            row["core_failed"] = [{"name": f["name"], "reason": f["reason"]} for f in cr["failed"]
                                  if (fname, f["name"]) not in ex]
            row["core_exception"] = cr["exception"]["reason"] if cr["exception"] else None
            row["core_time_limit_hit"] = cr["time_limit_hit"]
            row["core_seconds"] = cr["seconds"]
            row["core_not_passed"] = sorted((rp - cp).elements())
            row["ratio"] = (row["core_passed"] / row["redis_passed"]) if row["redis_passed"] else None
        if row["counts"]:
            tot_r += row["redis_passed"]
            tot_c += row.get("core_passed", 0)
        rows.append(row)

    overall = (tot_c / tot_r) if (run_core and tot_r) else None

    # ---- outputs ------------------------------------------------------------------------
    lines = []
    title = "Redis's own Tcl tests (external mode) on Redis and the core"
    if shim:
        title += "  [ANALYSIS: core behind the preamble shim, not a score]"
    lines.append(title)
    lines.append("runner options: --singledb" + (f" --tags {a.tags}" if a.tags else "")
                 + (" --durable" if durable else "")
                 + f"; per-file time limit {a.time_limit}s; exclusions: {len(ex)} tests"
                 + ("" if run_redis else f"; Redis counts from {a.baseline}"))
    lines.append(f"redis: {redis_version or (baseline or {}).get('redis_version')}")
    lines.append("")
    hdr = f"{'file':24} {'redis':>6} {'core':>6} {'ratio':>7}  core failures / notes"
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for row in rows:
        ratio = "" if row.get("ratio") is None else f"{row['ratio']*100:6.1f}%"
        core = "" if "core_passed" not in row else str(row["core_passed"])
        notes = []
        if "core_failed" in row:
            notes.append(f"{len(row['core_failed'])} err")
        if row.get("core_exception"):
            notes.append("aborted: " + row["core_exception"][:90])
        if row.get("redis_time_limit_hit"):
            notes.append("redis hit the time limit")
        if row.get("core_time_limit_hit"):
            notes.append("core hit the time limit")
        if not row["counts"]:
            notes.append("report only, not counted")
        lines.append(f"{row['file']:24} {row['redis_passed']:6} {core:>6} {ratio:>7}  {'; '.join(notes)}")
    lines.append("-" * len(hdr))
    if run_core:
        lines.append(f"{'total (counted files)':24} {tot_r:6} {tot_c:6} {overall*100 if overall is not None else 0:6.1f}%")
    else:
        lines.append(f"{'total (counted files)':24} {tot_r:6}")
    verdict = None
    floor = None
    if run_core and a.floor:
        with open(a.floor) as f:
            floor = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    if run_core and floor is not None:
        # The ratchet: no counted file may pass fewer tests than its floor.
        below = [f"{row['file']} {row.get('core_passed', 0)} < floor {floor[row['file']]}"
                 for row in rows if row["file"] in floor
                 and row.get("core_passed", 0) < floor[row["file"]]]
        verdict = "FAIL" if below else "PASS"
        lines.append("")
        lines.append(f"floor ({a.floor}): {verdict}" + "".join("\n  below floor: " + b for b in below))
    if run_core and a.write_floor:
        new_floor = {"_note": "minimum core passes per file that CI holds (scripts/redis-tcl-suite.sh "
                              "--core-only --write-floor); written from a measured run, "
                              f"{time.strftime('%Y-%m-%d')}, 2% margin per file"}
        for row in rows:
            if row["counts"] and "core_passed" in row:
                n = row["core_passed"]
                new_floor[row["file"]] = n - math.ceil(n * 0.02)
        with open(a.write_floor, "w") as f:
            json.dump(new_floor, f, indent=1)
            f.write("\n")
        log(f"wrote the floor {a.write_floor}")
    if run_core and (a.min_file_ratio is not None or a.min_overall is not None):
        bad = []
        for row in rows:
            if row["counts"] and a.min_file_ratio is not None and row["redis_passed"] and \
                    row["ratio"] < a.min_file_ratio:
                bad.append(f"{row['file']} {row['ratio']*100:.1f}% < {a.min_file_ratio*100:.0f}%")
        if a.min_overall is not None and (overall or 0) < a.min_overall:
            bad.append(f"overall {(overall or 0)*100:.1f}% < {a.min_overall*100:.0f}%")
        target = "FAIL" if bad else "PASS"
        if floor is None or (a.enforce_target and target == "FAIL"):
            verdict = target
        reported = floor is not None and not a.enforce_target
        lines.append("")
        lines.append(f"target{' (reported; the floor is enforced)' if reported else ''}: {target}"
                     + ("".join("\n  below target: " + b for b in bad)))
    text = "\n".join(lines) + "\n"
    print(text, end="")

    doc = {"suite": "redis-tcl-external", "redis_version": redis_version or (baseline or {}).get("redis_version"),
           "options": options, "shim_preamble": bool(shim),
           "shim_rewrites": dict(shim_counts) if shim else None,
           "totals": {"redis_passed": tot_r, "core_passed": tot_c if run_core else None, "ratio": overall},
           "target": {"min_file_ratio": a.min_file_ratio, "min_overall": a.min_overall, "verdict": verdict},
           "files": rows}
    stem = "tcl-suite-shim" if shim else "tcl-suite"
    if run_core:
        with open(os.path.join(a.out, stem + ".json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False)
            f.write("\n")
        with open(os.path.join(a.out, stem + ".txt"), "w") as f:
            f.write(text)
        log(f"wrote {os.path.join(a.out, stem + '.json')} and .txt")
    if run_redis and not run_core:
        base = {"suite": "redis-tcl-external", "redis_version": redis_version, "options": options,
                "measured": time.strftime("%Y-%m-%d"),
                "note": "Redis's own pass counts per file, measured by scripts/redis-tcl-suite.sh "
                        "--redis-only; passed_names are the tests whose [ok] line was printed "
                        "(exclusions are applied when comparing, not here).",
                "files": {}}
        for fname in files + list(report_only):
            r = results[fname]["redis"]
            base["files"][fname] = {"counts": fname not in report_only, "passed": len(r["passed"]),
                                    "failed": [f["name"] for f in r["failed"]],
                                    "time_limit_hit": r["time_limit_hit"], "seconds": r["seconds"],
                                    "passed_names": sorted(r["passed"])}
        with open(a.baseline, "w") as f:
            json.dump(base, f, indent=1)
            f.write("\n")
        log(f"wrote the baseline {a.baseline}")
    if verdict == "FAIL":
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
