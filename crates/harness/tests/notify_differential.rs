//! Keyspace notifications on the core's listener beside a real Redis: a
//! subscriber with `PSUBSCRIBE __key*__:*` on each server, random command streams
//! over every family the core implements, and the sequence of notifications
//! each command produced compared exactly (the subscriber's bytes, RESP2 or
//! RESP3 push frames).
//!
//! After every command the commanding connection publishes a marker on
//! `__keysync__:<n>` (the pattern matches it), and the subscriber reads up to
//! that marker: what it read before is what the command notified. The active
//! expire cycle is off on both servers (DEBUG SET-ACTIVE-EXPIRE 0), so expiries
//! happen lazily, at the same command on both; a TTL is either 1 ms (the stream
//! sleeps past it) or far in the future.

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_harness::testing::{
    encode_command, read_reply, redis_for_test, redis_with_debug_for_test, RawRedis,
};
use redislab_listener::CoreListener;

fn argv(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// A connection in subscribed mode.
struct Subscriber {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Subscriber {
    fn connect(port: u16, resp3: bool) -> Subscriber {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut sub = Subscriber {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        };
        if resp3 {
            sub.send(&argv(&["HELLO", "3"]));
            sub.frame();
        }
        sub.send(&argv(&["PSUBSCRIBE", "__key*__:*"]));
        sub.frame();
        sub
    }

    fn send(&mut self, a: &[Vec<u8>]) {
        self.writer.write_all(&encode_command(a)).unwrap();
    }

    fn frame(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        read_reply(&mut self.reader, &mut out).expect("a frame within 10 s");
        out
    }

    /// The frames before the marker of `channel`.
    fn until(&mut self, channel: &str) -> Vec<String> {
        let mut frames = Vec::new();
        loop {
            let f = self.frame();
            let text = String::from_utf8_lossy(&f).into_owned();
            if text.contains(channel) {
                return frames;
            }
            frames.push(text);
        }
    }
}

const KEYS: &[&str] = &["a", "b", "c", "d", "{x}e"];

fn pick<'a>(rng: &mut ChaCha8Rng, from: &[&'a str]) -> &'a str {
    from.choose(rng).copied().unwrap_or("a")
}

fn num(rng: &mut ChaCha8Rng, lo: i64, hi: i64) -> String {
    rng.gen_range(lo..=hi).to_string()
}

/// A TTL in ms: 1 (the stream sleeps past it) or far away.
fn ttl(rng: &mut ChaCha8Rng) -> &'static str {
    if rng.gen_bool(0.4) {
        "1"
    } else {
        "100000"
    }
}

