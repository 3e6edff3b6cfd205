//! The client-pitfall question asked of the Rust `redis` client: which call shapes
//! lose REV or WITHSCORES (or the order) without an error. Each case is the typed
//! call as an application would write it; `sent` builds the same command with the
//! crate's `Cmd` constructor (what the `Commands` method sends) for display.

use std::collections::BTreeMap;

use redis::{Cmd, Commands, Connection, RedisResult};

use crate::app::{cell, pairs};

/// The keys the cases read: the weekly leaderboard and `half`.
pub struct Keys {
    pub lb: String,
    pub half: String,
}

pub struct Case {
    pub key: &'static str,
    pub call: &'static str,
    pub sent: fn(&Keys) -> Cmd,
    pub run: fn(&mut Connection, &Keys) -> String,
}

fn words(v: Vec<String>) -> String {
    if v.is_empty() {
        "(empty)".into()
    } else {
        v.join(" ")
    }
}

/// The key with a fractional score for the integer-typed call (`half`).
pub const HALF: [(&str, f64); 2] = [("u4", 950.5), ("u1", 1500.0)];

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            key: "p-zrevrange",
            call: "zrevrange(lb, 0, 2) -> Vec<String>",
            sent: |k| Cmd::zrevrange(&k.lb, 0, 2),
            run: |c, k| cell(c.zrevrange(&k.lb, 0, 2), words),
        },
        Case {
            key: "p-zrange-neg",
            call: "zrange(lb, -3, -1) -> Vec<String>  (\"the last three\" as a top 3)",
            sent: |k| Cmd::zrange(&k.lb, -3, -1),
            run: |c, k| cell(c.zrange(&k.lb, -3, -1), words),
        },
        Case {
            key: "p-zrange-ws",
            call: "zrange_withscores(lb, 0, 2) -> Vec<(String, f64)>  (no REV parameter exists)",
            sent: |k| Cmd::zrange_withscores(&k.lb, 0, 2),
            run: |c, k| cell(c.zrange_withscores(&k.lb, 0, 2), |v: Vec<(String, f64)>| pairs(&v)),
        },
        Case {
            key: "p-zrevrange-ws",
            call: "Commands::zrevrange_withscores(lb, 0, 2) -> Vec<(String, f64)>",
            sent: |k| Cmd::zrevrange_withscores(&k.lb, 0, 2),
            run: |c, k| {
                cell(c.zrevrange_withscores(&k.lb, 0, 2), |v: Vec<(String, f64)>| {
                    pairs(&v)
                })
            },
        },
        Case {
            key: "p-typed-flat",
            call: "TypedCommands::zrevrange_withscores(lb, 0, 2) (fixed type Vec<String>)",
            sent: |k| Cmd::zrevrange_withscores(&k.lb, 0, 2),
            run: |c, k| {
                let flat: RedisResult<Vec<String>> =
                    redis::TypedCommands::zrevrange_withscores(c, &k.lb, 0, 2);
                cell(flat, |v| format!("{v:?}"))
            },
        },
        Case {
            key: "p-btreemap",
            call: "zrevrange_withscores(lb, 0, 2) -> BTreeMap<String, f64>",
            sent: |k| Cmd::zrevrange_withscores(&k.lb, 0, 2),
            run: |c, k| {
                cell(c.zrevrange_withscores(&k.lb, 0, 2), |m: BTreeMap<String, f64>| {
                    format!("{m:?}")
                })
            },
        },
        Case {
            key: "p-typed-usize",
            call: "TypedCommands::zrangebyscore_withscores(half, -inf, +inf) (fixed type Vec<(String, usize)>; half has u4 950.5)",
            sent: |k| Cmd::zrangebyscore_withscores(&k.half, "-inf", "+inf"),
            run: |c, k| {
                let v: RedisResult<Vec<(String, usize)>> =
                    redis::TypedCommands::zrangebyscore_withscores(c, &k.half, "-inf", "+inf");
                cell(v, |v| format!("{v:?}"))
            },
        },
        Case {
            key: "p-byscore-limit",
            call: "zrangebyscore_limit(lb, \"-inf\", \"+inf\", 0, 3) -> Vec<String>",
            sent: |k| Cmd::zrangebyscore_limit(&k.lb, "-inf", "+inf", 0, 3),
            run: |c, k| cell(c.zrangebyscore_limit(&k.lb, "-inf", "+inf", 0, 3), words),
        },
        Case {
            key: "p-revbyscore-swapped",
            call: "zrevrangebyscore_limit(lb, \"-inf\", \"+inf\", 0, 3)  (min, max as for zrangebyscore)",
            sent: |k| Cmd::zrevrangebyscore_limit(&k.lb, "-inf", "+inf", 0, 3),
            run: |c, k| cell(c.zrevrangebyscore_limit(&k.lb, "-inf", "+inf", 0, 3), words),
        },
        Case {
            key: "p-revbyscore",
            call: "zrevrangebyscore_limit(lb, \"+inf\", \"-inf\", 0, 3)",
            sent: |k| Cmd::zrevrangebyscore_limit(&k.lb, "+inf", "-inf", 0, 3),
            run: |c, k| cell(c.zrevrangebyscore_limit(&k.lb, "+inf", "-inf", 0, 3), words),
        },
        Case {
            key: "p-cmd-rev",
            call: "Cmd::zrange(lb, 0, 2).arg(\"REV\").arg(\"WITHSCORES\") -> Vec<(String, f64)>",
            sent: |k| Cmd::zrange(&k.lb, 0, 2).arg("REV").arg("WITHSCORES").to_owned(),
            run: |c, k| {
                let cmd = Cmd::zrange(&k.lb, 0, 2).arg("REV").arg("WITHSCORES").to_owned();
                cell(cmd.query(c), |v: Vec<(String, f64)>| pairs(&v))
            },
        },
        Case {
            key: "p-cmd-ws-rev",
            call: "Cmd::zrange_withscores(lb, 0, 2).arg(\"REV\")  (REV after WITHSCORES)",
            sent: |k| Cmd::zrange_withscores(&k.lb, 0, 2).arg("REV").to_owned(),
            run: |c, k| {
                let cmd = Cmd::zrange_withscores(&k.lb, 0, 2).arg("REV").to_owned();
                cell(cmd.query(c), |v: Vec<(String, f64)>| pairs(&v))
            },
        },
        Case {
            key: "p-cmd-byscore-rev",
            call: "Cmd::zrangebyscore(lb, \"+inf\", \"-inf\").arg(\"REV\")  (REV on ZRANGEBYSCORE)",
            sent: |k| Cmd::zrangebyscore(&k.lb, "+inf", "-inf").arg("REV").to_owned(),
            run: |c, k| {
                let cmd = Cmd::zrangebyscore(&k.lb, "+inf", "-inf").arg("REV").to_owned();
                cell(cmd.query(c), words)
            },
        },
    ]
}
