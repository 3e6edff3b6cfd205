//! The same random sequences of sorted-set commands go to the core (in process) and
//! to a real Redis; every reply must be byte-identical on the wire. Each test
//! runs twice: with the core's default `zset-layout skiplist` (Redis's own
//! structure) and with `zset-layout btree` (the core's B+tree layout), against
//! the same Redis.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

const SCORES: &[&str] = &[
    "0",
    "-0",
    "1",
    "1.5",
    "100",
    "90",
    "-3",
    "inf",
    "-inf",
    "+inf",
    "1e300",
    "1e-300",
    "9007199254740993",
    "0.1",
    "500000008209999999",
    "nan",
    "abc",
    "",
    " 1",
    "1e400",
    "0x10",
    "1.",
    ".5",
    "5e-324",
    "-1e-320",
    "infinity",
    "INF",
    "-Infinity",
    "1e",
    "+1",
    "00012",
    "1_000",
    "3.14159265358979323846",
    "-0.0",
];
const MEMBERS: &[&[u8]] = &[
    b"a",
    b"b",
    b"c",
    b"zed",
    b"amy",
    b"Bob",
    b"kim",
    "An".as_bytes(),
    "Ánh".as_bytes(),
    "Đức".as_bytes(),
    b"\x00\xff",
    b"",
    b"laravel",
    b"lara",
    b"laravel livewire",
    b"a\r\nb",
];
const SCORE_BOUNDS: &[&str] = &[
    "-inf", "+inf", "(1", "1", "(100", "100", "0", "(0", "-3", "inf", "(inf", "x", "(", "nan",
];
const LEX_BOUNDS: &[&str] = &[
    "-",
    "+",
    "[a",
    "(a",
    "[lara",
    "(lara\u{ff}",
    "[z",
    "(Bob",
    "a",
    "[",
    "(",
];
const RANKS: &[&str] = &["0", "1", "-1", "2", "-2", "10", "-100", "x", "3"];

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items.choose(rng).unwrap()
}

fn random_score(rng: &mut ChaCha8Rng) -> String {
    if rng.gen_bool(0.3) {
        format!("{}", rng.gen_range(-1000..1000) as f64 / 8.0)
    } else {
        pick(rng, SCORES).to_string()
    }
}

fn member(rng: &mut ChaCha8Rng) -> Vec<u8> {
    MEMBERS.choose(rng).unwrap().to_vec()
}

