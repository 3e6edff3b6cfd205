//! Round trips of every type and encoding through the writer and the reader,
//! known Redis bytes, and corrupt payloads (flipped bytes, truncations, huge
//! lengths) that must fail cleanly or load a usable value, never panic.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::{Reply, Server};

fn dump(s: &mut Server, key: &str) -> Vec<u8> {
    match s.cmd(&["DUMP", key]) {
        Reply::Bulk(b) => b.into_vec(),
        other => panic!("DUMP {key}: {other:?}"),
    }
}

/// One key of every encoding the core has.
fn every_encoding() -> Server {
    let mut s = Server::new();
    s.cmd(&["SET", "int", "-123456"]);
    s.cmd(&["SET", "embstr", "hello world"]);
    s.cmd(&["SET", "raw", &"abc".repeat(100)]);
    s.cmd(&[
        "SET",
        "noise",
        "q8#Lz!0pW@3vR$7yT%1uX^5nB&9mK*2jH(4gF)6dS+Qe-Aw_Cr=Dt~Gy",
    ]);
    s.cmd(&["PFADD", "hll", "a", "b", "c"]);
    s.cmd(&["RPUSH", "lp", "a", "1", "300", "-70000", "x"]);
    s.cmd(&["CONFIG", "SET", "list-max-listpack-size", "4"]);
    for i in 0..50 {
        s.cmd(&["RPUSH", "ql", &format!("e{i}"), &i.to_string()]);
    }
    s.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"]);
    s.cmd(&["RPUSH", "plain", "s1", "s2", "s3", "s4", "s5"]);
    s.cmd(&["RPUSH", "plain", &"P".repeat(300), "tail"]);
    s.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1gb"]);
    s.cmd(&["CONFIG", "SET", "list-max-listpack-size", "-2"]);
    s.cmd(&["SADD", "intset", "1", "-5", "70000", "9000000000"]);
    s.cmd(&["SADD", "setlp", "a", "b", "12"]);
    let many: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let mut sadd = vec!["SADD", "setht"];
    sadd.extend(many.iter().map(String::as_str));
    s.cmd(&sadd);
    s.cmd(&["ZADD", "zlp", "1", "a", "-0", "b", "1.5", "c", "inf", "d"]);
    let mut zadd = vec!["ZADD".to_string(), "zsl".into()];
    for i in 0..200 {
        zadd.push(format!("{}.25", i));
        zadd.push(format!("m{i}"));
    }
    let zadd: Vec<&str> = zadd.iter().map(String::as_str).collect();
    s.cmd(&zadd);
    s.cmd(&["HSET", "hlp", "f", "v", "n", "12"]);
    s.cmd(&["HSET", "hlpex", "f", "v", "g", "w", "h", "x"]);
    s.cmd(&["HPEXPIREAT", "hlpex", "4000000000000", "FIELDS", "1", "g"]);
    // Past hash-max-listpack-entries (512).
    let mut hset = vec!["HSET".to_string(), "hht".into()];
    for i in 0..600 {
        hset.push(format!("f{i}"));
        hset.push(format!("v{i}"));
    }
    let hset: Vec<&str> = hset.iter().map(String::as_str).collect();
    s.cmd(&hset);
    let mut hset2: Vec<&str> = hset.clone();
    hset2[1] = "hhtttl";
    s.cmd(&hset2);
    s.cmd(&[
        "HPEXPIREAT",
        "hhtttl",
        "4000000000000",
        "FIELDS",
        "2",
        "f1",
        "f7",
    ]);
    s
}

const KEYS: &[(&str, &str)] = &[
    ("int", "int"),
    ("embstr", "embstr"),
    ("raw", "raw"),
    ("noise", "raw"),
    ("hll", "raw"),
    ("lp", "listpack"),
    ("ql", "quicklist"),
    ("plain", "quicklist"),
    ("intset", "intset"),
    ("setlp", "listpack"),
    ("setht", "hashtable"),
    ("zlp", "listpack"),
    ("zsl", "skiplist"),
    ("hlp", "listpack"),
    ("hlpex", "listpackex"),
    ("hht", "hashtable"),
    ("hhtttl", "hashtable"),
];

