//! MULTI/EXEC/WATCH through the listener: each connection has its own transaction
//! state, and a write from another connection aborts a watcher's EXEC.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use redislab_listener::CoreListener;

fn send(stream: &mut TcpStream, args: &[&str]) -> String {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(out.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let mut buf = vec![0u8; 4096];
    let n = stream.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn connect(listener: &CoreListener) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", listener.port())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

#[test]
fn a_write_by_another_client_aborts_exec() {
    let listener = CoreListener::start(0).unwrap();
    let mut a = connect(&listener);
    let mut b = connect(&listener);
    assert_eq!(send(&mut a, &["SET", "k", "1"]), "+OK\r\n");
    assert_eq!(send(&mut a, &["WATCH", "k"]), "+OK\r\n");
    assert_eq!(send(&mut a, &["MULTI"]), "+OK\r\n");
    assert_eq!(send(&mut a, &["SET", "k", "2"]), "+QUEUED\r\n");
    // b is not in a transaction: its commands run at once.
    assert_eq!(send(&mut b, &["INCR", "k"]), ":2\r\n");
    assert_eq!(send(&mut a, &["EXEC"]), "*-1\r\n");
    assert_eq!(send(&mut a, &["GET", "k"]), "$1\r\n2\r\n");
    // Without interference the same transaction goes through.
    send(&mut a, &["WATCH", "k"]);
    send(&mut a, &["MULTI"]);
    send(&mut a, &["SET", "k", "5"]);
    assert_eq!(send(&mut a, &["EXEC"]), "*1\r\n+OK\r\n");
}

#[test]
fn published_messages_reach_channel_and_pattern_subscribers() {
    let listener = CoreListener::start(0).unwrap();
    let mut sub = connect(&listener);
    let mut psub = connect(&listener);
    let mut publisher = connect(&listener);
    assert_eq!(
        send(&mut sub, &["SUBSCRIBE", "rank"]),
        "*3\r\n$9\r\nsubscribe\r\n$4\r\nrank\r\n:1\r\n"
    );
    assert_eq!(
        send(&mut psub, &["PSUBSCRIBE", "ra*"]),
        "*3\r\n$10\r\npsubscribe\r\n$3\r\nra*\r\n:1\r\n"
    );
    assert_eq!(send(&mut publisher, &["PUBLISH", "rank", "u1:2"]), ":2\r\n");
    std::thread::sleep(Duration::from_millis(50));
    let mut buf = vec![0u8; 256];
    let n = sub.read(&mut buf).unwrap();
    assert_eq!(
        &buf[..n],
        b"*3\r\n$7\r\nmessage\r\n$4\r\nrank\r\n$4\r\nu1:2\r\n"
    );
    let n = psub.read(&mut buf).unwrap();
    assert_eq!(
        &buf[..n],
        b"*4\r\n$8\r\npmessage\r\n$3\r\nra*\r\n$4\r\nrank\r\n$4\r\nu1:2\r\n"
    );
    assert!(send(&mut sub, &["GET", "k"]).starts_with("-ERR Can't execute 'get'"));
    assert_eq!(
        send(&mut sub, &["UNSUBSCRIBE"]),
        "*3\r\n$11\r\nunsubscribe\r\n$4\r\nrank\r\n:0\r\n"
    );
    assert_eq!(send(&mut sub, &["GET", "k"]), "$-1\r\n");
}
