//! The same random sequences of string, counter and TTL commands go to the core (in
//! process) and to a real Redis 8.6.3; every reply must be byte-identical on the
//! wire. MEMORY USAGE and OBJECT ENCODING are asked after the commands that change
//! a value's shape. INCREX (8.8) is not sent: 8.6.3 does not have it, and the core's
//! unit tests cover it.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

const KEYS: &[&str] = &[
    "s",
    "n",
    "f",
    "z",
    "missing",
    "a-much-longer-key-name-for-embstr",
];

const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "5",
    "9999",
    "10000",
    "-0",
    "+1",
    "007",
    " 1",
    "1 ",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "1.5",
    "1e3",
    "abc",
    "",
    "0x10",
    "4611686018427387904",
    "-4611686018427387904",
    "100",
    "-100",
];

const FLOATS: &[&str] = &[
    "0",
    "-0",
    "0.1",
    "-0.1",
    "1.5",
    "19999.99",
    "1e16",
    "1e20",
    "1e-17",
    "5e-18",
    "1e300",
    "1e308",
    "1e4000",
    "-1e4000",
    "1e5000",
    "1e-5000",
    "1e-4940",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "nan",
    "0x10",
    "0x1.8p1",
    "0x1p-3",
    "0x",
    "1.",
    ".5",
    ".",
    "1e",
    "1e+",
    "+1.5",
    "--1",
    " 1",
    "1 ",
    "abc",
    "",
    "3.14159265358979323846264338327950288",
    "9223372036854775807",
    "-9223372036854775808",
    "123456789012345678901234567890",
    "0.3333333333333333333333",
    "1.0000000000000000001",
    "2.5",
    "-2.5",
    "7e-10",
];

const VALUES: &[&str] = &[
    "",
    "x",
    "hello",
    "12",
    "-7",
    "10000",
    "3.0",
    "Ánh",
    "v1",
    "v2",
    "0123456789012345678901234567890123456789",
    "01234567890123456789012345678901234567890",
    "012345678901234567890123456789012345678901234",
    "0123456789012345678901234567890123456789012345",
];

const OFFSETS: &[&str] = &[
    "0",
    "1",
    "3",
    "-1",
    "-3",
    "-100",
    "100",
    "1000",
    "40",
    "200",
    "9223372036854775807",
    "-9223372036854775808",
    "536870912",
    "536870911x",
    "x",
];

/// Seconds; far enough that no deadline passes during a run.
const TTLS: &[&str] = &["100", "1000", "5000", "0", "-5", "x", "9223372036854775807"];
/// Milliseconds, likewise.
const PTTLS: &[&str] = &["100000", "5000000", "0", "-5", "x", "9223372036854775807"];

/// EX or PX with a matching amount. Absolute deadlines are left out: a key set
/// already expired is measured by MEMORY USAGE until Redis's background cycle
/// removes it, which depends on the clock.
fn relative_expiry(rng: &mut ChaCha8Rng) -> [String; 2] {
    if rng.gen_bool(0.5) {
        ["EX".into(), pick(rng, TTLS).into()]
    } else {
        ["PX".into(), pick(rng, PTTLS).into()]
    }
}

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items.choose(rng).unwrap()
}

fn value(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..10) {
        0 => "v".repeat(rng.gen_range(30..300)),
        1 => pick(rng, INTS).to_string(),
        2 => pick(rng, FLOATS).to_string(),
        _ => pick(rng, VALUES).to_string(),
    }
}

