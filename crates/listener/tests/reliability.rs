//! The core as a server under hostile input: malformed and oversized requests,
//! hostile arguments for every command, a subscriber that never reads, a
//! pipeline whose replies are huge, an endless script. After each, the server
//! must still answer PING on a fresh connection, no command may have panicked
//! (INFO's `redislab_core_panics`), and memory must stay bounded.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{alive, encode, info_field, Raw};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_listener::CoreListener;

/// Sends `bytes` on a new connection, reads whatever comes back for a moment,
/// closes. Returns what the server wrote.
fn poke(listener: &CoreListener, bytes: &[u8], wait: Duration) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", listener.port())).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    let _ = s.write_all(bytes);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let started = Instant::now();
    while started.elapsed() < wait {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
    out
}

fn panics(listener: &CoreListener) -> String {
    let mut raw = Raw::to(listener);
    info_field(&mut raw, "stats", "redislab_core_panics")
}

fn used_memory(listener: &CoreListener) -> u64 {
    let mut raw = Raw::to(listener);
    info_field(&mut raw, "memory", "used_memory")
        .parse()
        .unwrap_or(0)
}

/// Requests a hostile client sends, with what Redis answers to each (checked
/// against Redis 8.6.3 by hand; the protocol ones end the connection).
const MALFORMED: &[(&[u8], &str)] = &[
    (b"*2147483647\r\n", ""),
    (
        b"*2147483648\r\n",
        "-ERR Protocol error: invalid multibulk length\r\n",
    ),
    (b"*-1\r\n*1\r\n$4\r\nPING\r\n", "+PONG\r\n"),
    (
        b"*1\r\n$536870913\r\n",
        "-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"*1\r\n$-5\r\n",
        "-ERR Protocol error: invalid bulk length\r\n",
    ),
    (b"*1\r\n$536870912\r\nabc", ""),
    (
        b"*1\r\n+PING\r\n",
        "-ERR Protocol error: expected '$', got '+'\r\n",
    ),
    (
        b"*x\r\n",
        "-ERR Protocol error: invalid multibulk length\r\n",
    ),
    (
        b"*1\r\n$x\r\n",
        "-ERR Protocol error: invalid bulk length\r\n",
    ),
    (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nabc", ""),
    (
        b"SET k \"unbalanced\r\n",
        "-ERR Protocol error: unbalanced quotes in request\r\n",
    ),
    (
        b"*1\r\n*1\r\n$4\r\nPING\r\n",
        "-ERR Protocol error: expected '$', got '*'\r\n",
    ),
    (b"\x00\x01\x02\xff\r\n", ""),
    (b"\r\n\r\n\n\n", ""),
];

#[test]
fn malformed_requests_are_refused_and_the_server_keeps_serving() {
    let listener = CoreListener::start(0).unwrap();
    let mut tried = 0;
    for (bytes, expected) in MALFORMED {
        let got = poke(&listener, bytes, Duration::from_millis(200));
        if !expected.is_empty() {
            assert_eq!(
                String::from_utf8_lossy(&got),
                *expected,
                "request {:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert!(alive(&listener), "dead after {bytes:?}");
        tried += 1;
    }
    // The byte found where '$' was expected is named as it is (Redis 8.6.3
    // answers the same bytes; the core wrote it as a Latin-1 char in UTF-8).
    let got = poke(
        &listener,
        b"*2\r\n$3\r\nDEL\r\n\xac2\r\npk\r\n",
        Duration::from_millis(200),
    );
    assert_eq!(got, b"-ERR Protocol error: expected '$', got '\xac'\r\n");
    tried += 1;
    // Over-long lines: the 64 KB limits of Redis.
    let long_inline = vec![b'a'; 70 * 1024];
    let got = poke(&listener, &long_inline, Duration::from_millis(500));
    assert_eq!(
        String::from_utf8_lossy(&got),
        "-ERR Protocol error: too big inline request\r\n"
    );
    let mut long_count = b"*".to_vec();
    long_count.extend(vec![b'9'; 70 * 1024]);
    let got = poke(&listener, &long_count, Duration::from_millis(500));
    assert_eq!(
        String::from_utf8_lossy(&got),
        "-ERR Protocol error: too big mbulk count string\r\n"
    );
    let mut long_bulk = b"*1\r\n$".to_vec();
    long_bulk.extend(vec![b'9'; 70 * 1024]);
    let got = poke(&listener, &long_bulk, Duration::from_millis(500));
    assert_eq!(
        String::from_utf8_lossy(&got),
        "-ERR Protocol error: too big bulk count string\r\n"
    );
    tried += 3;

    // Seeded random requests: valid commands mutated (bytes flipped, cut,
    // numbers replaced by huge or negative ones), and plain garbage.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let templates: &[&[&[u8]]] = &[
        &[b"SET", b"k", b"v"],
        &[b"ZADD", b"z", b"1", b"m"],
        &[b"GET", b"k"],
        &[b"HSET", b"h", b"f", b"v"],
        &[b"PING"],
    ];
    let numbers: &[&[u8]] = &[
        b"-1",
        b"0",
        b"2147483647",
        b"2147483648",
        b"-2147483649",
        b"9223372036854775807",
        b"99999999999999999999",
        b"-0",
        b"1e3",
        b"",
    ];
    for _ in 0..600 {
        let t = templates[rng.gen_range(0..templates.len())];
        let mut bytes = encode(t);
        match rng.gen_range(0..5) {
            0 => {
                for _ in 0..rng.gen_range(1..4) {
                    let i = rng.gen_range(0..bytes.len());
                    bytes[i] = rng.gen();
                }
            }
            1 => {
                let cut = rng.gen_range(0..bytes.len());
                bytes.truncate(cut);
            }
            2 => {
                // Replace the count or a length with a hostile number.
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let n =
                    String::from_utf8_lossy(numbers[rng.gen_range(0..numbers.len())]).into_owned();
                let replaced = if rng.gen_bool(0.5) {
                    text.replacen(&format!("*{}", t.len()), &format!("*{n}"), 1)
                } else {
                    text.replacen("$1\r\n", &format!("${n}\r\n"), 1)
                };
                bytes = replaced.into_bytes();
            }
            3 => bytes = (0..rng.gen_range(1..200)).map(|_| rng.gen()).collect(),
            _ => {
                let mut twice = bytes.clone();
                twice.extend_from_slice(&bytes[..bytes.len() / 2]);
                bytes = twice;
            }
        }
        poke(&listener, &bytes, Duration::from_millis(30));
        tried += 1;
    }
    assert!(alive(&listener));
    assert_eq!(panics(&listener), "0");
    eprintln!("{tried} malformed requests, server alive, 0 panics");
}

/// Values a hostile client puts in arguments.
const HOSTILE: &[&str] = &[
    "-9223372036854775808",
    "9223372036854775807",
    "-9223372036854775807",
    "-4611686018427387903",
    "4294967296",
    "-1",
    "0",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "",
    "\u{0}",
    "*",
    "[",
    "WITHSCORES",
    "COUNT",
    "LIMIT",
];

#[test]
fn hostile_arguments_for_every_command_do_not_panic() {
    let listener = CoreListener::start(0).unwrap();
    let mut raw = Raw::to(&listener);
    let list = raw.call(&["COMMAND", "LIST"]);
    let names: Vec<String> = list
        .split("\r\n")
        .filter(|l| !l.is_empty() && !l.starts_with('*') && !l.starts_with('$'))
        .map(|s| s.to_string())
        .collect();
    assert!(names.len() > 100, "{names:?}");
    // Commands that would stop the test itself.
    let skip = [
        "shutdown",
        "monitor",
        "subscribe",
        "psubscribe",
        "debug|sleep",
        "quit",
        "reset",
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut sent = 0;
    for name in &names {
        if skip.contains(&name.as_str()) || name.starts_with("b") && name.contains("pop") {
            continue;
        }
        let words: Vec<&str> = name.split('|').collect();
        for round in 0..25 {
            let mut c = Raw::to(&listener);
            let mut args: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            // Seed a few keys of each type under the names commands will use.
            if round == 0 {
                for setup in [
                    vec!["SET", "k", "12"],
                    vec!["ZADD", "z", "1", "a", "2", "b"],
                    vec!["HSET", "h", "f", "v"],
                    vec!["SADD", "s", "1", "2"],
                    vec!["PFADD", "p", "x"],
                ] {
                    c.call(&setup);
                }
            }
            let extra = rng.gen_range(0..8);
            for i in 0..extra {
                let v = if i == 0 {
                    ["k", "z", "h", "s", "p", "missing"][rng.gen_range(0..6)].to_string()
                } else {
                    HOSTILE[rng.gen_range(0..HOSTILE.len())].to_string()
                };
                args.push(v);
            }
            let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
            c.send(&refs);
            let mut out = Vec::new();
            c.writer
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let _ = common::read_reply(&mut c.reader, &mut out);
            sent += 1;
        }
        assert!(alive(&listener), "dead after {name}");
    }
    assert_eq!(panics(&listener), "0", "a command panicked (see stderr)");
    eprintln!(
        "{sent} hostile commands over {} command names, 0 panics",
        names.len()
    );
}

#[test]
fn a_subscriber_that_never_reads_is_dropped_at_its_output_limit() {
    let listener = CoreListener::start(0).unwrap();
    let mut sub = Raw::to(&listener);
    sub.send(&["SUBSCRIBE", "news"]);
    assert_eq!(sub.reply(), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
    // From here on the subscriber reads nothing.
    let before = used_memory(&listener);
    assert!(before > 0, "INFO memory reports no used_memory");
    let mut publisher = Raw::to(&listener);
    let message = "x".repeat(10 * 1024);
    let mut peak = before;
    let mut receivers_seen_zero_at = None;
    for i in 0..50_000 {
        let r = publisher.call(&["PUBLISH", "news", &message]);
        if r == ":0\r\n" && receivers_seen_zero_at.is_none() {
            receivers_seen_zero_at = Some(i);
        }
        if i % 1000 == 0 {
            peak = peak.max(used_memory(&listener));
        }
    }
    let after = used_memory(&listener);
    let dropped_at = receivers_seen_zero_at.expect("the subscriber was never dropped");
    eprintln!(
        "subscriber dropped after {dropped_at} messages of 10 KB; heap before {} MB, peak {} MB, after {} MB",
        before >> 20,
        peak >> 20,
        after >> 20
    );
    // pubsub class: 32 MB hard limit (plus what the socket buffers took).
    assert!(
        (2_000..10_000).contains(&dropped_at),
        "dropped after {dropped_at} messages"
    );
    assert!(peak < before + (96 << 20), "peak {peak} vs {before}");
    assert!(
        after < before + (48 << 20),
        "not given back: {after} vs {before}"
    );
    assert!(alive(&listener));
}

#[test]
fn a_huge_pipeline_of_big_replies_is_produced_in_bounded_chunks() {
    let listener = CoreListener::start(0).unwrap();
    let mut c = Raw::to(&listener);
    let value = "v".repeat(100 * 1024);
    assert_eq!(c.call(&["SET", "big", &value]), "+OK\r\n");
    let before = used_memory(&listener);
    let mut request = Vec::new();
    for _ in 0..3000 {
        request.extend_from_slice(&encode(&[b"GET", b"big"]));
    }
    c.writer.write_all(&request).unwrap();
    // Read slowly at first: the server must not build all 300 MB of replies.
    std::thread::sleep(Duration::from_millis(500));
    let while_waiting = used_memory(&listener);
    let mut got = 0;
    for _ in 0..3000 {
        let r = c.reply();
        assert_eq!(r.len(), value.len() + 11);
        got += 1;
    }
    assert_eq!(got, 3000);
    eprintln!(
        "3000 pipelined GETs of 100 KB: heap {} MB before, {} MB while the client was not reading",
        before >> 20,
        while_waiting >> 20
    );
    assert!(
        while_waiting < before + (64 << 20),
        "{while_waiting} vs {before}"
    );
}

#[test]
fn an_endless_script_answers_busy_and_script_kill_stops_it() {
    let listener = CoreListener::start(0).unwrap();
    let mut admin = Raw::to(&listener);
    assert_eq!(
        admin.call(&["CONFIG", "SET", "busy-reply-threshold", "200"]),
        "+OK\r\n"
    );
    let mut runner = Raw::to(&listener);
    runner.send(&["EVAL", "while true do end", "0"]);
    std::thread::sleep(Duration::from_millis(400));
    let mut other = Raw::to(&listener);
    assert_eq!(
        other.call(&["GET", "k"]),
        "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
    );
    assert_eq!(other.call(&["SCRIPT", "KILL"]), "+OK\r\n");
    let killed = runner.reply();
    assert!(
        killed.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
        "{killed}"
    );
    assert_eq!(other.call(&["PING"]), "+PONG\r\n");
    assert_eq!(runner.call(&["PING"]), "+PONG\r\n");

    // A script that wrote cannot be killed.
    runner.send(&["EVAL", "redis.call('SET', 'k', 'v') while true do end", "0"]);
    std::thread::sleep(Duration::from_millis(400));
    let r = other.call(&["SCRIPT", "KILL"]);
    assert!(r.starts_with("-UNKILLABLE"), "{r}");
    // SHUTDOWN NOSAVE stops it, and the server.
    other.send(&["SHUTDOWN", "NOSAVE"]);
    let started = Instant::now();
    while !listener.is_stopped() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        listener.is_stopped(),
        "SHUTDOWN NOSAVE did not stop the core"
    );
}

#[test]
fn a_million_arguments_parse_in_linear_time() {
    let listener = CoreListener::start(0).unwrap();
    let mut c = Raw::to(&listener);
    c.call(&["SET", "k1", "v"]);
    let n = 1_000_000;
    let mut args: Vec<Vec<u8>> = vec![b"EXISTS".to_vec()];
    for i in 0..n {
        args.push(if i % 2 == 0 {
            b"k1".to_vec()
        } else {
            b"nope".to_vec()
        });
    }
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    let started = Instant::now();
    c.writer.write_all(&encode(&refs)).unwrap();
    assert_eq!(c.reply(), format!(":{}\r\n", n / 2));
    eprintln!(
        "EXISTS with {n} arguments answered in {:?}",
        started.elapsed()
    );
}
