//! The same random sequences of bitmap and bitfield commands go to the core (in
//! process) and to a real Redis 8.6.3; every reply must be byte-identical on the
//! wire: SETBIT, GETBIT, BITCOUNT and BITPOS with BYTE/BIT ranges, BITOP with every
//! operation (AND, OR, XOR, NOT and 8.2's DIFF, DIFF1, ANDOR, ONE), BITFIELD and
//! BITFIELD_RO with every width, `#` offsets and overflow mode, and malformed,
//! negative and huge arguments. GET, STRLEN, MEMORY USAGE, OBJECT ENCODING and
//! TYPE look at the values afterwards. Valid write offsets stay below a few
//! megabits (a write at the 512 MB limit allocates 512 MB on each side); huge
//! offsets are sent where they are errors or reads.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

const KEYS: &[&str] = &["b", "c", "d", "e", "s", "z", "missing"];

/// Offsets that are errors, or that only reads may use.
const BAD_OFFSETS: &[&str] = &[
    "-1",
    "x",
    "",
    "1.5",
    "+5",
    "05",
    " 1",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
];
const READ_OFFSETS: &[&str] = &["4294967295", "4294967288", "536870911", "1000000000"];
const BIT_VALUES: &[&str] = &["0", "1", "1", "0", "2", "-1", "x", "", "01", "1.0"];
const UNITS: &[&str] = &["BIT", "BYTE", "bit", "byte", "bits", "x"];
const OPS: &[&str] = &[
    "AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE", "and", "diff1", "one", "nand", "",
];
const BAD_TYPES: &[&str] = &[
    "u64", "i65", "i0", "u0", "x", "", "u", "I8", "U8", "u-1", "i08",
];
const VALUES: &[&str] = &["", "x", "foobar", "\u{7f}", "12345", "-7", "\u{ff}\u{0}ab"];

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items.choose(rng).unwrap()
}

/// A valid write offset: mostly small, sometimes far.
fn offset(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..20) {
        0 => rng.gen_range(0..4_000_000u64).to_string(),
        1..=3 => rng.gen_range(0..100_000u64).to_string(),
        _ => rng.gen_range(0..600u64).to_string(),
    }
}

fn any_offset(rng: &mut ChaCha8Rng, reads: bool) -> String {
    match rng.gen_range(0..10) {
        0 => pick(rng, BAD_OFFSETS).into(),
        1 if reads => pick(rng, READ_OFFSETS).into(),
        _ => offset(rng),
    }
}

fn range_bound(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..12) {
        0 => pick(
            rng,
            &["x", "9223372036854775807", "-9223372036854775808", ""],
        )
        .into(),
        1..=4 => rng.gen_range(-100i64..0).to_string(),
        5 => rng.gen_range(0..100_000i64).to_string(),
        _ => rng.gen_range(0..200i64).to_string(),
    }
}

fn field_type(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..15) {
        0 => pick(rng, BAD_TYPES).into(),
        1..=7 => format!("u{}", rng.gen_range(1..=63)),
        _ => format!("i{}", rng.gen_range(1..=64)),
    }
}

fn field_offset(rng: &mut ChaCha8Rng, write: bool) -> String {
    match rng.gen_range(0..14) {
        0 => pick(rng, &["#-1", "#x", "##1", "#", "#536870912", "-5", "x"]).into(),
        1 if !write => pick(rng, &["#67108863", "4294967295", "#9999999"]).into(),
        2..=5 => format!("#{}", rng.gen_range(0..200)),
        6 => rng.gen_range(0..100_000u64).to_string(),
        _ => rng.gen_range(0..1500u64).to_string(),
    }
}

fn field_value(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..12) {
        0 => pick(
            rng,
            &[
                "9223372036854775807",
                "-9223372036854775808",
                "x",
                "1.5",
                "",
                "18446744073709551615",
            ],
        )
        .into(),
        1..=2 => rng.gen::<i64>().to_string(),
        3..=4 => rng.gen_range(-300i64..300).to_string(),
        5 => (rng.gen::<i64>() >> rng.gen_range(0..63)).to_string(),
        _ => rng.gen_range(-20i64..140).to_string(),
    }
}

fn bitfield(rng: &mut ChaCha8Rng, key: String, read_only: bool) -> Vec<String> {
    let mut argv = vec![
        if read_only { "BITFIELD_RO" } else { "BITFIELD" }.into(),
        key,
    ];
    for _ in 0..rng.gen_range(0..=4) {
        match rng.gen_range(0..12) {
            0..=1 => {
                argv.push(pick(rng, &["OVERFLOW", "overflow"]).into());
                argv.push(
                    pick(rng, &["WRAP", "SAT", "FAIL", "sat", "fail", "wrap", "nope"]).into(),
                );
            }
            2..=4 => {
                argv.push(pick(rng, &["GET", "get"]).into());
                argv.push(field_type(rng));
                argv.push(field_offset(rng, false));
            }
            5 => argv.push(pick(rng, &["GET", "SET", "INCRBY", "FOO"]).into()),
            _ => {
                let write = !read_only || rng.gen_bool(0.3);
                let name = if write {
                    pick(rng, &["SET", "INCRBY", "incrby", "set"])
                } else {
                    "GET"
                };
                argv.push(name.into());
                argv.push(field_type(rng));
                argv.push(field_offset(rng, write));
                if write {
                    argv.push(field_value(rng));
                }
            }
        }
    }
    argv
}