fn random_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let key = pick(rng, KEYS).to_string();
    let mut argv: Vec<String> = Vec::new();
    match rng.gen_range(0..30) {
        0..=2 => {
            argv.extend(["SET".into(), key, value(rng)]);
            for opt in ["NX", "XX", "GET", "KEEPTTL"] {
                if rng.gen_bool(0.1) {
                    argv.push(opt.into());
                }
            }
            if rng.gen_bool(0.2) {
                argv.extend(relative_expiry(rng));
            }
            if rng.gen_bool(0.15) {
                let cond = pick(rng, &["IFEQ", "IFNE", "IFDEQ", "IFDNE"]);
                // With GET, a digest of the wrong length makes Redis send the old
                // value *and* the error (two replies for one command): not sent.
                let with_get = argv.iter().any(|a| a == "GET");
                let matches: &[&str] = if cond.starts_with("IFD") && with_get {
                    &["0123456789abcdef", "2d06800538d394c2"]
                } else {
                    &["hello", "12", "x", "0123456789abcdef", "abc"]
                };
                argv.push(cond.into());
                argv.push(pick(rng, matches).into());
            }
        }
        3 => argv.extend(["GET".into(), key]),
        4 => argv.extend(["GETSET".into(), key, value(rng)]),
        5 => {
            argv.extend(["GETEX".into(), key]);
            match rng.gen_range(0..4) {
                0 => argv.push("PERSIST".into()),
                1 => argv.extend(relative_expiry(rng)),
                2 => argv.extend(["EXAT".into(), "1".into()]),
                _ => {}
            }
        }
        6 => argv.extend(["GETDEL".into(), key]),
        7..=8 => argv.extend(["APPEND".into(), key, value(rng)]),
        9..=10 => argv.extend([
            "SETRANGE".into(),
            key,
            pick(rng, OFFSETS).into(),
            value(rng),
        ]),
        11 => argv.extend([
            "GETRANGE".into(),
            key,
            pick(rng, OFFSETS).into(),
            pick(rng, OFFSETS).into(),
        ]),
        12 => argv.extend(["STRLEN".into(), key]),
        13..=14 => argv.extend([
            pick(rng, &["INCR", "DECR"]).into(),
            pick(rng, &["n", "n", "s", "z"]).into(),
        ]),
        15..=16 => argv.extend([
            pick(rng, &["INCRBY", "DECRBY"]).into(),
            pick(rng, &["n", "n", "s", "z"]).into(),
            pick(rng, INTS).into(),
        ]),
        17..=19 => argv.extend([
            "INCRBYFLOAT".into(),
            pick(rng, &["f", "f", "n", "s", "z"]).into(),
            pick(rng, FLOATS).into(),
        ]),
        20 => {
            let name = pick(rng, &["MSET", "MSETNX"]);
            argv.push(name.into());
            for _ in 0..rng.gen_range(1..=3) {
                argv.push(pick(rng, KEYS).into());
                argv.push(value(rng));
            }
            if rng.gen_bool(0.1) {
                argv.pop();
            }
        }
        21 => {
            let n = rng.gen_range(1..=3);
            argv.extend([
                "MSETEX".into(),
                pick(rng, &["1", "2", "3", "0", "x"]).into(),
            ]);
            for _ in 0..n {
                argv.push(pick(rng, KEYS).into());
                argv.push(value(rng));
            }
            for opt in ["NX", "XX", "KEEPTTL"] {
                if rng.gen_bool(0.15) {
                    argv.push(opt.into());
                }
            }
            if rng.gen_bool(0.5) {
                argv.extend(relative_expiry(rng));
            }
        }
        22 => {
            argv.extend(["MGET".into(), key, pick(rng, KEYS).into()]);
        }
        23 => {
            argv.extend(["DELEX".into(), key]);
            if rng.gen_bool(0.8) {
                argv.push(pick(rng, &["IFEQ", "IFNE", "IFDEQ", "IFDNE", "IFXX"]).into());
                argv.push(pick(rng, &["hello", "12", "x", "0123456789abcdef", "abc"]).into());
            }
        }
        24 => argv.extend(["DIGEST".into(), key]),
        25 => {
            let [unit, amount] = relative_expiry(rng);
            let name = if unit == "EX" { "EXPIRE" } else { "PEXPIRE" };
            argv.extend([name.into(), key, amount]);
            if rng.gen_bool(0.5) {
                argv.push(pick(rng, &["NX", "XX", "GT", "LT", "nx", "YY"]).into());
            }
            if rng.gen_bool(0.1) {
                argv.push(pick(rng, &["NX", "XX", "GT", "LT"]).into());
            }
        }
        26 => argv.extend([pick(rng, &["TTL", "PERSIST", "TYPE", "EXISTS"]).into(), key]),
        27 => argv.extend(["MEMORY".into(), "USAGE".into(), key]),
        28 => argv.extend(["OBJECT".into(), "ENCODING".into(), key]),
        _ => {
            let name = pick(rng, &["ZADD", "SETNX", "SETEX", "PSETEX"]);
            let amount = match name {
                "SETEX" => pick(rng, TTLS),
                "PSETEX" => pick(rng, PTTLS),
                _ => pick(rng, &["1", "100", "0", "x"]),
            };
            argv.extend([name.into(), key, amount.into(), "m".into()]);
        }
    }
    // SETNX takes two arguments, not three.
    if argv[0] == "SETNX" {
        argv.pop();
    }
    argv.into_iter().map(String::into_bytes).collect()
}

