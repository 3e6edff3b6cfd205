//! Replies of batches run on the I/O thread are written at the end of its
//! round (`crate::flush`, Redis's `beforeSleep`): every client still gets all
//! its replies, in order, whatever else the round held; a client that never
//! stops sending does not hold the others' replies back; replies kept for the
//! round and replies the executor thread writes (a script's publish) keep
//! their order; QUIT's +OK still goes out before the close.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{encode, Raw};
use redislab_listener::CoreListener;

#[test]
fn many_pipelining_clients_get_every_reply_in_order() {
    let listener = CoreListener::start(0).unwrap();
    let port = listener.port();
    let workers: Vec<_> = (0..40)
        .map(|w| {
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let key = format!("n:{w}");
                for round in 0..20 {
                    let mut pipeline = Vec::new();
                    for _ in 0..16 {
                        pipeline.extend(encode(&[b"INCR", key.as_bytes()]));
                        pipeline.extend(encode(&[b"GET", key.as_bytes()]));
                    }
                    c.writer.write_all(&pipeline).unwrap();
                    for i in 0..16 {
                        let n = round * 16 + i + 1;
                        assert_eq!(c.reply(), format!(":{n}\r\n"));
                        let digits = n.to_string();
                        assert_eq!(c.reply(), format!("${}\r\n{digits}\r\n", digits.len()));
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

#[test]
fn a_client_that_never_stops_sending_does_not_hold_back_the_others() {
    let listener = CoreListener::start(0).unwrap();
    let port = listener.port();
    let stop = Arc::new(AtomicBool::new(false));
    // The flood: pipelines of 1,000 SETs, written and read by two threads of
    // one connection, as fast as the server takes them.
    let flood = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut flood_reader = flood.try_clone().unwrap();
    let reading = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut total = 0usize;
            while !stop.load(Ordering::Relaxed) {
                match flood_reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => total += n,
                }
            }
            total
        })
    };
    let writing = {
        let stop = stop.clone();
        let mut flood = flood.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut pipeline = Vec::new();
            for i in 0..1000 {
                pipeline.extend(encode(&[b"SET", format!("f:{i}").as_bytes(), b"x"]));
            }
            while !stop.load(Ordering::Relaxed) {
                if flood.write_all(&pipeline).is_err() {
                    break;
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    // Meanwhile another client's round trips are answered, each well within
    // the test's generous bound (a starved client would wait forever).
    let mut other = Raw::connect(port);
    let started = Instant::now();
    for i in 0..200 {
        let value = format!("v{i}");
        assert_eq!(other.call(&["SET", "other", &value]), "+OK\r\n");
        assert_eq!(
            other.call(&["GET", "other"]),
            format!("${}\r\n{value}\r\n", value.len())
        );
    }
    assert!(started.elapsed() < Duration::from_secs(15));
    stop.store(true, Ordering::Relaxed);
    flood.shutdown(std::net::Shutdown::Both).unwrap();
    writing.join().unwrap();
    assert!(reading.join().unwrap() > 0, "the flood got replies too");
}

#[test]
fn kept_replies_and_the_executor_threads_messages_keep_their_order() {
    let listener = CoreListener::start(0).unwrap();
    let port = listener.port();
    // The subscriber is in RESP3, so it may send PINGs while subscribed; its
    // PONGs are kept for the end of the round while a script, which runs on
    // the executor thread, publishes to it. Its messages must arrive in the
    // order they were published, and every PING must get its PONG.
    let mut sub = Raw::connect(port);
    assert!(sub.call(&["HELLO", "3"]).starts_with('%'));
    assert_eq!(
        sub.call(&["SUBSCRIBE", "ch"]),
        ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    );
    let Raw {
        mut reader,
        mut writer,
    } = sub;
    let reading = std::thread::spawn(move || {
        let (mut pongs, mut messages) = (0, 0);
        while pongs < 3000 || messages < 300 {
            let mut r = Vec::new();
            common::read_reply(&mut reader, &mut r).expect("a reply");
            let r = String::from_utf8(r).unwrap();
            if r == "+PONG\r\n" {
                pongs += 1;
                continue;
            }
            let n = messages.to_string();
            assert_eq!(
                r,
                format!(">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n${}\r\n{n}\r\n", n.len())
            );
            messages += 1;
        }
        reader
    });
    let publisher = std::thread::spawn(move || {
        let mut p = Raw::connect(port);
        for i in 0..300 {
            let n = i.to_string();
            let script = "return redis.call('PUBLISH', 'ch', ARGV[1])";
            assert_eq!(p.call(&["EVAL", script, "0", &n]), ":1\r\n");
        }
    });
    let mut pipeline = Vec::new();
    for _ in 0..10 {
        pipeline.extend(encode(&[b"PING"]));
    }
    for _ in 0..300 {
        writer.write_all(&pipeline).unwrap();
        std::thread::sleep(Duration::from_micros(200));
    }
    publisher.join().unwrap();
    let reader = reading.join().unwrap();
    let mut sub = Raw { reader, writer };
    // QUIT answers before the connection closes.
    assert_eq!(sub.call(&["QUIT"]), "+OK\r\n");
    let mut rest = Vec::new();
    assert_eq!(sub.reader.read_to_end(&mut rest).unwrap(), 0);
}
