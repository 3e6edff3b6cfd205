//! The Rust `redis` crate (the workspace's client, 1.8) in RESP2 and RESP3: one scripted
//! session (strings, counters, hashes, lists, sets, zsets with scores, geo, HLL, bitmaps,
//! a pipeline, MULTI/EXEC, pub/sub with a message received, EVAL, SCAN, errors) on a
//! private Redis 8.6.3 and on the core's listener; the transcripts must be equal.
//!
//! A failure lists each differing step; `--nocapture` also prints the counts of equal
//! steps. The Python and Node clients' sessions are in scripts/client-compat.sh.

use std::time::Duration;

use redis::{Commands, ProtocolVersion, Value};
use redislab_harness::testing::redis_for_test;
use redislab_listener::CoreListener;

type Transcript = Vec<(String, String)>;

fn show(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Int(i) => format!("int {i}"),
        Value::BulkString(b) => format!("bulk {:?}", String::from_utf8_lossy(b)),
        Value::SimpleString(s) => format!("simple {s:?}"),
        Value::Okay => "OK".into(),
        Value::Double(d) => format!("double {d:?}"),
        Value::Boolean(b) => format!("bool {b}"),
        Value::Array(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(", ")),
        // Unordered in the protocol: sorted here.
        Value::Set(a) => {
            let mut v: Vec<String> = a.iter().map(show).collect();
            v.sort();
            format!("set{{{}}}", v.join(", "))
        }
        Value::Map(m) => format!(
            "map{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{} => {}", show(k), show(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::VerbatimString { format, text } => format!("verbatim {format:?} {text:?}"),
        Value::Push { kind, data } => {
            format!(
                "push {kind:?} [{}]",
                data.iter().map(show).collect::<Vec<_>>().join(", ")
            )
        }
        Value::ServerError(e) => format!("server error {e:?}"),
        other => format!("{other:?}"),
    }
}

fn record<T: std::fmt::Debug>(t: &mut Transcript, name: &str, r: redis::RedisResult<T>) {
    let s = match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("ERROR {e}"),
    };
    t.push((name.to_string(), s));
}

fn raw(t: &mut Transcript, con: &mut redis::Connection, name: &str, args: &[&str]) {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    let s = match c.query::<Value>(con) {
        Ok(v) => show(&v),
        Err(e) => format!("ERROR {e}"),
    };
    t.push((name.to_string(), s));
}

