//! MEMORY USAGE and OBJECT ENCODING of sorted sets: the same sets are built in the
//! core (in process) and in a real Redis, and both are asked how big they are.
//!
//! A listpack-encoded set, and a skiplist whose nodes all fall in one jemalloc
//! size class whatever their level, must get byte-identical replies. Other
//! skiplists cannot: Redis draws each node's level from libc `random()`, seeded
//! from the clock at start-up, and every extra level adds 16 bytes to that node's
//! allocation, so even two Redis servers disagree. Those sets are compared within
//! a bound that is wide in terms of the levels' spread (about ten standard
//! deviations) but far smaller than any modelling error would be: a wrong dict
//! size alone is off by 8 bytes per bucket.

use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

type Argv = Vec<Vec<u8>>;

/// How a case's replies must compare.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Exact,
    /// Skiplist nodes with random levels: within this many bytes.
    Within(usize),
}

struct Case {
    name: String,
    key: Vec<u8>,
    build: Vec<Argv>,
    expect: Expect,
}

fn s(x: impl AsRef<[u8]>) -> Vec<u8> {
    x.as_ref().to_vec()
}

/// ZADD commands adding `pairs` to `key`, `batch` pairs per command.
fn zadds(key: &[u8], pairs: &[(String, Vec<u8>)], batch: usize) -> Vec<Argv> {
    pairs
        .chunks(batch)
        .map(|chunk| {
            let mut argv = vec![s("ZADD"), s(key)];
            for (score, member) in chunk {
                argv.push(s(score));
                argv.push(member.clone());
            }
            argv
        })
        .collect()
}

fn id8(i: usize) -> Vec<u8> {
    s(format!("{}", 10_000_000 + i * 7919))
}

