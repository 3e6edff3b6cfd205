//! HyperLogLog, core (in process) against a real Redis 8.6.3, byte for byte.
//!
//! * Streams of random, sequential and binary elements of many sizes (10 to
//!   100,000) go to both in PFADD batches; the PFADD replies, PFCOUNT, the raw
//!   bytes (GET), MEMORY USAGE and PFDEBUG ENCODING must be identical after the
//!   batches, so the sparse opcodes, the SDS growth steps, the promotion to dense,
//!   the cached cardinality and the estimate all agree.
//! * Cross-loading: a sketch built by one side only is read with GET, SET into
//!   both, then counted and extended on both.
//! * PFMERGE of sparse and dense sources into new and existing destinations, and
//!   many-key PFCOUNT.
//! * Invalid and corrupt values (wrong magic, encoding, length, runs that do not
//!   add up, truncated opcodes, random byte flips) and every command's error.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

type Argv = Vec<Vec<u8>>;

fn argv(parts: &[&[u8]]) -> Argv {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// Both servers, and what was sent, for a readable failure.
struct Pair {
    redis: RawRedis,
    core: Server,
    history: Vec<String>,
    sent: usize,
}

impl Pair {
    fn new(port: u16) -> Pair {
        Pair {
            redis: RawRedis::connect(port).expect("connect to redis"),
            core: Server::new(),
            history: Vec::new(),
            sent: 0,
        }
    }

    /// Sends `argv` to both; the raw replies must be identical. Returns them.
    fn check(&mut self, argv: &[Vec<u8>]) -> Vec<u8> {
        self.history.push(describe(argv));
        if self.history.len() > 30 {
            self.history.remove(0);
        }
        let expected = self.redis.call(argv).unwrap();
        let mut got = Vec::new();
        self.core
            .run(argv)
            .encode(&mut got, redislab_core::reply::Protocol::Resp2);
        self.sent += 1;
        if got != expected {
            let show = |b: &[u8]| format!("{:?}", &String::from_utf8_lossy(&b[..b.len().min(200)]));
            let at = got.iter().zip(&expected).position(|(a, b)| a != b);
            panic!(
                "core and redis differ on the last command:\n  {}\nredis: {} ({} bytes)\ncore:  {} ({} bytes)\nfirst difference at byte {:?}",
                self.history.join("\n  "),
                show(&expected),
                expected.len(),
                show(&got),
                got.len(),
                at
            );
        }
        got
    }

    /// Redis only (to build a sketch on one side).
    fn redis_only(&mut self, argv: &[Vec<u8>]) -> Vec<u8> {
        self.redis.call(argv).unwrap()
    }

    /// Core only.
    fn core_only(&mut self, argv: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        self.core
            .run(argv)
            .encode(&mut out, redislab_core::reply::Protocol::Resp2);
        out
    }

    /// Everything about one key's sketch: count, bytes, size, encoding, and the
    /// bytes again (after the count refreshed the cache).
    fn inspect(&mut self, key: &[u8]) {
        self.check(&argv(&[b"GET", key]));
        self.check(&argv(&[b"MEMORY", b"USAGE", key]));
        self.check(&argv(&[b"PFDEBUG", b"ENCODING", key]));
        self.check(&argv(&[b"PFCOUNT", key]));
        self.check(&argv(&[b"GET", key]));
        self.check(&argv(&[b"MEMORY", b"USAGE", key]));
    }

    fn flush(&mut self) {
        self.check(&argv(&[b"FLUSHALL"]));
    }
}

fn describe(argv: &[Vec<u8>]) -> String {
    let shown: Vec<String> = argv
        .iter()
        .take(6)
        .map(|a| {
            let s = String::from_utf8_lossy(a);
            if s.len() > 30 {
                format!(
                    "{}…({} bytes)",
                    &s.chars().take(12).collect::<String>(),
                    a.len()
                )
            } else {
                format!("{s:?}")
            }
        })
        .collect();
    let more = if argv.len() > 6 {
        format!(" … ({} args)", argv.len())
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(" "))
}

/// How elements of a stream look.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Random,
    Sequential,
    Binary,
}

