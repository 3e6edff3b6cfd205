//! `bench.html`: `./run.sh bench`'s result (`bench.json`, written by
//! scripts/bench.py) as a page — the machine and time it was measured, then one
//! row per command and pipeline depth: requests per second, p50 and p99 on the
//! core and on Redis in the same run, and their ratios (a ratio below 1 on
//! req/s, or above 1 on p99, is the core behind Redis and is highlighted), then
//! each server's memory for the 1M-member sorted set; then the in-process
//! section (`inprocess`: the core's ns/op in process and its own
//! `usec_per_call` beside Redis's `usec_per_call`, and both ratios, highlighted
//! above 1) and the memory per
//! element of each type (`memory_types`: the core's heap beside Redis's
//! `used_memory` growth, highlighted above 1), both written by bench_inprocess;
//! then the core beside yo-kv, another Rust implementation, in process
//! (`peers`, written by bench/peers' zset_peers).
//!
//! The JSON is read loosely (a field bench.py does not write is shown as "–"), so
//! a result from an older bench.py still renders.

use std::fmt::Write as _;

use serde_json::Value;

use crate::{esc, head};

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    let mut at = v;
    for p in path {
        at = at.get(p)?;
    }
    at.as_f64()
}

fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or("–")
        .to_string()
}

fn fixed(x: Option<f64>, digits: usize, unit: &str) -> String {
    x.map_or("–".into(), |x| format!("{x:.digits$}{unit}"))
}