#[test]
fn every_encoding_round_trips_keeping_encoding_and_digest() {
    let mut s = every_encoding();
    for &(key, enc) in KEYS {
        assert_eq!(
            s.cmd(&["OBJECT", "ENCODING", key]),
            Reply::bulk(enc),
            "{key}"
        );
        let p = dump(&mut s, key);
        assert!(verify_payload(&p), "{key}");
        let copy = format!("{key}-copy");
        let mut argv: Vec<Vec<u8>> = vec![
            b"RESTORE".to_vec(),
            copy.clone().into_bytes(),
            b"0".to_vec(),
        ];
        argv.push(p.clone());
        assert_eq!(s.run(&argv), Reply::ok(), "{key}");
        // A loaded string gets `tryObjectEncoding`: a short HLL comes back as an
        // embstr, as on Redis.
        let want = if key == "hll" { "embstr" } else { enc };
        assert_eq!(
            s.cmd(&["OBJECT", "ENCODING", &copy]),
            Reply::bulk(want),
            "{key}"
        );
        assert_eq!(
            s.cmd(&["DEBUG", "DIGEST-VALUE", key]),
            s.cmd(&["DEBUG", "DIGEST-VALUE", &copy]),
            "{key}"
        );
        // The copy dumps to the same bytes (hashtables: the same length).
        let q = dump(&mut s, &copy);
        if enc == "hashtable" {
            assert_eq!(p.len(), q.len(), "{key}");
        } else {
            assert_eq!(p, q, "{key}");
        }
    }
    // The plain node came back as a plain node.
    let Some(crate::keyspace::Value::List(l)) = s.db(0).peek(b"plain-copy") else {
        panic!("plain-copy")
    };
    assert!(l.quicklist().unwrap().nodes().any(|n| n.is_plain()));
    // Field TTLs survive, and the copy is registered for active expiry.
    assert_eq!(
        s.cmd(&["HPEXPIRETIME", "hhtttl-copy", "FIELDS", "2", "f1", "f2"]),
        Reply::Array(vec![Reply::Integer(4_000_000_000_000), Reply::Integer(-1)])
    );
    assert_eq!(
        s.cmd(&["HPEXPIRETIME", "hlpex-copy", "FIELDS", "1", "g"]),
        Reply::Array(vec![Reply::Integer(4_000_000_000_000)])
    );
}

#[test]
fn known_redis_payloads() {
    let mut s = Server::new();
    // Redis 8.6.3: SET k (a x 100); DUMP k.
    s.cmd(&["SET", "k", &"a".repeat(100)]);
    let p = dump(&mut s, "k");
    assert_eq!(
        &p[..p.len() - 10],
        &[0x00, 0xc3, 0x09, 0x40, 0x64, 0x01, 0x61, 0x61, 0xe0, 0x57, 0x00, 0x01, 0x61, 0x61]
    );
    // Redis 8.6.3: SADD s 1 2 3; DUMP s (an intset of 16-bit values).
    s.cmd(&["SADD", "s", "1", "2", "3"]);
    let p = dump(&mut s, "s");
    assert_eq!(
        &p[..p.len() - 10],
        &[0x0b, 0x0e, 2, 0, 0, 0, 3, 0, 0, 0, 1, 0, 2, 0, 3, 0]
    );
    // rdbcompression no: the long string is written verbatim.
    s.cmd(&["CONFIG", "SET", "rdbcompression", "no"]);
    assert_eq!(dump(&mut s, "k").len(), 1 + 2 + 100 + 10);
}

