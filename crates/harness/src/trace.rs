//! `--trace`: every command a lab sends to the core or to Redis, and every reply,
//! printed in redis-cli syntax so a reader can paste a step into `redis-cli`.
//!
//! The lab's connections go through a small proxy on 127.0.0.1 (one per backend):
//! bytes are forwarded unchanged both ways, and a copy is parsed as RESP and
//! printed on stderr, `core#2> ZADD lb 100 zed` for a command and
//! `core#2< (integer) 1` for its reply (`#2` is the connection). Because every
//! connection is proxied, worker threads, worker processes (which get the same
//! URL), pipelines, scripts and pub/sub are all shown. The proxy adds a hop, so
//! timings of a traced run mean nothing.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A RESP value as redis-cli would show it.
#[derive(Debug, PartialEq)]
enum Resp {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Resp>>),
    /// RESP3 types shown by their text (double, map, set, push, ...).
    Other(String, Vec<Resp>),
}

/// Parses one complete value at the start of `buf`: the value and its length, or
/// None when more bytes are needed.
fn parse(buf: &[u8]) -> Option<(Resp, usize)> {
    let line_end = buf.windows(2).position(|w| w == b"\r\n")?;
    let line = String::from_utf8_lossy(&buf[1..line_end]).into_owned();
    let after = line_end + 2;
    let count = |line: &str| line.trim().parse::<i64>().ok();
    match *buf.first()? {
        b'+' => Some((Resp::Simple(line), after)),
        b'-' => Some((Resp::Error(line), after)),
        b':' => Some((Resp::Int(count(&line)?), after)),
        b'$' | b'=' | b'!' => {
            let n = count(&line)?;
            if n < 0 {
                return Some((Resp::Bulk(None), after));
            }
            let end = after + n as usize;
            if buf.len() < end + 2 {
                return None;
            }
            Some((Resp::Bulk(Some(buf[after..end].to_vec())), end + 2))
        }
        b'*' | b'~' | b'>' | b'%' => {
            let n = count(&line)?;
            if n < 0 {
                return Some((Resp::Array(None), after));
            }
            let items = if buf[0] == b'%' { n * 2 } else { n };
            let mut at = after;
            let mut out = Vec::new();
            for _ in 0..items {
                let (v, used) = parse(&buf[at..])?;
                out.push(v);
                at += used;
            }
            match buf[0] {
                b'*' => Some((Resp::Array(Some(out)), at)),
                b'~' => Some((Resp::Other("set".into(), out), at)),
                b'>' => Some((Resp::Other("push".into(), out), at)),
                _ => Some((Resp::Other("map".into(), out), at)),
            }
        }
        b',' => Some((Resp::Simple(format!("(double) {line}")), after)),
        b'_' => Some((Resp::Bulk(None), after)),
        b'#' => Some((Resp::Simple(format!("(boolean) {line}")), after)),
        b'(' => Some((Resp::Simple(format!("(big number) {line}")), after)),
        _ => {
            // An inline command (`PING\r\n`): its words.
            let words = String::from_utf8_lossy(&buf[..line_end])
                .split_whitespace()
                .map(|w| Resp::Bulk(Some(w.as_bytes().to_vec())))
                .collect();
            Some((Resp::Array(Some(words)), after))
        }
    }
}

/// An argument as redis-cli reads it: bare if it is plain, else in double quotes
/// with `\"`, `\\`, `\n`, `\r`, `\t` and `\xHH` escapes.
pub fn quote(arg: &[u8]) -> String {
    let plain = !arg.is_empty()
        && arg
            .iter()
            .all(|&b| b.is_ascii_graphic() && !matches!(b, b'"' | b'\'' | b'\\'));
    if plain {
        return String::from_utf8_lossy(arg).into_owned();
    }
    // Valid UTF-8 outside ASCII prints as itself (redis-cli accepts it in quotes).
    let mut out = String::from("\"");
    let text = String::from_utf8_lossy(arg);
    let exact = std::str::from_utf8(arg).is_ok();
    if exact {
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c => out.push(c),
            }
        }
    } else {
        for &b in arg {
            match b {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                b'\n' => out.push_str("\\n"),
                0x20..=0x7e => out.push(b as char),
                _ => out.push_str(&format!("\\x{b:02x}")),
            }
        }
    }
    out.push('"');
    out
}