/// `big` rounds preload "z" past the listpack limit, so it is a skiplist; lex
/// ranges over its mixed scores are undefined there (the answer depends on the
/// skiplist's random levels), so lex commands then go to the all-zero "lex" key.
fn random_command(rng: &mut ChaCha8Rng, big: bool) -> Vec<Vec<u8>> {
    let key = if rng.gen_bool(0.9) { "z" } else { "other" };
    let lex_key = if big { "lex" } else { key };
    let mut argv: Vec<Vec<u8>> = Vec::new();
    let s = |x: &str| x.as_bytes().to_vec();
    match rng.gen_range(0..21) {
        0..=2 => {
            argv.push(s("ZADD"));
            argv.push(s(key));
            for flag in ["NX", "XX", "GT", "LT", "CH", "INCR"] {
                if rng.gen_bool(0.12) {
                    argv.push(s(flag));
                }
            }
            for _ in 0..rng.gen_range(1..=3) {
                argv.push(s(&random_score(rng)));
                argv.push(member(rng));
            }
        }
        3 => argv.extend([s("ZINCRBY"), s(key), s(&random_score(rng)), member(rng)]),
        4 => argv.extend([s("ZSCORE"), s(key), member(rng)]),
        5 => argv.extend([s("ZCARD"), s(key)]),
        6 => {
            argv.extend([s("ZREM"), s(key), member(rng)]);
            if rng.gen_bool(0.3) {
                argv.push(member(rng));
            }
        }
        7 => {
            argv.extend([
                s(if rng.gen_bool(0.5) {
                    "ZRANK"
                } else {
                    "ZREVRANK"
                }),
                s(key),
                member(rng),
            ]);
            if rng.gen_bool(0.3) {
                argv.push(s(if rng.gen_bool(0.9) {
                    "WITHSCORE"
                } else {
                    "WITHSCORES"
                }));
            }
        }
        8 => argv.extend([
            s("ZCOUNT"),
            s(key),
            s(pick(rng, SCORE_BOUNDS)),
            s(pick(rng, SCORE_BOUNDS)),
        ]),
        9 => {
            argv.extend([
                s("ZRANGE"),
                s(key),
                s(pick(rng, RANKS)),
                s(pick(rng, RANKS)),
            ]);
            for opt in ["REV", "WITHSCORES"] {
                if rng.gen_bool(0.4) {
                    argv.push(s(opt));
                }
            }
            // Now and then an option again or a second range kind: Redis
            // takes each once and answers a syntax error before reading the
            // range (the core accepted REV twice).
            if rng.gen_bool(0.1) {
                argv.push(s(pick(rng, &["REV", "WITHSCORES", "BYSCORE", "BYLEX"])));
            }
        }
        10 => {
            let by_score = rng.gen_bool(0.5);
            // With mixed scores BYLEX is undefined, but on a small (listpack) set Redis
            // answers by a linear scan that the core reproduces: test both keys.
            argv.extend([s("ZRANGE"), s(if by_score { key } else { lex_key })]);
            let bounds = if by_score { SCORE_BOUNDS } else { LEX_BOUNDS };
            argv.push(s(pick(rng, bounds)));
            argv.push(s(pick(rng, bounds)));
            argv.push(s(if by_score { "BYSCORE" } else { "BYLEX" }));
            if rng.gen_bool(0.4) {
                argv.push(s("REV"));
            }
            if rng.gen_bool(0.3) {
                argv.push(s("WITHSCORES"));
            }
            if rng.gen_bool(0.4) {
                argv.extend([s("LIMIT"), s(pick(rng, RANKS)), s(pick(rng, RANKS))]);
            }
        }
        11 => {
            let name = *["ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]
                .choose(rng)
                .unwrap();
            let bounds = if name == "ZREVRANGE" {
                RANKS
            } else {
                SCORE_BOUNDS
            };
            argv.extend([s(name), s(key), s(pick(rng, bounds)), s(pick(rng, bounds))]);
            if rng.gen_bool(0.5) {
                argv.push(s("WITHSCORES"));
            }
        }
        12 => {
            // Lex ranges are only defined when every score is equal: use a key whose
            // members are always added at score 0.
            if rng.gen_bool(0.5) {
                argv.extend([s("ZADD"), s("lex"), s("0"), member(rng)]);
            } else {
                let name = *["ZRANGEBYLEX", "ZREVRANGEBYLEX"].choose(rng).unwrap();
                argv.extend([
                    s(name),
                    s("lex"),
                    s(pick(rng, LEX_BOUNDS)),
                    s(pick(rng, LEX_BOUNDS)),
                ]);
            }
        }
        14 => {
            argv.extend([s("ZMSCORE"), s(key), member(rng)]);
            if rng.gen_bool(0.5) {
                argv.push(member(rng));
            }
        }
        15 => {
            let k = if rng.gen_bool(0.5) { "lex" } else { lex_key };
            argv.extend([
                s("ZLEXCOUNT"),
                s(k),
                s(pick(rng, LEX_BOUNDS)),
                s(pick(rng, LEX_BOUNDS)),
            ]);
        }
        16 => {
            let name = *["ZPOPMIN", "ZPOPMAX", "BZPOPMIN", "BZPOPMAX"]
                .choose(rng)
                .unwrap();
            argv.extend([s(name), s(key)]);
            if name.starts_with('B') {
                // A short timeout: on an empty key Redis waits 10 ms, the in-process
                // core cannot block and answers the same null array at once.
                argv.push(s(["0.01", "-1", "x"].choose(rng).unwrap()));
            } else if rng.gen_bool(0.5) {
                argv.push(s(["0", "1", "2", "5", "-1", "x"].choose(rng).unwrap()));
            }
        }
        17 => {
            let (name, bounds) = *[
                ("ZREMRANGEBYRANK", RANKS),
                ("ZREMRANGEBYSCORE", SCORE_BOUNDS),
                ("ZREMRANGEBYLEX", LEX_BOUNDS),
            ]
            .choose(rng)
            .unwrap();
            let k = if name == "ZREMRANGEBYLEX" {
                lex_key
            } else {
                key
            };
            argv.extend([s(name), s(k), s(pick(rng, bounds)), s(pick(rng, bounds))]);
        }
        18 => {
            let by = *["", "BYSCORE", "BYLEX"].choose(rng).unwrap();
            let bounds = match by {
                "BYSCORE" => SCORE_BOUNDS,
                "BYLEX" => LEX_BOUNDS,
                _ => RANKS,
            };
            let k = if by == "BYLEX" { lex_key } else { key };
            argv.extend([
                s("ZRANGESTORE"),
                s("dst"),
                s(k),
                s(pick(rng, bounds)),
                s(pick(rng, bounds)),
            ]);
            if !by.is_empty() {
                argv.push(s(by));
            }
            if rng.gen_bool(0.3) {
                argv.push(s("REV"));
            }
            if rng.gen_bool(0.3) {
                argv.extend([s("LIMIT"), s(pick(rng, RANKS)), s(pick(rng, RANKS))]);
            }
            if rng.gen_bool(0.1) {
                argv.push(s("WITHSCORES"));
            }
        }
        19 => argv.extend([s("ZRANGE"), s("dst"), s("0"), s("-1"), s("WITHSCORES")]),
        20 => {
            // Only the deterministic shapes of ZRANDMEMBER: a count that covers the
            // whole set, zero, a missing key, and the argument errors.
            argv.extend([s("ZRANDMEMBER"), s(["z", "missing"].choose(rng).unwrap())]);
            if rng.gen_bool(0.8) {
                argv.push(s([
                    "0",
                    "1000",
                    "x",
                    "-9223372036854775808",
                    "4611686018427387904",
                ]
                .choose(rng)
                .unwrap()));
                if rng.gen_bool(0.5) {
                    argv.push(s(["WITHSCORES", "withscores", "WITHVALUES"]
                        .choose(rng)
                        .unwrap()));
                }
            } else {
                argv[1] = s("missing");
            }
        }
        _ => {
            let name = *["DEL", "EXISTS", "TYPE"].choose(rng).unwrap();
            argv.extend([s(name), s(key)]);
        }
    }
    argv
}

#[test]
fn zset_commands_reply_like_redis() {
    zset_commands_reply_like_redis_in("skiplist");
}

/// The same, with the core holding big sets in its B+tree layout.
#[test]
fn zset_commands_reply_like_redis_in_the_btree_layout() {
    zset_commands_reply_like_redis_in("btree");
}

fn zset_commands_reply_like_redis_in(layout: &str) {
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
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut sent = 0;
    for round in 0..60 {
        redis.call(&[b"FLUSHALL".to_vec()]).unwrap();
        core.cmd(&["FLUSHALL"]);
        let big = round % 2 == 1;
        if big {
            let mut preload: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), b"z".to_vec()];
            for i in 0..150 {
                preload.push(format!("{}", i % 7).into_bytes());
                preload.push(format!("m{i:03}").into_bytes());
            }
            redis.call(&preload).unwrap();
            core.run(&preload);
        }
        let mut history: Vec<String> = Vec::new();
        for _ in 0..250 {
            let argv = random_command(&mut rng, big);
            history.push(
                argv.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            let expected = redis.call(&argv).unwrap();
            let mut got = Vec::new();
            core.run(&argv)
                .encode(&mut got, redislab_core::reply::Protocol::Resp2);
            sent += 1;
            if got != expected {
                let tail = history
                    .iter()
                    .rev()
                    .take(15)
                    .rev()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n  ");
                panic!(
                    "round {round}: core and redis differ on the last command:\n  {tail}\nredis: {:?}\ncore:  {:?}",
                    String::from_utf8_lossy(&expected),
                    String::from_utf8_lossy(&got)
                );
            }
        }
    }
    eprintln!("{sent} commands, identical replies from core and redis");
}

