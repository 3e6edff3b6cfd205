//! Transactions at the edges, on the core's listener beside a real Redis: over
//! `maxmemory` (the core evicts nothing, Redis under `noeviction` neither) and
//! while another client's script is busy. The same steps run on both servers
//! and every reply is compared byte for byte.
//!
//! These are the situations of Redis's own multi.tcl that the core failed
//! before: it ignored maxmemory outside scripts, and during a busy script the
//! listener answered every command `-BUSY` without the core, so MULTI never
//! started and a refused EXEC left its transaction open.

use std::time::{Duration, Instant};

use redislab_harness::testing::{redis_for_test, redis_with_debug_for_test, RawRedis};
use redislab_listener::CoreListener;

fn argv(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// One step: which connection sends what.
#[derive(Clone, Copy)]
enum Who {
    /// The client running the transaction.
    Tx,
    /// Another client (CONFIG SET, reads).
    Admin,
}

/// Runs `steps` on a server, returning each reply as text.
fn replies(port: u16, steps: &[(Who, &[&str])]) -> Vec<String> {
    let mut tx = RawRedis::connect(port).unwrap();
    let mut admin = RawRedis::connect(port).unwrap();
    steps
        .iter()
        .map(|(who, words)| {
            let conn = match who {
                Who::Tx => &mut tx,
                Who::Admin => &mut admin,
            };
            let reply = conn.call(&argv(words)).unwrap();
            String::from_utf8_lossy(&reply).into_owned()
        })
        .collect()
}

fn compare(redis: &[String], core: &[String], steps: &[(Who, &[&str])]) {
    for ((r, c), (_, words)) in redis.iter().zip(core).zip(steps) {
        assert_eq!(c, r, "core and Redis differ at {words:?}");
    }
}

#[test]
fn over_maxmemory_transactions_answer_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let core = CoreListener::start(0).expect("core listener");
    use Who::{Admin, Tx};
    let steps: &[(Who, &[&str])] = &[
        (Admin, &["DEL", "oomtx:x", "oomtx:l"]),
        (Tx, &["SET", "oomtx:x", "value"]),
        (Admin, &["CONFIG", "SET", "maxmemory", "1"]),
        // A DENYOOM command is refused; reads and DEL are not.
        (Tx, &["SET", "oomtx:y", "1"]),
        (Tx, &["GET", "oomtx:x"]),
        // Refused while queueing: the transaction is dirty.
        (Tx, &["MULTI"]),
        (Tx, &["GET", "oomtx:x"]),
        (Tx, &["LPUSH", "oomtx:l", "v"]),
        (Tx, &["EXEC"]),
        // DISCARD works over the limit.
        (Tx, &["MULTI"]),
        (Tx, &["SET", "oomtx:x", "1"]),
        (Tx, &["DISCARD"]),
        // Queued under the limit, refused at EXEC, then out of MULTI.
        (Admin, &["CONFIG", "SET", "maxmemory", "0"]),
        (Tx, &["MULTI"]),
        (Tx, &["SET", "oomtx:x", "2"]),
        (Tx, &["GET", "oomtx:x"]),
        (Admin, &["CONFIG", "SET", "maxmemory", "1"]),
        (Tx, &["EXEC"]),
        (Tx, &["EXEC"]),
        // A read-only transaction runs.
        (Tx, &["MULTI"]),
        (Tx, &["GET", "oomtx:x"]),
        (Tx, &["PING"]),
        (Tx, &["EXEC"]),
        (Admin, &["CONFIG", "SET", "maxmemory", "0"]),
        (Admin, &["DEL", "oomtx:x"]),
    ];
    let redis = replies(server.port, steps);
    let mine = replies(core.port(), steps);
    compare(&redis, &mine, steps);
}

/// Commands sent one after another by the transaction client.
type Steps<'a> = &'a [&'a [&'a str]];