fn element(kind: Kind, i: usize, rng: &mut ChaCha8Rng) -> Vec<u8> {
    match kind {
        Kind::Random => {
            let len = rng.gen_range(1..40);
            (0..len).map(|_| rng.gen_range(b'!'..=b'~')).collect()
        }
        Kind::Sequential => format!("user:{i}").into_bytes(),
        Kind::Binary => {
            let len = rng.gen_range(0..24);
            (0..len).map(|_| rng.gen()).collect()
        }
    }
}

/// PFADD commands carrying `n` distinct-ish elements (with some repeats), in
/// batches whose size depends on the stream's size.
fn stream(kind: Kind, n: usize, seed: u64, key: &[u8]) -> Vec<Argv> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let elements: Vec<Vec<u8>> = (0..n).map(|i| element(kind, i, &mut rng)).collect();
    let max_batch = match n {
        0..=3000 => 8,
        3001..=10_000 => 100,
        _ => 2000,
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let take = rng.gen_range(1..=max_batch).min(n - i);
        let mut cmd = argv(&[b"PFADD", key]);
        cmd.extend(elements[i..i + take].iter().cloned());
        // Now and then, elements already added.
        if rng.gen_bool(0.2) {
            for _ in 0..rng.gen_range(1..3) {
                cmd.push(elements[rng.gen_range(0..i + take)].clone());
            }
        }
        out.push(cmd);
        i += take;
    }
    out
}

const SIZES: &[usize] = &[10, 100, 1000, 1500, 2000, 3000, 10_000, 100_000];
const KINDS: &[Kind] = &[Kind::Random, Kind::Sequential, Kind::Binary];

#[test]
fn the_same_streams_give_the_same_bytes() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut pair = Pair::new(server.port);
    pair.flush();
    let mut streams = 0;
    for (k, &kind) in KINDS.iter().enumerate() {
        for (s, &n) in SIZES.iter().enumerate() {
            let key = format!("hll:{kind:?}:{n}").into_bytes();
            let cmds = stream(kind, n, (k * 100 + s) as u64, &key);
            // Inspect after every batch while the sketch may be sparse, then
            // every tenth.
            let every = if n <= 3000 { 1 } else { 10 };
            for (b, cmd) in cmds.iter().enumerate() {
                pair.check(cmd);
                if b % every == 0 || b + 1 == cmds.len() {
                    pair.check(&argv(&[b"MEMORY", b"USAGE", &key]));
                    pair.check(&argv(&[b"PFDEBUG", b"ENCODING", &key]));
                    if b % (every * 7) == 0 {
                        pair.inspect(&key);
                    }
                }
            }
            pair.inspect(&key);
            // A cached count, then a changed sketch.
            pair.check(&argv(&[b"PFCOUNT", &key]));
            pair.check(&argv(&[b"PFADD", &key, b"one-more", b"and-another"]));
            pair.inspect(&key);
            streams += 1;
        }
    }
    // One element per PFADD through the sparse range: every reply, every size.
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for i in 0..2500 {
        let e = element(Kind::Random, i, &mut rng);
        pair.check(&argv(&[b"PFADD", b"one", &e]));
        pair.check(&argv(&[b"MEMORY", b"USAGE", b"one"]));
        if i % 50 == 0 {
            pair.inspect(b"one");
        }
    }
    pair.inspect(b"one");
    eprintln!(
        "{streams} streams + 2500 single adds: {} commands, identical replies",
        pair.sent
    );
}

