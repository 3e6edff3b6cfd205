//! `Options::io_threads` above 1 (Redis's `io-threads`): connections are read and
//! written by several threads, commands still run one at a time, in order, on
//! the executor thread. Pipelines from many clients at once, a blocked client
//! served by another's push, MULTI/EXEC and QUIT behave as with one I/O thread.

mod common;

use std::io::Write;

use common::{encode, Raw};
use redislab_listener::{CoreListener, Options};

#[test]
fn several_io_threads_serve_many_pipelining_clients_in_order() {
    let listener = CoreListener::start_with(0, Options { io_threads: 3 }).unwrap();
    let port = listener.port();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let key = format!("n:{w}");
                let mut pipeline = Vec::new();
                for _ in 0..500 {
                    pipeline.extend(encode(&[b"INCR", key.as_bytes()]));
                    pipeline.extend(encode(&[b"INCR", b"shared"]));
                }
                c.writer.write_all(&pipeline).unwrap();
                let mut own = Vec::new();
                let mut shared = Vec::new();
                for _ in 0..500 {
                    own.push(c.reply());
                    shared.push(c.reply());
                }
                // This client's own counter: 1, 2, ... in order.
                for (i, r) in own.iter().enumerate() {
                    assert_eq!(r, &format!(":{}\r\n", i + 1));
                }
                // The shared one only grows (the others' INCRs interleave).
                let values: Vec<i64> = shared
                    .iter()
                    .map(|r| r.trim_start_matches(':').trim_end().parse().unwrap())
                    .collect();
                assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut c = Raw::connect(port);
    assert_eq!(c.call(&["GET", "shared"]), "$4\r\n4000\r\n");

    // A blocked client is served by another client's push.
    let mut waiter = Raw::connect(port);
    waiter.send(&["BLPOP", "q", "5"]);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(c.call(&["RPUSH", "q", "job"]), ":1\r\n");
    assert_eq!(waiter.reply(), "*2\r\n$1\r\nq\r\n$3\r\njob\r\n");

    // MULTI/EXEC, then QUIT closes after its +OK.
    assert_eq!(c.call(&["MULTI"]), "+OK\r\n");
    assert_eq!(c.call(&["INCR", "shared"]), "+QUEUED\r\n");
    assert_eq!(c.call(&["EXEC"]), "*1\r\n:4001\r\n");
    assert_eq!(c.call(&["QUIT"]), "+OK\r\n");
    let mut rest = Vec::new();
    use std::io::Read;
    assert_eq!(c.reader.read_to_end(&mut rest).unwrap(), 0);
}
