#!/usr/bin/env python3
"""redis-cli's interactive hints, captured under a pseudo-terminal.

    cli_hints.py /path/to/redis-cli PORT "ZADD " "GEOSEARCH " ...

For each partial command: start redis-cli interactively, type it, and print the hint
redis-cli draws after the cursor (from the server's COMMAND DOCS, or its built-in
table when the server has none), as one JSON object {typed: hint}. Only the standard
library; the child is always ended.
"""
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def read_for(fd, seconds):
    out = b""
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            out += data
            # linenoise asks where the cursor is (ESC [6n) and waits for the answer.
            while b"\x1b[6n" in data:
                os.write(fd, b"\x1b[1;1R")
                data = data.replace(b"\x1b[6n", b"", 1)
    return out


def hint_for(cli, port, typed):
    pid, fd = pty.fork()
    if pid == 0:
        # A 200-column terminal: with none, linenoise thinks it has one column.
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        os.environ["TERM"] = "xterm"
        os.environ["REDISCLI_HISTFILE"] = "/dev/null"
        os.execv(cli, [cli, "-h", "127.0.0.1", "-p", str(port)])
    try:
        banner = read_for(fd, 1.5)
        os.write(fd, typed.encode())
        screen = read_for(fd, 1.0)
        os.write(fd, b"\x15quit\r")
        read_for(fd, 0.3)
    finally:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        os.close(fd)
    text = ANSI.sub(b"", screen).decode("utf-8", "replace")
    # What follows the typed text on the line is the hint.
    line = text.replace("\r", "\n").split("\n")
    hint = ""
    for l in line:
        i = l.find(typed.rstrip())
        if i >= 0:
            hint = l[i + len(typed.rstrip()):].strip()
    return {"hint": hint, "prompt_seen": f"{port}>" in ANSI.sub(b"", banner).decode("utf-8", "replace")}


def main():
    cli, port = sys.argv[1], int(sys.argv[2])
    res = {t: hint_for(cli, port, t) for t in sys.argv[3:]}
    json.dump(res, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
