//! Key expiry on the core's listener beside a real Redis: the EXPIRE family's
//! replies byte for byte, and keys that nobody reads again leaving DBSIZE through
//! the active expire cycle on both servers.

use std::thread::sleep;
use std::time::{Duration, Instant};

use redislab_harness::testing::{redis_for_test, RawRedis};
use redislab_listener::CoreListener;

fn argv(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn expire_replies_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let core_listener = CoreListener::start(0).expect("core listener");
    let mut redis = RawRedis::connect(server.port).unwrap();
    let mut core = RawRedis::connect(core_listener.port()).unwrap();
    let cases: &[&[&str]] = &[
        &["FLUSHALL"],
        &["ZADD", "k", "1", "a"],
        &["TTL", "k"],
        &["PTTL", "k"],
        &["TTL", "missing"],
        &["PTTL", "missing"],
        &["PEXPIRE", "missing", "100"],
        &["PEXPIRE", "k", "100000"],
        &["TTL", "k"],
        &[
            "EVAL",
            "local t = redis.call('PTTL', KEYS[1]) return t > 99000 and t <= 100000",
            "1",
            "k",
        ],
        &["PEXPIRE", "k", "200000", "NX"],
        &["PEXPIRE", "k", "200000", "XX"],
        &["TTL", "k"],
        &["PEXPIRE", "k", "100000", "GT"],
        &["PEXPIRE", "k", "100000", "LT"],
        &["TTL", "k"],
        &["PEXPIRE", "k", "1", "NX", "XX"],
        &["PEXPIRE", "k", "1", "GT", "LT"],
        &["PEXPIRE", "k", "1", "bogus"],
        &["PEXPIRE", "k", "x"],
        &["PEXPIRE", "k", "9223372036854775807"],
        &["EXPIRE", "k", "9223372036854775807"],
        &["EXPIRE", "k", "92233720368547758"],
        &["PERSIST", "k"],
        &["PERSIST", "k"],
        &["TTL", "k"],
        &["EXPIRE", "k", "100"],
        &["TTL", "k"],
        &["PEXPIRE", "k", "0"],
        &["EXISTS", "k"],
        &["ZADD", "k2", "1", "a"],
        &["PEXPIRE", "k2", "-5"],
        &["EXISTS", "k2"],
        &["DBSIZE"],
        &["PEXPIRE"],
        &["PTTL"],
    ];
    for parts in cases {
        let a = argv(parts);
        let expected = redis.call(&a).unwrap();
        let got = core.call(&a).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "{parts:?}"
        );
    }
    eprintln!(
        "{} expiry commands identical on core and redis",
        cases.len()
    );
}

/// 200 keys with a 50 ms TTL that nobody reads again: both servers' DBSIZE drops
/// to the 10 persistent keys without any lookup of the expired ones.
#[test]
fn active_expiry_empties_dbsize_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let core_listener = CoreListener::start(0).expect("core listener");
    let mut redis = RawRedis::connect(server.port).unwrap();
    let mut core = RawRedis::connect(core_listener.port()).unwrap();
    for conn in [&mut redis, &mut core] {
        conn.call(&argv(&["FLUSHALL"])).unwrap();
        for i in 0..210 {
            let key = format!("job:{i}");
            conn.call(&argv(&["ZADD", &key, "1", "m"])).unwrap();
            if i < 200 {
                conn.call(&argv(&["PEXPIRE", &key, "50"])).unwrap();
            }
        }
        assert_eq!(conn.call(&argv(&["DBSIZE"])).unwrap(), b":210\r\n");
    }
    let started = Instant::now();
    let mut left = (210, 210);
    while started.elapsed() < Duration::from_secs(5) && left != (10, 10) {
        sleep(Duration::from_millis(100));
        let dbsize = |c: &mut RawRedis| {
            let r = c.call(&argv(&["DBSIZE"])).unwrap();
            String::from_utf8_lossy(&r[1..r.len() - 2])
                .parse::<i64>()
                .unwrap()
        };
        left = (dbsize(&mut redis), dbsize(&mut core));
    }
    eprintln!(
        "DBSIZE after {:?}: redis {}, core {}",
        started.elapsed(),
        left.0,
        left.1
    );
    assert_eq!(left, (10, 10));
}