/// Requests per second with thousands separators.
fn rps(x: Option<f64>) -> String {
    let Some(x) = x else { return "–".into() };
    let digits = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A ratio cell, marked `behind` when the core is behind Redis on it.
fn ratio(x: Option<f64>, behind: impl Fn(f64) -> bool) -> String {
    match x {
        Some(r) if behind(r) => format!("<td class=\"num behind\">{r:.2}</td>"),
        Some(r) => format!("<td class=\"num\">{r:.2}</td>"),
        None => "<td class=\"num\">–</td>".into(),
    }
}

/// The lowest and highest per-round ratio (bench.json's `rps_ratio_range`,
/// from runs of more than one round), or a dash.
fn ratio_range(row: &Value) -> String {
    let bound = |i: usize| {
        row.get("rps_ratio_range")
            .and_then(|r| r.get(i))
            .and_then(Value::as_f64)
    };
    match (bound(0), bound(1)) {
        (Some(low), Some(high)) => format!("{low:.2}–{high:.2}"),
        _ => "–".into(),
    }
}

pub fn page(bench: &Value, origin: &str) -> String {
    let mut h = head("redis-labs: the benchmark");
    let _ = writeln!(
        h,
        "<header><p class=\"nav\"><a href=\"index.html\">← all labs</a></p><h1>redis-benchmark: the core beside Redis {}</h1>\n<p>Both servers in the same run on the same machine; compare the ratios, not the absolute figures (the machine is shared). Highlighted: where the core is behind Redis (fewer requests per second, or a longer p99).</p>\n<p class=\"meta\">{} · measured {} · {} · from {}</p></header>\n<main>",
        esc(&text(bench, "redis_version")),
        esc(&text(bench, "bench")),
        esc(&text(bench, "measured")),
        esc(&text(bench, "machine")),
        esc(origin)
    );
    h.push_str("<table class=\"index\">\n<thead><tr><th>command</th><th>-P</th><th>core req/s</th><th>redis req/s</th><th>ratio</th><th>per-round range</th><th>core p50</th><th>redis p50</th><th>core p99</th><th>redis p99</th><th>p99 ratio</th></tr></thead>\n<tbody>\n");
    let results = bench.get("results").and_then(Value::as_array);
    for r in results.into_iter().flatten() {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>",
            esc(&text(r, "command")),
            fixed(num(r, &["pipeline"]), 0, ""),
            rps(num(r, &["core", "rps"])),
            rps(num(r, &["redis", "rps"])),
            ratio(num(r, &["rps_ratio"]), |x| x < 1.0),
            ratio_range(r),
            fixed(num(r, &["core", "p50_ms"]), 3, " ms"),
            fixed(num(r, &["redis", "p50_ms"]), 3, " ms"),
            fixed(num(r, &["core", "p99_ms"]), 3, " ms"),
            fixed(num(r, &["redis", "p99_ms"]), 3, " ms"),
            ratio(num(r, &["p99_ratio"]), |x| x > 1.0),
        );
    }
    h.push_str("</tbody></table>\n");
    if let Some(memory) = bench.get("memory") {
        h.push_str("<h2>Memory of the 1,000,000-member sorted set</h2>\n<table class=\"index\">\n<thead><tr><th>server</th><th>used_memory growth</th><th>per member</th></tr></thead>\n<tbody>\n");
        for server in ["core", "redis"] {
            let _ = writeln!(
                h,
                "<tr><td>{server}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                fixed(num(memory, &[server, "used_memory_growth"]), 0, " B"),
                fixed(num(memory, &[server, "bytes_per_member"]), 1, " B"),
            );
        }
        h.push_str("</tbody></table>\n<p class=\"meta\">The core's used_memory is its real heap (the allocator's own count); Redis's is its INFO used_memory.</p>\n");
    }
    inprocess_tables(&mut h, bench);
    peers_table(&mut h, bench);
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

/// The in-process timings and the memory per type, where bench.json has them.
fn inprocess_tables(h: &mut String, bench: &Value) {
    if let Some(rows) = bench.get("inprocess").and_then(Value::as_array) {
        let _ = writeln!(
            h,
            "<h2>In process: the core's cost per command beside Redis's usec_per_call</h2>\n<p>The core's <code>Server::run</code> and RESP encoding, called in a loop in one process (no socket) and each call timed from outside, best of {} rounds; the core's own usec_per_call over the same calls; Redis's usec_per_call for the same calls on the same data. Both usec_per_call figures are each server's INFO commandstats, read the same way; Redis's window includes writing the reply into the client buffer, the core's ends at the reply value (its encoding, where ZRANGE's scores are formatted, comes after). Highlighted: the core above Redis.</p>\n<table class=\"index\">\n<thead><tr><th>command</th><th>core median</th><th>core mean</th><th>core usec_per_call</th><th>redis usec_per_call</th><th>ratio (mean)</th><th>ratio (usec_per_call)</th></tr></thead>\n<tbody>",
            fixed(num(bench, &["inprocess_rounds"]), 0, "")
        );
        for r in rows {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}{}</tr>",
                esc(&text(r, "command")),
                fixed(num(r, &["core", "median_ns"]), 0, " ns"),
                fixed(num(r, &["core", "mean_ns"]), 0, " ns"),
                fixed(num(r, &["core", "usec_per_call"]).map(|us| us * 1000.0), 0, " ns"),
                fixed(num(r, &["redis", "usec_per_call"]).map(|us| us * 1000.0), 0, " ns"),
                ratio(num(r, &["ratio"]), |x| x > 1.0),
                ratio(num(r, &["server_ratio"]), |x| x > 1.0),
            );
        }
        h.push_str("</tbody></table>\n");
    }
    if let Some(rows) = bench.get("memory_types").and_then(Value::as_array) {
        h.push_str("<h2>Memory per element, each type</h2>\n<p>The core's usable heap in process (a counting allocator) beside Redis's used_memory growth, for the same commands. Highlighted: the core holding more.</p>\n<table class=\"index\">\n<thead><tr><th>data</th><th>core</th><th>redis</th><th>ratio</th></tr></thead>\n<tbody>\n");
        for m in rows {
            let unit = format!(" {}", text(m, "unit"));
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>",
                esc(&text(m, "label")),
                fixed(num(m, &["core", "per_element"]), 1, &unit),
                fixed(num(m, &["redis", "per_element"]), 1, &unit),
                ratio(num(m, &["ratio"]), |x| x > 1.0),
            );
        }
        h.push_str("</tbody></table>\n");
    }
}

/// The columns of the peers table: bench.json's `peers.impls` keys.
const PEERS: [(&str, &str); 4] = [
    ("core-command", "core, command path"),
    ("core-typed", "core, typed (skiplist)"),
    ("core-btree-typed", "core, typed (B+tree)"),
    ("yo-kv", "yo-kv, typed"),
];