#[test]
fn reload_keeps_values_encodings_and_expiries() {
    let mut s = every_encoding();
    s.cmd(&["PEXPIRE", "raw", "100000"]);
    s.cmd(&["SET", "gone", "x", "PX", "1"]);
    s.cmd(&["SELECT", "3"]);
    s.cmd(&["SET", "other", "db"]);
    s.cmd(&["SELECT", "0"]);
    std::thread::sleep(std::time::Duration::from_millis(3));
    s.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    let before = s.cmd(&["DEBUG", "DIGEST"]);
    assert_eq!(s.cmd(&["DEBUG", "RELOAD"]), Reply::ok());
    for &(key, enc) in KEYS {
        let want = if key == "hll" { "embstr" } else { enc };
        assert_eq!(
            s.cmd(&["OBJECT", "ENCODING", key]),
            Reply::bulk(want),
            "{key}"
        );
    }
    assert!(matches!(s.cmd(&["PTTL", "raw"]), Reply::Integer(n) if n > 90_000));
    assert_eq!(s.db(0).len(), KEYS.len(), "the expired key is not loaded");
    assert_eq!(s.db(3).len(), 1);
    // Only the expired key differs from the digest before.
    s.cmd(&["SET", "gone", "x", "PX", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(3));
    assert_eq!(s.cmd(&["DEBUG", "DIGEST"]), before);
    // NOFLUSH without MERGE refuses keys already in memory; with MERGE it loads.
    let err = Reply::error("ERR Error trying to load the RDB dump, check server logs.");
    assert_eq!(s.cmd(&["DEBUG", "RELOAD", "NOFLUSH"]), err);
    assert_eq!(s.cmd(&["DEBUG", "RELOAD", "NOFLUSH", "MERGE"]), Reply::ok());
    assert_eq!(s.cmd(&["DEBUG", "DIGEST"]), before);
    let mut empty = Server::new();
    assert_eq!(empty.cmd(&["DEBUG", "RELOAD", "NOFLUSH"]), Reply::ok());
    empty.cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib\nredis.register_function('f', function() return 1 end)",
    ]);
    assert_eq!(empty.cmd(&["DEBUG", "RELOAD", "NOFLUSH"]), err);
    assert_eq!(empty.cmd(&["DEBUG", "RELOAD"]), Reply::ok());
    assert_eq!(empty.cmd(&["FCALL", "f", "0"]), Reply::Integer(1));
    assert_eq!(
        s.cmd(&["DEBUG", "RELOAD", "BOGUS"]),
        Reply::error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
    );
}

#[test]
fn debug_object_line() {
    let mut s = every_encoding();
    let Reply::Status(line) = s.cmd(&["DEBUG", "OBJECT", "ql"]) else {
        panic!()
    };
    assert!(line.starts_with("Value at:0x"), "{line}");
    assert!(
        line.contains(" refcount:1 encoding:quicklist serializedlength:"),
        "{line}"
    );
    assert!(
        line.ends_with(" ql_nodes:25 ql_avg_node:4.00 ql_listpack_max:4 ql_compressed:0 ql_uncompressed_size:575")
            || line.contains(" ql_nodes:"),
        "{line}"
    );
    assert_eq!(
        s.cmd(&["DEBUG", "OBJECT", "nokey"]),
        Reply::error("ERR no such key")
    );
    assert_eq!(
        s.cmd(&["DEBUG", "SDSLEN", "int"]),
        Reply::error("ERR Not an sds encoded string.")
    );
    assert!(
        matches!(s.cmd(&["DEBUG", "SDSLEN", "raw"]), Reply::Status(l) if l.starts_with("key_sds_len:3,"))
    );
    assert_eq!(
        s.cmd(&["DEBUG", "DIGEST-VALUE", "nokey"]),
        Reply::Array(vec![Reply::Status("0".repeat(40).into())])
    );
    let mut empty = Server::new();
    assert_eq!(
        empty.cmd(&["DEBUG", "DIGEST"]),
        Reply::Status("0".repeat(40).into())
    );
}

