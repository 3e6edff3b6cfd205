//! 02b-counter — INCR's integer rules, INCRBYFLOAT's long double, INCREX (8.8).
//!
//! Article 02, section 3.3. INCR parses a 64-bit integer and refuses anything
//! else; INCRBYFLOAT adds in 80-bit long double and prints 17 significant digits,
//! so 1000 × 19999.99 ends 0.000000000170985 short and 1e20 + 1 loses the 1.
//! INCREX (Redis 8.8) bounds a counter and sets its TTL in one command: the real
//! server here (8.6.3) does not have it, and its row shows its own error.

use std::process::ExitCode;

use redislab_harness::{run, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "02b-counter",
    uses_pg: false,
};

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.exact(
            "incr-abc",
            "SET c abc; INCR c",
            "ERR value is not an integer or out of range",
        );
        r.exact(
            "incr-max",
            "SET c 9223372036854775807; INCR c",
            "ERR increment or decrement would overflow",
        );
        r.exact(
            "incrby-float",
            "SET c 1.5; INCRBY c 1",
            "ERR value is not an integer or out of range",
        );
        r.exact("float-tenth", "10 × INCRBYFLOAT f 0.1", "1");
        r.exact(
            "float-1e16",
            "SET f 1e16; INCRBYFLOAT f 1.5",
            "10000000000000001.5",
        );
        r.exact(
            "float-1e20",
            "SET f 1e20; INCRBYFLOAT f 1",
            "100000000000000000000",
        );
        r.exact(
            "float-money",
            "1000 × INCRBYFLOAT f 19999.99 (exact: 19999990)",
            "19999989.999999999829015",
        );
        let increx = [
            (
                "rl-first",
                "INCREX rl:u1 BYINT 1 UBOUND 5 EX 60 ENX (1st call)",
                "1 1",
            ),
            ("rl-fifth", "… 5th call", "5 1"),
            ("rl-sixth", "… 6th call: at the bound", "5 0"),
            (
                "rl-enx-ttl",
                "rl:u2 under the bound, TTL set to 30, again with EX 60 ENX; TTL",
                "30",
            ),
            ("rl-ex-ttl", "again with EX 60 (no ENX); TTL", "60"),
            (
                "cap-refuse",
                "SET n 99; INCREX n BYINT 5 UBOUND 100",
                "99 0",
            ),
            (
                "cap-saturate",
                "SET n 99; INCREX n BYINT 5 UBOUND 100 SATURATE",
                "100 1",
            ),
            (
                "stock-1",
                "SET stock 2; INCREX stock BYINT -1 LBOUND 0 (1st)",
                "1 -1",
            ),
            ("stock-2", "… 2nd", "0 -1"),
            ("stock-3", "… 3rd: sold out", "0 0"),
            ("no-ex-ttl", "INCREX on a new key without EX; TTL", "-1"),
        ];
        for (key, label, article) in increx {
            r.exact(key, label, article).core_matches_redis = false;
        }
        ctx.each_kv(counters)?;
        // What the real server did with INCREX, from its own answer (rl-first).
        let server = match ctx.server_version("redis") {
            Some(v) if ctx.redis_refused("rl-first") => format!("; the Redis that runs here is {v}, so its cells hold the server's own error"),
            Some(v) => format!("; the Redis that runs here is {v}, which answers it: its cells hold its own replies"),
            None => String::new(),
        };
        ctx.note(format!("INCREX is a Redis 8.8 command{server}. The core implements INCREX as the 8.8 documentation defines it (reply: new value, applied increment)."));
        ctx.note("INCRBYFLOAT computes in x87 80-bit long double and prints with %.17Lg; the core uses a software 80-bit float to give the same digits.");
        Ok(())
    })
}

fn counters(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let c = kv.key("c");
    for (row, value, args) in [
        ("incr-abc", "abc", vec!["INCR"]),
        ("incr-max", "9223372036854775807", vec!["INCR"]),
        ("incrby-float", "1.5", vec!["INCRBY", "", "1"]),
    ] {
        kv.cmd(&["SET", &c, value])?;
        let mut argv = args.clone();
        if argv.len() == 1 {
            argv.push(&c);
        } else {
            argv[1] = &c;
        }
        rec.put(row, kv.reply(&argv));
    }
    let f = kv.key("f");
    kv.cmd(&["DEL", &f])?;
    for _ in 0..10 {
        kv.cmd(&["INCRBYFLOAT", &f, "0.1"])?;
    }
    rec.put("float-tenth", kv.reply(&["GET", &f]));
    kv.cmd(&["SET", &f, "1e16"])?;
    rec.put("float-1e16", kv.reply(&["INCRBYFLOAT", &f, "1.5"]));
    kv.cmd(&["SET", &f, "1e20"])?;
    rec.put("float-1e20", kv.reply(&["INCRBYFLOAT", &f, "1"]));
    kv.cmd(&["DEL", &f])?;
    for _ in 0..1000 {
        kv.cmd(&["INCRBYFLOAT", &f, "19999.99"])?;
    }
    rec.put("float-money", kv.reply(&["GET", &f]));

    let rl = kv.key("rl:u1");
    let limiter = [
        "INCREX", &rl, "BYINT", "1", "UBOUND", "5", "EX", "60", "ENX",
    ];
    for call in 1..=6 {
        let reply = kv.reply(&limiter);
        match call {
            1 => rec.put("rl-first", reply),
            5 => rec.put("rl-fifth", reply),
            6 => rec.put("rl-sixth", reply),
            _ => {}
        }
    }
    // The TTL rules on a counter still under its bound (a refused call changes
    // neither value nor TTL).
    let window = kv.key("rl:u2");
    let limiter2 = [
        "INCREX", &window, "BYINT", "1", "UBOUND", "5", "EX", "60", "ENX",
    ];
    kv.reply(&limiter2);
    kv.reply(&["EXPIRE", &window, "30"]);
    kv.reply(&limiter2);
    rec.put("rl-enx-ttl", kv.reply(&["TTL", &window]));
    kv.reply(&["INCREX", &window, "BYINT", "1", "UBOUND", "5", "EX", "60"]);
    rec.put("rl-ex-ttl", kv.reply(&["TTL", &window]));

    let n = kv.key("n");
    kv.cmd(&["SET", &n, "99"])?;
    rec.put(
        "cap-refuse",
        kv.reply(&["INCREX", &n, "BYINT", "5", "UBOUND", "100"]),
    );
    kv.cmd(&["SET", &n, "99"])?;
    rec.put(
        "cap-saturate",
        kv.reply(&["INCREX", &n, "BYINT", "5", "UBOUND", "100", "SATURATE"]),
    );
    let stock = kv.key("stock");
    kv.cmd(&["SET", &stock, "2"])?;
    for row in ["stock-1", "stock-2", "stock-3"] {
        rec.put(
            row,
            kv.reply(&["INCREX", &stock, "BYINT", "-1", "LBOUND", "0"]),
        );
    }
    let fresh = kv.key("fresh");
    kv.reply(&["INCREX", &fresh, "BYINT", "1"]);
    rec.put("no-ex-ttl", kv.reply(&["TTL", &fresh]));
    Ok(())
}