/// One random command of any family, over a handful of shared keys (so types
/// collide and WRONGTYPE happens too).
fn random_command(rng: &mut ChaCha8Rng) -> Vec<String> {
    let k = pick(rng, KEYS).to_string();
    let k2 = pick(rng, KEYS).to_string();
    let m = pick(rng, &["m1", "m2", "m3", "7", "-3"]).to_string();
    let v = pick(rng, &["1", "10", "x", "hello", "2.5", ""]).to_string();
    let s = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    match rng.gen_range(0..88) {
        // strings
        0 => s(&["SET", &k, &v]),
        1 => s(&["SET", &k, &v, "PX", ttl(rng)]),
        2 => s(&["SET", &k, &v, pick(rng, &["NX", "XX", "KEEPTTL", "GET"])]),
        3 => s(&["GETSET", &k, &v]),
        4 => s(&["GETDEL", &k]),
        5 => s(&["GETEX", &k, pick(rng, &["PERSIST", "PX", "EXAT"]), "100000"]),
        6 => s(&["APPEND", &k, &v]),
        7 => s(&["SETRANGE", &k, &num(rng, 0, 4), &v]),
        8 => s(&["INCR", &k]),
        9 => s(&["INCRBY", &k, &num(rng, -5, 5)]),
        10 => s(&["DECRBY", &k, &num(rng, -5, 5)]),
        11 => s(&["INCRBYFLOAT", &k, "1.5"]),
        12 => s(&["MSET", &k, &v, &k2, "2"]),
        13 => s(&["MSETNX", &k, &v, &k2, "2"]),
        14 => s(&["SETNX", &k, &v]),
        15 => s(&["PSETEX", &k, ttl(rng), &v]),
        16 => s(&["SETBIT", &k, &num(rng, 0, 20), &num(rng, 0, 1)]),
        17 => s(&["BITOP", pick(rng, &["AND", "OR", "XOR"]), &k, &k2, "c"]),
        18 => s(&["BITFIELD", &k, "SET", "u8", "0", &num(rng, 0, 255)]),
        19 => s(&["PFADD", &k, &m, &v]),
        20 => s(&["PFMERGE", &k, &k2]),
        21 => s(&["GET", &k]),
        22 => s(&["MGET", &k, &k2]),
        23 => s(&["STRLEN", &k]),
        // generic
        24 => s(&["DEL", &k, &k2]),
        25 => s(&["UNLINK", &k]),
        26 => s(&["PEXPIRE", &k, ttl(rng)]),
        27 => s(&["EXPIRE", &k, "100", pick(rng, &["NX", "XX", "GT", "LT"])]),
        28 => s(&["PEXPIREAT", &k, "1000"]),
        29 => s(&["PERSIST", &k]),
        30 => s(&["RENAME", &k, &k2]),
        31 => s(&["RENAMENX", &k, &k2]),
        32 => s(&["COPY", &k, &k2]),
        33 => s(&["COPY", &k, &k2, "REPLACE"]),
        34 => s(&["COPY", &k, &k2, "DB", "1", "REPLACE"]),
        35 => s(&["MOVE", &k, "1"]),
        36 => s(&["EXISTS", &k]),
        // OBJECT counts a miss but raises no keymiss event (LOOKUP_NONOTIFY).
        37 => match rng.gen_range(0..3) {
            0 => s(&["TYPE", &k]),
            1 => s(&["OBJECT", "ENCODING", &k]),
            _ => s(&["OBJECT", "REFCOUNT", &k]),
        },
        38 => s(&["SELECT", pick(rng, &["0", "0", "1"])]),
        // lists
        39 => s(&["LPUSH", &k, &m, &v]),
        40 => s(&["RPUSH", &k, &m]),
        41 => s(&["LPUSHX", &k, &m]),
        42 => s(&["RPUSHX", &k, &m]),
        43 => s(&["LPOP", &k]),
        44 => s(&["RPOP", &k, &num(rng, 0, 3)]),
        45 => s(&["LINSERT", &k, "BEFORE", &m, "z"]),
        46 => s(&["LSET", &k, &num(rng, -2, 2), "z"]),
        47 => s(&["LREM", &k, &num(rng, -1, 1), &m]),
        48 => s(&["LTRIM", &k, &num(rng, 0, 2), &num(rng, -2, 3)]),
        49 => s(&[
            "LMOVE",
            &k,
            &k2,
            pick(rng, &["LEFT", "RIGHT"]),
            pick(rng, &["LEFT", "RIGHT"]),
        ]),
        50 => s(&["RPOPLPUSH", &k, &k2]),
        51 => s(&["LMPOP", "2", &k, &k2, "LEFT", "COUNT", "2"]),
        52 => s(&["SORT", &k, "ALPHA", "STORE", &k2]),
        53 => s(&["LRANGE", &k, "0", "-1"]),
        // sets
        54 => s(&["SADD", &k, &m, &v]),
        55 => s(&["SREM", &k, &m, "7"]),
        56 => s(&["SPOP", &k]),
        57 => s(&["SPOP", &k, &num(rng, 0, 3)]),
        58 => s(&["SMOVE", &k, &k2, &m]),
        59 => s(&["SINTERSTORE", &k, &k2, "c"]),
        60 => s(&["SUNIONSTORE", &k, &k2, "c"]),
        61 => s(&["SDIFFSTORE", &k, &k2, "c"]),
        62 => s(&["SISMEMBER", &k, &m]),
        // sorted sets
        63 => s(&["ZADD", &k, &num(rng, 0, 9), &m]),
        64 => s(&[
            "ZADD",
            &k,
            pick(rng, &["NX", "XX", "GT", "LT", "CH"]),
            &num(rng, 0, 9),
            &m,
        ]),
        65 => s(&["ZADD", &k, "INCR", &num(rng, -2, 2), &m]),
        66 => s(&["ZINCRBY", &k, "1", &m]),
        67 => s(&["ZREM", &k, &m, "7"]),
        68 => s(&["ZREMRANGEBYSCORE", &k, "0", &num(rng, 0, 9)]),
        69 => s(&["ZREMRANGEBYRANK", &k, "0", &num(rng, 0, 2)]),
        70 => s(&["ZREMRANGEBYLEX", &k, "-", "[m2"]),
        71 => s(&["ZPOPMIN", &k, &num(rng, 1, 2)]),
        72 => s(&["ZPOPMAX", &k]),
        73 => s(&["ZMPOP", "2", &k, &k2, "MAX"]),
        74 => s(&[
            pick(rng, &["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]),
            &k,
            "2",
            &k2,
            "c",
        ]),
        75 => s(&["ZRANGESTORE", &k, &k2, "0", &num(rng, -1, 2)]),
        76 => s(&["GEOADD", &k, "13.36", "38.11", &m]),
        77 => s(&[
            "GEOSEARCHSTORE",
            &k,
            &k2,
            "FROMLONLAT",
            "13.36",
            "38.11",
            "BYRADIUS",
            "100",
            "km",
        ]),
        // hashes
        78 => s(&["HSET", &k, &m, &v]),
        79 => s(&["HSETNX", &k, &m, &v]),
        80 => s(&["HDEL", &k, &m, "7"]),
        81 => s(&["HINCRBY", &k, &m, "2"]),
        82 => s(&["HINCRBYFLOAT", &k, &m, "0.5"]),
        83 => s(&["HPEXPIRE", &k, ttl(rng), "FIELDS", "2", &m, "m2"]),
        84 => s(&["HPERSIST", &k, "FIELDS", "1", &m]),
        85 => s(&["HGETDEL", &k, "FIELDS", "2", &m, "m1"]),
        86 => s(&[
            "HGETEX",
            &k,
            pick(rng, &["PX", "PERSIST"]),
            "100000",
            "FIELDS",
            "1",
            &m,
        ]),
        _ => match rng.gen_range(0..5) {
            0 => s(&["HSETEX", &k, "PX", ttl(rng), "FIELDS", "1", &m, &v]),
            1 => s(&["HGET", &k, &m]),
            2 => s(&["HMGET", &k, &m, "m1", "m2"]),
            3 => s(&["HEXISTS", &k, &m]),
            _ => s(&["HGETALL", &k]),
        },
    }
}

/// HGETEX PERSIST takes no time argument.
fn tidy(mut cmd: Vec<String>) -> Vec<String> {
    if cmd[0] == "HGETEX" && cmd[2] == "PERSIST" {
        cmd.remove(3);
    }
    cmd
}

struct Side {
    cmd: RawRedis,
    sub: Subscriber,
}

impl Side {
    fn new(port: u16, resp3: bool, flags: &str) -> Side {
        let mut cmd = RawRedis::connect(port).unwrap();
        for c in [
            &["FLUSHALL"][..],
            &["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
            &["CONFIG", "SET", "notify-keyspace-events", flags],
        ] {
            cmd.call(&argv(c)).unwrap();
        }
        let sub = Subscriber::connect(port, resp3);
        Side { cmd, sub }
    }

    /// Runs `cmd`, then the marker: the notifications it produced.
    fn run(&mut self, cmd: &[Vec<u8>], n: usize) -> Vec<String> {
        self.cmd.call(cmd).unwrap();
        let marker = format!("__keysync__:{n}");
        self.cmd.call(&argv(&["PUBLISH", &marker, "x"])).unwrap();
        self.sub.until(&marker)
    }

    fn finish(&mut self) {
        for c in [
            &["CONFIG", "SET", "notify-keyspace-events", ""][..],
            &["DEBUG", "SET-ACTIVE-EXPIRE", "1"],
            &["SELECT", "0"],
            &["FLUSHALL"],
        ] {
            self.cmd.call(&argv(c)).unwrap();
        }
    }
}

#[test]
fn random_streams_notify_like_redis() {
    let Some(server) = redis_with_debug_for_test() else {
        return;
    };
    let core_listener = CoreListener::start(0).expect("core listener");
    // (seed, subscriber speaks RESP3, notify-keyspace-events)
    let streams: &[(u64, bool, &str)] = &[
        (1, false, "KEA"),
        (2, true, "KEA"),
        (3, false, "AKEnm"),
        (4, true, "Eg$lshzx"),
        (5, false, "Kgxn"),
        (6, false, "KEAoc"),
        (7, true, "Eocnm$h"),
    ];
    let (mut commands, mut notifications) = (0, 0);
    for &(seed, resp3, flags) in streams {
        let mut redis = Side::new(server.port, resp3, flags);
        // Both servers must really have active expiry off.
        assert_eq!(
            redis
                .cmd
                .call(&argv(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]))
                .unwrap(),
            b"+OK\r\n"
        );
        let mut core = Side::new(core_listener.port(), resp3, flags);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut recent: Vec<Vec<String>> = Vec::new();
        for n in 0..400 {
            let cmd = tidy(random_command(&mut rng));
            recent.push(cmd.clone());
            if recent.len() > 6 {
                recent.remove(0);
            }
            let a: Vec<Vec<u8>> = cmd.iter().map(|w| w.as_bytes().to_vec()).collect();
            let want = redis.run(&a, n);
            let got = core.run(&a, n);
            assert_eq!(
                got, want,
                "stream {seed} ({flags}, resp3={resp3}) command {n}: {cmd:?}, after {recent:?}"
            );
            commands += 1;
            notifications += want.len();
            if cmd.iter().any(|w| w == "1") {
                // A 1 ms TTL was perhaps set: both servers see it passed.
                std::thread::sleep(Duration::from_millis(3));
            }
        }
        redis.finish();
        core.finish();
    }
    eprintln!(
        "{commands} commands in {} streams: {notifications} notifications identical on core and redis",
        streams.len()
    );
    assert!(notifications > 1000, "the streams notified too little");
}

#[test]
fn config_and_sharded_pubsub_answer_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let core_listener = CoreListener::start(0).expect("core listener");
    let cases: &[&[&str]] = &[
        &["CONFIG", "SET", "notify-keyspace-events", "KEA"],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["CONFIG", "SET", "notify-keyspace-events", "Elgx$"],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["CONFIG", "SET", "notify-keyspace-events", "AKEmnoc"],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["CONFIG", "SET", "notify-keyspace-events", "gshzxetdnoc$lKm"],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["CONFIG", "SET", "notify-keyspace-events", "Kw"],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["CONFIG", "SET", "notify-keyspace-events", ""],
        &["CONFIG", "GET", "notify-keyspace-events"],
        &["SPUBLISH", "ch", "hello"],
        &["PUBSUB", "SHARDCHANNELS"],
        &["PUBSUB", "SHARDNUMSUB", "ch", "other"],
        &["PUBSUB", "SHARDNUMSUB"],
        &["SUNSUBSCRIBE"],
        &["SUNSUBSCRIBE", "ch"],
        &["SSUBSCRIBE", "s1", "s2", "s1"],
        &["PING"],
        &["GET", "x"],
        &["SPUBLISH", "s1", "to-me"],
        &["SUBSCRIBE", "plain"],
        &["SUNSUBSCRIBE", "s1"],
        &["SUNSUBSCRIBE"],
        &["UNSUBSCRIBE"],
        &["PUBSUB", "SHARDCHANNELS"],
        &["MULTI"],
        &["SSUBSCRIBE", "in-multi"],
        &["EXEC"],
    ];
    let mut compared = 0;
    for resp3 in [false, true] {
        // Fresh connections: a multi-channel SSUBSCRIBE leaves frames unread.
        let mut redis = RawRedis::connect(server.port).unwrap();
        let mut core = RawRedis::connect(core_listener.port()).unwrap();
        if resp3 {
            redis.call(&argv(&["HELLO", "3"])).unwrap();
            core.call(&argv(&["HELLO", "3"])).unwrap();
        }
        for parts in cases {
            let a = argv(parts);
            let expected = redis.call(&a).unwrap();
            let got = core.call(&a).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&expected),
                "{parts:?} (resp3={resp3})"
            );
            compared += 1;
        }
    }
    eprintln!("{compared} config and sharded pub/sub replies identical on core and redis");
}

