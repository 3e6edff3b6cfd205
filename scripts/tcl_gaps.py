#!/usr/bin/env python3
"""Group the core's Tcl-suite failures by cause, per file, from a tcl-suite JSON.

    scripts/tcl_gaps.py out/tcl-suite-shim.json [--top 8] > gaps.md

A failure's cause is read from the server error or assertion the runner printed:
"unknown command 'X'" -> missing command X; CONFIG SET/GET of a parameter -> missing
CONFIG parameter; DEBUG/OBJECT/... subcommands; otherwise the assertion text with
numbers and quoted values folded. Tests that pass on Redis and neither passed nor
failed on the core were never reached: a block-level error (a start_server block's
CONFIG SET override, or an error outside any test) skipped them; they are counted
under that block's cause.
"""
import argparse
import collections
import json
import re

ap = argparse.ArgumentParser()
ap.add_argument("json")
ap.add_argument("--top", type=int, default=8)
a = ap.parse_args()
doc = json.load(open(a.json))


def cause(reason):
    r = reason or ""
    m = re.search(r"unknown command '([^']+)', with args beginning with: ?(.*)", r, re.I)
    if m:
        cmd = m.group(1).upper()
        args = re.findall(r"'([^']*)'", m.group(2))
        if cmd == "CONFIG" and args:
            sub = args[0].upper()
            if sub in ("SET", "GET") and len(args) > 1:
                return f"CONFIG {sub} (missing) - e.g. {args[1]}"
            return f"CONFIG {sub} (missing)"
        if cmd in ("DEBUG", "OBJECT", "CLIENT", "FUNCTION", "MEMORY", "COMMAND", "SCRIPT",
                   "CLUSTER", "LATENCY", "ACL", "PUBSUB", "XINFO") and args:
            return f"{cmd} {args[0].upper()} (missing command)"
        return f"{cmd} (missing command)"
    m = re.search(r"unknown subcommand '([^']+)'.*?'([A-Za-z|]+)'", r, re.I)
    if m:
        return f"{m.group(2).upper()} {m.group(1).upper()} (unknown subcommand)"
    m = re.search(r"unknown subcommand or wrong number of arguments for '([^']+)'", r, re.I)
    if m:
        return f"{m.group(1).upper()} (unknown subcommand)"
    m = re.search(r"(Unknown option or number of arguments for CONFIG SET - '([^']+)')", r)
    if m:
        return f"CONFIG SET {m.group(2)} (unknown parameter)"
    if "I/O error reading reply" in r or "connection reset" in r.lower() or "broken pipe" in r.lower():
        return "connection dropped by the server"
    if "Executing test client" in r:
        return "runner aborted: " + cause(r.split("Executing test client:", 1)[1].strip())
    # Fold values so that the same assertion groups together.
    r = re.sub(r"\(context:.*", "", r)
    r = re.sub(r"'[^']*'", "'…'", r)
    r = re.sub(r"\b\d+(\.\d+)?\b", "N", r)
    return "assertion: " + r.strip()[:140] if r.startswith("Expected") or "assert" in r.lower() else r.strip()[:160]


print(f"Source: `{a.json}` (shim_preamble={doc.get('shim_preamble')}).\n")
grand = collections.Counter()
for row in doc["files"]:
    if "core_failed" not in row:
        continue
    redis_passed = row["redis_passed"]
    core_passed = row["core_passed"]
    passed_not = collections.Counter(row.get("core_not_passed", []))
    test_fail = collections.Counter()
    block_causes = []
    failed_names = collections.Counter()
    for f in row["core_failed"]:
        failed_names[f["name"]] += 1
    for f in row["core_failed"]:
        c = cause(f["reason"])
        if f["name"] in passed_not:
            test_fail[c] += 1
        else:
            # not a test Redis passes: a block-level error (or a test Redis fails too)
            block_causes.append(c)
    if row.get("core_exception"):
        block_causes.append(cause(row["core_exception"]))
    not_reached = sum((passed_not - failed_names).values())
    lost = {}
    if not_reached:
        if block_causes:
            # Attribute the unreached tests to the file's block-level causes, evenly
            # (the runner does not say which block skipped which test).
            share = collections.Counter(block_causes)
            tot = sum(share.values())
            for c, n in share.items():
                lost[c] = round(not_reached * n / tot)
        else:
            lost["not reached (time limit or runner stopped)"] = not_reached
    causes = collections.Counter(test_fail)
    for c, n in lost.items():
        causes[c + " [block: tests not reached]"] += n
    grand.update({k.split(" [block")[0]: v for k, v in causes.items()})
    ratio = f"{100 * core_passed / redis_passed:.0f}%" if redis_passed else "-"
    print(f"### {row['file']} — core {core_passed}/{redis_passed} ({ratio})\n")
    if not causes:
        print("nothing missing\n")
        continue
    print("| tests | cause |\n|---:|---|")
    for c, n in causes.most_common(a.top):
        print(f"| {n} | {c} |")
    rest = sum(causes.values()) - sum(n for _, n in causes.most_common(a.top))
    if rest:
        print(f"| {rest} | (other causes) |")
    print()

print("### All files — causes by tests they would unlock\n")
print("| tests | cause |\n|---:|---|")
for c, n in grand.most_common(40):
    print(f"| {n} | {c} |")