fn describe(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|a| {
            let s = String::from_utf8_lossy(a);
            if s.len() > 40 {
                format!("{}…({} bytes)", &s[..20], s.len())
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn check(
    redis: &mut RawRedis,
    core: &mut Server,
    argv: &[Vec<u8>],
    history: &mut Vec<String>,
    label: &str,
) {
    history.push(describe(argv));
    let expected = redis.call(argv).unwrap();
    let mut got = Vec::new();
    core.run(argv)
        .encode(&mut got, redislab_core::reply::Protocol::Resp2);
    if got != expected {
        let tail = history
            .iter()
            .rev()
            .take(20)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ");
        let show = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned();
        panic!(
            "{label}: core and redis differ on the last command:\n  {tail}\nredis: {:?}\ncore:  {:?}",
            show(&expected),
            show(&got)
        );
    }
}

#[test]
fn string_commands_reply_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sent = 0;
    for round in 0..80 {
        redis.call(&[b"FLUSHALL".to_vec()]).unwrap();
        core.cmd(&["FLUSHALL"]);
        let mut history = Vec::new();
        for _ in 0..250 {
            let argv = random_command(&mut rng);
            check(
                &mut redis,
                &mut core,
                &argv,
                &mut history,
                &format!("round {round}"),
            );
            sent += 1;
            // Look at the shape of whatever the command touched.
            if rng.gen_bool(0.3) {
                let key = argv.get(1).cloned().unwrap_or_default();
                for probe in [&b"USAGE"[..], b"ENCODING"] {
                    let name: &[u8] = if probe == b"USAGE" {
                        b"MEMORY"
                    } else {
                        b"OBJECT"
                    };
                    let q = vec![name.to_vec(), probe.to_vec(), key.clone()];
                    check(
                        &mut redis,
                        &mut core,
                        &q,
                        &mut history,
                        &format!("round {round}"),
                    );
                    sent += 1;
                }
            }
        }
    }
    eprintln!("{sent} commands, identical replies from core and redis");
}

/// The article's figures, and a long run of INCRBYFLOAT that accumulates 80-bit
/// rounding.
#[test]
fn the_articles_strings_match_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut history = Vec::new();
    let mut sent = 0;
    let mut run = |argv: Vec<String>, history: &mut Vec<String>| {
        let argv: Vec<Vec<u8>> = argv.into_iter().map(String::into_bytes).collect();
        check(&mut redis, &mut core, &argv, history, "article");
        sent += 1;
    };
    let v = |parts: &[&str]| parts.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    run(v(&["FLUSHALL"]), &mut history);
    let chunk = "a".repeat(100);
    for _ in 0..1000 {
        run(v(&["APPEND", "s:append", &chunk]), &mut history);
    }
    run(v(&["SET", "s:set", &"a".repeat(100_000)]), &mut history);
    for key in ["s:append", "s:set"] {
        run(v(&["STRLEN", key]), &mut history);
        run(v(&["MEMORY", "USAGE", key]), &mut history);
    }
    run(v(&["SETRANGE", "s:far", "10000000", "x"]), &mut history);
    run(v(&["STRLEN", "s:far"]), &mut history);
    run(v(&["MEMORY", "USAGE", "s:far"]), &mut history);
    run(v(&["SETRANGE", "s:far2", "536870912", "x"]), &mut history);
    for step in ["0.1", "19999.99", "1.1", "-0.7", "1e-3"] {
        for _ in 0..1000 {
            run(v(&["INCRBYFLOAT", "acc", step]), &mut history);
        }
    }
    // Sizes around the SDS type boundaries and the big-argument threshold.
    for len in [
        31, 32, 40, 41, 44, 45, 200, 251, 252, 300, 4000, 32_767, 32_768, 40_000, 65_529, 65_530,
        70_000, 200_000,
    ] {
        run(v(&["SET", "sz", &"b".repeat(len)]), &mut history);
        run(v(&["MEMORY", "USAGE", "sz"]), &mut history);
        run(v(&["APPEND", "sz", "c"]), &mut history);
        run(v(&["MEMORY", "USAGE", "sz"]), &mut history);
        run(
            v(&["SETRANGE", "sz", &(len * 3).to_string(), "d"]),
            &mut history,
        );
        run(v(&["MEMORY", "USAGE", "sz"]), &mut history);
    }
    eprintln!("{sent} commands in the article's cases, identical replies");
}

// ---------------------------------------------------------------------------
// LCS, and every family of string values in RESP3 through the listener.
// ---------------------------------------------------------------------------

/// A string for LCS: a small alphabet, so there are many equally long answers
/// and the walk's tie rule decides which one is returned.
fn lcs_text(rng: &mut ChaCha8Rng) -> String {
    let alphabet: &[u8] = pick(rng, &["ab", "acgt", "abcdefgh", "x"]).as_bytes();
    let len = match rng.gen_range(0..10) {
        0 => 0,
        1 => rng.gen_range(100..400),
        _ => rng.gen_range(1..40),
    };
    (0..len)
        .map(|_| char::from(alphabet[rng.gen_range(0..alphabet.len())]))
        .collect()
}

fn lcs_command(rng: &mut ChaCha8Rng) -> Vec<String> {
    let keys = ["l1", "l2", "l3", "n", "missing", "z"];
    let mut argv: Vec<String> = vec![
        "LCS".into(),
        pick(rng, &keys).into(),
        pick(rng, &keys).into(),
    ];
    for _ in 0..rng.gen_range(0..4) {
        match rng.gen_range(0..12) {
            0..=2 => argv.push("IDX".into()),
            3..=4 => argv.push("WITHMATCHLEN".into()),
            5 => argv.push(pick(rng, &["LEN", "len"]).into()),
            6..=8 => {
                argv.push(pick(rng, &["MINMATCHLEN", "minmatchlen"]).into());
                argv.push(pick(rng, &["0", "1", "2", "3", "5", "-4", "x", "99999999999"]).into());
            }
            9 => argv.push("MINMATCHLEN".into()),
            10 => argv.push("IDXX".into()),
            _ => argv.push("idx".into()),
        }
    }
    argv
}

/// A command of the other string-valued families: bitmaps, bitfields,
/// HyperLogLog, LCS and CLUSTER KEYSLOT, with the probes that show a value's
/// bytes and shape.
fn other_family_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let keys = ["b1", "b2", "h1", "h2", "l1", "n", "z", "missing"];
    let key = pick(rng, &keys).to_string();
    let offset = |rng: &mut ChaCha8Rng| -> String {
        match rng.gen_range(0..12) {
            0 => pick(rng, &["-1", "x", "4294967296", "4294967295", "#3", ""]).into(),
            1 => rng.gen_range(0..100_000u32).to_string(),
            _ => rng.gen_range(0..200u32).to_string(),
        }
    };
    let bound = |rng: &mut ChaCha8Rng| -> String {
        pick(
            rng,
            &[
                "0",
                "1",
                "-1",
                "-2",
                "3",
                "7",
                "9",
                "100",
                "-100",
                "x",
                "-9223372036854775808",
            ],
        )
        .into()
    };
    let mut argv: Vec<String> = Vec::new();
    match rng.gen_range(0..24) {
        0..=2 => {
            let bit = pick(rng, &["0", "1", "1", "2", "x"]).to_string();
            argv.extend(["SETBIT".into(), key, offset(rng), bit]);
        }
        3 => argv.extend(["GETBIT".into(), key, offset(rng)]),
        4 => {
            argv.extend(["BITCOUNT".into(), key]);
            if rng.gen_bool(0.7) {
                argv.extend([bound(rng), bound(rng)]);
                if rng.gen_bool(0.5) {
                    argv.push(pick(rng, &["BIT", "BYTE", "bit", "nibble"]).into());
                }
            }
        }
        5 => {
            argv.extend(["BITPOS".into(), key, pick(rng, &["0", "1", "2"]).into()]);
            for _ in 0..rng.gen_range(0..4) {
                argv.push(bound(rng));
            }
            if argv.len() == 6 {
                argv[5] = pick(rng, &["BIT", "BYTE", "x"]).into();
            }
        }
        6 => {
            let op = pick(
                rng,
                &[
                    "AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE", "NAND",
                ],
            );
            argv.extend(["BITOP".into(), op.into(), pick(rng, &keys).into()]);
            for _ in 0..rng.gen_range(1..4) {
                argv.push(pick(rng, &keys).into());
            }
        }
        7..=9 => {
            let name = pick(rng, &["BITFIELD", "BITFIELD", "BITFIELD_RO"]);
            argv.extend([name.into(), key]);
            for _ in 0..rng.gen_range(0..4) {
                match rng.gen_range(0..8) {
                    0 => argv.extend([
                        "OVERFLOW".into(),
                        pick(rng, &["WRAP", "SAT", "FAIL", "X"]).into(),
                    ]),
                    1..=3 => argv.extend([
                        "GET".into(),
                        pick(rng, &["u8", "i5", "u63", "i64", "u64", "i0"]).into(),
                        offset(rng),
                    ]),
                    _ => argv.extend([
                        pick(rng, &["SET", "INCRBY"]).into(),
                        pick(rng, &["u8", "i5", "u2", "i64", "u63"]).into(),
                        offset(rng),
                        pick(rng, &["1", "-1", "100", "9223372036854775807", "x"]).into(),
                    ]),
                }
            }
        }
        10..=12 => {
            argv.extend([
                "PFADD".into(),
                pick(rng, &["h1", "h2", "h1", "b1", "z"]).into(),
            ]);
            let n = match rng.gen_range(0..6) {
                0 => rng.gen_range(100..800),
                _ => rng.gen_range(0..12),
            };
            let base: u32 = rng.gen();
            for i in 0..n {
                argv.push(format!("e{}", base.wrapping_add(i) % 5000));
            }
        }
        13 => {
            argv.push("PFCOUNT".into());
            for _ in 0..rng.gen_range(1..4) {
                argv.push(pick(rng, &["h1", "h2", "missing", "b1"]).into());
            }
        }
        14 => {
            argv.extend(["PFMERGE".into(), pick(rng, &["h1", "h2", "h3"]).into()]);
            for _ in 0..rng.gen_range(0..3) {
                argv.push(pick(rng, &["h1", "h2", "missing", "z"]).into());
            }
        }
        15 => argv.extend([
            "PFDEBUG".into(),
            pick(rng, &["ENCODING", "DECODE", "TODENSE", "GETREG", "NOPE"]).into(),
            pick(rng, &["h1", "h2", "missing", "b1"]).into(),
        ]),
        16..=17 => argv = lcs_command(rng),
        18 => {
            let key = pick(rng, &["l1", "l2", "l3"]).to_string();
            argv.extend(["SET".into(), key, lcs_text(rng)]);
        }
        19 => {
            // KEYSLOT itself answers like a cluster node (keyslot_differential
            // checks it against a real cluster); this Redis has no cluster.
            argv.push("CLUSTER".into());
            match rng.gen_range(0..3) {
                0 => argv.push(pick(rng, &["KEYSLOT", "INFO", "NODES", "SLOTS"]).into()),
                1 => argv.extend(["KEYSLOT".into(), "a".into(), "b".into()]),
                _ => argv.extend([
                    pick(rng, &["BOGUS", "INFO", "COUNTKEYSINSLOT"]).into(),
                    pick(rng, &["foo", "1"]).into(),
                ]),
            }
        }
        20 => argv.extend([pick(rng, &["GET", "STRLEN", "TYPE"]).into(), key]),
        21 => argv.extend(["MEMORY".into(), "USAGE".into(), key]),
        22 => argv.extend(["OBJECT".into(), "ENCODING".into(), key]),
        _ => argv.extend([
            pick(rng, &["INCRBYFLOAT", "INCRBY", "APPEND"]).into(),
            pick(rng, &["n", "b1", "l1"]).into(),
            pick(rng, &["1", "0.5", "x"]).into(),
        ]),
    }
    argv.into_iter().map(String::into_bytes).collect()
}