/// Keys and hash fields removed by the active expire cycle are notified (the
/// listener sends what the cycle published), and two subscribers of one pattern
/// count once in PUBSUB NUMPAT and INFO.
#[test]
fn active_expiry_is_notified_like_redis() {
    let Some(server) = redis_with_debug_for_test() else {
        return;
    };
    let core_listener = CoreListener::start(0).expect("core listener");
    let mut seen = Vec::new();
    for port in [server.port, core_listener.port()] {
        let mut cmd = RawRedis::connect(port).unwrap();
        cmd.call(&argv(&["FLUSHALL"])).unwrap();
        cmd.call(&argv(&["CONFIG", "SET", "notify-keyspace-events", "Exh"]))
            .unwrap();
        let mut sub = Subscriber::connect(port, false);
        let _twin = Subscriber::connect(port, true);
        let numpat = cmd.call(&argv(&["PUBSUB", "NUMPAT"])).unwrap();
        let numsub = cmd.call(&argv(&["PUBSUB", "NUMSUB", "x", "y"])).unwrap();
        cmd.call(&argv(&["PSETEX", "k", "50", "v"])).unwrap();
        cmd.call(&argv(&["HSET", "h", "a", "1", "b", "2"])).unwrap();
        cmd.call(&argv(&["HPEXPIRE", "h", "50", "FIELDS", "1", "a"]))
            .unwrap();
        // HPEXPIRE's own event, then what the cycle expired (in either order).
        let mut frames = vec![sub.frame()];
        let mut expired = vec![sub.frame(), sub.frame()];
        expired.sort();
        frames.extend(expired);
        cmd.call(&argv(&["CONFIG", "SET", "notify-keyspace-events", ""]))
            .unwrap();
        seen.push((numpat, numsub, frames));
    }
    assert_eq!(seen[1], seen[0]);
    assert_eq!(seen[0].0, b":1\r\n");
    eprintln!("active expiry notified alike: {:?}", seen[0].2.len());
}

