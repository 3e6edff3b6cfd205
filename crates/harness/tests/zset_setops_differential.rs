//! Random sorted sets on a few keys, then random ZUNION/ZINTER/ZDIFF (and STORE
//! forms, ZINTERCARD) with weights, aggregates and malformed arguments: the core (in
//! process) and a real Redis must answer every command with identical bytes.
//!
//! Each STORE is followed by `ZRANGE <dst> 0 -1 WITHSCORES`, which shows the stored
//! scores (a listpack turns `-0` into `0`, a skiplist keeps it). AGGREGATE COUNT
//! (Redis 8.8) is left out, since 8.6.3 rejects it; the core's unit tests cover it.
//!
//! A second test makes some inputs plain sets (SADD: intsets, listpacks and
//! hashtables, each member scoring 1), sets the zset and set listpack thresholds
//! small for each round, checks the stored destination's OBJECT ENCODING, and
//! runs once in process (RESP2) and once through the core's listener after
//! HELLO 3 (RESP3: WITHSCORES answers nest `[member, score]`).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

const KEYS: &[&str] = &["a", "b", "c", "d", "nokey"];
const DESTS: &[&str] = &["out", "out", "a", "b", "nokey"];
const SCORES: &[&str] = &[
    "0",
    "-0",
    "1",
    "2",
    "3",
    "1.5",
    "-2.5",
    "0.1",
    "0.2",
    "100",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "5e-324",
    "9007199254740993",
];
const WEIGHTS: &[&str] = &[
    "1", "1", "2", "0", "-1", "0.5", "-0", "inf", "-inf", "+inf", "1e308", "3.3", "0x10",
];
const BAD_WEIGHTS: &[&str] = &["x", "nan", "", " 1", "1e", "--1"];
const AGGREGATES: &[&str] = &["SUM", "MIN", "MAX", "sum", "Max", "min"];
const BAD_AGGREGATES: &[&str] = &["AVG", "", "SUMX"];
const LIMITS: &[&str] = &["0", "1", "2", "3", "10", "-1", "x", "9223372036854775807"];
const NAMES: &[&str] = &[
    "ZUNION",
    "ZINTER",
    "ZDIFF",
    "ZUNIONSTORE",
    "ZINTERSTORE",
    "ZDIFFSTORE",
    "ZINTERCARD",
];

fn s(x: &str) -> Vec<u8> {
    x.as_bytes().to_vec()
}

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items.choose(rng).unwrap()
}

/// Members: a small common pool so sets overlap, plus one over 64 bytes (skiplist).
fn member(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_bool(0.02) {
        return vec![b'L'; 65];
    }
    let pool: &[&[u8]] = &[
        b"m0",
        b"m1",
        b"m2",
        b"m3",
        b"m4",
        b"m5",
        b"x",
        b"",
        b"\x00\xff",
    ];
    pool.choose(rng).unwrap().to_vec()
}

fn score(rng: &mut ChaCha8Rng) -> String {
    if rng.gen_bool(0.4) {
        format!("{}", rng.gen_range(-40..40) as f64 / 4.0)
    } else {
        pick(rng, SCORES).to_string()
    }
}

/// Commands that shape the inputs; now and then a big ZADD makes a skiplist.
fn setup_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let key = pick(rng, &KEYS[..4]);
    match rng.gen_range(0..10) {
        0 => vec![s("ZREM"), s(key), member(rng)],
        1 if rng.gen_bool(0.3) => vec![s("DEL"), s(key)],
        2 if rng.gen_bool(0.2) => {
            let mut argv = vec![s("ZADD"), s(key)];
            for i in 0..130 {
                argv.push(s(&score(rng)));
                argv.push(s(&format!("big{i}")));
            }
            argv
        }
        _ => {
            let mut argv = vec![s("ZADD"), s(key)];
            for _ in 0..rng.gen_range(1..=4) {
                argv.push(s(&score(rng)));
                argv.push(member(rng));
            }
            argv
        }
    }
}

/// The `numkeys` argument: usually right, sometimes off by one or malformed.
fn numkeys(rng: &mut ChaCha8Rng, n: usize) -> String {
    match rng.gen_range(0..20) {
        0 => pick(
            rng,
            &["0", "-1", "x", "", "99", "1.0", "18446744073709551616"],
        )
        .to_string(),
        1 => (n + 1).to_string(),
        2 if n > 1 => (n - 1).to_string(),
        _ => n.to_string(),
    }
}