/// LCS on the same random strings and options, in process against Redis.
#[test]
fn lcs_replies_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut history = Vec::new();
    let mut sent = 0;
    let mut run = |argv: Vec<String>, history: &mut Vec<String>, sent: &mut usize| {
        let argv: Vec<Vec<u8>> = argv.into_iter().map(String::into_bytes).collect();
        check(&mut redis, &mut core, &argv, history, "lcs");
        *sent += 1;
    };
    let v = |parts: &[&str]| parts.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    run(v(&["FLUSHALL"]), &mut history, &mut sent);
    run(v(&["ZADD", "z", "1", "a"]), &mut history, &mut sent);
    run(v(&["SET", "n", "12345"]), &mut history, &mut sent);
    for round in 0..400 {
        if round % 4 == 0 {
            for key in ["l1", "l2", "l3"] {
                let text = lcs_text(&mut rng);
                run(v(&["SET", key, &text]), &mut history, &mut sent);
            }
        }
        run(lcs_command(&mut rng), &mut history, &mut sent);
    }
    // Redis's own example, the memory guard, and the limits around it.
    run(v(&["SET", "k1", "ohmytext"]), &mut history, &mut sent);
    run(v(&["SET", "k2", "mynewtext"]), &mut history, &mut sent);
    for opts in [
        &[][..],
        &["LEN"],
        &["IDX"],
        &["IDX", "WITHMATCHLEN"],
        &["IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"],
        &["LEN", "IDX"],
    ] {
        let mut argv = v(&["LCS", "k1", "k2"]);
        argv.extend(v(opts));
        run(argv, &mut history, &mut sent);
    }
    run(
        v(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]),
        &mut history,
        &mut sent,
    );
    // (511 + 1)^2 * 4 = 1 MB exactly is allowed; one byte more is not.
    for (a, b) in [(511, 511), (511, 512), (600, 600), (10, 30_000)] {
        run(
            v(&["SET", "g1", &"ab".repeat(a)[..a]]),
            &mut history,
            &mut sent,
        );
        run(
            v(&["SET", "g2", &"ba".repeat(b)[..b]]),
            &mut history,
            &mut sent,
        );
        run(v(&["LCS", "g1", "g2", "LEN"]), &mut history, &mut sent);
    }
    run(
        v(&["CONFIG", "SET", "proto-max-bulk-len", "512mb"]),
        &mut history,
        &mut sent,
    );
    eprintln!("{sent} commands with LCS, identical replies");
}

