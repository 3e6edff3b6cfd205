//! The keyspace and database commands, core beside a real Redis 8.6.3.
//!
//! * Seeded random streams over four databases (SELECT, SWAPDB, MOVE, COPY,
//!   RENAME, FLUSHDB, ...) with strings, sets, hashes and sorted sets in every
//!   encoding, errors included, go to the core (in process) and to Redis: every
//!   reply must be byte-identical, except where Redis's answer depends on its
//!   random hash seed. There the semantics are compared: KEYS as a sorted list,
//!   a whole SCAN / SSCAN / HSCAN / ZSCAN walk (with MATCH, COUNT, TYPE,
//!   NOVALUES) as the set of what it returned, RANDOMKEY as "a live key of
//!   this database". At the end of each stream the INFO keyspace lines and the
//!   keyspace_hits / keyspace_misses counters must agree too.
//! * SCAN's guarantee under change: keys added and deleted between the calls
//!   of a walk, enough to make the core's dict grow (and, in another walk,
//!   shrink) while it is being walked; every key present throughout must come
//!   back, on both servers, and nothing that never existed.
//! * WATCH against FLUSHALL, FLUSHDB, SWAPDB, MOVE, COPY and RENAME, with two
//!   clients on each side.
//! * RESP3: a few of these commands through the core's listener after HELLO 3,
//!   byte for byte against Redis after HELLO 3.

use std::collections::{BTreeSet, HashSet};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::server::{ClientId, ConnectInfo};
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};
use redislab_listener::CoreListener;

type Argv = Vec<Vec<u8>>;

fn argv<S: AsRef<[u8]>>(parts: &[S]) -> Argv {
    parts.iter().map(|p| p.as_ref().to_vec()).collect()
}

fn show(cmd: &[Vec<u8>]) -> String {
    cmd.iter()
        .map(|a| {
            let s = String::from_utf8_lossy(a);
            if s.len() > 40 {
                format!("{}...({} bytes)", &s[..40], a.len())
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// ----- a small RESP2 reader, for the replies compared by meaning -----

#[derive(Clone, Debug, PartialEq)]
enum Resp {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Resp>>),
}

fn parse(buf: &[u8]) -> Resp {
    fn line(buf: &[u8], at: &mut usize) -> String {
        let end = buf[*at..].windows(2).position(|w| w == b"\r\n").unwrap() + *at;
        let s = String::from_utf8_lossy(&buf[*at..end]).into_owned();
        *at = end + 2;
        s
    }
    fn one(buf: &[u8], at: &mut usize) -> Resp {
        let kind = buf[*at];
        *at += 1;
        let text = line(buf, at);
        match kind {
            b'+' => Resp::Simple(text),
            b'-' => Resp::Error(text),
            b':' => Resp::Int(text.parse().unwrap()),
            b'$' => {
                let n: i64 = text.parse().unwrap();
                if n < 0 {
                    return Resp::Bulk(None);
                }
                let body = buf[*at..*at + n as usize].to_vec();
                *at += n as usize + 2;
                Resp::Bulk(Some(body))
            }
            b'*' => {
                let n: i64 = text.parse().unwrap();
                if n < 0 {
                    return Resp::Array(None);
                }
                Resp::Array(Some((0..n).map(|_| one(buf, at)).collect()))
            }
            other => panic!("unexpected RESP type {}", other as char),
        }
    }
    let mut at = 0;
    one(buf, &mut at)
}

/// `[cursor, [elements]]` of a SCAN-family reply.
fn scan_parts(reply: &Resp) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    let Resp::Array(Some(parts)) = reply else {
        return None;
    };
    let (Resp::Bulk(Some(cursor)), Resp::Array(Some(items))) = (&parts[0], &parts[1]) else {
        return None;
    };
    let items = items
        .iter()
        .map(|i| match i {
            Resp::Bulk(Some(b)) => b.clone(),
            other => panic!("scan element {other:?}"),
        })
        .collect();
    Some((cursor.clone(), items))
}

// ----- both servers side by side -----

struct Both {
    core: Server,
    client: ClientId,
    redis: RawRedis,
    compared: usize,
    by_meaning: usize,
    recent: Vec<String>,
    /// Calls after the first of each SSCAN/HSCAN/ZSCAN walk, per side (core,
    /// Redis): each is a keyspace hit, and how many a walk takes depends on the
    /// hash seed.
    extra_walk_hits: [i64; 2],
    /// Identical replies that were errors, and replies per command name.
    errors: usize,
    per_command: std::collections::BTreeMap<String, usize>,
}

impl Both {
    fn new(port: u16) -> Both {
        let mut core = Server::new();
        let client = core.connect(ConnectInfo::in_process());
        Both {
            core,
            client,
            redis: RawRedis::connect(port).unwrap(),
            compared: 0,
            by_meaning: 0,
            recent: Vec::new(),
            extra_walk_hits: [0, 0],
            errors: 0,
            per_command: Default::default(),
        }
    }

    fn remember(&mut self, cmd: &[Vec<u8>]) {
        self.recent.push(show(cmd));
        if self.recent.len() > 25 {
            self.recent.remove(0);
        }
    }

    fn raw(&mut self, cmd: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
        self.remember(cmd);
        let core = self.core.call(self.client, cmd).to_resp2();
        let redis = self.redis.call(cmd).unwrap();
        (core, redis)
    }

    fn context(&self) -> String {
        self.recent.join("\n    ")
    }

    /// Sends `cmd` to both and requires the same bytes.
    fn same(&mut self, cmd: &[Vec<u8>]) -> Vec<u8> {
        let (core, redis) = self.raw(cmd);
        assert_eq!(
            String::from_utf8_lossy(&core),
            String::from_utf8_lossy(&redis),
            "replies differ for `{}`; recent commands:\n    {}",
            show(cmd),
            self.context()
        );
        self.compared += 1;
        self.errors += usize::from(redis.starts_with(b"-"));
        let name = String::from_utf8_lossy(&cmd[0]).to_ascii_uppercase();
        *self.per_command.entry(name).or_default() += 1;
        redis
    }

    fn same_str(&mut self, parts: &[&str]) -> Vec<u8> {
        self.same(&argv(parts))
    }

    fn check<T: std::fmt::Debug + PartialEq>(&mut self, what: &str, core: T, redis: T) {
        assert_eq!(
            core,
            redis,
            "{what} differs; recent commands:\n    {}",
            self.context()
        );
        self.by_meaning += 1;
    }

    /// A whole walk of a SCAN-family command on each server: the set of
    /// elements returned (grouped in `group`s: 2 for HSCAN/ZSCAN pairs), and
    /// every cursor-0 reply of a small collection byte for byte.
    fn walk(&mut self, head: &[Vec<u8>], tail: &[Vec<u8>], group: usize) {
        let run = |both: &mut Both, core_side: bool| -> Result<BTreeSet<Vec<Vec<u8>>>, Vec<u8>> {
            let mut cursor = b"0".to_vec();
            let mut all = BTreeSet::new();
            for _ in 0..100_000 {
                let mut cmd = head.to_vec();
                cmd.push(cursor.clone());
                cmd.extend_from_slice(tail);
                let bytes = if core_side {
                    both.core.call(both.client, &cmd).to_resp2()
                } else {
                    both.redis.call(&cmd).unwrap()
                };
                let Some((next, items)) = scan_parts(&parse(&bytes)) else {
                    return Err(bytes);
                };
                for chunk in items.chunks(group) {
                    all.insert(chunk.to_vec());
                }
                if next == b"0" {
                    return Ok(all);
                }
                if head.len() > 1 {
                    both.extra_walk_hits[usize::from(!core_side)] += 1;
                }
                cursor = next;
            }
            panic!("a walk that never ends: {}", show(head));
        };
        let mut first = head.to_vec();
        first.push(b"0".to_vec());
        first.extend_from_slice(tail);
        self.remember(&first);
        let core = run(self, true);
        let redis = run(self, false);
        match (&core, &redis) {
            (Err(c), Err(r)) => assert_eq!(
                String::from_utf8_lossy(c),
                String::from_utf8_lossy(r),
                "scan error differs for `{}`",
                show(&first)
            ),
            _ => self.check(&format!("walk of `{}`", show(&first)), core, redis),
        }
    }
}

// ----- the random streams -----

const NAMES: &[&str] = &[
    "a", "b", "c", "d", "num", "str", "set", "hash", "zset", "x{t}", "bin\0ary",
];

fn name(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_range(0..25) == 0 {
        // 130 bytes: Redis gives such keys an expiry slot up front.
        return format!("long:{}", "k".repeat(125)).into_bytes();
    }
    NAMES.choose(rng).unwrap().as_bytes().to_vec()
}

fn string_value(rng: &mut ChaCha8Rng) -> Vec<u8> {
    match rng.gen_range(0..8) {
        0 => b"42".to_vec(),
        1 => b"12345678901".to_vec(),
        2 => b"-0".to_vec(),
        3 => b"".to_vec(),
        4 => "t".repeat(30).into_bytes(),
        5 => "u".repeat(60).into_bytes(),
        6 => rng.gen_range(0..10_000).to_string().into_bytes(),
        _ => b"hello".to_vec(),
    }
}

fn db(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..30) {
        0 => "16".into(),
        1 => "-1".into(),
        2 => "x".into(),
        3 => "99999999999".into(),
        _ => rng.gen_range(0..4).to_string(),
    }
}

fn pattern(rng: &mut ChaCha8Rng) -> &'static str {
    [
        "*", "?", "a*", "*a*", "[a-h]*", "[^s]*", "s?t", "x\\{t}", "*{t}", "h[a]sh", "long:*", "[",
        "[a-", "\\",
    ]
    .choose(rng)
    .unwrap()
}