fn weights_option(rng: &mut ChaCha8Rng, n: usize, argv: &mut Vec<Vec<u8>>) {
    argv.push(s(if rng.gen_bool(0.9) {
        "WEIGHTS"
    } else {
        "weights"
    }));
    let count = match rng.gen_range(0..12) {
        0 => n.saturating_sub(1),
        1 => n + 1,
        _ => n,
    };
    for _ in 0..count {
        let w = if rng.gen_bool(0.05) {
            pick(rng, BAD_WEIGHTS)
        } else {
            pick(rng, WEIGHTS)
        };
        argv.push(s(w));
    }
}

/// Options in random order, including ones the command does not take.
fn options(rng: &mut ChaCha8Rng, n: usize, argv: &mut Vec<Vec<u8>>) {
    for _ in 0..rng.gen_range(0..=3) {
        match rng.gen_range(0..12) {
            0..=2 => weights_option(rng, n, argv),
            3..=5 => {
                argv.push(s("AGGREGATE"));
                if rng.gen_bool(0.95) {
                    argv.push(s(pick(rng, AGGREGATES)));
                } else if rng.gen_bool(0.5) {
                    argv.push(s(pick(rng, BAD_AGGREGATES)));
                }
            }
            6..=8 => argv.push(s(if rng.gen_bool(0.9) {
                "WITHSCORES"
            } else {
                "withscores"
            })),
            9 | 10 => {
                argv.push(s("LIMIT"));
                if rng.gen_bool(0.95) {
                    argv.push(s(pick(rng, LIMITS)));
                }
            }
            _ => argv.push(s(pick(rng, &["FOO", "WITHSCORE", "LIMIT"]))),
        }
    }
}

/// One set operation; for a STORE form also the read-back of the destination.
fn set_op_commands(rng: &mut ChaCha8Rng) -> Vec<Vec<Vec<u8>>> {
    let name = pick(rng, NAMES);
    let store = name.ends_with("STORE");
    let dst = pick(rng, DESTS);
    let mut argv = vec![s(name)];
    if store {
        argv.push(s(dst));
    }
    let n = rng.gen_range(1..=4);
    argv.push(s(&numkeys(rng, n)));
    for _ in 0..n {
        argv.push(s(pick(rng, KEYS)));
    }
    options(rng, n, &mut argv);
    let mut commands = vec![argv];
    if store {
        commands.push(vec![s("ZRANGE"), s(dst), s("0"), s("-1"), s("WITHSCORES")]);
        if rng.gen_bool(0.3) {
            commands.push(vec![s("EXISTS"), s(dst)]);
        }
    }
    commands
}

fn show(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn zset_set_operations_reply_like_redis() {
    zset_set_operations_reply_like_redis_in("skiplist");
}

/// The same, with the core holding big sets in its B+tree layout.
#[test]
fn zset_set_operations_reply_like_redis_in_the_btree_layout() {
    zset_set_operations_reply_like_redis_in("btree");
}

fn zset_set_operations_reply_like_redis_in(layout: &str) {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    assert_eq!(
        core.cmd(&["CONFIG", "SET", "zset-layout", layout])
            .to_resp2(),
        b"+OK\r\n"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut sent, mut errors, mut empty) = (0, 0, 0);
    for round in 0..40 {
        redis.call(&[s("FLUSHALL")]).unwrap();
        core.cmd(&["FLUSHALL"]);
        let mut history: Vec<String> = Vec::new();
        for _ in 0..200 {
            let commands = if rng.gen_bool(0.35) {
                vec![setup_command(&mut rng)]
            } else {
                set_op_commands(&mut rng)
            };
            for argv in commands {
                history.push(show(&argv));
                let expected = redis.call(&argv).unwrap();
                let mut got = Vec::new();
                core.run(&argv)
                    .encode(&mut got, redislab_core::reply::Protocol::Resp2);
                sent += 1;
                errors += usize::from(expected.starts_with(b"-"));
                empty += usize::from(expected == b"*0\r\n" || expected == b":0\r\n");
                if got != expected {
                    let from = history.len().saturating_sub(20);
                    panic!(
                        "round {round}: core and redis differ on the last command:\n  {}\nredis: {:?}\ncore:  {:?}",
                        history[from..].join("\n  "),
                        String::from_utf8_lossy(&expected),
                        String::from_utf8_lossy(&got)
                    );
                }
            }
        }
    }
    eprintln!(
        "{sent} commands ({errors} errors, {empty} empty or zero), identical replies from core and redis"
    );
}

mod support_types;

use support_types::{argv as words, text, Core};

/// A plain set on one of the input keys: integers (an intset), words, or many
/// (a hashtable).
fn set_setup_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let key = pick(rng, &KEYS[..4]);
    let mut argv = vec![s("SADD"), s(key)];
    match rng.gen_range(0..4) {
        0 => {
            (0..rng.gen_range(1..6)).for_each(|_| argv.push(s(&rng.gen_range(-5..20).to_string())))
        }
        1 => (0..140).for_each(|i| argv.push(s(&format!("big{i}")))),
        _ => (0..rng.gen_range(1..5)).for_each(|_| argv.push(member(rng))),
    }
    argv
}