// ----- configured thresholds, ZMPOP/BZMPOP, RESP3 ------------------------------

mod support_types;

use support_types::{argv as words, show, text, Core};

/// The commands above plus ZMPOP/BZMPOP, OBJECT ENCODING and (for a listpack,
/// whose size is deterministic) MEMORY USAGE.
fn command_with_mpop(rng: &mut ChaCha8Rng, redis: &mut RawRedis) -> Vec<Vec<u8>> {
    let s = |x: &str| x.as_bytes().to_vec();
    match rng.gen_range(0..12) {
        0 => {
            let blocking = rng.gen_bool(0.3);
            let mut a = vec![s(if blocking { "BZMPOP" } else { "ZMPOP" })];
            if blocking {
                a.push(s(pick(rng, &["0.01", "0.01", "-1", "x"])));
            }
            let n = rng.gen_range(1..=3);
            a.push(s(&match rng.gen_range(0..12) {
                0 => pick(rng, &["0", "-1", "x", "9223372036854775807"]).to_string(),
                1 => (n + 1).to_string(),
                _ => n.to_string(),
            }));
            for _ in 0..n {
                a.push(s(pick(rng, &["z", "other", "missing", "lex"])));
            }
            a.push(s(pick(rng, &["MIN", "MAX", "min", "max", "MID"])));
            if rng.gen_bool(0.5) {
                a.push(s("COUNT"));
                a.push(s(pick(
                    rng,
                    &["1", "2", "10", "0", "-1", "x", "9223372036854775807"],
                )));
            }
            if rng.gen_bool(0.05) {
                a.push(s("COUNT"));
            }
            a
        }
        1 => vec![
            s("OBJECT"),
            s("ENCODING"),
            s(pick(rng, &["z", "other", "lex", "dst"])),
        ],
        2 => {
            let key = pick(rng, &["z", "other", "lex", "dst"]);
            let enc = redis.call(&[s("OBJECT"), s("ENCODING"), s(key)]).unwrap();
            if enc.ends_with(b"skiplist\r\n") {
                vec![s("ZCARD"), s(key)]
            } else {
                vec![s("MEMORY"), s("USAGE"), s(key)]
            }
        }
        _ => random_command(rng, true),
    }
}