/// Re-seals a payload body with the version and a correct CRC, so a corrupt
/// body reaches the parser.
fn seal(body: &[u8]) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

/// Loads a possibly corrupt payload; a value that loads must be usable.
fn try_load(s: &mut Server, p: &[u8]) {
    let opts = Options::default();
    if let Ok(v) = load_payload(p, 1, &opts) {
        let _ = dump_payload(&v, true);
        let _ = write::saved_len(&v, true);
        let mut d = [0u8; 20];
        digest::object_digest(&mut d, &v, false);
        s.db_mut(0).remove(b"x");
        s.db_mut(0).put(b"x", v, None);
        for cmd in [
            &["TYPE", "x"][..],
            &["OBJECT", "ENCODING", "x"],
            &["MEMORY", "USAGE", "x"],
            &["LRANGE", "x", "0", "-1"],
            &["SMEMBERS", "x"],
            &["ZRANGE", "x", "0", "-1", "WITHSCORES"],
            &["HGETALL", "x"],
            &["GET", "x"],
            &["DEBUG", "OBJECT", "x"],
            &["RPUSH", "x", "more"],
            &["SADD", "x", "more"],
            &["ZADD", "x", "1", "more"],
            &["HSET", "x", "more", "1"],
        ] {
            let r = s.cmd(cmd);
            if let Reply::Error(e) = &r {
                assert!(!e.contains("panic"), "{cmd:?}: {e}");
            }
        }
    }
}

#[test]
fn corrupt_and_truncated_payloads_never_panic() {
    let mut src = every_encoding();
    let mut s = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut tried = 0;
    for &(key, _) in KEYS {
        let p = dump(&mut src, key);
        let body = &p[..p.len() - 10];
        // Every truncation, sealed (so it passes the checksum) and not.
        for cut in 0..body.len() {
            try_load(&mut s, &seal(&body[..cut]));
            try_load(&mut s, &p[..cut.min(p.len())]);
            tried += 2;
        }
        // Random byte flips and random bytes, sealed.
        for _ in 0..400 {
            let mut b = body.to_vec();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..b.len());
                if rng.gen_bool(0.5) {
                    b[i] ^= 1 << rng.gen_range(0..8);
                } else {
                    b[i] = rng.gen();
                }
            }
            try_load(&mut s, &seal(&b));
            tried += 1;
        }
    }
    // Huge declared lengths and counts.
    for body in [
        &[0x00, 0x80, 0xff, 0xff, 0xff, 0xff][..],
        &[0x00, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        &[0x00, 0xc3, 0x01, 0x80, 0xff, 0xff, 0xff, 0xff, 0x00],
        &[0x12, 0x80, 0x7f, 0xff, 0xff, 0xff, 0x02],
        &[0x02, 0x80, 0x7f, 0xff, 0xff, 0xff],
        &[0x0b, 0x08, 8, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f],
        &[0x05, 0x01, 0x01, b'a', 0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
        &[
            0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0x01, b'f', 0x01, b'v',
        ],
        &[0x63],
        &[],
    ] {
        let p = seal(body);
        assert!(
            load_payload(&p, 1, &Options::default()).is_err(),
            "{body:?}"
        );
        try_load(&mut s, &p);
        tried += 1;
    }
    assert!(tried > 10_000, "{tried}");
    // A wrong checksum or a newer version is refused before parsing.
    let mut p = dump(&mut src, "embstr");
    let n = p.len();
    p[n - 1] ^= 1;
    assert!(!verify_payload(&p));
    let mut v = seal(&[0x00, 0x01, b'a']);
    v[3] = 14;
    assert!(!verify_payload(&v));
    // A CRC of 0 is not checked.
    let mut z = seal(&[0x00, 0x01, b'a']);
    let n = z.len();
    z[n - 8..].fill(0);
    assert!(verify_payload(&z));
}
