//! Which commands set, keep or clear a TTL, on the core's listener beside a real
//! Redis — and, above all, that a key whose TTL was cleared is never deleted.
//!
//! Every scenario starts with a key that has a TTL (an hour, or 300 ms), runs one
//! command (or a MULTI, or a script) that overwrites, changes or re-expires it,
//! and compares the replies byte for byte. Then the test waits past the short
//! deadlines and past several active expire cycles and compares what is left of
//! every key: whether it exists, its value, and its TTL class (none / about N
//! seconds). A core that forgets to drop a cleared TTL from its active-expiry
//! bookkeeping loses these keys (the bug this test was written for).

use std::thread::sleep;
use std::time::Duration;

use redislab_harness::testing::{redis_for_test, RawRedis};
use redislab_listener::CoreListener;

fn argv(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// How the key starts: its command, with `{k}` for the key.
const STARTS: &[&[&str]] = &[
    &["SET", "{k}", "v", "EX", "3600"],
    &["SET", "{k}", "v", "PX", "300"],
    &["SET", "{k}", "12", "EX", "3600"],
];

/// The commands tried on a key with a TTL. `{k}` is the key, `{o}` another key
/// of the same scenario (a source or destination).
const STEPS: &[&[&str]] = &[
    &["SET", "{k}", "v2"],
    &["SET", "{k}", "v2", "XX"],
    &["SET", "{k}", "v2", "NX"],
    &["SET", "{k}", "v2", "GET"],
    &["SET", "{k}", "v2", "KEEPTTL"],
    &["SET", "{k}", "v2", "EX", "100"],
    &["SET", "{k}", "v2", "PX", "100000"],
    &["SET", "{k}", "v2", "EXAT", "4102444800"],
    &["SET", "{k}", "v2", "PXAT", "4102444800000"],
    &["SET", "{k}", "v2", "XX", "KEEPTTL", "GET"],
    &["SET", "{k}", "v2", "IFEQ", "v"],
    &["SET", "{k}", "v2", "IFEQ", "nope"],
    &["SET", "{k}", "v2", "IFNE", "nope"],
    &["SET", "{k}", "v2", "IFEQ", "v", "KEEPTTL"],
    &["SET", "{k}", "v2", "IFEQ", "v", "EX", "50"],
    &["SETEX", "{k}", "100", "v2"],
    &["PSETEX", "{k}", "100000", "v2"],
    &["SETNX", "{k}", "v2"],
    &["GETSET", "{k}", "v2"],
    &["MSET", "{k}", "v2", "{o}", "x"],
    &["MSETNX", "{k}", "v2", "{o}", "x"],
    &["MSETEX", "2", "{k}", "v2", "{o}", "x"],
    &["MSETEX", "2", "{k}", "v2", "{o}", "x", "KEEPTTL"],
    &["MSETEX", "2", "{k}", "v2", "{o}", "x", "EX", "100"],
    &["MSETEX", "1", "{k}", "v2", "XX"],
    &["GETEX", "{k}"],
    &["GETEX", "{k}", "PERSIST"],
    &["GETEX", "{k}", "EX", "100"],
    &["GETEX", "{k}", "PX", "100000"],
    &["GETEX", "{k}", "EXAT", "4102444800"],
    &["GETEX", "{k}", "PXAT", "4102444800000"],
    &["GETDEL", "{k}"],
    &["APPEND", "{k}", "x"],
    &["SETRANGE", "{k}", "1", "x"],
    &["INCR", "{k}"],
    &["INCRBY", "{k}", "5"],
    &["DECRBY", "{k}", "5"],
    &["INCRBYFLOAT", "{k}", "1.5"],
    &["SETBIT", "{k}", "3", "1"],
    &["BITFIELD", "{k}", "SET", "u8", "0", "65"],
    &["BITOP", "OR", "{k}", "{o}"],
    &["BITOP", "NOT", "{k}", "{k}"],
    &["PERSIST", "{k}"],
    &["EXPIRE", "{k}", "100"],
    &["EXPIRE", "{k}", "100", "NX"],
    &["EXPIRE", "{k}", "100", "XX"],
    &["EXPIRE", "{k}", "100", "GT"],
    &["EXPIRE", "{k}", "100", "LT"],
    &["EXPIRE", "{k}", "7200", "GT"],
    &["PEXPIRE", "{k}", "100000", "LT"],
    &["EXPIREAT", "{k}", "4102444800", "GT"],
    &["PEXPIREAT", "{k}", "4102444800000"],
    &["EXPIRE", "{k}", "0"],
    &["EXPIRE", "{k}", "-1"],
    &["DEL", "{k}"],
    &["DEL", "{k}", "SET", "{k}", "v2"],
    &["MULTI", "SET", "{k}", "v2", "EXEC"],
    &["MULTI", "GETSET", "{k}", "v2", "PERSIST", "{k}", "EXEC"],
    &["MULTI", "SET", "{k}", "v2", "KEEPTTL", "EXEC"],
    // The furthest deadline Redis accepts: EXPIRETIME rounds it without
    // wrapping (the core answered -9223372036854775), and several such keys
    // go through the active cycles that follow.
    &[
        "MULTI",
        "SET",
        "{k}",
        "v2",
        "PXAT",
        "9223372036854775807",
        "EXPIRETIME",
        "{k}",
        "PEXPIRETIME",
        "{k}",
        "EXEC",
    ],
    &[
        "EVAL",
        "return redis.call('SET', KEYS[1], 'v2')",
        "1",
        "{k}",
    ],
    &[
        "EVAL",
        "return redis.call('SET', KEYS[1], 'v2', 'KEEPTTL')",
        "1",
        "{k}",
    ],
    &[
        "EVAL",
        "return redis.call('MSET', KEYS[1], 'v2', KEYS[2], 'x')",
        "2",
        "{k}",
        "{o}",
    ],
    &["EVAL", "return redis.call('PERSIST', KEYS[1])", "1", "{k}"],
];

/// Turns one step into the commands it sends: `MULTI a b c EXEC` is a transaction
/// of the commands between (split at each command name), `DEL k SET k v` two
/// commands.
fn commands(step: &[&str]) -> Vec<Vec<String>> {
    const NAMES: &[&str] = &[
        "SET",
        "GETSET",
        "PERSIST",
        "EXPIRETIME",
        "PEXPIRETIME",
        "EXEC",
    ];
    if step[0] == "MULTI" || (step[0] == "DEL" && step.len() > 2) {
        let mut out: Vec<Vec<String>> = Vec::new();
        for word in step {
            if out.is_empty() || NAMES.contains(word) || *word == "MULTI" {
                out.push(vec![word.to_string()]);
            } else {
                out.last_mut().unwrap().push(word.to_string());
            }
        }
        return out;
    }
    vec![step.iter().map(|s| s.to_string()).collect()]
}

fn fill(cmd: &[String], k: &str, o: &str) -> Vec<Vec<u8>> {
    cmd.iter()
        .map(|w| w.replace("{k}", k).replace("{o}", o).into_bytes())
        .collect()
}

/// What is left of `key`: absent, or its type, value (strings) and TTL class.
fn state(conn: &mut RawRedis, key: &str) -> String {
    let reply = |c: &mut RawRedis, parts: &[&str]| {
        String::from_utf8_lossy(&c.call(&argv(parts)).unwrap()).into_owned()
    };
    let kind = reply(conn, &["TYPE", key]);
    if kind == "+none\r\n" {
        return "absent".into();
    }
    let value = if kind == "+string\r\n" {
        reply(conn, &["GET", key])
    } else {
        String::new()
    };
    let ttl = reply(conn, &["TTL", key]);
    // TTLs in seconds move while the test runs: keep the sign and the rough size.
    let ttl_class = match ttl.trim_start_matches(':').trim().parse::<i64>() {
        Ok(-1) => "no ttl".to_string(),
        Ok(n) if n > 0 => format!("ttl ~{}", (n + 50) / 100 * 100),
        Ok(n) => format!("ttl {n}"),
        Err(_) => ttl,
    };
    format!("{} {} {}", kind.trim(), value.trim(), ttl_class)
}

#[test]
fn a_cleared_ttl_never_deletes_the_key_and_every_ttl_rule_matches_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let listener = CoreListener::start(0).expect("core listener");
    let mut redis = RawRedis::connect(server.port).unwrap();
    let mut core = RawRedis::connect(listener.port()).unwrap();
    let mut keys = Vec::new();
    let mut compared = 0;
    for (si, start) in STARTS.iter().enumerate() {
        for (ti, step) in STEPS.iter().enumerate() {
            let k = format!("ttl:{si}:{ti}");
            let o = format!("ttl:{si}:{ti}:other");
            let mut sent = vec![fill(
                &start.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                &k,
                &o,
            )];
            sent.push(argv(&["SET", &o, "\x0f", "PX", "300"]));
            for cmd in commands(step) {
                sent.push(fill(&cmd, &k, &o));
            }
            for cmd in &sent {
                let expected = redis.call(cmd).unwrap();
                let got = core.call(cmd).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&expected),
                    "start {start:?}, step {step:?}: {:?}",
                    cmd.iter()
                        .map(|a| String::from_utf8_lossy(a))
                        .collect::<Vec<_>>()
                );
                compared += 1;
            }
            keys.push((format!("{start:?} then {step:?}"), k, o));
        }
    }
    // Past the 300 ms deadlines, and past several 100 ms active expire cycles.
    sleep(Duration::from_millis(900));
    let mut lost = 0;
    for (what, k, o) in &keys {
        for key in [k, o] {
            let expected = state(&mut redis, key);
            let got = state(&mut core, key);
            if expected != "absent" && got == "absent" {
                lost += 1;
            }
            assert_eq!(got, expected, "{what}: key {key} afterwards");
        }
    }
    eprintln!(
        "{} scenarios, {compared} commands identical; {} keys compared after the deadlines, {lost} lost",
        keys.len(),
        keys.len() * 2
    );
    assert_eq!(lost, 0);
}