/// `rdb_changes_since_last_save` from an INFO reply (RESP2 bulk or RESP3 verbatim).
fn changes_of(info: &[u8]) -> Option<u64> {
    String::from_utf8_lossy(info)
        .lines()
        .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Sends `argv` to both servers over the wire; the replies must be the same
/// bytes, and `rdb_changes_since_last_save` must move by the same amount.
fn compare_wire(
    redis: &mut RawRedis,
    core: &mut RawRedis,
    argv: &[Vec<u8>],
    history: &mut Vec<String>,
) {
    let info: Vec<Vec<u8>> = vec![b"INFO".to_vec(), b"persistence".to_vec()];
    history.push(describe(argv));
    let before = (
        changes_of(&redis.call(&info).unwrap()),
        changes_of(&core.call(&info).unwrap()),
    );
    let expected = redis.call(argv).unwrap();
    let got = core.call(argv).unwrap();
    let after = (
        changes_of(&redis.call(&info).unwrap()),
        changes_of(&core.call(&info).unwrap()),
    );
    let delta = |b: Option<u64>, a: Option<u64>| a.zip(b).map(|(a, b)| a - b);
    let deltas = (delta(before.0, after.0), delta(before.1, after.1));
    // Changes are compared for this file's families only (EXPIRE, ZADD, ... count
    // theirs elsewhere).
    let name = String::from_utf8_lossy(&argv[0]).to_ascii_uppercase();
    let counted = ![
        "EXPIRE", "PEXPIRE", "PERSIST", "TTL", "TYPE", "EXISTS", "ZADD",
    ]
    .contains(&name.as_str());
    if got != expected || (counted && deltas.0 != deltas.1) || deltas.0.is_none() {
        let tail: Vec<String> = history.iter().rev().take(15).rev().cloned().collect();
        let show = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(300)]).into_owned();
        panic!(
            "core and redis differ (RESP3) on the last command:\n  {}\nredis: {:?} (changes {:?})\ncore:  {:?} (changes {:?})",
            tail.join("\n  "),
            show(&expected),
            deltas.0,
            show(&got),
            deltas.1
        );
    }
}