const FUTURE_S: i64 = 4_102_444_800; // 2100-01-01

/// One random command (or a whole comparison) on both servers.
fn step(both: &mut Both, rng: &mut ChaCha8Rng) {
    let k = name(rng);
    let k2 = name(rng);
    let ks = || k.clone();
    let mut cmd: Argv;
    let push = |cmd: &mut Argv, x: &[u8]| cmd.push(x.to_vec());
    match rng.gen_range(0..100) {
        // Writers of every type and encoding.
        0..=7 => {
            cmd = argv(&[b"SET".as_slice(), &k, &string_value(rng)]);
            if rng.gen_bool(0.2) {
                cmd.extend(argv(&[
                    "EXAT",
                    &(FUTURE_S + rng.gen_range(0..100)).to_string(),
                ]));
            }
        }
        8..=9 => cmd = argv(&[b"APPEND".as_slice(), &k, b"xyz"]),
        10..=14 => {
            cmd = argv(&[b"SADD".as_slice(), &k]);
            let (n, ints) = match rng.gen_range(0..10) {
                0 => (rng.gen_range(130..200), false),
                1 => (rng.gen_range(500..600), true),
                _ => (rng.gen_range(1..6), rng.gen_bool(0.5)),
            };
            for i in 0..n {
                let m = if ints {
                    rng.gen_range(0..2000).to_string()
                } else {
                    format!("m{}", rng.gen_range(0..400) + i % 3)
                };
                cmd.push(m.into_bytes());
            }
        }
        15..=19 => {
            cmd = argv(&[b"HSET".as_slice(), &k]);
            let n = if rng.gen_range(0..8) == 0 {
                140
            } else {
                rng.gen_range(1..5)
            };
            for _ in 0..n {
                cmd.push(format!("f{}", rng.gen_range(0..300)).into_bytes());
                cmd.push(if rng.gen_range(0..30) == 0 {
                    "v".repeat(70).into_bytes()
                } else {
                    string_value(rng)
                });
            }
        }
        20..=24 => {
            cmd = argv(&[b"ZADD".as_slice(), &k]);
            let n = if rng.gen_range(0..8) == 0 {
                150
            } else {
                rng.gen_range(1..5)
            };
            for _ in 0..n {
                let score = ["1", "1.5", "-0", "0.1", "1e20", "inf", "-2.25", "3"]
                    .choose(rng)
                    .unwrap()
                    .to_string();
                let score = if rng.gen_bool(0.5) {
                    format!("{}.{}", rng.gen_range(0..100), rng.gen_range(0..10))
                } else {
                    score
                };
                cmd.push(score.into_bytes());
                cmd.push(format!("e{}", rng.gen_range(0..300)).into_bytes());
            }
        }
        // Databases.
        25..=29 => cmd = argv(&["SELECT", &db(rng)]),
        30..=31 => cmd = argv(&["SWAPDB", &db(rng), &db(rng)]),
        32..=34 => cmd = argv(&[b"MOVE".as_slice(), &k, db(rng).as_bytes()]),
        35 if rng.gen_range(0..6) == 0 => {
            let opt = ["", "SYNC", "ASYNC", "LATER"].choose(rng).unwrap();
            cmd = argv(&["FLUSHDB"]);
            if !opt.is_empty() {
                push(&mut cmd, opt.as_bytes());
            }
        }
        36 if rng.gen_range(0..20) == 0 => cmd = argv(&["FLUSHALL"]),
        37 => cmd = argv(&["DBSIZE"]),
        // Renames and copies.
        38..=41 => {
            let which = if rng.gen_bool(0.5) {
                "RENAME"
            } else {
                "RENAMENX"
            };
            let to = if rng.gen_range(0..6) == 0 {
                ks()
            } else {
                k2.clone()
            };
            cmd = argv(&[which.as_bytes(), &k, &to]);
        }
        42..=47 => {
            let to = if rng.gen_range(0..8) == 0 {
                ks()
            } else {
                k2.clone()
            };
            cmd = argv(&[b"COPY".as_slice(), &k, &to]);
            let mut opts: Vec<Argv> = Vec::new();
            if rng.gen_bool(0.5) {
                opts.push(argv(&["DB", &db(rng)]));
            }
            if rng.gen_bool(0.4) {
                opts.push(argv(&["REPLACE"]));
            }
            if rng.gen_range(0..15) == 0 {
                opts.push(argv(&[["DB", "bogus", "REPLACE"].choose(rng).unwrap()]));
            }
            opts.shuffle(rng);
            cmd.extend(opts.into_iter().flatten());
        }
        // Existence, type, lifetime.
        48..=50 => {
            let which = ["DEL", "UNLINK", "EXISTS", "TOUCH"].choose(rng).unwrap();
            cmd = argv(&[which.as_bytes(), &k, &k2]);
            if rng.gen_bool(0.3) {
                cmd.push(k.clone());
            }
        }
        51..=53 => cmd = argv(&[b"TYPE".as_slice(), &k]),
        54..=57 => {
            let at = FUTURE_S + rng.gen_range(0..1000);
            cmd = match rng.gen_range(0..4) {
                0 => argv(&[b"EXPIREAT".as_slice(), &k, at.to_string().as_bytes()]),
                1 => argv(&[
                    b"PEXPIREAT".as_slice(),
                    &k,
                    (at * 1000 + 7).to_string().as_bytes(),
                ]),
                2 => argv(&[b"EXPIRE".as_slice(), &k, b"-1"]),
                _ => argv(&[b"PEXPIREAT".as_slice(), &k, b"1"]),
            };
            if rng.gen_bool(0.4) {
                let opt = ["NX", "XX", "GT", "LT", "nx", "BAD"].choose(rng).unwrap();
                push(&mut cmd, opt.as_bytes());
            }
        }
        58..=60 => {
            let which = ["EXPIRETIME", "PEXPIRETIME", "PERSIST"]
                .choose(rng)
                .unwrap();
            cmd = argv(&[which.as_bytes(), &k]);
        }
        61 => {
            // TTL's value moves with the clock: compare its class.
            let c = argv(&[b"TTL".as_slice(), &k]);
            let (core, redis) = both.raw(&c);
            let class = |b: &[u8]| match parse(b) {
                Resp::Int(n) if n > 0 => "positive".to_string(),
                other => format!("{other:?}"),
            };
            both.check("TTL class", class(&core), class(&redis));
            return;
        }
        // OBJECT and MEMORY.
        62..=65 => {
            let sub = ["ENCODING", "REFCOUNT", "FREQ", "encoding", "NOPE"]
                .choose(rng)
                .unwrap();
            cmd = argv(&[b"OBJECT".as_slice(), sub.as_bytes(), &k]);
            if rng.gen_range(0..20) == 0 {
                cmd.push(b"extra".to_vec());
            }
        }
        66 => {
            // IDLETIME: 0 now, perhaps 1 if a second boundary just passed.
            let c = argv(&[b"OBJECT".as_slice(), b"IDLETIME", &k]);
            let (core, redis) = both.raw(&c);
            let class = |b: &[u8]| match parse(b) {
                Resp::Int(n) if (0..=2).contains(&n) => "small".to_string(),
                other => format!("{other:?}"),
            };
            both.check("OBJECT IDLETIME class", class(&core), class(&redis));
            return;
        }
        67..=70 => {
            // Exact except hashes (not modelled) and skiplists (random levels).
            let db = both.core.current_db();
            let measurable = match both.core.db(db).peek(&k) {
                Some(redislab_core::keyspace::Value::Hash(_)) => false,
                Some(redislab_core::keyspace::Value::Zset(z)) => {
                    z.encoding() == redislab_core::zset::Encoding::Listpack
                }
                _ => true,
            };
            if !measurable {
                return;
            }
            cmd = argv(&[b"MEMORY".as_slice(), b"USAGE", &k]);
        }
        // Reads of the values.
        71..=73 => {
            cmd = match rng.gen_range(0..6) {
                0 => argv(&[b"GET".as_slice(), &k]),
                1 => argv(&[b"SCARD".as_slice(), &k]),
                2 => argv(&[b"HLEN".as_slice(), &k]),
                3 => argv(&[b"ZCARD".as_slice(), &k]),
                4 => argv(&[b"ZSCORE".as_slice(), &k, b"e1"]),
                _ => argv(&[b"HGET".as_slice(), &k, b"f1"]),
            }
        }
        // The walks.
        74..=79 => {
            let (which, group) = *[("SSCAN", 1), ("HSCAN", 2), ("ZSCAN", 2)]
                .choose(rng)
                .unwrap();
            let mut tail: Argv = Vec::new();
            if rng.gen_bool(0.4) {
                tail.extend(argv(&[
                    "MATCH",
                    ["*", "m1*", "e?", "f[0-4]*", "1*"].choose(rng).unwrap(),
                ]));
            }
            if rng.gen_bool(0.4) {
                tail.extend(argv(&[
                    "COUNT",
                    ["1", "5", "100", "0", "x"].choose(rng).unwrap(),
                ]));
            }
            let mut group = group;
            if rng.gen_range(0..4) == 0 {
                tail.push(b"NOVALUES".to_vec());
                if which == "HSCAN" {
                    group = 1;
                }
            }
            if rng.gen_range(0..20) == 0 {
                tail.push(b"TYPE".to_vec());
            }
            // A small value's single reply must be the very same bytes.
            let mut first = argv(&[which.as_bytes(), &k, b"0"]);
            first.extend(tail.clone());
            let (core, redis) = both.raw(&first);
            let whole = scan_parts(&parse(&redis)).is_some_and(|(c, _)| c == b"0")
                && scan_parts(&parse(&core)).is_some_and(|(c, _)| c == b"0");
            let db = both.core.current_db();
            let dict_encoded = match both.core.db(db).peek(&k) {
                Some(redislab_core::keyspace::Value::Set(s)) => s.encoding_name() == "hashtable",
                Some(redislab_core::keyspace::Value::Hash(h)) => h.encoding_name() == "hashtable",
                Some(redislab_core::keyspace::Value::Zset(z)) => {
                    z.encoding() == redislab_core::zset::Encoding::Skiplist
                }
                _ => false,
            };
            if whole && !dict_encoded {
                both.check(
                    &format!("`{}`", show(&first)),
                    String::from_utf8_lossy(&core).into_owned(),
                    String::from_utf8_lossy(&redis).into_owned(),
                );
            }
            both.walk(&argv(&[which.as_bytes(), &k]), &tail, group);
            return;
        }
        80..=83 => {
            let mut tail: Argv = Vec::new();
            if rng.gen_bool(0.5) {
                tail.extend(argv(&["MATCH", pattern(rng)]));
            }
            if rng.gen_bool(0.5) {
                tail.extend(argv(&[
                    "COUNT",
                    ["1", "3", "1000", "-1"].choose(rng).unwrap(),
                ]));
            }
            if rng.gen_bool(0.4) {
                tail.extend(argv(&[
                    "TYPE",
                    ["string", "SET", "hash", "zset", "list", "nosuch"]
                        .choose(rng)
                        .unwrap(),
                ]));
            }
            both.walk(&argv(&["SCAN"]), &tail, 1);
            return;
        }
        84..=86 => {
            let c = argv(&["KEYS", pattern(rng)]);
            let (core, redis) = both.raw(&c);
            let sorted = |b: &[u8]| match parse(b) {
                Resp::Array(Some(mut items)) => {
                    items.sort_by_key(|i| format!("{i:?}"));
                    Resp::Array(Some(items))
                }
                other => other,
            };
            both.check(&format!("`{}`", show(&c)), sorted(&core), sorted(&redis));
            return;
        }
        87 => {
            let c = argv(&["RANDOMKEY"]);
            let (core, redis) = both.raw(&c);
            let db = both.core.current_db();
            match parse(&core) {
                Resp::Bulk(Some(key)) => {
                    assert!(
                        both.core.db(db).peek(&key).is_some(),
                        "RANDOMKEY: not a key"
                    );
                    both.check(
                        "RANDOMKEY kind",
                        "a key",
                        if parse(&redis) == Resp::Bulk(None) {
                            "nil"
                        } else {
                            "a key"
                        },
                    );
                }
                other => both.check("RANDOMKEY", other, parse(&redis)),
            }
            return;
        }
        // Wrong arities and odd arguments.
        88 => {
            cmd = match rng.gen_range(0..6) {
                0 => argv(&["RENAME", "a"]),
                1 => argv(&["MOVE", "a"]),
                2 => argv(&["SWAPDB", "0"]),
                3 => argv(&["SCAN"]),
                4 => argv(&["OBJECT"]),
                _ => argv(&["RANDOMKEY", "x"]),
            }
        }
        89 => {
            // A cursor Redis accepts only names a bucket of *its* table: compare
            // whether it is accepted, and the error if not.
            let c = ["x", "-1", " 3", "+0", "007", "18446744073709551616", "-0"]
                .choose(rng)
                .unwrap();
            let c = argv(&["SCAN", c, "COUNT", "2"]);
            let (core, redis) = both.raw(&c);
            let kind = |b: &[u8]| match parse(b) {
                Resp::Error(e) => e,
                _ => "accepted".into(),
            };
            both.check(&format!("`{}`", show(&c)), kind(&core), kind(&redis));
            return;
        }
        90 => cmd = argv(&["OBJECT", "HELP"]),
        // One lookup of the key whatever the number of fields: one hit or miss.
        91..=92 => {
            cmd = argv(&[b"HMGET".as_slice(), &k]);
            for _ in 0..rng.gen_range(1..4) {
                cmd.push(format!("f{}", rng.gen_range(0..300)).into_bytes());
            }
        }
        _ => {
            let c = argv(&[b"GET".as_slice(), &k]);
            cmd = c;
        }
    }
    if cmd.is_empty() {
        return;
    }
    both.same(&cmd);
}

