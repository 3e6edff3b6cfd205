#!/usr/bin/env python3
"""Measures, on the core's listener and on a real Redis side by side, the figures
the README's Reliability section quotes: a 40 MB inline line, EXISTS with
1,000,000 arguments, 3,000 simultaneous connects, and whether another client is
served meanwhile.

Usage: scripts/measure_reliability.py CORE_PORT REDIS_PORT
(scripts/measure-reliability.sh starts both servers and calls this.)
"""

import socket
import sys
import threading
import time


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_line(s):
    buf = b""
    while not buf.endswith(b"\r\n"):
        chunk = s.recv(1)
        if not chunk:
            break
        buf += chunk
    return buf


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def ping_latency_during(port, work):
    """Runs `work` while another client PINGs; returns (work seconds, worst PING ms)."""
    worst = [0.0]
    stop = threading.Event()

    def pinger():
        s = connect(port)
        while not stop.is_set():
            t = time.perf_counter()
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            read_line(s)
            worst[0] = max(worst[0], (time.perf_counter() - t) * 1000)
            time.sleep(0.005)
        s.close()

    th = threading.Thread(target=pinger)
    th.start()
    time.sleep(0.05)
    t = time.perf_counter()
    result = work()
    elapsed = time.perf_counter() - t
    stop.set()
    th.join()
    return elapsed, worst[0], result


def big_inline(port):
    s = connect(port)
    payload = b"SET k " + b"x" * (40 * 1024 * 1024) + b"\r\n"
    try:
        s.sendall(payload)
    except OSError:
        pass
    s.settimeout(10)
    try:
        return read_line(s).decode(errors="replace").strip()
    except OSError as e:
        return f"({e})"
    finally:
        s.close()


def exists_million(port):
    s = connect(port)
    s.sendall(encode([b"SET", b"k1", b"v"]))
    read_line(s)
    args = [b"EXISTS"] + [b"k1" if i % 2 == 0 else b"nope" for i in range(1_000_000)]
    s.sendall(encode(args))
    s.settimeout(120)
    line = read_line(s).decode().strip()
    s.close()
    return line


def connect_storm(port, n=3000):
    socks = [None] * n
    errors = [0]

    def one(i):
        try:
            socks[i] = socket.create_connection(("127.0.0.1", port), timeout=60)
        except OSError:
            errors[0] += 1

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.perf_counter() - t
    # Every connection answers PING.
    answered = 0
    for s in socks:
        if s is None:
            continue
        try:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            s.settimeout(30)
            if read_line(s) == b"+PONG\r\n":
                answered += 1
        except OSError:
            pass
        s.close()
    return elapsed, errors[0], answered


def main():
    core, redis = int(sys.argv[1]), int(sys.argv[2])
    rows = []
    for name, port in (("core", core), ("redis", redis)):
        secs, worst, reply = ping_latency_during(port, lambda: big_inline(port))
        rows.append((name, "40 MB inline line", f"{secs:.2f} s, reply {reply!r}, worst PING of another client {worst:.1f} ms"))
        secs, worst, reply = ping_latency_during(port, lambda: exists_million(port))
        rows.append((name, "EXISTS with 1,000,000 arguments", f"{secs:.2f} s, reply {reply}, worst PING {worst:.1f} ms"))
        secs, errs, answered = connect_storm(port)
        rows.append((name, "3,000 simultaneous connects", f"{secs:.2f} s, {errs} refused, {answered} answered PING"))
    width = max(len(r[1]) for r in rows)
    for name, what, figure in rows:
        print(f"{name:5}  {what:<{width}}  {figure}")


if __name__ == "__main__":
    main()