fn run_zset_rounds(
    redis: &mut RawRedis,
    core: &mut Core,
    seed: u64,
    rounds: usize,
    per_round: usize,
) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sent = 0;
    for round in 0..rounds {
        let (e, v) = if rng.gen_bool(0.5) {
            ("zset-max-ziplist-entries", "zset-max-ziplist-value")
        } else {
            ("zset-max-listpack-entries", "zset-max-listpack-value")
        };
        for a in [
            words(&["FLUSHALL"]),
            words(&["CONFIG", "SET", e, pick(&mut rng, &["0", "1", "3", "128"])]),
            words(&["CONFIG", "SET", v, pick(&mut rng, &["1", "3", "64"])]),
        ] {
            assert_eq!(text(&redis.call(&a).unwrap()), text(&core.call(&a)));
        }
        let mut history: Vec<String> = Vec::new();
        for _ in 0..per_round {
            let a = command_with_mpop(&mut rng, redis);
            history.push(show(&a));
            let expected = redis.call(&a).unwrap();
            let got = core.call(&a);
            sent += 1;
            if got != expected {
                let from = history.len().saturating_sub(15);
                panic!(
                    "round {round}: core and redis differ on the last command:\n  {}\nredis: {:?}\ncore:  {:?}",
                    history[from..].join("\n  "),
                    text(&expected),
                    text(&got)
                );
            }
        }
    }
    sent
}

#[test]
fn zset_commands_with_configured_thresholds_and_mpop() {
    zset_commands_with_configured_thresholds_and_mpop_in("skiplist");
}

/// The same, with the core holding big sets in its B+tree layout.
#[test]
fn zset_commands_with_configured_thresholds_and_mpop_in_the_btree_layout() {
    zset_commands_with_configured_thresholds_and_mpop_in("btree");
}

fn zset_commands_with_configured_thresholds_and_mpop_in(layout: &str) {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Core::in_process();
    assert_eq!(
        core.call(&words(&["CONFIG", "SET", "zset-layout", layout])),
        b"+OK\r\n"
    );
    let sent = run_zset_rounds(&mut redis, &mut core, 31, 40, 200);
    eprintln!("{sent} zset commands (RESP2, in process), identical replies");
}

#[test]
fn zset_replies_in_resp3_through_the_listener() {
    zset_replies_in_resp3_through_the_listener_in("skiplist");
}

/// The same, with the core holding big sets in its B+tree layout.
#[test]
fn zset_replies_in_resp3_through_the_listener_in_the_btree_layout() {
    zset_replies_in_resp3_through_the_listener_in("btree");
}

