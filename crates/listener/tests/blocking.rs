//! Blocking pops through the listener: a waiting client is served by a later push,
//! in the order clients blocked, and gets a null array at its timeout.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use redislab_listener::CoreListener;

fn send(stream: &mut TcpStream, args: &[&str]) {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(out.as_bytes()).unwrap();
}

/// Reads until `expected_len` bytes arrived (replies here are small and known).
fn read_exact_text(stream: &mut TcpStream, expected_len: usize) -> String {
    let mut buf = vec![0u8; expected_len];
    stream.read_exact(&mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

fn connect(listener: &CoreListener) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", listener.port())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

#[test]
fn a_waiting_pop_is_served_by_a_later_push_in_blocking_order() {
    let listener = CoreListener::start(0).unwrap();
    let mut first = connect(&listener);
    let mut second = connect(&listener);
    let mut producer = connect(&listener);
    send(&mut first, &["BZPOPMIN", "jobs", "5"]);
    std::thread::sleep(Duration::from_millis(100));
    send(&mut second, &["BZPOPMIN", "jobs", "5"]);
    std::thread::sleep(Duration::from_millis(100));
    send(&mut producer, &["ZADD", "jobs", "1", "a", "2", "b"]);
    assert_eq!(read_exact_text(&mut producer, 4), ":2\r\n");
    let reply = "*3\r\n$4\r\njobs\r\n$1\r\na\r\n$1\r\n1\r\n";
    assert_eq!(read_exact_text(&mut first, reply.len()), reply);
    let reply = "*3\r\n$4\r\njobs\r\n$1\r\nb\r\n$1\r\n2\r\n";
    assert_eq!(read_exact_text(&mut second, reply.len()), reply);
}

#[test]
fn a_waiting_pop_times_out_with_a_null_array() {
    let listener = CoreListener::start(0).unwrap();
    let mut client = connect(&listener);
    let started = Instant::now();
    send(&mut client, &["BZPOPMAX", "empty", "0.2"]);
    assert_eq!(read_exact_text(&mut client, 5), "*-1\r\n");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(190),
        "returned after {waited:?}"
    );
}

#[test]
fn a_blocked_command_holds_back_the_rest_of_its_pipeline() {
    let listener = CoreListener::start(0).unwrap();
    let mut client = connect(&listener);
    let pipeline = "*3\r\n$8\r\nBZPOPMIN\r\n$1\r\nk\r\n$3\r\n0.1\r\n*1\r\n$4\r\nPING\r\n";
    client.write_all(pipeline.as_bytes()).unwrap();
    assert_eq!(read_exact_text(&mut client, 12), "*-1\r\n+PONG\r\n");
}

#[test]
fn client_unblock_ends_a_wait_with_a_null_or_an_error() {
    let listener = CoreListener::start(0).unwrap();
    let mut waiter = connect(&listener);
    let mut admin = connect(&listener);
    send(&mut waiter, &["CLIENT", "ID"]);
    let id_reply = read_exact_text(&mut waiter, 4);
    let id = id_reply.trim_start_matches(':').trim().to_string();
    send(&mut waiter, &["BZPOPMIN", "nothing", "0"]);
    std::thread::sleep(Duration::from_millis(100));
    send(&mut admin, &["CLIENT", "UNBLOCK", &id]);
    assert_eq!(read_exact_text(&mut admin, 4), ":1\r\n");
    assert_eq!(read_exact_text(&mut waiter, 5), "*-1\r\n");
    send(&mut waiter, &["BZPOPMIN", "nothing", "0"]);
    std::thread::sleep(Duration::from_millis(100));
    send(&mut admin, &["CLIENT", "UNBLOCK", &id, "ERROR"]);
    assert_eq!(read_exact_text(&mut admin, 4), ":1\r\n");
    let err = "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n";
    assert_eq!(read_exact_text(&mut waiter, err.len()), err);
    // Not blocked any more: 0.
    send(&mut admin, &["CLIENT", "UNBLOCK", &id]);
    assert_eq!(read_exact_text(&mut admin, 4), ":0\r\n");
}

/// Redis's zset.tcl "BZPOPMIN, ZADD + DEL + SET should not awake blocked client":
/// a transaction that leaves a string under the key must not wake the waiter
/// (the core used to retry it and answer WRONGTYPE); a later ZADD serves it.
#[test]
fn a_key_that_ends_up_a_string_does_not_wake_a_zset_pop() {
    let listener = CoreListener::start(0).unwrap();
    let mut waiter = connect(&listener);
    let mut writer = connect(&listener);
    send(&mut waiter, &["BZPOPMIN", "zset", "0"]);
    std::thread::sleep(Duration::from_millis(100));
    for cmd in [
        &["MULTI"][..],
        &["ZADD", "zset", "0", "foo"],
        &["DEL", "zset"],
        &["SET", "zset", "foo"],
        &["EXEC"],
        &["DEL", "zset"],
        &["ZADD", "zset", "1", "bar"],
    ] {
        send(&mut writer, cmd);
    }
    let replies = "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n:1\r\n:1\r\n+OK\r\n:1\r\n:1\r\n";
    assert_eq!(read_exact_text(&mut writer, replies.len()), replies);
    let reply = "*3\r\n$4\r\nzset\r\n$3\r\nbar\r\n$1\r\n1\r\n";
    assert_eq!(read_exact_text(&mut waiter, reply.len()), reply);
}

/// A short timeout is kept even when the command blocked on a connection's own
/// thread (which runs commands inline while the executor thread sleeps until
/// its next cron, up to 100 ms away): the executor thread is woken to look at
/// the new deadline.
#[test]
fn a_short_timeout_is_kept_when_the_command_ran_inline() {
    let listener = CoreListener::start(0).unwrap();
    let mut client = connect(&listener);
    let mut waits = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        send(&mut client, &["BLPOP", "nothing", "0.01"]);
        assert_eq!(read_exact_text(&mut client, 5), "*-1\r\n");
        waits.push(started.elapsed());
    }
    waits.sort();
    let median = waits[waits.len() / 2];
    assert!(waits[0] >= Duration::from_millis(10), "{waits:?}");
    assert!(median < Duration::from_millis(70), "{waits:?}");
}