/// Every family of string values, in RESP3 on both sides: the core through its
/// listener, Redis on its port, both after HELLO 3. Each reply must be the same
/// bytes, and each command must move `rdb_changes_since_last_save` alike.
#[test]
fn string_families_reply_like_redis_in_resp3() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let listener = redislab_listener::CoreListener::start(0).expect("core listener");
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = RawRedis::connect(listener.port()).expect("connect to the core");
    let hello: Vec<Vec<u8>> = vec![b"HELLO".to_vec(), b"3".to_vec()];
    redis.call(&hello).unwrap();
    core.call(&hello).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let mut history: Vec<String> = Vec::new();
    let mut sent = 0;
    for round in 0..12 {
        let setup: [&[&str]; 3] = [&["FLUSHALL"], &["ZADD", "z", "1", "a"], &["SET", "n", "7"]];
        for cmd in setup {
            let argv: Vec<Vec<u8>> = cmd.iter().map(|s| s.as_bytes().to_vec()).collect();
            redis.call(&argv).unwrap();
            core.call(&argv).unwrap();
        }
        for _ in 0..80 {
            let argv = if round % 2 == 0 {
                random_command(&mut rng)
            } else {
                other_family_command(&mut rng)
            };
            compare_wire(&mut redis, &mut core, &argv, &mut history);
            sent += 1;
        }
    }
    drop(listener);
    eprintln!("{sent} commands in RESP3 through the listener, identical replies and changes");
}

