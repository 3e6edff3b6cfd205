//! Helpers shared by the listener's integration tests: a raw RESP client that
//! sends commands and reads replies as bytes.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use redislab_listener::CoreListener;

pub struct Raw {
    pub reader: BufReader<TcpStream>,
    pub writer: TcpStream,
}

pub fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_nodelay(true).unwrap();
        Raw {
            reader: BufReader::new(s.try_clone().unwrap()),
            writer: s,
        }
    }

    pub fn to(listener: &CoreListener) -> Raw {
        Raw::connect(listener.port())
    }

    pub fn send(&mut self, args: &[&str]) {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        self.writer.write_all(&encode(&a)).unwrap();
    }

    /// Sends a command and returns its reply's bytes.
    pub fn call(&mut self, args: &[&str]) -> String {
        self.send(args);
        self.reply()
    }

    pub fn reply(&mut self) -> String {
        let mut out = Vec::new();
        read_reply(&mut self.reader, &mut out).expect("a reply");
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Reads one RESP2/RESP3 reply into `out`.
pub fn read_reply(r: &mut impl BufRead, out: &mut Vec<u8>) -> std::io::Result<()> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "closed",
        ));
    }
    out.extend_from_slice(&line);
    let body = String::from_utf8_lossy(&line[1..line.len().saturating_sub(2)]).into_owned();
    match line[0] {
        b'$' | b'=' | b'!' => {
            let n: i64 = body.parse().unwrap_or(-1);
            if n >= 0 {
                let mut buf = vec![0u8; n as usize + 2];
                r.read_exact(&mut buf)?;
                out.extend_from_slice(&buf);
            }
        }
        b'*' | b'~' | b'>' => {
            let n: i64 = body.parse().unwrap_or(-1);
            for _ in 0..n.max(0) {
                read_reply(r, out)?;
            }
        }
        b'%' => {
            let n: i64 = body.parse().unwrap_or(0);
            for _ in 0..2 * n.max(0) {
                read_reply(r, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The value of `field` in an INFO reply.
pub fn info_field(raw: &mut Raw, section: &str, field: &str) -> String {
    let text = raw.call(&["INFO", section]);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The server still answers: a fresh connection gets PONG.
pub fn alive(listener: &CoreListener) -> bool {
    let Ok(s) = TcpStream::connect(("127.0.0.1", listener.port())) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut raw = Raw {
        reader: BufReader::new(s.try_clone().unwrap()),
        writer: s,
    };
    raw.send(&["PING"]);
    let mut out = Vec::new();
    read_reply(&mut raw.reader, &mut out).is_ok() && out == b"+PONG\r\n"
}