/// A UUID-shaped 36-byte member, deterministic in `i`.
fn uuid(i: usize) -> Vec<u8> {
    let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let g = h.rotate_left(29) ^ 0xD1B5_4A32_D192_ED03;
    let hex = format!("{h:016x}{g:016x}");
    s(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

/// A member of `len` bytes, distinct for each `i`.
fn long_member(i: usize, len: usize) -> Vec<u8> {
    let mut m = format!("{i:08}-").into_bytes();
    m.resize(len, b'x');
    m
}

fn int_scores(members: impl Iterator<Item = Vec<u8>>) -> Vec<(String, Vec<u8>)> {
    members
        .enumerate()
        .map(|(i, m)| (i.to_string(), m))
        .collect()
}

fn frac_scores(members: impl Iterator<Item = Vec<u8>>) -> Vec<(String, Vec<u8>)> {
    members
        .enumerate()
        .map(|(i, m)| (format!("{}.{}", i, 1 + i % 9), m))
        .collect()
}

/// Bound for a skiplist of `n` small-member nodes: ten times the spread of the
/// difference of two independent sums of 16 bytes per extra level.
fn level_spread(n: usize) -> Expect {
    Expect::Within(16 * 10 * (n as f64).sqrt().ceil() as usize + 32)
}

fn expect_for(n: usize) -> Expect {
    if n <= 128 {
        Expect::Exact
    } else {
        level_spread(n)
    }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut add = |name: String, key: &str, build: Vec<Argv>, expect: Expect| {
        out.push(Case {
            name,
            key: s(key),
            build,
            expect,
        })
    };
    for n in [1, 2, 10, 100, 128, 129, 1000] {
        let ids = int_scores((0..n).map(id8));
        add(
            format!("{n} ids, int scores"),
            "ids",
            zadds(b"ids", &ids, n),
            expect_for(n),
        );
        let frac = frac_scores((0..n).map(id8));
        add(
            format!("{n} ids, fractional scores"),
            "frac",
            zadds(b"frac", &frac, n),
            expect_for(n),
        );
        let uuids = int_scores((0..n).map(uuid));
        add(
            format!("{n} uuids, int scores"),
            "uuids",
            zadds(b"uuids", &uuids, n),
            expect_for(n),
        );
    }
    let ids = int_scores((0..129).map(id8));
    add(
        "129 ids, one ZADD each".into(),
        "ids",
        zadds(b"ids", &ids, 1),
        level_spread(129),
    );
    let ids = int_scores((0..100_000).map(id8));
    add(
        "100000 ids, ZADD 1000 at a time".into(),
        "ids",
        zadds(b"ids", &ids, 1000),
        level_spread(100_000),
    );
    for len in [64, 65] {
        let one = vec![("1".to_string(), long_member(0, len))];
        let expect = if len == 64 {
            Expect::Exact
        } else {
            level_spread(1)
        };
        add(
            format!("1 member of {len} bytes"),
            "long",
            zadds(b"long", &one, 1),
            expect,
        );
    }
    // 1000-byte members: a node is 1022 + 16 per level bytes, in the 1280 class
    // up to level 16, so levels do not show and the reply is exact.
    let big = int_scores((0..300).map(|i| long_member(i, 1000)));
    add(
        "300 members of 1000 bytes, one ZADD".into(),
        "big",
        zadds(b"big", &big, 300),
        Expect::Exact,
    );
    let big = int_scores((0..150).map(|i| long_member(i, 1000)));
    add(
        "150 members of 1000 bytes, one ZADD each (dict rehashing)".into(),
        "big",
        zadds(b"big", &big, 1),
        Expect::Exact,
    );
    let odd: Vec<(String, Vec<u8>)> = [
        "-0",
        "0.1",
        "inf",
        "-inf",
        "1e300",
        "-5000",
        "70000",
        "9000000",
        "3000000000",
        "1e-300",
        "4611686018427387904",
        "-1.5",
    ]
    .iter()
    .enumerate()
    .map(|(i, sc)| (sc.to_string(), id8(i)))
    .collect();
    add(
        "12 odd scores".into(),
        "odd",
        zadds(b"odd", &odd, 12),
        Expect::Exact,
    );
    let numeric: Vec<(String, Vec<u8>)> = [
        "0",
        "-1",
        "127",
        "128",
        "-4096",
        "32768",
        "00",
        "+1",
        "-0",
        "",
        "12345678901234567890123",
    ]
    .iter()
    .enumerate()
    .map(|(i, m)| (i.to_string(), s(m)))
    .collect();
    add(
        "numeric-looking members".into(),
        "nums",
        zadds(b"nums", &numeric, 20),
        Expect::Exact,
    );
    let mut with_ttl = zadds(b"ttl", &int_scores((0..5).map(id8)), 5);
    with_ttl.push(vec![s("EXPIRE"), s("ttl"), s("1000")]);
    add(
        "5 ids, key with a TTL".into(),
        "ttl",
        with_ttl,
        Expect::Exact,
    );
    let long_key = "k".repeat(130);
    let build = zadds(long_key.as_bytes(), &int_scores((0..3).map(id8)), 3);
    add(
        "3 ids under a 130-byte key".into(),
        &long_key,
        build,
        Expect::Exact,
    );
    out
}

fn run(redis: &mut RawRedis, core: &mut Server, argv: &Argv) -> (Vec<u8>, Vec<u8>) {
    let expected = redis.call(argv).unwrap();
    let mut got = Vec::new();
    core.run(argv)
        .encode(&mut got, redislab_core::reply::Protocol::Resp2);
    (expected, got)
}

/// The integer of a `:n` reply.
fn integer(reply: &[u8]) -> i64 {
    let text = String::from_utf8_lossy(reply);
    text.trim_start_matches(':')
        .trim_end()
        .parse()
        .unwrap_or_else(|_| panic!("not an integer reply: {text:?}"))
}

#[test]
fn memory_usage_matches_redis() {
    memory_usage_matches_redis_in("skiplist");
}

/// The same, with the core holding big sets in its B+tree layout.
#[test]
fn memory_usage_matches_redis_in_the_btree_layout() {
    memory_usage_matches_redis_in("btree");
}

fn memory_usage_matches_redis_in(layout: &str) {
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
    let mut failures = Vec::new();
    eprintln!(
        "{:<60} {:>9} {:>10} {:>10}",
        "case", "encoding", "core", "redis"
    );
    for case in cases() {
        redis.call(&[s("FLUSHALL")]).unwrap();
        core.cmd(&["FLUSHALL"]);
        for argv in &case.build {
            let (expected, got) = run(&mut redis, &mut core, argv);
            assert_eq!(got, expected, "{}: building", case.name);
        }
        let (enc_redis, enc_core) = run(
            &mut redis,
            &mut core,
            &vec![s("OBJECT"), s("ENCODING"), case.key.clone()],
        );
        assert_eq!(enc_core, enc_redis, "{}: OBJECT ENCODING", case.name);
        let usage = vec![s("MEMORY"), s("USAGE"), case.key.clone()];
        let (redis_bytes, core_bytes) = run(&mut redis, &mut core, &usage);
        let (r, c) = (integer(&redis_bytes), integer(&core_bytes));
        let encoding = String::from_utf8_lossy(&enc_redis[4..])
            .trim_end()
            .to_string();
        eprintln!("{:<60} {encoding:>9} {c:>10} {r:>10}", case.name);
        let ok = match case.expect {
            Expect::Exact => c == r,
            Expect::Within(bound) => c.abs_diff(r) <= bound as u64,
        };
        if !ok {
            failures.push(format!("{}: core {c}, redis {r}", case.name));
        }
        // SAMPLES does not change a sorted set's answer on either side.
        let mut sampled = usage.clone();
        sampled.extend([s("SAMPLES"), s("0")]);
        let (redis_all, core_all) = run(&mut redis, &mut core, &sampled);
        assert_eq!(redis_all, redis_bytes, "{}: SAMPLES 0 on redis", case.name);
        assert_eq!(core_all, core_bytes, "{}: SAMPLES 0 on core", case.name);
    }
    assert!(
        failures.is_empty(),
        "MEMORY USAGE differs:\n{}",
        failures.join("\n")
    );
}

#[test]
fn memory_and_object_errors_match_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let commands: &[&[&str]] = &[
        &["ZADD", "z", "1", "a"],
        &["MEMORY", "USAGE", "missing"],
        &["MEMORY", "USAGE", "missing", "SAMPLES", "x"],
        &["MEMORY", "USAGE", "z", "SAMPLES", "-1"],
        &["MEMORY", "USAGE", "z", "SAMPLES"],
        &["MEMORY", "USAGE", "z", "samples", "3", "SAMPLES", "0"],
        &["MEMORY", "USAGE", "z", "foo"],
        &["MEMORY", "USAGE", "z", "SAMPLES", "99999999999999999999"],
        &["MEMORY", "USAGE"],
        &["MEMORY"],
        &["memory", "Nope", "z"],
        &["OBJECT", "ENCODING", "z"],
        &["object", "encoding", "missing"],
        &["OBJECT", "ENCODING"],
        &["OBJECT", "ENCODING", "z", "extra"],
        &["OBJECT", "nope"],
        &["OBJECT"],
    ];
    for cmd in commands {
        let argv: Argv = cmd.iter().map(s).collect();
        let (expected, got) = run(&mut redis, &mut core, &argv);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "{cmd:?}"
        );
    }
}