/// INFO keyspace without `avg_ttl` (an estimate that moves with time), and
/// the hit/miss counters of INFO stats.
fn info_digest(bytes: &[u8]) -> Vec<String> {
    let Resp::Bulk(Some(text)) = parse(bytes) else {
        panic!("INFO reply")
    };
    String::from_utf8_lossy(&text)
        .lines()
        .filter(|l| l.starts_with("db") || l.starts_with("keyspace_"))
        .map(|l| {
            l.split(',')
                .filter(|f| !f.starts_with("avg_ttl"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

#[test]
fn random_keyspace_streams_answer_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut both = Both::new(server.port);
    let mut total = 0;
    for seed in 1..=5u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        both.same_str(&["SELECT", "0"]);
        both.same_str(&["FLUSHALL"]);
        both.same_str(&["CONFIG", "RESETSTAT"]);
        for _ in 0..2500 {
            step(&mut both, &mut rng);
            total += 1;
        }
        let (core, redis) = both.raw(&argv(&["INFO", "keyspace"]));
        both.check("INFO keyspace", info_digest(&core), info_digest(&redis));
        let (core, redis) = both.raw(&argv(&["INFO", "stats"]));
        let [core_extra, redis_extra] = std::mem::take(&mut both.extra_walk_hits);
        let counters = |bytes: &[u8], extra: i64| -> Vec<String> {
            info_digest(bytes)
                .into_iter()
                .map(|l| match l.strip_prefix("keyspace_hits:") {
                    Some(n) => format!("keyspace_hits:{}", n.parse::<i64>().unwrap() - extra),
                    None => l,
                })
                .collect()
        };
        both.check(
            "keyspace hits/misses (beyond the walks' seed-dependent calls)",
            counters(&core, core_extra),
            counters(&redis, redis_extra),
        );
    }
    eprintln!(
        "{total} random steps: {} replies identical byte for byte ({} of them errors), {} compared by meaning",
        both.compared, both.errors, both.by_meaning
    );
    eprintln!("identical replies by command: {:?}", both.per_command);
}

// ----- SCAN under change -----

/// A way to send one command to one server and get its RESP2 bytes.
type Call<'a> = dyn FnMut(&[Vec<u8>]) -> Vec<u8> + 'a;

/// One walk with COUNT `count` on the core (in process) or Redis, calling
/// `between` after every call; returns every element it saw, in order, and
/// the number of calls.
fn walk_with_changes(
    call: &mut Call,
    head: &[&str],
    count: &str,
    between: &mut dyn FnMut(&mut Call, usize),
) -> (Vec<Vec<u8>>, usize) {
    let mut seen = Vec::new();
    let mut cursor = b"0".to_vec();
    let mut calls = 0;
    loop {
        let mut cmd = argv(head);
        cmd.push(cursor);
        cmd.extend(argv(&["COUNT", count]));
        let reply = call(&cmd);
        let (next, items) = scan_parts(&parse(&reply)).expect("scan reply");
        seen.extend(items);
        between(call, calls);
        calls += 1;
        if next == b"0" {
            return (seen, calls);
        }
        assert!(calls < 1_000_000, "walk does not end");
        cursor = next;
    }
}

#[test]
fn a_walk_returns_every_key_present_throughout_despite_changes_and_rehashing() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).unwrap();
    let mut core = Server::new();
    for (phase, grow) in [("growing", true), ("shrinking", false)] {
        let stable: Vec<Vec<u8>> = (0..300)
            .map(|i| format!("stable:{i}").into_bytes())
            .collect();
        let setup = |call: &mut Call| {
            call(&argv(&["FLUSHALL"]));
            for k in &stable {
                call(&[b"SET".to_vec(), k.clone(), b"v".to_vec()]);
            }
            // Volatile keys to delete during the walk, of every type.
            for i in 0..(if grow { 50 } else { 3000 }) {
                let k = format!("tmp:{i}");
                match i % 4 {
                    0 => call(&argv(&["SET", &k, "v"])),
                    1 => call(&argv(&["SADD", &k, "m"])),
                    2 => call(&argv(&["HSET", &k, "f", "v"])),
                    _ => call(&argv(&["ZADD", &k, "1", "m"])),
                };
            }
        };
        // Between calls: add 40 keys (growing) or delete 40 (shrinking), plus
        // a delete of a recently added key either way.
        let mut changes = |call: &mut Call, n: usize| {
            for j in 0..40 {
                let i = n * 40 + j;
                if grow {
                    call(&argv(&["SET", &format!("new:{i}"), "v"]));
                } else {
                    call(&argv(&["DEL", &format!("tmp:{i}")]));
                }
            }
            call(&argv(&["DEL", &format!("new:{}", n * 40)]));
        };
        let mut ever: HashSet<Vec<u8>> = stable.iter().cloned().collect();
        for i in 0..200_000 {
            ever.insert(format!("new:{i}").into_bytes());
            ever.insert(format!("tmp:{i}").into_bytes());
        }
        let mut rehash_seen = false;
        let core_seen = {
            let mut call = |cmd: &[Vec<u8>]| {
                let r = core.run(cmd).to_resp2();
                rehash_seen |= core.db(0).table_sizes()[1] != 0;
                r
            };
            setup(&mut call);
            walk_with_changes(&mut call, &["SCAN"], "10", &mut changes)
        };
        let redis_seen = {
            let mut call = |cmd: &[Vec<u8>]| redis.call(cmd).unwrap();
            setup(&mut call);
            walk_with_changes(&mut call, &["SCAN"], "10", &mut changes)
        };
        for (who, (seen, calls)) in [("core", &core_seen), ("redis", &redis_seen)] {
            let seen: HashSet<Vec<u8>> = seen.iter().cloned().collect();
            for k in &stable {
                assert!(
                    seen.contains(k),
                    "{phase}: {who} missed {}",
                    String::from_utf8_lossy(k)
                );
            }
            for k in &seen {
                assert!(
                    ever.contains(k),
                    "{phase}: {who} returned a key never added"
                );
            }
            eprintln!(
                "{phase} walk on {who}: {calls} calls, {} keys seen",
                seen.len()
            );
        }
        assert!(
            rehash_seen,
            "{phase}: the core's dict never rehashed during the walk"
        );
        // The walk on a big set/hash/zset, changing it the same way.
        for (kind, add) in [("SSCAN", "SADD"), ("HSCAN", "HSET"), ("ZSCAN", "ZADD")] {
            let member_args = |m: &str| -> Vec<String> {
                match add {
                    "SADD" => vec![m.to_string()],
                    _ if add == "HSET" => vec![m.to_string(), "v".into()],
                    _ => vec!["1".into(), m.to_string()],
                }
            };
            let build = |call: &mut Call| {
                call(&argv(&["DEL", "big"]));
                for i in 0..(if grow { 300 } else { 3000 }) {
                    let mut c = vec![add.to_string(), "big".into()];
                    c.extend(member_args(&format!("s{i}")));
                    call(&argv(&c));
                }
            };
            let mut change = |call: &mut Call, n: usize| {
                for j in 0..30 {
                    let i = n * 30 + j;
                    let mut c = if grow {
                        vec![add.to_string(), "big".into()]
                    } else {
                        let rem = match add {
                            "SADD" => "SREM",
                            "HSET" => "HDEL",
                            _ => "ZREM",
                        };
                        vec![rem.to_string(), "big".into()]
                    };
                    if grow {
                        c.extend(member_args(&format!("n{i}")));
                    } else {
                        c.push(format!("s{}", 100 + i));
                    }
                    call(&argv(&c));
                }
            };
            let group = if kind == "SSCAN" { 1 } else { 2 };
            let mut results = Vec::new();
            for side in 0..2 {
                let mut call_core = |cmd: &[Vec<u8>]| core.run(cmd).to_resp2();
                let mut call_redis = |cmd: &[Vec<u8>]| redis.call(cmd).unwrap();
                let call: &mut Call = if side == 0 {
                    &mut call_core
                } else {
                    &mut call_redis
                };
                build(call);
                let (seen, _) = walk_with_changes(call, &[kind, "big"], "10", &mut change);
                results.push(seen);
            }
            for (who, seen) in ["core", "redis"].iter().zip(&results) {
                let mut members: HashSet<&[u8]> = HashSet::new();
                for element in seen.chunks(group) {
                    let m = element[0].as_slice();
                    assert!(
                        m.starts_with(b"s") || m.starts_with(b"n"),
                        "{phase} {kind}: {who} returned {}",
                        String::from_utf8_lossy(m)
                    );
                    if group == 2 {
                        let want: &[u8] = if kind == "HSCAN" { b"v" } else { b"1" };
                        assert_eq!(element[1], want, "{phase} {kind}: {who}'s value");
                    }
                    members.insert(m);
                }
                // s0..s99 are never removed (the shrinking walk removes s100 on).
                for i in 0..100 {
                    let m = format!("s{i}");
                    assert!(
                        members.contains(m.as_bytes()),
                        "{phase} {kind}: {who} missed {m}"
                    );
                }
            }
        }
    }
}

#[test]
fn match_and_type_filter_the_same_keys() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut both = Both::new(server.port);
    both.same_str(&["FLUSHALL"]);
    for i in 0..400 {
        let k = format!("user:{i}");
        match i % 5 {
            0 => both.same_str(&["SET", &k, "v"]),
            1 => both.same_str(&["SADD", &k, "m"]),
            2 => both.same_str(&["HSET", &k, "f", "v"]),
            3 => both.same_str(&["ZADD", &k, "1", "m"]),
            _ => both.same_str(&["SET", &format!("other:{i}"), "v", "EXAT", "4102444800"]),
        };
    }
    // A few keys already past their deadline: SCAN must leave them out (and
    // delete them), KEYS must leave them out.
    for i in 0..5 {
        both.same_str(&["SET", &format!("user:dead{i}"), "v", "PX", "1"]);
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    for pattern in ["*", "user:1*", "user:?", "*:3?", "other:*", "nomatch*"] {
        for t in ["", "string", "set", "hash", "zset", "list", "String"] {
            for count in ["10", "1", "1000"] {
                let mut tail = argv(&["MATCH", pattern, "COUNT", count]);
                if !t.is_empty() {
                    tail.extend(argv(&["TYPE", t]));
                }
                both.walk(&argv(&["SCAN"]), &tail, 1);
            }
        }
    }
    both.same_str(&["DBSIZE"]);
    eprintln!("{} SCAN walks compared", both.by_meaning);
}

// ----- WATCH -----

/// Commands the other client runs first, the key the watcher watches, and the
/// command (of the other client) that may or may not invalidate it.
type Scenario = (
    &'static [&'static [&'static str]],
    &'static str,
    &'static [&'static str],
);

#[test]
fn watch_sees_flushes_swaps_moves_copies_and_renames_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut core = Server::new();
    let (ca, cb) = (
        core.connect(ConnectInfo::in_process()),
        core.connect(ConnectInfo::in_process()),
    );
    let mut ra = RawRedis::connect(server.port).unwrap();
    let mut rb = RawRedis::connect(server.port).unwrap();
    // (watcher's db, setup by the other client, watched key, the command, watcher's db for EXEC)
    let scenarios: &[Scenario] = &[
        (&[&["SET", "k", "v"]], "k", &["FLUSHALL"]),
        (&[], "k", &["FLUSHALL"]),
        (&[&["SET", "k", "v"]], "k", &["FLUSHDB"]),
        (&[&["SET", "other", "v"]], "k", &["FLUSHDB"]),
        (
            &[&["SELECT", "1"], &["SET", "k", "v"]],
            "k",
            &["SWAPDB", "0", "1"],
        ),
        (
            &[&["SELECT", "1"], &["SET", "x", "v"]],
            "k",
            &["SWAPDB", "0", "1"],
        ),
        (&[&["SET", "k", "v"]], "k", &["SWAPDB", "0", "2"]),
        (&[&["SET", "k", "v"]], "k", &["MOVE", "k", "1"]),
        (
            &[
                &["SELECT", "1"],
                &["SET", "k", "v"],
                &["SELECT", "0"],
                &["SET", "k", "w"],
            ],
            "k",
            &["MOVE", "k", "1"],
        ),
        (
            &[&["SELECT", "1"], &["SET", "k", "v"]],
            "k",
            &["MOVE", "k", "0"],
        ),
        (&[&["SET", "src", "v"]], "k", &["COPY", "src", "k"]),
        (
            &[&["SET", "src", "v"]],
            "k",
            &["COPY", "src", "k", "DB", "1"],
        ),
        (
            &[&["SELECT", "1"], &["SET", "src", "v"]],
            "k",
            &["COPY", "src", "k", "DB", "0"],
        ),
        (
            &[&["SET", "src", "v"], &["SET", "k", "old"]],
            "k",
            &["COPY", "src", "k"],
        ),
        (&[&["SET", "src", "v"]], "k", &["RENAME", "src", "k"]),
        (&[&["SET", "k", "v"]], "k", &["RENAME", "k", "k"]),
        (&[&["SET", "k", "v"]], "k", &["RENAMENX", "k", "elsewhere"]),
        (&[], "k", &["DEL", "k"]),
        (&[&["SET", "k", "v"]], "k", &["EXPIRE", "k", "100", "XX"]),
        (&[&["SET", "k", "v"]], "k", &["PERSIST", "k"]),
        (&[&["SET", "k", "v", "EX", "100"]], "k", &["PERSIST", "k"]),
    ];
    let mut compared = 0;
    for (setup, watched, cmd) in scenarios {
        let mut run = |core_side: bool, who: usize, words: &[&str]| -> Vec<u8> {
            let a = argv(words);
            if core_side {
                core.call(if who == 0 { ca } else { cb }, &a).to_resp2()
            } else if who == 0 {
                ra.call(&a).unwrap()
            } else {
                rb.call(&a).unwrap()
            }
        };
        let mut outcome = |core_side: bool| -> Vec<Vec<u8>> {
            let mut out = Vec::new();
            run(core_side, 1, &["SELECT", "0"]);
            run(core_side, 1, &["FLUSHALL"]);
            for s in *setup {
                out.push(run(core_side, 1, s));
            }
            run(core_side, 1, &["SELECT", "0"]);
            out.push(run(core_side, 0, &["WATCH", watched]));
            out.push(run(core_side, 1, cmd));
            out.push(run(core_side, 0, &["MULTI"]));
            out.push(run(core_side, 0, &["PING"]));
            out.push(run(core_side, 0, &["EXEC"]));
            out
        };
        let c = outcome(true);
        let r = outcome(false);
        let text = |v: &Vec<Vec<u8>>| {
            v.iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            text(&c),
            text(&r),
            "setup {setup:?}, watch {watched}, then {cmd:?}"
        );
        compared += c.len();
    }
    eprintln!(
        "{} WATCH scenarios, {compared} replies identical",
        scenarios.len()
    );
}

