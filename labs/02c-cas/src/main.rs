//! 02c-cas — compare-and-set on the server: SET … IFEQ, DELEX, DIGEST, MSETEX (8.4).
//!
//! Article 02, section 3.4. "Write only if nobody changed it" used to take
//! WATCH/MULTI/EXEC (three round trips, retried when someone else got in) or a
//! script; now it is an argument of SET, and "release the lock only if it is
//! mine" is DELEX … IFEQ. DIGEST lets a client compare a big value by its XXH3
//! hash instead of sending it back.

use std::process::ExitCode;

use redislab_harness::{run, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "02c-cas",
    uses_pg: false,
};

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.exact(
            "ifeq-match",
            "SET cfg v1; SET cfg v2 IFEQ v1; GET cfg",
            "OK v2",
        );
        r.exact("ifeq-stale", "SET cfg v3 IFEQ v1; GET cfg", "(nil) v2");
        r.exact(
            "ifeq-missing",
            "SET missing x IFEQ y; EXISTS missing",
            "(nil) 0",
        );
        r.exact(
            "delex-wrong",
            "SET lock:order:9 tok-A; DELEX lock:order:9 IFEQ tok-B",
            "0",
        );
        r.exact(
            "delex-right",
            "DELEX lock:order:9 IFEQ tok-A; EXISTS",
            "1 0",
        );
        r.exact(
            "digest",
            "DIGEST doc (a 50 KB value)",
            "b1c5bd1a26395a4b (its own 50 KB doc)",
        );
        r.exact("digest-len", "length of the DIGEST reply", "16");
        r.exact("ifdeq", "SET doc new IFDEQ <digest>; STRLEN doc", "OK 3");
        r.exact(
            "msetex",
            "MSETEX 3 a 1 b 2 c 3 EX 60; TTL a b c",
            "1 60 60 60",
        );
        r.exact(
            "msetex-nx",
            "DEL a; MSETEX 3 a 9 b 9 c 9 NX EX 60; GET a",
            "0 (nil)",
        );
        ctx.each_kv(cas)?;
        ctx.note("The article's DIGEST is of its own 50 KB document, whose content it does not print; this lab hashes a seeded 50 KB value, so only core-vs-redis equality and the 16 hex digits carry over.");
        Ok(())
    })
}

fn cas(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let cfg = kv.key("cfg");
    kv.cmd(&["SET", &cfg, "v1"])?;
    let set = kv.reply(&["SET", &cfg, "v2", "IFEQ", "v1"]);
    rec.put("ifeq-match", format!("{set} {}", kv.reply(&["GET", &cfg])));
    let set = kv.reply(&["SET", &cfg, "v3", "IFEQ", "v1"]);
    rec.put("ifeq-stale", format!("{set} {}", kv.reply(&["GET", &cfg])));
    let missing = kv.key("missing");
    let set = kv.reply(&["SET", &missing, "x", "IFEQ", "y"]);
    rec.put(
        "ifeq-missing",
        format!("{set} {}", kv.reply(&["EXISTS", &missing])),
    );

    let lock = kv.key("lock:order:9");
    kv.cmd(&["SET", &lock, "tok-A"])?;
    rec.put("delex-wrong", kv.reply(&["DELEX", &lock, "IFEQ", "tok-B"]));
    let deleted = kv.reply(&["DELEX", &lock, "IFEQ", "tok-A"]);
    rec.put(
        "delex-right",
        format!("{deleted} {}", kv.reply(&["EXISTS", &lock])),
    );

    let doc = kv.key("doc");
    let body: String = (0..50 * 1024)
        .map(|i| (b'a' + (i * 7 % 26) as u8) as char)
        .collect();
    kv.cmd(&["SET", &doc, &body])?;
    let digest = kv.reply(&["DIGEST", &doc]);
    rec.put("digest-len", digest.len().to_string());
    let set = kv.reply(&["SET", &doc, "new", "IFDEQ", &digest]);
    rec.put("digest", digest);
    rec.put("ifdeq", format!("{set} {}", kv.reply(&["STRLEN", &doc])));

    let (a, b, c) = (kv.key("a"), kv.key("b"), kv.key("c"));
    let ok = kv.reply(&["MSETEX", "3", &a, "1", &b, "2", &c, "3", "EX", "60"]);
    let ttls: Vec<String> = [&a, &b, &c].iter().map(|k| kv.reply(&["TTL", k])).collect();
    rec.put("msetex", format!("{ok} {}", ttls.join(" ")));
    kv.cmd(&["DEL", &a])?;
    let refused = kv.reply(&["MSETEX", "3", &a, "9", &b, "9", &c, "9", "NX", "EX", "60"]);
    rec.put("msetex-nx", format!("{refused} {}", kv.reply(&["GET", &a])));
    Ok(())
}