/// Other `hll-sparse-max-bytes` values (set on both sides with CONFIG SET): the
/// sparse growth steps are capped at the limit and the promotion happens at the
/// same PFADD, with the same bytes and MEMORY USAGE. The limit changes between
/// sketches, and once under a sketch that already grew past it.
#[test]
fn other_sparse_limits_give_the_same_bytes() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut pair = Pair::new(server.port);
    pair.flush();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for limit in ["0", "30", "100", "301", "500", "1000", "5000", "20000"] {
        pair.check(&argv(&[
            b"CONFIG",
            b"SET",
            b"hll-sparse-max-bytes",
            limit.as_bytes(),
        ]));
        let key = format!("hll:limit:{limit}").into_bytes();
        for i in 0..1200 {
            let e = element(Kind::Random, i, &mut rng);
            pair.check(&argv(&[b"PFADD", &key, &e]));
            pair.check(&argv(&[b"MEMORY", b"USAGE", &key]));
            if i % 40 == 0 {
                pair.inspect(&key);
            }
        }
        pair.inspect(&key);
        // PFMERGE into a new sparse destination under the same limit.
        let dest = format!("hll:merged:{limit}").into_bytes();
        pair.check(&argv(&[b"PFADD", &dest, b"x"]));
        pair.check(&argv(&[b"PFMERGE", &dest, b"hll:limit:0"]));
        pair.inspect(&dest);
    }
    // A sketch grown under a high limit, then written under a low one.
    pair.check(&argv(&[
        b"CONFIG",
        b"SET",
        b"hll-sparse-max-bytes",
        b"3000",
    ]));
    for i in 0..300 {
        let e = element(Kind::Sequential, i, &mut rng);
        pair.check(&argv(&[b"PFADD", b"hll:shrink", &e]));
    }
    pair.inspect(b"hll:shrink");
    pair.check(&argv(&[b"CONFIG", b"SET", b"hll-sparse-max-bytes", b"200"]));
    for i in 300..320 {
        let e = element(Kind::Sequential, i, &mut rng);
        pair.check(&argv(&[b"PFADD", b"hll:shrink", &e]));
        pair.check(&argv(&[b"MEMORY", b"USAGE", b"hll:shrink"]));
    }
    pair.inspect(b"hll:shrink");
    pair.check(&argv(&[
        b"CONFIG",
        b"SET",
        b"hll-sparse-max-bytes",
        b"3000",
    ]));
    eprintln!("sparse limits: {} commands, identical replies", pair.sent);
}

#[test]
fn sketches_cross_load_both_ways() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut pair = Pair::new(server.port);
    pair.flush();
    let mut loads = 0;
    for (s, &n) in SIZES.iter().enumerate() {
        for (k, &kind) in KINDS.iter().enumerate() {
            for from_redis in [true, false] {
                let src = b"src".to_vec();
                let cmds = stream(kind, n, 1000 + (k * 10 + s) as u64, &src);
                // Build on one side only; sometimes leave the cache valid.
                let built_by = |pair: &mut Pair, c: &Argv| {
                    if from_redis {
                        pair.redis_only(c)
                    } else {
                        pair.core_only(c)
                    }
                };
                for c in &cmds {
                    built_by(&mut pair, c);
                }
                if s % 2 == 0 {
                    built_by(&mut pair, &argv(&[b"PFCOUNT", b"src"]));
                }
                let raw = built_by(&mut pair, &argv(&[b"GET", b"src"]));
                let bytes = bulk_body(&raw);
                // Short and long key names: an embstr copy and a raw one.
                for key in [&b"x"[..], b"a-rather-long-key-name-for-the-loaded-sketch"] {
                    pair.check(&argv(&[b"SET", key, &bytes]));
                    pair.check(&argv(&[b"MEMORY", b"USAGE", key]));
                    pair.check(&argv(&[b"OBJECT", b"ENCODING", key]));
                    pair.inspect(key);
                    pair.check(&argv(&[b"PFADD", key, b"more-1", b"more-2", b"more-3"]));
                    let extra = stream(Kind::Sequential, 300, 5, key);
                    for c in extra.iter().take(20) {
                        pair.check(c);
                    }
                    pair.inspect(key);
                }
                built_by(&mut pair, &argv(&[b"DEL", b"src"]));
                loads += 1;
            }
        }
    }
    eprintln!(
        "{loads} cross-loads: {} commands, identical replies",
        pair.sent
    );
}

/// The body of a RESP bulk reply.
fn bulk_body(raw: &[u8]) -> Vec<u8> {
    let nl = raw.iter().position(|&b| b == b'\n').unwrap();
    let len: usize = std::str::from_utf8(&raw[1..nl - 1])
        .unwrap()
        .parse()
        .unwrap();
    raw[nl + 1..nl + 1 + len].to_vec()
}