// ----- RESP3 -----

#[test]
fn resp3_replies_match_redis_through_the_listener() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let listener = CoreListener::start(0).expect("core listener");
    let mut core = RawRedis::connect(listener.port()).unwrap();
    let mut redis = RawRedis::connect(server.port).unwrap();
    let script: &[&[&str]] = &[
        &["HELLO", "3"],
        &["FLUSHALL"],
        &["RANDOMKEY"],
        &["SCAN", "0"],
        &["SET", "str", "hello"],
        &["SADD", "set", "1", "2", "3"],
        &["HSET", "h", "f1", "v1", "f2", "v2"],
        &["ZADD", "z", "1.5", "a", "-0", "b", "inf", "c"],
        &["SCAN", "0", "TYPE", "string"],
        &["SSCAN", "set", "0"],
        &["HSCAN", "h", "0"],
        &["HSCAN", "h", "0", "NOVALUES"],
        &["ZSCAN", "z", "0"],
        &["SSCAN", "nokey", "0"],
        &["SCAN", "x"],
        &["TYPE", "z"],
        &["TYPE", "nokey"],
        &["OBJECT", "ENCODING", "str"],
        &["OBJECT", "ENCODING", "nokey"],
        &["OBJECT", "REFCOUNT", "set"],
        &["OBJECT", "FREQ", "str"],
        &["OBJECT", "IDLETIME", "nokey"],
        &["OBJECT", "HELP"],
        &["KEYS", "st*"],
        &["RANDOMKEY"],
        &["COPY", "z", "z2", "DB", "1"],
        &["COPY", "z", "z", "DB", "1"],
        &["RENAME", "z2", "z3"],
        &["RENAME", "str", "str2"],
        &["RENAMENX", "set", "str2"],
        &["MOVE", "str2", "1"],
        &["MOVE", "str2", "0"],
        &["SWAPDB", "0", "1"],
        &["DBSIZE"],
        &["TOUCH", "str2", "nope"],
        &["PEXPIREAT", "str2", "4102444800123"],
        &["EXPIRETIME", "str2"],
        &["PEXPIRETIME", "str2"],
        &["PERSIST", "str2"],
        &["EXISTS", "str2", "str2", "z"],
        &["UNLINK", "str2", "nope"],
        &["SELECT", "1"],
        &["ZSCAN", "z", "0", "MATCH", "[ab]"],
        &["FLUSHDB", "ASYNC"],
        &["RANDOMKEY"],
    ];
    for cmd in script {
        let a = argv(cmd);
        let expected = redis.call(&a).unwrap();
        let got = core.call(&a).unwrap();
        if cmd[0] == "RANDOMKEY" && expected.starts_with(b"$") {
            // Which key is random: both must name one.
            assert!(
                got.starts_with(b"$"),
                "RANDOMKEY: {}",
                String::from_utf8_lossy(&got)
            );
            continue;
        }
        if cmd[0] == "HELLO" {
            // The server section differs (version extras, ids): shape only.
            assert_eq!(got[0], expected[0], "HELLO 3 reply type");
            continue;
        }
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "RESP3 `{}`",
            cmd.join(" ")
        );
    }
    eprintln!("{} RESP3 replies identical", script.len() - 1);
}