/// The command line of a request.
fn command_line(v: &Resp) -> String {
    match v {
        Resp::Array(Some(items)) => items
            .iter()
            .map(|i| match i {
                Resp::Bulk(Some(b)) => quote(b),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => format!("{other:?}"),
    }
}

/// A reply as redis-cli prints it, one entry per line.
fn reply_lines(v: &Resp, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    match v {
        Resp::Simple(s) => out.push(format!("{pad}{s}")),
        Resp::Error(e) => out.push(format!("{pad}(error) {e}")),
        Resp::Int(i) => out.push(format!("{pad}(integer) {i}")),
        Resp::Bulk(None) | Resp::Array(None) => out.push(format!("{pad}(nil)")),
        Resp::Bulk(Some(b)) => out.push(format!("{pad}{}", quote_always(b))),
        Resp::Array(Some(items)) | Resp::Other(_, items) => {
            if let Resp::Other(kind, _) = v {
                out.push(format!("{pad}({kind})"));
            }
            if items.is_empty() {
                out.push(format!("{pad}(empty array)"));
            }
            for (i, item) in items.iter().enumerate() {
                let mut sub = Vec::new();
                reply_lines(item, 0, &mut sub);
                let num = format!("{}) ", i + 1);
                for (j, line) in sub.iter().enumerate() {
                    let lead = if j == 0 {
                        num.clone()
                    } else {
                        " ".repeat(num.len())
                    };
                    out.push(format!("{pad}{lead}{line}"));
                }
            }
        }
    }
}

/// redis-cli shows every bulk string in quotes.
fn quote_always(b: &[u8]) -> String {
    let q = quote(b);
    if q.starts_with('"') {
        q
    } else {
        format!("\"{q}\"")
    }
}

/// A proxy in front of one backend; dropping it stops accepting.
pub struct TraceProxy {
    port: u16,
}

impl TraceProxy {
    /// Listens on 127.0.0.1 and forwards every connection to `upstream`
    /// (`host:port`), printing what passes under the name `name`.
    pub fn start(name: &'static str, upstream: String) -> Result<TraceProxy, String> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|e| format!("--trace: cannot listen: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let ids = Arc::new(AtomicU64::new(1));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let id = ids.fetch_add(1, Ordering::Relaxed);
                let tag = format!("{name}#{id}");
                let (c2, s2) = match (client.try_clone(), server.try_clone()) {
                    (Ok(c), Ok(s)) => (c, s),
                    _ => continue,
                };
                let t = tag.clone();
                std::thread::spawn(move || pump(client, server, &t, true));
                std::thread::spawn(move || pump(s2, c2, &tag, false));
            }
        });
        Ok(TraceProxy { port })
    }

    /// The URL a client uses instead of the backend's.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

/// Copies `from` to `to`, printing each complete RESP value.
fn pump(mut from: TcpStream, mut to: TcpStream, tag: &str, requests: bool) {
    let mut pending = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Printed before it is passed on, so a reply is on screen before the
        // client can send its next command: the trace reads in causal order.
        pending.extend_from_slice(&chunk[..n]);
        while let Some((v, used)) = parse(&pending) {
            pending.drain(..used);
            if requests {
                crate::progress::println(&format!("{tag}> {}", command_line(&v)));
            } else {
                let mut lines = Vec::new();
                reply_lines(&v, 0, &mut lines);
                for l in lines {
                    crate::progress::println(&format!("{tag}< {l}"));
                }
            }
        }
        if to.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// `redis://host:port/...` → `host:port`.
pub fn host_port(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    Some(rest.split('/').next()?.to_string()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_commands_and_replies_like_redis_cli() {
        let (req, used) =
            parse(b"*4\r\n$4\r\nZADD\r\n$2\r\nlb\r\n$3\r\n100\r\n$8\r\nhello wo\r\n").unwrap();
        assert_eq!(used, 45);
        assert_eq!(command_line(&req), "ZADD lb 100 \"hello wo\"");
        assert!(parse(b"*2\r\n$4\r\nZADD\r\n").is_none());
        let (rep, _) = parse(b"*2\r\n$3\r\nkim\r\n*1\r\n:90\r\n").unwrap();
        let mut lines = Vec::new();
        reply_lines(&rep, 0, &mut lines);
        assert_eq!(lines, ["1) \"kim\"", "2) 1) (integer) 90"]);
        let (e, _) = parse(b"-ERR bad\r\n").unwrap();
        let mut lines = Vec::new();
        reply_lines(&e, 0, &mut lines);
        assert_eq!(lines, ["(error) ERR bad"]);
        assert_eq!(quote("Đức".as_bytes()), "\"Đức\"");
        assert_eq!(quote(b"lara\xff"), "\"lara\\xff\"");
        assert_eq!(
            host_port("redis://127.0.0.1:6379/"),
            Some("127.0.0.1:6379".into())
        );
    }
}