#[test]
fn merges_of_sparse_and_dense_sketches() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut pair = Pair::new(server.port);
    pair.flush();
    let sources: &[(&[u8], usize, Kind)] = &[
        (b"s10", 10, Kind::Random),
        (b"s700", 700, Kind::Sequential),
        (b"s1400a", 1400, Kind::Random),
        (b"s1400b", 1400, Kind::Binary),
        (b"d5000", 5000, Kind::Sequential),
        (b"d50000", 50_000, Kind::Random),
    ];
    for (i, &(key, n, kind)) in sources.iter().enumerate() {
        for c in stream(kind, n, 500 + i as u64, key) {
            pair.check(&c);
        }
        pair.inspect(key);
    }
    let combos: &[&[&[u8]]] = &[
        &[b"s10"],
        &[b"s10", b"s700"],
        &[b"s1400a", b"s1400b"],
        &[b"s700", b"s1400a", b"s1400b"],
        &[b"s10", b"d5000"],
        &[b"d5000", b"d50000", b"s700"],
        &[b"missing"],
        &[b"missing", b"s10"],
        &[],
    ];
    let mut merges = 0;
    for (c, combo) in combos.iter().enumerate() {
        // Many-key PFCOUNT of the same inputs.
        if !combo.is_empty() {
            let mut cmd = argv(&[b"PFCOUNT", b"nothing-here"]);
            cmd.extend(combo.iter().map(|k| k.to_vec()));
            pair.check(&cmd);
        }
        // Into a new key, and into existing sparse and dense destinations.
        let dests: [&[u8]; 3] = [b"new", b"old-sparse", b"old-dense"];
        for dest in dests {
            pair.check(&argv(&[b"DEL", dest]));
            match dest {
                b"old-sparse" => {
                    pair.check(&argv(&[b"PFADD", dest, b"x", b"y", b"z"]));
                }
                b"old-dense" => {
                    pair.check(&argv(&[b"PFADD", dest, b"x"]));
                    pair.check(&argv(&[b"PFDEBUG", b"TODENSE", dest]));
                }
                _ => {}
            }
            if c % 2 == 1 {
                pair.check(&argv(&[b"PFCOUNT", dest]));
            }
            let mut cmd = argv(&[b"PFMERGE", dest]);
            cmd.extend(combo.iter().map(|k| k.to_vec()));
            pair.check(&cmd);
            pair.check(&argv(&[b"DUMP", dest]));
            pair.inspect(dest);
            if dest == b"old-sparse" {
                pair.check(&argv(&[b"PFDEBUG", b"DECODE", dest]));
            }
            merges += 1;
        }
    }
    // A sketch merged into itself, and GETREG of a merged sketch.
    pair.check(&argv(&[b"PFMERGE", b"s700", b"s700", b"s10"]));
    pair.inspect(b"s700");
    pair.check(&argv(&[b"PFDEBUG", b"GETREG", b"s1400a"]));
    pair.inspect(b"s1400a");
    eprintln!("{merges} merges: {} commands, identical replies", pair.sent);
}

/// A dense sketch with every register random in `0..top` (stale cache), as SET
/// would store one: both servers accept any 12,304-byte dense value.
fn random_dense(rng: &mut ChaCha8Rng, top: u8) -> Vec<u8> {
    let mut regs = vec![0u8; 16_384];
    for r in regs.iter_mut() {
        *r = rng.gen_range(0..top);
    }
    let mut out = b"HYLL\x00\x00\x00\x00".to_vec();
    out.extend([0, 0, 0, 0, 0, 0, 0, 0x80]);
    // Four 6-bit registers per 3 bytes, little-endian (the dense layout).
    for r in regs.chunks_exact(4) {
        out.push(r[0] | r[1] << 6);
        out.push(r[1] >> 2 | r[2] << 4);
        out.push(r[2] >> 4 | r[3] << 2);
    }
    out
}