/// Counts, offsets and sizes at and past every limit (i64 extremes, the 512 MB
/// string, bit offsets, `#n` bitfield offsets that overflow, huge expiries and
/// MINMATCHLEN): the same errors or replies as Redis, nothing allocated that Redis
/// would not allocate, and no panic.
const HOSTILE: &[&str] = &[
    "SET k 12",
    "SETRANGE k 536870912 x",
    "SETRANGE k 9223372036854775807 x",
    "SETRANGE k -1 x",
    "SETRANGE k 18446744073709551616 x",
    "SETBIT k 4294967296 1",
    "SETBIT k -1 1",
    "SETBIT k 9223372036854775807 1",
    "BITFIELD k SET i64 #9223372036854775807 1",
    "BITFIELD k SET i64 #144115188075855871 1",
    "BITFIELD k SET u8 #536870912 1",
    "BITFIELD k GET u8 #536870911",
    "BITFIELD k GET i64 4294967295",
    "BITFIELD missing GET u63 4294967295",
    "BITFIELD k INCRBY i64 0 -9223372036854775808",
    "BITCOUNT k -9223372036854775808 9223372036854775807 BIT",
    "BITCOUNT k -9223372036854775808 9223372036854775807",
    "BITPOS k 0 -9223372036854775808 9223372036854775807 BIT",
    "BITPOS k 1 9223372036854775807",
    "GETRANGE k -9223372036854775808 9223372036854775807",
    "GETRANGE k 9223372036854775807 -9223372036854775808",
    "MSETEX 2147483647 a b",
    "MSETEX 9223372036854775807 a b",
    "MSETEX -1 a b",
    "INCRBY k 9223372036854775807",
    "DECRBY k -9223372036854775808",
    "INCRBYFLOAT k 1e4932",
    "INCRBYFLOAT k 1e5000",
    "GETEX k EX 9223372036854775807",
    "GETEX k PX 9223372036854775807",
    "GETEX k EXAT 9223372036854775807",
    "SET k v PX 9223372036854775807",
    "SET k v EX 9223372036854775",
    "SET k v EX 9223372036854776",
    "LCS k k MINMATCHLEN 9223372036854775807 IDX",
    "LCS k k MINMATCHLEN -9223372036854775808 IDX",
    "PFCOUNT k",
    "BITOP NOT k missing",
    "APPEND k x",
    "STRLEN k",
];

#[test]
fn hostile_counts_and_offsets_reply_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut history = Vec::new();
    redis.call(&[b"FLUSHALL".to_vec()]).unwrap();
    for line in HOSTILE {
        let argv: Vec<Vec<u8>> = line.split(' ').map(|w| w.as_bytes().to_vec()).collect();
        check(&mut redis, &mut core, &argv, &mut history, "hostile");
    }
    eprintln!("{} hostile commands, identical replies", HOSTILE.len());
}
