//! The same random sequences of sorted-set commands go to the core (in process) and
//! to a real Redis; every reply must be byte-identical on the wire.

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

fn random_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let key = if rng.gen_bool(0.9) { "z" } else { "other" };
    let mut argv: Vec<Vec<u8>> = Vec::new();
    let s = |x: &str| x.as_bytes().to_vec();
    match rng.gen_range(0..14) {
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
        }
        10 => {
            let by_score = rng.gen_bool(0.5);
            // BYLEX is only defined when all scores are equal: the "lex" key.
            argv.extend([s("ZRANGE"), s(if by_score { key } else { "lex" })]);
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
        _ => {
            let name = *["DEL", "EXISTS", "TYPE"].choose(rng).unwrap();
            argv.extend([s(name), s(key)]);
        }
    }
    argv
}

#[test]
fn zset_commands_reply_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut sent = 0;
    for round in 0..40 {
        redis.call(&[b"FLUSHALL".to_vec()]).unwrap();
        core.call(&["FLUSHALL"]);
        let mut history: Vec<String> = Vec::new();
        for _ in 0..250 {
            let argv = random_command(&mut rng);
            history.push(
                argv.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            let expected = redis.call(&argv).unwrap();
            let mut got = Vec::new();
            core.execute(&argv).encode(&mut got);
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