/// Polls with PING until the server answers -BUSY (a script is past its
/// threshold).
fn until_busy(conn: &mut RawRedis) {
    let started = Instant::now();
    while !conn.call(&argv(&["PING"])).unwrap().starts_with(b"-BUSY") {
        assert!(started.elapsed() < Duration::from_secs(10), "never busy");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The replies to `during` sent by a fresh transaction client while another
/// client's endless script is busy, then to `after` once SCRIPT KILL stopped it
/// (`before` runs first, before the script starts).
fn around_a_busy_script(
    port: u16,
    before: &[&[&str]],
    during: &[&[&str]],
    after: &[&[&str]],
) -> Vec<String> {
    let mut admin = RawRedis::connect(port).unwrap();
    let mut tx = RawRedis::connect(port).unwrap();
    let mut runner = RawRedis::connect(port).unwrap();
    let text = |conn: &mut RawRedis, words: &[&str]| {
        String::from_utf8_lossy(&conn.call(&argv(words)).unwrap()).into_owned()
    };
    admin
        .call(&argv(&["CONFIG", "SET", "busy-reply-threshold", "50"]))
        .unwrap();
    let mut out: Vec<String> = before.iter().map(|w| text(&mut tx, w)).collect();
    runner
        .send_only(&argv(&["EVAL", "while true do end", "0"]))
        .unwrap();
    until_busy(&mut admin);
    out.extend(during.iter().map(|w| text(&mut tx, w)));
    out.push(text(&mut admin, &["SCRIPT", "KILL"]));
    out.push(runner.read_one().unwrap_or_default());
    out.extend(after.iter().map(|w| text(&mut tx, w)));
    admin
        .call(&argv(&["CONFIG", "SET", "busy-reply-threshold", "5000"]))
        .unwrap();
    out
}

#[test]
fn a_busy_script_meets_transactions_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let core = CoreListener::start(0).expect("core listener");
    let cases: &[(Steps, Steps, Steps)] = &[
        // MULTI runs during the script, the refused INCR dirties it.
        (
            &[&["SET", "busytx:xx", "1"]],
            &[&["MULTI"], &["INCR", "busytx:xx"]],
            &[&["INCR", "busytx:xx"], &["EXEC"], &["GET", "busytx:xx"]],
        ),
        // EXEC during the script discards the transaction.
        (
            &[&["MULTI"], &["INCR", "busytx:xx"]],
            &[&["EXEC"]],
            &[&["EXEC"], &["GET", "busytx:xx"], &["PING", "asdf"]],
        ),
        // WATCH and UNWATCH are allowed; DISCARD too.
        (
            &[],
            &[
                &["WATCH", "busytx:xx"],
                &["UNWATCH"],
                &["MULTI"],
                &["DISCARD"],
            ],
            &[&["DEL", "busytx:xx"]],
        ),
    ];
    for (before, during, after) in cases {
        let redis = around_a_busy_script(server.port, before, during, after);
        let mine = around_a_busy_script(core.port(), before, during, after);
        assert_eq!(mine, redis, "core and Redis differ: {during:?}");
    }
}

/// The part of a reply that both servers must agree on: CLIENT INFO's `flags=`
/// and `watch=` fields, INFO's watch and expiry counters, or the whole reply.
fn comparable(reply: &str) -> String {
    if reply.contains("flags=") {
        return reply
            .split_whitespace()
            .filter(|f| f.starts_with("flags=") || f.starts_with("watch="))
            .collect::<Vec<_>>()
            .join(" ");
    }
    if reply.contains("expired_keys:") {
        return reply
            .lines()
            .filter(|l| {
                l.starts_with("expired_keys:")
                    || l.starts_with("watching_clients:")
                    || l.starts_with("total_watched_keys:")
            })
            .collect::<Vec<_>>()
            .join(" ");
    }
    reply.to_string()
}

/// Like [`replies`] with a third client, and `["sleep", ms]` steps.
fn watch_replies(port: u16, steps: &[(u8, &[&str])]) -> Vec<String> {
    let mut conns: Vec<RawRedis> = (0..3).map(|_| RawRedis::connect(port).unwrap()).collect();
    steps
        .iter()
        .map(|(who, words)| {
            if words[0] == "sleep" {
                std::thread::sleep(Duration::from_millis(words[1].parse().unwrap()));
                return String::new();
            }
            let reply = conns[*who as usize].call(&argv(words)).unwrap();
            comparable(&String::from_utf8_lossy(&reply))
        })
        .collect()
}

/// WATCH of a key already past its TTL (Redis marks it stale and deletes
/// nothing: its later deletion is no change), who is dirtied by a write or a
/// flush, and what CLIENT INFO and INFO report meanwhile. The core used to
/// delete the key at WATCH, never showed the `d` flag, and counted a key watched
/// by two clients twice.
#[test]
fn watched_stale_and_touched_keys_answer_like_redis() {
    let Some(server) = redislab_harness::testing::redis_with_debug_for_test() else {
        return;
    };
    let core = CoreListener::start(0).expect("core listener");
    const TX: u8 = 0;
    const ADMIN: u8 = 1;
    const OTHER: u8 = 2;
    let stale: &[(u8, &[&str])] = &[
        (ADMIN, &["SET", "w:s", "foo", "PX", "1"]),
        (ADMIN, &["sleep", "5"]),
    ];
    let exec: &[(u8, &[&str])] = &[(TX, &["MULTI"]), (TX, &["PING"]), (TX, &["EXEC"])];
    let mut steps: Vec<(u8, &[&str])> = vec![(ADMIN, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"])];
    // Watched stale, untouched: nothing deleted, EXEC runs.
    steps.extend_from_slice(stale);
    steps.extend_from_slice(&[
        (TX, &["WATCH", "w:s"]),
        (ADMIN, &["INFO"]),
        (TX, &["CLIENT", "INFO"]),
    ]);
    steps.extend_from_slice(exec);
    // Watched stale, then deleted by a lookup: still runs.
    steps.extend_from_slice(stale);
    steps.extend_from_slice(&[
        (TX, &["WATCH", "w:s"]),
        (ADMIN, &["EXISTS", "w:s"]),
        (ADMIN, &["INFO"]),
        (TX, &["CLIENT", "INFO"]),
    ]);
    steps.extend_from_slice(exec);
    // Watched stale, then written: the deletion clears the mark, the write dirties.
    steps.extend_from_slice(stale);
    steps.extend_from_slice(&[
        (TX, &["WATCH", "w:s", "w:other"]),
        (ADMIN, &["SET", "w:s", "bar"]),
        (TX, &["CLIENT", "INFO"]),
        (ADMIN, &["INFO"]),
        (TX, &["WATCH", "w:more"]),
        (TX, &["CLIENT", "INFO"]),
    ]);
    steps.extend_from_slice(exec);
    // Two clients on one key: one watched key; a write dirties both.
    steps.extend_from_slice(&[
        (TX, &["WATCH", "w:k"]),
        (OTHER, &["WATCH", "w:k", "w:j"]),
        (ADMIN, &["INFO"]),
        (ADMIN, &["SET", "w:k", "1"]),
        (OTHER, &["CLIENT", "INFO"]),
        (ADMIN, &["INFO"]),
        (OTHER, &["UNWATCH"]),
        (OTHER, &["CLIENT", "INFO"]),
    ]);
    steps.extend_from_slice(exec);
    // FLUSHDB dirties live watched keys but keeps them watched; a stale one is spared.
    steps.extend_from_slice(&[
        (TX, &["WATCH", "w:k", "w:nothing"]),
        (ADMIN, &["FLUSHDB"]),
        (TX, &["CLIENT", "INFO"]),
        (ADMIN, &["INFO"]),
    ]);
    steps.extend_from_slice(exec);
    steps.extend_from_slice(stale);
    steps.extend_from_slice(&[(TX, &["WATCH", "w:s"]), (ADMIN, &["FLUSHDB"])]);
    steps.extend_from_slice(exec);
    // SWAPDB: a missing watched key replaced by an expired one stays clean.
    steps.extend_from_slice(&[
        (TX, &["WATCH", "w:z"]),
        (ADMIN, &["SELECT", "1"]),
        (ADMIN, &["SET", "w:z", "foo", "PX", "1"]),
        (ADMIN, &["sleep", "5"]),
        (ADMIN, &["SWAPDB", "0", "1"]),
        (TX, &["CLIENT", "INFO"]),
    ]);
    steps.extend_from_slice(exec);
    steps.extend_from_slice(&[
        (ADMIN, &["FLUSHALL"]),
        (ADMIN, &["SELECT", "0"]),
        (ADMIN, &["DEBUG", "SET-ACTIVE-EXPIRE", "1"]),
    ]);
    let redis = watch_replies(server.port, &steps);
    let mine = watch_replies(core.port(), &steps);
    for ((r, c), (_, words)) in redis.iter().zip(&mine).zip(&steps) {
        assert_eq!(c, r, "core and Redis differ at {words:?}");
    }
}

/// A transaction runs at the time EXEC started (Redis's
/// `commandTimeSnapshot`, taken only for the outermost command): a key set
/// with PX 5 inside it is still there, its PTTL whole, after a 20 ms sleep
/// in the same queue, and gone for the next command. The core used the wall
/// clock for each queued command and answered nil and -2.
#[test]
fn a_transaction_sees_the_time_exec_started() {
    let Some(server) = redis_with_debug_for_test() else {
        return;
    };
    let core = CoreListener::start(0).expect("core listener");
    use Who::{Admin, Tx};
    let steps: &[(Who, &[&str])] = &[
        (Admin, &["DEL", "snaptx:k"]),
        (Tx, &["MULTI"]),
        (Tx, &["SET", "snaptx:k", "v", "PX", "5"]),
        (Tx, &["DEBUG", "SLEEP", "0.02"]),
        (Tx, &["GET", "snaptx:k"]),
        (Tx, &["PTTL", "snaptx:k"]),
        (Tx, &["PEXPIRE", "snaptx:k", "5"]),
        (Tx, &["DEBUG", "SLEEP", "0.02"]),
        (Tx, &["EXISTS", "snaptx:k"]),
        (Tx, &["EXEC"]),
        (Tx, &["GET", "snaptx:k"]),
    ];
    let redis = replies(server.port, steps);
    let mine = replies(core.port(), steps);
    compare(&redis, &mine, steps);
}