fn run_setops(redis: &mut RawRedis, core: &mut Core, seed: u64, rounds: usize) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sent = 0;
    for round in 0..rounds {
        let mut setup = vec![words(&["FLUSHALL"])];
        let z_entries = pick(&mut rng, &["0", "1", "3", "128"]);
        let z_value = pick(&mut rng, &["2", "64"]);
        setup.push(words(&[
            "CONFIG",
            "SET",
            "zset-max-ziplist-entries",
            z_entries,
        ]));
        setup.push(words(&[
            "CONFIG",
            "SET",
            "zset-max-listpack-value",
            z_value,
        ]));
        setup.push(words(&[
            "CONFIG",
            "SET",
            "set-max-intset-entries",
            pick(&mut rng, &["2", "512"]),
        ]));
        for a in setup {
            assert_eq!(text(&redis.call(&a).unwrap()), text(&core.call(&a)));
        }
        let mut history: Vec<String> = Vec::new();
        for _ in 0..120 {
            let mut commands = match rng.gen_range(0..20) {
                0..=3 => vec![setup_command(&mut rng)],
                4..=6 => vec![set_setup_command(&mut rng)],
                _ => set_op_commands(&mut rng),
            };
            if commands.len() > 1 {
                let dst = commands[1][1].clone();
                commands.push(vec![s("OBJECT"), s("ENCODING"), dst]);
            }
            for argv in commands {
                history.push(show(&argv));
                let expected = redis.call(&argv).unwrap();
                let got = core.call(&argv);
                sent += 1;
                if got != expected {
                    let from = history.len().saturating_sub(20);
                    panic!(
                        "round {round}: core and redis differ on the last command:\n  {}\nredis: {:?}\ncore:  {:?}",
                        history[from..].join("\n  "),
                        text(&expected),
                        text(&got)
                    );
                }
            }
        }
    }
    sent
}

#[test]
fn sets_as_inputs_with_configured_thresholds() {
    sets_as_inputs_with_configured_thresholds_in("skiplist");
}

/// The same, with the core holding big sets in its B+tree layout.
#[test]
fn sets_as_inputs_with_configured_thresholds_in_the_btree_layout() {
    sets_as_inputs_with_configured_thresholds_in("btree");
}

fn sets_as_inputs_with_configured_thresholds_in(layout: &str) {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Core::in_process();
    assert_eq!(
        core.call(&words(&["CONFIG", "SET", "zset-layout", layout])),
        b"+OK\r\n"
    );
    let sent = run_setops(&mut redis, &mut core, 12, 40);
    eprintln!("{sent} commands with sets as inputs (RESP2, in process), identical replies");
}

#[test]
fn set_operations_in_resp3_through_the_listener() {
    set_operations_in_resp3_through_the_listener_in("skiplist");
}

/// The same, with the core holding big sets in its B+tree layout.
#[test]
fn set_operations_in_resp3_through_the_listener_in_the_btree_layout() {
    set_operations_in_resp3_through_the_listener_in("btree");
}

fn set_operations_in_resp3_through_the_listener_in(layout: &str) {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Core::listener();
    assert_eq!(
        core.call(&words(&["CONFIG", "SET", "zset-layout", layout])),
        b"+OK\r\n"
    );
    let hello = words(&["HELLO", "3"]);
    redis.call(&hello).unwrap();
    core.call(&hello);
    let sent = run_setops(&mut redis, &mut core, 13, 8);
    eprintln!("{sent} commands (RESP3, through the listener), identical replies");
}