fn zset_replies_in_resp3_through_the_listener_in(layout: &str) {
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
    let sent = run_zset_rounds(&mut redis, &mut core, 32, 6, 120);
    eprintln!("{sent} zset commands (RESP3, through the listener), identical replies");
}

/// Flags, arity and key positions of every hash, set, sorted-set and geo
/// command, as COMMAND INFO reports them, against Redis's own table.
#[test]
fn command_info_of_the_type_families_matches_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Core::in_process();
    let names: Vec<&str> = redislab_core::Server::command_names()
        .filter(|n| {
            let group = ["h", "s", "z", "bz", "geo"];
            group.iter().any(|g| n.starts_with(g))
                && ![
                    "hello",
                    "select",
                    "shutdown",
                    "save",
                    "set",
                    "setex",
                    "setnx",
                    "setrange",
                    "setbit",
                    "strlen",
                    "substr",
                    "sync",
                    "slowlog",
                    "script",
                    "subscribe",
                    "sunsubscribe",
                    "ssubscribe",
                    "spublish",
                    "swapdb",
                    "sort",
                    "sort_ro",
                    "scan",
                    "sscan",
                    "hscan",
                    "zscan",
                ]
                .contains(n)
        })
        .collect();
    assert!(names.len() >= 87, "{names:?}");
    for name in &names {
        let a = words(&["COMMAND", "INFO", name]);
        let (e, g) = (
            support_types::parse_all(&redis.call(&a).unwrap()),
            support_types::parse_all(&core.call(&a)),
        );
        // name, arity, flags, first key, last key, step, ACL categories.
        let head = |r: &support_types::Resp| match r {
            support_types::Resp::Agg(_, Some(items)) => match &items[0] {
                support_types::Resp::Agg(_, Some(info)) => {
                    let mut v = info[..7].to_vec();
                    if let support_types::Resp::Agg(k, Some(flags)) = &v[2] {
                        let mut f = flags.clone();
                        f.sort();
                        v[2] = support_types::Resp::Agg(*k, Some(f));
                    }
                    v
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert_eq!(head(&e), head(&g), "COMMAND INFO {name}");
    }
    eprintln!("{} commands: COMMAND INFO agrees", names.len());
}

/// A blocked BZMPOP (and BZPOPMIN) is served by a ZADD from another client,
/// through the listener as on Redis: the same reply bytes, in both protocols.
#[test]
fn blocked_pops_are_served_by_a_later_zadd() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let listener = redislab_listener::CoreListener::start(0).expect("core listener");
    for (port, who) in [(server.port, "redis"), (listener.port(), "core")] {
        let _ = who;
        for hello in ["2", "3"] {
            let mut waiting = RawRedis::connect(port).unwrap();
            let mut writer = RawRedis::connect(port).unwrap();
            waiting.call(&words(&["HELLO", hello])).unwrap();
            writer.call(&words(&["DEL", "q1", "q2"])).unwrap();
            let blocked = std::thread::spawn(move || {
                let a = waiting
                    .call(&words(&[
                        "BZMPOP", "2", "2", "q1", "q2", "MAX", "COUNT", "5",
                    ]))
                    .unwrap();
                let b = waiting
                    .call(&words(&["BZPOPMIN", "q1", "q2", "2"]))
                    .unwrap();
                (a, b)
            });
            std::thread::sleep(std::time::Duration::from_millis(100));
            writer
                .call(&words(&["ZADD", "q2", "1", "a", "2", "b", "3", "c"]))
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
            writer.call(&words(&["ZADD", "q1", "7", "z"])).unwrap();
            let (a, b) = blocked.join().unwrap();
            let expected_a: &[u8] = if hello == "2" {
                b"*2\r\n$2\r\nq2\r\n*3\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
            } else {
                b"*2\r\n$2\r\nq2\r\n*3\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\na\r\n,1\r\n"
            };
            let expected_b: &[u8] = if hello == "2" {
                b"*3\r\n$2\r\nq1\r\n$1\r\nz\r\n$1\r\n7\r\n"
            } else {
                b"*3\r\n$2\r\nq1\r\n$1\r\nz\r\n,7\r\n"
            };
            assert_eq!(text(&a), text(expected_a), "{who} RESP{hello}");
            assert_eq!(text(&b), text(expected_b), "{who} RESP{hello}");
        }
    }
}