/// RESTORE notifies `restore`, then `overwritten`/`type_changed` when REPLACE
/// deleted an old value, and `del` when REPLACE meets an already-passed ABSTTL
/// (cluster.c's restoreCommand), the same payload going to both servers.
#[test]
fn restore_is_notified_like_redis() {
    let Some(server) = redis_with_debug_for_test() else {
        return;
    };
    let core_listener = CoreListener::start(0).expect("core listener");
    let mut redis = Side::new(server.port, false, "KEAoc");
    let mut core = Side::new(core_listener.port(), false, "KEAoc");
    let sadd = argv(&["SADD", "src", "a", "b"]);
    assert_eq!(core.run(&sadd, 100), redis.run(&sadd, 100));
    let raw = redis.cmd.call(&argv(&["DUMP", "src"])).unwrap();
    // `$<len>\r\n<payload>\r\n`
    let start = raw.iter().position(|&b| b == b'\n').unwrap() + 1;
    let payload = raw[start..raw.len() - 2].to_vec();
    let with = |parts: &[&str]| -> Vec<Vec<u8>> {
        parts
            .iter()
            .map(|p| {
                if *p == "PAYLOAD" {
                    payload.clone()
                } else {
                    p.as_bytes().to_vec()
                }
            })
            .collect()
    };
    let script: Vec<Vec<Vec<u8>>> = vec![
        with(&["RESTORE", "k", "0", "PAYLOAD"]),
        with(&["RESTORE", "k", "0", "PAYLOAD", "REPLACE"]),
        with(&["SET", "s", "v"]),
        with(&["RESTORE", "s", "0", "PAYLOAD", "REPLACE"]),
        with(&["RESTORE", "s", "1", "PAYLOAD", "REPLACE", "ABSTTL"]),
        with(&["RESTORE", "s", "1", "PAYLOAD", "REPLACE", "ABSTTL"]),
        with(&["RESTORE", "k", "0", "PAYLOAD"]),
    ];
    let mut notifications = 0;
    for (n, cmd) in script.iter().enumerate() {
        let want = redis.run(cmd, n);
        let got = core.run(cmd, n);
        assert_eq!(got, want, "command {n}");
        notifications += want.len();
    }
    redis.finish();
    core.finish();
    assert!(
        notifications >= 8,
        "RESTORE notified too little: {notifications}"
    );
}