#[test]
fn lazy_expiry_and_the_counters_follow_redis() {
    // DEBUG SET-ACTIVE-EXPIRE needs the debug command enabled.
    let Some(server) = redislab_harness::testing::redis_with_debug_for_test() else {
        return;
    };
    let mut both = Both::new(server.port);
    both.same_str(&["FLUSHALL"]);
    both.same_str(&["CONFIG", "RESETSTAT"]);
    // The core in process runs no active expire cycle; Redis must not either.
    let off = both
        .redis
        .call(&argv(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]))
        .unwrap();
    assert_eq!(off, b"+OK\r\n");
    for i in 0..10 {
        both.same_str(&["SET", &format!("k{i}"), "v", "PX", "30"]);
    }
    both.same_str(&["SET", "stay", "v"]);
    std::thread::sleep(std::time::Duration::from_millis(80));
    // Still counted by DBSIZE until something looks at them.
    both.same_str(&["DBSIZE"]);
    both.same_str(&["GET", "k0"]);
    both.same_str(&["EXISTS", "k1", "stay"]);
    both.same_str(&["TYPE", "k2"]);
    both.same_str(&["DEL", "k3"]);
    both.same_str(&["RENAME", "k4", "x"]);
    both.same_str(&["COPY", "k5", "x"]);
    both.same_str(&["MOVE", "k6", "1"]);
    both.same_str(&["TOUCH", "k7", "stay"]);
    both.same_str(&["OBJECT", "ENCODING", "k8"]);
    both.same_str(&["DBSIZE"]);
    // SCAN deletes what it meets past its deadline, KEYS does not.
    both.same_str(&["KEYS", "k*"]);
    both.same_str(&["DBSIZE"]);
    both.walk(&argv(&["SCAN"]), &[], 1);
    both.same_str(&["DBSIZE"]);
    let (core, redis) = both.raw(&argv(&["INFO", "stats"]));
    let pick = |b: &[u8]| -> Vec<String> {
        let Resp::Bulk(Some(text)) = parse(b) else {
            panic!()
        };
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| l.starts_with("keyspace_") || l.starts_with("expired_keys:"))
            .map(str::to_string)
            .collect()
    };
    both.check("expired_keys and hits/misses", pick(&core), pick(&redis));
    both.redis
        .call(&argv(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]))
        .unwrap();
}

