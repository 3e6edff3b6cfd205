//! The listener's hot path allocates nothing per command: a steady stream of
//! pipelined requests reuses the parser's argument buffers, the executor's output
//! buffer and the connection's queues. Counted with a global allocator over the
//! whole process (reader, executor and this client), in batches of 1,000
//! requests that allocate nothing in the core either (GET of a missing key
//! answers a shared null, GET of a short value copies it into the reply, INCR of an existing counter changes it in place, SET
//! of an integer stores it in the key's entry and answers a borrowed `+OK`).

use std::io::{Read, Write};
use std::net::TcpStream;

use redislab_listener::CoreListener;

#[global_allocator]
static GLOBAL: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();

/// Sends `request` (`count` pipelined requests) and reads exactly `reply_len`
/// bytes back, into buffers allocated by the caller.
fn round(s: &mut TcpStream, request: &[u8], buf: &mut [u8]) {
    s.write_all(request).unwrap();
    s.read_exact(buf).unwrap();
}

fn pipeline(one: &[u8], count: usize) -> Vec<u8> {
    one.iter()
        .copied()
        .cycle()
        .take(one.len() * count)
        .collect()
}

/// Allocations per request over `rounds` rounds of `count` pipelined copies of
/// `one`, each answered by `reply_len` bytes starting with `starts`.
fn allocations_per_request(
    s: &mut TcpStream,
    one: &[u8],
    (starts, reply_len): (&[u8], usize),
    count: usize,
    rounds: usize,
) -> f64 {
    let request = pipeline(one, count);
    let mut buf = vec![0u8; reply_len * count];
    // Warm up: buffers, pools and tables reach their steady size.
    for _ in 0..20 {
        round(s, &request, &mut buf);
    }
    for reply in buf.chunks(reply_len) {
        assert!(reply.starts_with(starts) && reply.ends_with(b"\r\n"));
    }
    let before = GLOBAL.calls();
    for _ in 0..rounds {
        round(s, &request, &mut buf);
    }
    let after = GLOBAL.calls();
    (after - before) as f64 / (count * rounds) as f64
}

#[test]
fn pipelined_requests_allocate_nothing_per_command() {
    let listener = CoreListener::start(0).unwrap();
    let mut s = TcpStream::connect(("127.0.0.1", listener.port())).unwrap();
    s.set_nodelay(true).unwrap();
    let get = b"*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n";
    let per_get = allocations_per_request(&mut s, get, (b"$-1\r\n", 5), 1000, 50);
    let incr = b"*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n";
    s.write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nn\r\n$8\r\n10000000\r\n")
        .unwrap();
    let mut ok = [0u8; 5];
    s.read_exact(&mut ok).unwrap();
    assert_eq!(&ok, b"+OK\r\n");
    // The replies grow from :10000001 to :10070000 (all 11 bytes).
    let per_incr = allocations_per_request(&mut s, incr, (b":100", 11), 1000, 50);
    // SET of an integer too big to be shared: stored in the entry, the old
    // int dropped without a free, and `+OK` written from a static string.
    let set = b"*3\r\n$3\r\nSET\r\n$1\r\ns\r\n$8\r\n12345678\r\n";
    let per_set = allocations_per_request(&mut s, set, (b"+OK", 5), 1000, 50);
    // GET of a short string that is there: its bytes are copied into the
    // reply itself (`BulkBytes`), not into a vector of their own.
    s.write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nh\r\n$11\r\nhello-world\r\n")
        .unwrap();
    s.read_exact(&mut ok).unwrap();
    assert_eq!(&ok, b"+OK\r\n");
    let get_hit = b"*2\r\n$3\r\nGET\r\n$1\r\nh\r\n";
    let per_get_hit =
        allocations_per_request(&mut s, get_hit, (b"$11\r\nhello-world", 18), 1000, 50);
    // A batch mixing them, as a pipelining client sends it: the batch's key
    // prefetch (buckets, entries, key bytes) allocates nothing either.
    let mixed: Vec<u8> = [&set[..], &get[..], &incr[..]].concat();
    let per_mixed = allocations_per_request(&mut s, &mixed, (b"", 21), 1000, 50) / 3.0;
    // One request per round trip: one batch per command.
    let per_single_get = allocations_per_request(&mut s, get, (b"$-1\r\n", 5), 1, 5000);
    eprintln!(
        "allocations per request: GET {per_get:.3}, GET hit {per_get_hit:.3}, INCR {per_incr:.3}, SET {per_set:.3}, mixed {per_mixed:.3}, GET unpipelined {per_single_get:.3}"
    );
    assert!(
        per_single_get < 0.1,
        "unpipelined GET: {per_single_get} allocations per request"
    );
    // Batches still cost a little (the executor's job channel allocates a block
    // per 31 jobs): well under one allocation per command.
    assert!(per_get < 0.05, "GET: {per_get} allocations per request");
    // It was 1 per command: the value was copied into a `Vec` of its own.
    assert!(
        per_get_hit < 0.05,
        "GET hit: {per_get_hit} allocations per request"
    );
    assert!(per_incr < 0.05, "INCR: {per_incr} allocations per request");
    // It was 1 per command: `Reply::Status("OK".into())` allocated a String.
    assert!(per_set < 0.05, "SET: {per_set} allocations per request");
    assert!(
        per_mixed < 0.05,
        "SET/GET/INCR: {per_mixed} allocations per request"
    );
}