/// The core beside yo-kv in process (`peers`, written by bench/peers'
/// zset_peers), where bench.json has it: build rate, heap per member, ns per
/// operation; the core's typed figures highlighted where above yo-kv's.
fn peers_table(h: &mut String, bench: &Value) {
    let Some(peers) = bench.get("peers") else {
        return;
    };
    let impls = peers.get("impls").and_then(Value::as_array);
    let impl_of = |key: &str| {
        impls
            .into_iter()
            .flatten()
            .find(|i| i.get("key").and_then(Value::as_str) == Some(key))
    };
    let _ = writeln!(
        h,
        "<h2>In process beside another Rust implementation (yo-kv {})</h2>\n<p>{} members built by single ZADDs in one process, each implementation on its own copy; ns per operation are the mean of the best of {} rounds. The core's command path is <code>Server::call_into</code> (argv in, RESP2 out); its typed figures call its keyspace and sorted set as Rust, as yo-kv is called. Highlighted: a typed core figure above yo-kv's.</p>\n<table class=\"index\">\n<thead><tr><th></th>{}</tr></thead>\n<tbody>",
        esc(&text(peers, "yo_kv_version")),
        rps(num(peers, &["members"])),
        fixed(num(peers, &["rounds"]), 0, ""),
        PEERS
            .iter()
            .map(|(_, label)| format!("<th>{}</th>", esc(label)))
            .collect::<String>()
    );
    let row = |h: &mut String, label: &str, cell: &dyn Fn(&str) -> (Option<f64>, String)| {
        let yo = cell("yo-kv").0;
        let cells: String = PEERS
            .iter()
            .map(|(key, _)| {
                let (value, shown) = cell(key);
                let behind = key.starts_with("core-")
                    && *key != "core-command"
                    && matches!((value, yo), (Some(v), Some(y)) if v > y);
                let class = if behind { "num behind" } else { "num" };
                format!("<td class=\"{class}\">{shown}</td>")
            })
            .collect();
        let _ = writeln!(h, "<tr><td>{}</td>{cells}</tr>", esc(label));
    };
    let per_member = |field: &'static str| {
        move |key: &str| {
            let v = impl_of(key).and_then(|i| num(i, &["heap", field]));
            (v, fixed(v, 1, " B"))
        }
    };
    row(h, "single ZADDs per second (higher is better)", &|key| {
        let v = impl_of(key).and_then(|i| num(i, &["build_per_sec"]));
        // Higher is better here: compare the negated rate.
        (v.map(|x| -x), rps(v))
    });
    row(
        h,
        "heap per member, requested",
        &per_member("requested_per_member"),
    );
    row(
        h,
        "heap per member, malloc usable",
        &per_member("usable_per_member"),
    );
    for op in peers
        .get("ops")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        row(h, &text(op, "command"), &|key| {
            let v = num(op, &[key, "mean_ns"]);
            (v, fixed(v, 0, " ns"))
        });
    }
    h.push_str("</tbody></table>\n");
    let sip = num(peers, &["hashing", "siphash12_ns"]);
    let wy = num(peers, &["hashing", "wyhash_ns"]);
    if let (Some(sip), Some(wy)) = (sip, wy) {
        let _ = writeln!(
            h,
            "<p class=\"meta\">Hashing the key and the member, as one ZSCORE does: SipHash-1-2 (the core's: Redis's hash, kept so that its dicts' buckets, scans and random draws are Redis's) {sip:.1} ns; wyhash (yo-kv's) {wy:.1} ns.</p>"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bench_result_renders_with_the_core_behind_highlighted() {
        let bench: Value = serde_json::json!({
            "bench": "redis-benchmark -c 50",
            "redis_version": "8.6.3",
            "machine": "vm · 2 CPUs",
            "measured": "2026-12-01 16:43",
            "memory": {"core": {"used_memory_growth": 64595488, "bytes_per_member": 64.6},
                       "redis": {"used_memory_growth": 67504936, "bytes_per_member": 67.5}},
            "results": [
                {"command": "GET", "pipeline": 1,
                 "core": {"rps": 47371.2, "p50_ms": 0.647, "p99_ms": 4.151},
                 "redis": {"rps": 46382.0, "p50_ms": 0.591, "p99_ms": 5.903},
                 "rps_ratio": 1.02, "p99_ratio": 0.70, "rps_ratio_range": [0.97, 1.05]},
                {"command": "INCR", "pipeline": 16,
                 "core": {"rps": 265781.0},
                 "redis": {"rps": 423280.0},
                 "rps_ratio": 0.63}
            ]
        });
        let html = page(&bench, "out/bench.json");
        assert!(html.contains("<td>GET</td><td class=\"num\">1</td><td class=\"num\">47,371</td><td class=\"num\">46,382</td><td class=\"num\">1.02</td>"), "{html}");
        assert!(html.contains("<td class=\"num\">0.70</td></tr>"), "{html}");
        assert!(
            html.contains("<td class=\"num\">1.02</td><td class=\"num\">0.97–1.05</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"num behind\">0.63</td>"),
            "{html}"
        );
        // Fields the row lacks show as a dash, not as a number.
        assert!(html.contains("<td class=\"num\">–</td></tr>"), "{html}");
        assert!(html.contains("64.6 B"));
        assert!(html.contains("measured 2026-12-01 16:43"));
        // No in-process section in an older result.
        assert!(!html.contains("In process"));
    }

    #[test]
    fn the_peers_section_renders_with_the_core_behind_highlighted() {
        let bench: Value = serde_json::json!({
            "peers": {
                "yo_kv_version": "0.3.33", "members": 1000000, "rounds": 3,
                "impls": [
                    {"key": "core-command", "build_per_sec": 300000.0,
                     "heap": {"requested_per_member": 56.6, "usable_per_member": 56.6}},
                    {"key": "core-typed", "build_per_sec": 500000.0,
                     "heap": {"requested_per_member": 56.6, "usable_per_member": 56.6}},
                    {"key": "core-btree-typed", "build_per_sec": 900000.0,
                     "heap": {"requested_per_member": 33.0, "usable_per_member": 33.0}},
                    {"key": "yo-kv", "build_per_sec": 800000.0,
                     "heap": {"requested_per_member": 39.8, "usable_per_member": 41.0}}
                ],
                "hashing": {"siphash12_ns": 10.9, "wyhash_ns": 6.3},
                "ops": [
                    {"key": "zscore", "command": "ZSCORE lb u0123456",
                     "core-command": {"mean_ns": 190.0}, "core-typed": {"mean_ns": 50.0},
                     "core-btree-typed": {"mean_ns": 30.0}, "yo-kv": {"mean_ns": 40.0}}
                ]
            }
        });
        let html = page(&bench, "out/bench.json");
        assert!(
            html.contains("beside another Rust implementation (yo-kv 0.3.33)"),
            "{html}"
        );
        assert!(html.contains("1,000,000 members"), "{html}");
        // The typed skiplist is above yo-kv on ZSCORE (highlighted), the btree
        // below it; the command path is never highlighted.
        assert!(html.contains("<tr><td>ZSCORE lb u0123456</td><td class=\"num\">190 ns</td><td class=\"num behind\">50 ns</td><td class=\"num\">30 ns</td><td class=\"num\">40 ns</td></tr>"), "{html}");
        // A lower build rate than yo-kv's is behind; memory above it too.
        assert!(
            html.contains("<td class=\"num behind\">500,000</td><td class=\"num\">900,000</td>"),
            "{html}"
        );
        assert!(html.contains("SipHash-1-2 (the core's"), "{html}");
        assert!(html.contains("10.9 ns; wyhash (yo-kv's) 6.3 ns"), "{html}");
        assert!(html.contains("<td class=\"num behind\">56.6 B</td><td class=\"num\">33.0 B</td><td class=\"num\">39.8 B</td>"), "{html}");
    }

    #[test]
    fn the_inprocess_section_and_memory_per_type_render() {
        let bench: Value = serde_json::json!({
            "inprocess_rounds": 3,
            "inprocess": [
                {"key": "get", "command": "GET s:k",
                 "core": {"median_ns": 180, "mean_ns": 190.4, "usec_per_call": 0.094},
                 "redis": {"usec_per_call": 0.105}, "ratio": 1.81, "server_ratio": 0.9},
                {"key": "zadd", "command": "ZADD z:lb", "core": {"median_ns": 1800, "mean_ns": 2000.0},
                 "redis": {"usec_per_call": 2.953}, "ratio": 0.68}
            ],
            "memory_types": [
                {"key": "hll-dense", "label": "300 dense HyperLogLogs", "unit": "B/sketch",
                 "core": {"per_element": 12558.4}, "redis": {"per_element": 14394.4}, "ratio": 0.87},
                {"key": "string", "label": "strings", "unit": "B/key", "core": {"per_element": 80.0}}
            ]
        });
        let html = page(&bench, "runs/bench.json");
        assert!(html.contains("best of 3 rounds"), "{html}");
        assert!(html.contains("<tr><td>GET s:k</td><td class=\"num\">180 ns</td><td class=\"num\">190 ns</td><td class=\"num\">94 ns</td><td class=\"num\">105 ns</td><td class=\"num behind\">1.81</td><td class=\"num\">0.90</td></tr>"), "{html}");
        assert!(html.contains("<td class=\"num\">0.68</td>"), "{html}");
        assert!(html.contains("<tr><td>300 dense HyperLogLogs</td><td class=\"num\">12558.4 B/sketch</td><td class=\"num\">14394.4 B/sketch</td><td class=\"num\">0.87</td></tr>"), "{html}");
        // A case without Redis's figure shows dashes.
        assert!(html.contains("<tr><td>strings</td><td class=\"num\">80.0 B/key</td><td class=\"num\">–</td><td class=\"num\">–</td></tr>"), "{html}");
    }
}