// ----- the LRU/LFU field -----

#[test]
fn object_freq_and_idletime_follow_the_policy_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut both = Both::new(server.port);
    both.same_str(&["FLUSHALL"]);
    // LFU: a new key counts 5 and every access adds one while the counter
    // grows with probability 1 / ((c - 5) * lfu-log-factor + 1): with the
    // factor at 0 every access counts on both servers, so the counters can be
    // compared exactly (at the default 10 the second access onwards is a coin
    // toss, and the first CI run of this test lost that toss).
    // RENAME, MOVE and COPY make a new key.
    both.same_str(&["CONFIG", "SET", "lfu-log-factor", "0"]);
    both.same_str(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
    let script: &[&[&str]] = &[
        &["SET", "a", "1"],
        &["OBJECT", "FREQ", "a"],
        &["GET", "a"],
        &["OBJECT", "FREQ", "a"],
        &["OBJECT", "FREQ", "a"],
        &["TYPE", "a"],
        &["EXISTS", "a"],
        &["OBJECT", "FREQ", "a"],
        &["HSET", "h", "f", "v"],
        &["OBJECT", "FREQ", "h"],
        &["HSET", "h", "g", "v"],
        &["OBJECT", "FREQ", "h"],
        &["SADD", "s", "x"],
        &["SADD", "s", "y"],
        &["OBJECT", "FREQ", "s"],
        &["ZADD", "z", "1", "m"],
        &["ZSCORE", "z", "m"],
        &["OBJECT", "FREQ", "z"],
        &["SET", "n", "1"],
        &["INCR", "n"],
        &["OBJECT", "FREQ", "n"],
        &["RENAME", "a", "b"],
        &["OBJECT", "FREQ", "b"],
        &["COPY", "b", "c"],
        &["OBJECT", "FREQ", "c"],
        &["OBJECT", "FREQ", "b"],
        &["MOVE", "c", "1"],
        &["SELECT", "1"],
        &["OBJECT", "FREQ", "c"],
        &["SELECT", "0"],
        &["TOUCH", "b"],
        &["OBJECT", "FREQ", "b"],
        &["OBJECT", "IDLETIME", "b"],
        &["OBJECT", "FREQ", "nokey"],
        &["CONFIG", "SET", "maxmemory-policy", "volatile-lfu"],
        &["OBJECT", "FREQ", "h"],
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
        &["OBJECT", "FREQ", "b"],
        &["SET", "fresh", "v"],
        &["OBJECT", "IDLETIME", "fresh"],
        &["OBJECT", "REFCOUNT", "fresh"],
        &["OBJECT", "REFCOUNT", "n"],
    ];
    for cmd in script {
        both.same_str(cmd);
    }
    // LRU and LRM idle times, with CLIENT NO-TOUCH: read, read without
    // touching, TOUCH without touching, then under LRM a read and a write.
    for k in ["k1", "k2", "k3", "k4", "k5"] {
        both.same_str(&["SET", k, "v"]);
    }
    std::thread::sleep(std::time::Duration::from_millis(2300));
    both.same_str(&["GET", "k1"]);
    both.same_str(&["CLIENT", "NO-TOUCH", "ON"]);
    both.same_str(&["GET", "k2"]);
    both.same_str(&["TOUCH", "k3"]);
    both.same_str(&["CLIENT", "NO-TOUCH", "OFF"]);
    both.same_str(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lrm"]);
    both.same_str(&["GET", "k4"]);
    both.same_str(&["APPEND", "k5", "x"]);
    for k in ["k1", "k2", "k3", "k4", "k5"] {
        let (core, redis) = both.raw(&argv(&["OBJECT", "IDLETIME", k]));
        let class = |b: &[u8]| match parse(b) {
            Resp::Int(0) => "just accessed".to_string(),
            Resp::Int(n) if (2..=4).contains(&n) => "idle since SET".to_string(),
            other => format!("{other:?}"),
        };
        both.check(&format!("OBJECT IDLETIME {k}"), class(&core), class(&redis));
    }
    both.same_str(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    eprintln!(
        "{} replies identical, {} idle-time classes equal",
        both.compared, both.by_meaning
    );
}