/// Many-key PFCOUNT and PFMERGE of 3 and 10 dense sketches (random registers
/// over the whole 6-bit range, and sketches grown by PFADD), with PFDEBUG SIMD
/// ON and OFF on both servers: the core's AVX2 and scalar paths must both give
/// Redis's counts, and the merged sketches' GET and DUMP bytes must be Redis's.
#[test]
fn dense_merges_agree_with_simd_on_and_off() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut pair = Pair::new(server.port);
    pair.flush();
    let mut rng = ChaCha8Rng::seed_from_u64(0xd0d0);
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for i in 0..10 {
        let key = format!("rd{i}").into_bytes();
        let top = [64, 64, 33, 8, 2][i % 5];
        pair.check(&[b"SET".to_vec(), key.clone(), random_dense(&mut rng, top)]);
        keys.push(key);
    }
    for i in 0..10 {
        let key = format!("pd{i}").into_bytes();
        for c in stream(Kind::Random, 3000 + 2000 * i, 900 + i as u64, &key) {
            pair.check(&c);
        }
        keys.push(key);
    }
    let mut merges = 0;
    for simd in [b"ON".as_slice(), b"OFF", b"on"] {
        pair.check(&argv(&[b"PFDEBUG", b"SIMD", simd]));
        for round in 0..12 {
            let n = if round % 2 == 0 { 3 } else { 10 };
            let picked: Vec<Vec<u8>> = (0..n)
                .map(|_| keys[rng.gen_range(0..keys.len())].clone())
                .collect();
            let mut count = argv(&[b"PFCOUNT"]);
            count.extend(picked.iter().cloned());
            pair.check(&count);
            for dest in [b"m-new".as_slice(), b"m-sparse", b"m-dense"] {
                pair.check(&argv(&[b"DEL", dest]));
                if dest == b"m-sparse" {
                    pair.check(&argv(&[b"PFADD", dest, b"a", b"b"]));
                } else if dest == b"m-dense" {
                    pair.check(&[b"SET".to_vec(), dest.to_vec(), random_dense(&mut rng, 20)]);
                }
                let mut merge = argv(&[b"PFMERGE", dest]);
                merge.extend(picked.iter().cloned());
                pair.check(&merge);
                pair.check(&argv(&[b"DUMP", dest]));
                pair.inspect(dest);
                pair.check(&argv(&[b"DUMP", dest]));
                merges += 1;
            }
        }
    }
    eprintln!(
        "{merges} dense merges: {} commands, identical replies",
        pair.sent
    );
}