fn random_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let key = pick(rng, KEYS).to_string();
    let mut argv: Vec<String> = Vec::new();
    match rng.gen_range(0..32) {
        0..=5 => argv.extend([
            "SETBIT".into(),
            key,
            if rng.gen_bool(0.1) {
                pick(rng, BAD_OFFSETS).into()
            } else {
                offset(rng)
            },
            pick(rng, BIT_VALUES).into(),
        ]),
        6..=7 => argv.extend(["GETBIT".into(), key, any_offset(rng, true)]),
        8..=10 => {
            argv.extend(["BITCOUNT".into(), key]);
            let n = rng.gen_range(0..=4);
            for i in 0..n {
                if i < 2 {
                    argv.push(range_bound(rng));
                } else {
                    argv.push(pick(rng, UNITS).into());
                }
            }
        }
        11..=13 => {
            argv.extend(["BITPOS".into(), key]);
            argv.push(pick(rng, &["0", "1", "1", "0", "2", "x", "-1"]).into());
            let n = rng.gen_range(0..=4);
            for i in 0..n {
                if i < 2 {
                    argv.push(range_bound(rng));
                } else {
                    argv.push(pick(rng, UNITS).into());
                }
            }
        }
        14..=17 => {
            let op = pick(rng, OPS);
            argv.extend(["BITOP".into(), op.into(), pick(rng, KEYS).into()]);
            let n = if op.eq_ignore_ascii_case("not") && rng.gen_bool(0.8) {
                1
            } else {
                rng.gen_range(0..=4)
            };
            for _ in 0..n {
                argv.push(pick(rng, KEYS).into());
            }
        }
        18..=22 => argv = bitfield(rng, key, false),
        23 => argv = bitfield(rng, key, true),
        24 => argv.extend(["SET".into(), key, pick(rng, VALUES).into()]),
        25 => argv.extend(["APPEND".into(), key, pick(rng, VALUES).into()]),
        26 => argv.extend([pick(rng, &["GET", "STRLEN", "TYPE", "DEL"]).into(), key]),
        27 => argv.extend(["ZADD".into(), "z".into(), "1".into(), "m".into()]),
        28 => argv.extend(["EXPIRE".into(), key, "1000".into()]),
        29 => argv.extend(["TTL".into(), key]),
        30 => argv.extend(["MEMORY".into(), "USAGE".into(), key]),
        _ => argv.extend(["OBJECT".into(), "ENCODING".into(), key]),
    }
    argv.into_iter().map(String::into_bytes).collect()
}

fn describe(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn check(redis: &mut RawRedis, core: &mut Server, argv: &[Vec<u8>], history: &mut Vec<String>) {
    history.push(describe(argv));
    let expected = redis.call(argv).unwrap();
    let mut got = Vec::new();
    core.run(argv)
        .encode(&mut got, redislab_core::reply::Protocol::Resp2);
    if got != expected {
        let start = history.len().saturating_sub(25);
        let show = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned();
        panic!(
            "core and redis differ on the last command:\n  {}\nredis: {:?}\ncore:  {:?}",
            history[start..].join("\n  "),
            show(&expected),
            show(&got)
        );
    }
}

#[test]
fn bit_commands_reply_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut sent = 0;
    let probes: [&[&str]; 4] = [
        &["GET"],
        &["STRLEN"],
        &["MEMORY", "USAGE"],
        &["OBJECT", "ENCODING"],
    ];
    for _ in 0..60 {
        redis.call(&[b"FLUSHALL".to_vec()]).unwrap();
        core.cmd(&["FLUSHALL"]);
        let mut history = Vec::new();
        for _ in 0..250 {
            let argv = random_command(&mut rng);
            check(&mut redis, &mut core, &argv, &mut history);
            sent += 1;
            let writes = [&b"SETBIT"[..], b"BITOP", b"BITFIELD"];
            if writes.iter().any(|w| argv[0] == *w) {
                let key = if argv[0] == b"BITOP" {
                    argv[2].clone()
                } else {
                    argv[1].clone()
                };
                for probe in probes {
                    if probe == ["GET"] && rng.gen_bool(0.7) {
                        continue;
                    }
                    let mut q: Vec<Vec<u8>> = probe.iter().map(|p| p.as_bytes().to_vec()).collect();
                    q.push(key.clone());
                    check(&mut redis, &mut core, &q, &mut history);
                    sent += 1;
                }
            }
        }
    }
    eprintln!("{sent} commands, identical replies from core and redis");
}

/// The article's rows: the sparse SETBIT, the offset limit and the u7 overflow modes.
#[test]
fn the_articles_bitmap_rows_match_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut history = Vec::new();
    let script: &[&[&str]] = &[
        &["SETBIT", "bm:sparse", "10000000", "1"],
        &["MEMORY", "USAGE", "bm:sparse"],
        &["BITCOUNT", "bm:sparse"],
        &["SETBIT", "bm:sparse", "4294967296", "1"],
        &["BITFIELD", "p", "SET", "u7", "#5", "120"],
        &[
            "BITFIELD", "p", "OVERFLOW", "WRAP", "INCRBY", "u7", "#5", "10",
        ],
        &["BITFIELD", "p", "SET", "u7", "#5", "120"],
        &[
            "BITFIELD", "p", "OVERFLOW", "SAT", "INCRBY", "u7", "#5", "10",
        ],
        &["BITFIELD", "p", "SET", "u7", "#5", "120"],
        &[
            "BITFIELD", "p", "OVERFLOW", "FAIL", "INCRBY", "u7", "#5", "10",
        ],
        &["BITFIELD_RO", "p", "GET", "u7", "#5"],
        &["MEMORY", "USAGE", "p"],
    ];
    for cmd in script {
        let argv: Vec<Vec<u8>> = cmd.iter().map(|a| a.as_bytes().to_vec()).collect();
        check(&mut redis, &mut core, &argv, &mut history);
    }
}
