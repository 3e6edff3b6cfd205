#!/usr/bin/env python3
"""Compare two client transcripts step by step (Redis = reference, core = candidate).

    compare.py --label "redis-py RESP2" redis.json core.json [--json-out summary.json]

Prints `<label>: N steps equal, M different` and each differing step with both sides.
Exit status 0 always (the driver decides); a transcript that is missing or not JSON is
reported as every step different.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--label", required=True)
ap.add_argument("redis")
ap.add_argument("core")
ap.add_argument("--json-out")
ap.add_argument("--max-diffs", type=int, default=40)
a = ap.parse_args()


def load(path):
    try:
        with open(path) as f:
            return json.load(f), None
    except Exception as e:  # a crashed client leaves no or partial JSON
        return None, f"{type(e).__name__}: {e}"


def show(entry):
    if entry is None:
        return "(no such step)"
    if "error" in entry:
        return "ERROR " + entry["error"]
    s = json.dumps(entry.get("result"), sort_keys=True)
    return s if len(s) <= 400 else s[:400] + "..."


ref, ref_err = load(a.redis)
cand, cand_err = load(a.core)
summary = {"label": a.label, "equal": 0, "different": 0, "diffs": []}
if ref is None:
    print(f"{a.label}: the Redis transcript is unusable ({ref_err})")
    summary["error"] = "redis transcript: " + ref_err
else:
    ref_steps = ref["steps"]
    cand_steps = (cand or {}).get("steps", [])
    by_name = {}
    for s in cand_steps:
        by_name.setdefault(s["step"], []).append(s)
    seen = {}
    for s in ref_steps:
        i = seen.get(s["step"], 0)
        seen[s["step"]] = i + 1
        other = by_name.get(s["step"], [])
        o = other[i] if i < len(other) else None
        if o is not None and o == s:
            summary["equal"] += 1
        else:
            summary["different"] += 1
            summary["diffs"].append({"step": s["step"], "redis": show(s), "core": show(o)})
    extra = [s["step"] for s in cand_steps if s["step"] not in seen]
    head = f"{a.label}: {summary['equal']} steps equal, {summary['different']} different"
    if cand is None:
        head += f" (core transcript unusable: {cand_err})"
    print(head)
    for d in summary["diffs"][: a.max_diffs]:
        print(f"  - {d['step']}\n      redis: {d['redis']}\n      core:  {d['core']}")
    if len(summary["diffs"]) > a.max_diffs:
        print(f"  ... {len(summary['diffs']) - a.max_diffs} more (see the JSON summary)")
    if extra:
        print(f"  steps only the core's transcript has: {extra}")
if a.json_out:
    with open(a.json_out, "w") as f:
        json.dump(summary, f, indent=1)
sys.exit(0)