fn session(port: u16, protocol: ProtocolVersion) -> Transcript {
    let mut t = Transcript::new();
    let resp = if protocol == ProtocolVersion::RESP3 {
        "resp3"
    } else {
        "resp2"
    };
    let url = format!("redis://127.0.0.1:{port}/?protocol={resp}");
    let client = redis::Client::open(url.as_str()).expect("client");
    let mut con = match client.get_connection_with_timeout(Duration::from_secs(5)) {
        Ok(c) => c,
        Err(e) => {
            t.push(("connect".into(), format!("ERROR {e}")));
            return t;
        }
    };
    con.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let c = &mut con;
    raw(&mut t, c, "flushall", &["FLUSHALL"]);
    // strings and counters (typed calls where the crate has them)
    record(&mut t, "set", c.set::<_, _, String>("s:1", "hello"));
    record(&mut t, "get", c.get::<_, Option<String>>("s:1"));
    record(&mut t, "get missing", c.get::<_, Option<String>>("s:none"));
    record(
        &mut t,
        "set ex",
        c.set_ex::<_, _, String>("s:ttl", "v", 100),
    );
    record(&mut t, "ttl", c.ttl::<_, i64>("s:ttl"));
    record(&mut t, "append", c.append::<_, _, i64>("s:1", " world"));
    record(&mut t, "getrange", c.getrange::<_, String>("s:1", 0, 4));
    record(
        &mut t,
        "mset",
        c.mset::<_, _, String>(&[("s:a", "1"), ("s:b", "2")]),
    );
    record(
        &mut t,
        "mget",
        c.mget::<_, Vec<Option<String>>>(&["s:a", "s:b", "s:none"]),
    );
    record(&mut t, "incr", c.incr::<_, _, i64>("c:1", 1));
    record(&mut t, "incrby", c.incr::<_, _, i64>("c:1", 41));
    record(&mut t, "incrbyfloat", c.incr::<_, _, f64>("c:f", 10.5));
    record(&mut t, "incr not int", c.incr::<_, _, i64>("s:1", 1));
    raw(&mut t, c, "incrbyfloat raw", &["INCRBYFLOAT", "c:f", "0.1"]);
    raw(&mut t, c, "exists", &["EXISTS", "s:1", "c:1", "nope"]);
    raw(&mut t, c, "type", &["TYPE", "s:1"]);
    // hashes
    raw(
        &mut t,
        c,
        "hset",
        &["HSET", "h:1", "f1", "v1", "f2", "2", "f3", "v3"],
    );
    raw(&mut t, c, "hgetall", &["HGETALL", "h:1"]);
    record(
        &mut t,
        "hgetall typed",
        c.hgetall::<_, Vec<(String, String)>>("h:1"),
    );
    raw(&mut t, c, "hincrby", &["HINCRBY", "h:1", "f2", "5"]);
    raw(
        &mut t,
        c,
        "hincrbyfloat",
        &["HINCRBYFLOAT", "h:1", "f2", "0.25"],
    );
    raw(&mut t, c, "hkeys", &["HKEYS", "h:1"]);
    raw(&mut t, c, "hmget", &["HMGET", "h:1", "f1", "nope"]);
    // lists
    raw(&mut t, c, "rpush", &["RPUSH", "l:1", "a", "b", "c"]);
    raw(&mut t, c, "lrange", &["LRANGE", "l:1", "0", "-1"]);
    raw(&mut t, c, "lpop count", &["LPOP", "l:1", "2"]);
    raw(&mut t, c, "blpop", &["BLPOP", "l:1", "1"]);
    // sets
    raw(&mut t, c, "sadd", &["SADD", "set:1", "a", "b", "c"]);
    raw(&mut t, c, "smembers", &["SMEMBERS", "set:1"]);
    raw(&mut t, c, "sismember", &["SISMEMBER", "set:1", "a"]);
    raw(&mut t, c, "smismember", &["SMISMEMBER", "set:1", "a", "x"]);
    // sorted sets
    raw(
        &mut t,
        c,
        "zadd",
        &[
            "ZADD", "z:1", "100", "amy", "90", "bob", "100", "zed", "70.5", "kim",
        ],
    );
    raw(
        &mut t,
        c,
        "zrange withscores",
        &["ZRANGE", "z:1", "0", "-1", "WITHSCORES"],
    );
    record(
        &mut t,
        "zrange withscores typed",
        c.zrange_withscores::<_, Vec<(String, f64)>>("z:1", 0, -1),
    );
    raw(
        &mut t,
        c,
        "zrevrange withscores",
        &["ZREVRANGE", "z:1", "0", "1", "WITHSCORES"],
    );
    raw(&mut t, c, "zscore", &["ZSCORE", "z:1", "kim"]);
    raw(&mut t, c, "zincrby", &["ZINCRBY", "z:1", "2.5", "bob"]);
    raw(
        &mut t,
        c,
        "zrank withscore",
        &["ZRANK", "z:1", "bob", "WITHSCORE"],
    );
    raw(&mut t, c, "zpopmin", &["ZPOPMIN", "z:1"]);
    raw(&mut t, c, "zmscore", &["ZMSCORE", "z:1", "bob", "nope"]);
    // geo
    raw(
        &mut t,
        c,
        "geoadd",
        &[
            "GEOADD",
            "g:1",
            "13.361389",
            "38.115556",
            "Palermo",
            "15.087269",
            "37.502669",
            "Catania",
        ],
    );
    raw(
        &mut t,
        c,
        "geodist",
        &["GEODIST", "g:1", "Palermo", "Catania", "km"],
    );
    raw(&mut t, c, "geopos", &["GEOPOS", "g:1", "Palermo", "nope"]);
    raw(
        &mut t,
        c,
        "geosearch",
        &[
            "GEOSEARCH",
            "g:1",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "ASC",
            "WITHDIST",
            "WITHCOORD",
        ],
    );
    // HyperLogLog, bitmaps
    raw(&mut t, c, "pfadd", &["PFADD", "hll:1", "a", "b", "c"]);
    raw(&mut t, c, "pfcount", &["PFCOUNT", "hll:1"]);
    raw(&mut t, c, "setbit", &["SETBIT", "b:1", "7", "1"]);
    raw(&mut t, c, "bitcount", &["BITCOUNT", "b:1"]);
    raw(
        &mut t,
        c,
        "bitfield",
        &[
            "BITFIELD", "bf:1", "SET", "u8", "0", "200", "INCRBY", "u8", "0", "100", "GET", "u4",
            "0",
        ],
    );
    // pipeline and transaction
    let p: redis::RedisResult<Vec<Value>> = redis::pipe()
        .cmd("SET")
        .arg("p:1")
        .arg("a")
        .cmd("INCR")
        .arg("p:n")
        .cmd("GET")
        .arg("p:1")
        .cmd("ZADD")
        .arg("p:z")
        .arg("1.5")
        .arg("m")
        .cmd("ZSCORE")
        .arg("p:z")
        .arg("m")
        .query(c);
    t.push((
        "pipeline".into(),
        match p {
            Ok(v) => show(&Value::Array(v)),
            Err(e) => format!("ERROR {e}"),
        },
    ));
    let m: redis::RedisResult<Vec<Value>> = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("t:1")
        .arg("1")
        .cmd("INCR")
        .arg("t:1")
        .cmd("HSET")
        .arg("t:h")
        .arg("a")
        .arg("b")
        .cmd("HGETALL")
        .arg("t:h")
        .query(c);
    t.push((
        "multi/exec".into(),
        match m {
            Ok(v) => show(&Value::Array(v)),
            Err(e) => format!("ERROR {e}"),
        },
    ));
    // pub/sub: a message published on one connection arrives on another
    let got = (|| -> redis::RedisResult<String> {
        let mut sub_con = client.get_connection_with_timeout(Duration::from_secs(5))?;
        let mut sub = sub_con.as_pubsub();
        sub.set_read_timeout(Some(Duration::from_secs(3)))?;
        sub.subscribe("chan:1")?;
        let mut pubc = client.get_connection_with_timeout(Duration::from_secs(5))?;
        let n: i64 = pubc.publish("chan:1", "hello")?;
        let msg = sub.get_message()?;
        Ok(format!(
            "receivers {n}; {} {:?}",
            msg.get_channel_name(),
            msg.get_payload::<String>()?
        ))
    })();
    record(&mut t, "pubsub", got);
    // scripting
    raw(
        &mut t,
        c,
        "eval types",
        &[
            "EVAL",
            "return {1, 'two', 3.99, {'nested', 5}, redis.status_reply('OK')}",
            "0",
        ],
    );
    raw(
        &mut t,
        c,
        "eval nil/false/true",
        &["EVAL", "return {false, true, nil, 7}", "0"],
    );
    raw(
        &mut t,
        c,
        "eval error",
        &["EVAL", "return redis.error_reply('MYERR custom')", "0"],
    );
    // (the workspace builds `redis` without its `script` feature: SCRIPT LOAD + EVALSHA by hand)
    let sha: redis::RedisResult<String> = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return ARGV[1] .. '!'")
        .query(c);
    record(&mut t, "script load", sha.clone());
    if let Ok(sha) = sha {
        raw(&mut t, c, "evalsha", &["EVALSHA", &sha, "0", "hi"]);
    }
    // SCAN iteration
    for i in 0..300 {
        let _: redis::RedisResult<()> = c.set(format!("x:{i}"), i);
    }
    let keys: redis::RedisResult<Vec<String>> = c
        .scan_match::<_, String>("x:1*")
        .and_then(|it| it.collect::<redis::RedisResult<Vec<String>>>());
    record(
        &mut t,
        "scan match",
        keys.map(|mut k| {
            k.sort();
            k
        }),
    );
    raw(&mut t, c, "dbsize", &["DBSIZE"]);
    // errors
    raw(&mut t, c, "wrongtype", &["LPUSH", "s:1", "x"]);
    raw(&mut t, c, "unknown command", &["NOSUCHCMD", "a"]);
    raw(&mut t, c, "wrong arity", &["GET"]);
    raw(&mut t, c, "syntax error", &["SET", "k", "v", "BOGUS"]);
    raw(&mut t, c, "ping after errors", &["PING"]);
    t
}

fn compare(protocol: ProtocolVersion) {
    let Some(server) = redis_for_test() else {
        return;
    };
    let core = CoreListener::start(0).expect("core listener");
    let want = session(server.port, protocol);
    let got = session(core.port(), protocol);
    let mut diffs = Vec::new();
    for (i, (name, r)) in want.iter().enumerate() {
        let c = match got.get(i) {
            Some((n, v)) if n == name => v.clone(),
            Some((n, v)) => format!("(step {n}) {v}"),
            None => "(missing)".into(),
        };
        if &c != r {
            diffs.push(format!("  {name}\n    redis: {r}\n    core:  {c}"));
        }
    }
    eprintln!(
        "{protocol:?}: {} steps equal, {} different",
        want.len() - diffs.len(),
        diffs.len()
    );
    assert!(
        diffs.is_empty(),
        "the core differs from Redis on {} steps ({protocol:?}):\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn redis_crate_resp2_session_matches_redis() {
    compare(ProtocolVersion::RESP2);
}

#[test]
fn redis_crate_resp3_session_matches_redis() {
    compare(ProtocolVersion::RESP3);
}
