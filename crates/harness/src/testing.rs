//! Helpers for tests: private servers, the lab binaries, and a raw RESP client.
//!
//! [`RawRedis`] sends a command over a plain socket and returns the reply's raw
//! RESP bytes, so a test compares exactly what each server wrote on the wire.
//! [`redis_for_test`], [`pg_for_test`] and [`lab_binary`] give a test what it needs
//! or, when it cannot be had, `None` with a message (a panic with
//! `REDISLAB_REQUIRE_SERVERS=1`, so CI cannot pass by skipping).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::servers::postgres::{self as pgsrv, PgServer};
use crate::servers::redis::{self as redissrv, RedisServer};

fn unavailable<T>(what: &str, e: &str) -> Option<T> {
    if std::env::var_os("REDISLAB_REQUIRE_SERVERS").is_some() {
        panic!("{what} is required (REDISLAB_REQUIRE_SERVERS is set): {e}")
    }
    eprintln!("SKIPPED: no {what} for this test: {e}");
    None
}

/// A real Redis for a test, or `None` (with a message) when none can be had. With
/// `REDISLAB_REQUIRE_SERVERS=1` (set by `./run.sh test`) a missing server panics
/// instead, so CI cannot pass by skipping.
pub fn redis_for_test() -> Option<RedisServer> {
    match redissrv::binaries().and_then(|bin| RedisServer::start(&bin, &[])) {
        Ok(server) => Some(server),
        Err(e) => unavailable("real Redis", &e),
    }
}

/// A real Redis that accepts DEBUG (for tests that stop active expiry and the
/// like), or `None` as [`redis_for_test`].
pub fn redis_with_debug_for_test() -> Option<RedisServer> {
    match redissrv::binaries()
        .and_then(|bin| RedisServer::start(&bin, &["--enable-debug-command", "local"]))
    {
        Ok(server) => Some(server),
        Err(e) => unavailable("real Redis", &e),
    }
}

/// A private PostgreSQL for a test, like [`redis_for_test`].
pub fn pg_for_test() -> Option<PgServer> {
    match pgsrv::binaries().and_then(|bin| PgServer::start(&bin)) {
        Ok(server) => Some(server),
        Err(e) => unavailable("real PostgreSQL", &e),
    }
}

/// The built binary of lab `id` (`lab-<id>` in the target directory of the running
/// test), if it is there and newer than every source file it is built from (the
/// lab's, the harness's, the core's and the listener's). `./run.sh test` builds the
/// workspace before it runs the tests; by hand: `cargo build --release --workspace`.
pub fn lab_binary(id: &str) -> Option<PathBuf> {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return unavailable("lab binary", &e.to_string()),
    };
    // <target>/<profile>/deps/<test>: the labs are in <target>/<profile>.
    let Some(profile) = exe.parent().and_then(Path::parent) else {
        return unavailable("lab binary", "the test executable has no target directory");
    };
    let bin = profile.join(format!("lab-{id}"));
    let Some(built) = modified(&bin) else {
        return unavailable(
            "lab binary",
            &format!(
                "{} is not built (cargo build --release --workspace)",
                bin.display()
            ),
        );
    };
    let root = crate::paths::repo_root();
    let sources = [
        root.join("labs").join(id),
        root.join("crates/harness/src"),
        root.join("crates/core/src"),
        root.join("crates/listener/src"),
    ];
    if let Some(newer) = sources.iter().find_map(|dir| newer_file(dir, built)) {
        return unavailable(
            "lab binary",
            &format!(
                "{} is older than {} (cargo build --release --workspace)",
                bin.display(),
                newer.display()
            ),
        );
    }
    Some(bin)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// A file under `dir` modified after `than`, if any.
fn newer_file(dir: &Path, than: SystemTime) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = newer_file(&path, than) {
                return Some(found);
            }
        } else if modified(&path).is_some_and(|m| m > than) {
            return Some(path);
        }
    }
    None
}

/// Encodes a command as a RESP array of bulk strings.
pub fn encode_command(argv: &[Vec<u8>]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for a in argv {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

pub struct RawRedis {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl RawRedis {
    pub fn connect(port: u16) -> std::io::Result<RawRedis> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        Ok(RawRedis {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends one command and returns its reply's bytes.
    pub fn call(&mut self, argv: &[Vec<u8>]) -> std::io::Result<Vec<u8>> {
        self.writer.write_all(&encode_command(argv))?;
        let mut reply = Vec::new();
        read_reply(&mut self.reader, &mut reply)?;
        Ok(reply)
    }

    /// Sends one command without waiting for its reply.
    pub fn send_only(&mut self, argv: &[Vec<u8>]) -> std::io::Result<()> {
        self.writer.write_all(&encode_command(argv))
    }

    /// Reads the next reply, as text.
    pub fn read_one(&mut self) -> std::io::Result<String> {
        let mut reply = Vec::new();
        read_reply(&mut self.reader, &mut reply)?;
        Ok(String::from_utf8_lossy(&reply).into_owned())
    }
}

/// Reads one whole RESP2/RESP3 reply, appending its bytes to `out` (an error
/// when the server closed the connection).
pub fn read_reply(r: &mut BufReader<TcpStream>, out: &mut Vec<u8>) -> std::io::Result<()> {
    let start = out.len();
    r.read_until(b'\n', out)?;
    let line = String::from_utf8_lossy(&out[start..])
        .trim_end()
        .to_string();
    if line.is_empty() {
        return Err(std::io::Error::other("connection closed"));
    }
    let (kind, rest) = line.split_at(1);
    let n: i64 = rest.parse().unwrap_or(0);
    match kind {
        "$" | "=" | "!" if n >= 0 => {
            let mut body = vec![0u8; n as usize + 2];
            r.read_exact(&mut body)?;
            out.extend_from_slice(&body);
        }
        "*" | "~" | ">" => {
            for _ in 0..n.max(0) {
                read_reply(r, out)?;
            }
        }
        "%" => {
            for _ in 0..n.max(0) * 2 {
                read_reply(r, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A key for testing Cluster key slots: random bytes (any of the 256) mixed with
/// `{` and `}` in every position, plus sometimes a well-formed tag, an empty tag
/// `{}`, a lone leading `{` or trailing `}`, or nested braces, so every branch of
/// the hash-tag rule is exercised.
pub fn random_cluster_key(rng: &mut impl rand::Rng) -> Vec<u8> {
    const PLAIN: &[u8] = b"abcxyz:019_-";
    let len = rng.gen_range(0..20);
    let mut key: Vec<u8> = (0..len)
        .map(|_| match rng.gen_range(0..10) {
            0 => b'{',
            1 => b'}',
            2 => rng.gen::<u8>(),
            _ => PLAIN[rng.gen_range(0..PLAIN.len())],
        })
        .collect();
    let at = rng.gen_range(0..=key.len());
    let insert: &[u8] = match rng.gen_range(0..8) {
        0 => b"{global}",
        1 => b"{}",
        2 => b"{{x}}",
        3 => b"{a}{b}",
        4 => b"}{",
        _ => b"",
    };
    key.splice(at..at, insert.iter().copied());
    match rng.gen_range(0..6) {
        0 => key.insert(0, b'{'),
        1 => key.push(b'}'),
        _ => {}
    }
    key
}