/// A sparse sketch's bytes, built by the core.
fn sparse_bytes(core: &mut Server, n: usize) -> Vec<u8> {
    core.run(&argv(&[b"DEL", b"tmp"]));
    for c in stream(Kind::Random, n, 77, b"tmp") {
        core.run(&c);
    }
    match core.run(&argv(&[b"GET", b"tmp"])) {
        redislab_core::Reply::Bulk(b) => b.into_vec(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_and_corrupt_values_fail_alike() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut pair = Pair::new(server.port);
    pair.flush();
    let mut scratch = Server::new();
    let good = sparse_bytes(&mut scratch, 200);
    let dense = {
        scratch.run(&argv(&[b"PFDEBUG", b"TODENSE", b"tmp"]));
        match scratch.run(&argv(&[b"GET", b"tmp"])) {
            redislab_core::Reply::Bulk(b) => b.into_vec(),
            other => panic!("{other:?}"),
        }
    };
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut v = good.clone();
        f(&mut v);
        v
    };
    let mut values: Vec<Vec<u8>> = vec![
        b"hello".to_vec(),
        b"12345".to_vec(),
        b"HYLL".to_vec(),
        good[..15].to_vec(),
        good[..16].to_vec(),
        with(&|v| v[0] = b'h'),
        with(&|v| v[4] = 2),
        with(&|v| v[4] = 255),
        with(&|v| v[4] = 0),
        with(&|v| v.push(0x00)),
        with(&|v| v.push(0x40)),
        with(&|v| v.push(0x80)),
        with(&|v| {
            v.pop();
        }),
        with(&|v| v[5] = 7),
        with(&|v| v[15] &= 0x7f),
        dense.clone(),
        dense[..dense.len() - 1].to_vec(),
        {
            let mut d = dense.clone();
            d.push(0);
            d
        },
        {
            // Dense registers holding values no element could produce.
            let mut d = dense.clone();
            for b in &mut d[16..200] {
                *b = 0xff;
            }
            d
        },
        {
            // A sparse sketch whose VALs and XZEROs cover too many registers.
            let mut v = good[..16].to_vec();
            v.extend([0x7f, 0xff, 0x80, 0x80]);
            v
        },
    ];
    // Random byte flips in the opcode area.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..150 {
        let mut v = good.clone();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(16..v.len());
            v[at] = rng.gen();
        }
        if rng.gen_bool(0.2) {
            v.truncate(rng.gen_range(16..v.len()));
        }
        values.push(v);
    }
    for (i, value) in values.iter().enumerate() {
        for op in 0..6 {
            pair.check(&argv(&[b"SET", b"v", value]));
            pair.check(&argv(&[b"SET", b"ok", &good]));
            let cmd: Argv = match op {
                0 => argv(&[b"PFADD", b"v", b"a", b"b", b"c", b"d", b"e", b"f"]),
                1 => argv(&[b"PFCOUNT", b"v"]),
                2 => argv(&[b"PFCOUNT", b"ok", b"v"]),
                3 => argv(&[b"PFMERGE", b"dst", b"ok", b"v"]),
                4 => argv(&[b"PFDEBUG", b"DECODE", b"v"]),
                _ => argv(&[
                    b"PFDEBUG",
                    [&b"GETREG"[..], b"TODENSE", b"ENCODING"][i % 3],
                    b"v",
                ]),
            };
            pair.check(&cmd);
            pair.check(&argv(&[b"GET", b"v"]));
            pair.check(&argv(&[b"MEMORY", b"USAGE", b"v"]));
            pair.check(&argv(&[b"EXISTS", b"dst"]));
            pair.check(&argv(&[b"DEL", b"dst"]));
        }
    }
    // Other types, missing keys, subcommands and arity.
    pair.check(&argv(&[b"ZADD", b"z", b"1", b"a"]));
    for cmd in [
        argv(&[b"PFADD", b"z", b"a"]),
        argv(&[b"PFCOUNT", b"z"]),
        argv(&[b"PFCOUNT", b"ok", b"z"]),
        argv(&[b"PFMERGE", b"z", b"ok"]),
        argv(&[b"PFMERGE", b"ok", b"z"]),
        argv(&[b"PFDEBUG", b"ENCODING", b"z"]),
        argv(&[b"PFCOUNT", b"missing"]),
        argv(&[b"PFCOUNT", b"missing", b"missing2"]),
        argv(&[b"PFDEBUG", b"GETREG", b"missing"]),
        argv(&[b"PFDEBUG", b"nosuch", b"missing"]),
        argv(&[b"PFDEBUG", b"nosuch", b"ok"]),
        argv(&[b"PFDEBUG", b"Encoding", b"ok"]),
        argv(&[b"PFDEBUG", b"DECODE", b"ok"]),
        argv(&[b"PFDEBUG", b"SIMD", b"off"]),
        argv(&[b"PFDEBUG", b"SIMD", b"ON"]),
        argv(&[b"PFDEBUG", b"ENCODING", b"ok", b"extra"]),
        argv(&[b"PFDEBUG", b"ENCODING"]),
        argv(&[b"PFADD"]),
        argv(&[b"PFCOUNT"]),
        argv(&[b"PFMERGE"]),
        argv(&[b"PFSELFTEST", b"x"]),
        argv(&[b"PFADD", b"new-empty"]),
        argv(&[b"PFMERGE", b"merged-from-nothing"]),
        argv(&[b"PFMERGE", b"merged-from-nothing", b"missing"]),
    ] {
        pair.check(&cmd);
    }
    pair.inspect(b"new-empty");
    pair.inspect(b"merged-from-nothing");
    eprintln!(
        "{} invalid values × 6 commands and the error cases: {} commands, identical replies",
        values.len(),
        pair.sent
    );
}
