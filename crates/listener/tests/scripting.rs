//! Scripts through the listener: a script's BZPOPMIN answers at once (Redis does
//! not let scripts block), and the article's pop-due script under 10 concurrent
//! clients hands every due job to exactly one of them.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use redislab_listener::CoreListener;

const POP_DUE: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #jobs == 0 then return false end
redis.call('ZREM', KEYS[1], jobs[1])
return jobs[1]
";

fn send(stream: &mut TcpStream, args: &[&str]) {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(out.as_bytes()).unwrap();
}

/// Reads one reply that is a status, integer, error or (nil) bulk string.
fn read_simple(reader: &mut BufReader<TcpStream>) -> String {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    if let Some(len) = line.strip_prefix('$') {
        let len: i64 = len.trim().parse().unwrap();
        if len >= 0 {
            let mut body = vec![0u8; len as usize + 2];
            reader.read_exact(&mut body).unwrap();
            return String::from_utf8_lossy(&body[..len as usize]).into_owned();
        }
        return "(nil)".into();
    }
    line.trim_end().to_string()
}

fn connect(listener: &CoreListener) -> (TcpStream, BufReader<TcpStream>) {
    let s = TcpStream::connect(("127.0.0.1", listener.port())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let reader = BufReader::new(s.try_clone().unwrap());
    (s, reader)
}

#[test]
fn a_blocking_pop_inside_a_script_does_not_block() {
    let listener = CoreListener::start(0).unwrap();
    let (mut w, mut r) = connect(&listener);
    let started = Instant::now();
    send(
        &mut w,
        &[
            "EVAL",
            "return redis.call('BZPOPMIN', KEYS[1], '0')",
            "1",
            "empty",
        ],
    );
    assert_eq!(read_simple(&mut r), "(nil)");
    send(&mut w, &["PING"]);
    assert_eq!(read_simple(&mut r), "+PONG");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn the_pop_due_script_hands_each_job_to_one_worker() {
    let listener = CoreListener::start(0).unwrap();
    let (mut w, mut r) = connect(&listener);
    for i in 0..300 {
        send(
            &mut w,
            &["ZADD", "queue:delayed", &i.to_string(), &format!("job-{i}")],
        );
        read_simple(&mut r);
    }
    send(&mut w, &["ZADD", "queue:delayed", "999999", "future"]);
    read_simple(&mut r);
    let port = listener.port();
    let workers: Vec<_> = (0..10)
        .map(|_| {
            std::thread::spawn(move || {
                let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut w = s;
                let mut got = Vec::new();
                loop {
                    send(&mut w, &["EVAL", POP_DUE, "1", "queue:delayed", "1000"]);
                    match read_simple(&mut r).as_str() {
                        "(nil)" => return got,
                        job => got.push(job.to_string()),
                    }
                }
            })
        })
        .collect();
    let all: Vec<String> = workers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let distinct: HashSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 300, "every due job popped once");
    assert_eq!(distinct.len(), 300, "no job popped twice");
    send(&mut w, &["ZCARD", "queue:delayed"]);
    assert_eq!(read_simple(&mut r), ":1");
}
