//! What a 1M-member skiplist-encoded zset really costs on the core's heap, beside
//! what Redis 8.6.3's `used_memory` grows by for the same members (the figures
//! quoted in `crates/core/src/zset/mod.rs`).
//!
//! `cargo run --release -p redislab-core --example zset_heap [-- --redis DIR --port P]`
//!
//! * Heap: a counting global allocator (requested bytes, `malloc_usable_size`
//!   bytes, live blocks) is read before and after building the set with
//!   `Zset::add`; the difference divided by the member count is printed.
//! * Timing (counting off): 1M single adds, then ZSCORE, ZREVRANK and
//!   `ZRANGE 0 9 WITHSCORES` (the `Zset` calls behind them) on members drawn at
//!   random, ns per operation (best of three passes).
//! * Redis: `redis-server` from `--redis DIR` (default
//!   `/var/cache/redis-labs/redis-8.6.3/bin`) on `--port` (default 28100), no
//!   persistence; `used_memory` before and after the same 1M ZADDs (pipelined),
//!   then the server is shut down. `--no-redis` skips it.
//!
//! Members are 8 to 16 decimal digits (`i` left-padded with zeros to a length
//! cycling through 8..=16), scores `i * 2654435761 mod 1000003` (some ties).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redislab_core::zset::{AddFlags, Limits, Zset};

#[global_allocator]
static ALLOC: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();

const N: usize = 1_000_000;
const OPS: usize = 1_000_000;

fn member(i: usize) -> Vec<u8> {
    let width = 8 + i % 9;
    format!("{i:0width$}").into_bytes()
}

fn score(i: usize) -> f64 {
    ((i as u64 * 2_654_435_761) % 1_000_003) as f64
}

fn build(members: &[Vec<u8>]) -> Zset {
    let mut z = Zset::new();
    let limits = Limits::default();
    for (i, m) in members.iter().enumerate() {
        z.add(score(i), m, AddFlags::default(), &limits);
    }
    z
}

/// Best of three passes of `f` over `ops` random indexes, ns per call.
fn time_op(ops: &[usize], mut f: impl FnMut(usize) -> usize) -> f64 {
    let mut best = f64::MAX;
    let mut sink = 0usize;
    for _ in 0..3 {
        let t = Instant::now();
        for &i in ops {
            sink = sink.wrapping_add(f(i));
        }
        best = best.min(t.elapsed().as_nanos() as f64 / ops.len() as f64);
    }
    std::hint::black_box(sink);
    best
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let redis_dir = arg("--redis").unwrap_or("/var/cache/redis-labs/redis-8.6.3/bin".into());
    let port: u16 = arg("--port").map_or(28100, |p| p.parse().expect("--port"));

    let members: Vec<Vec<u8>> = (0..N).map(member).collect();
    let avg_len = members.iter().map(Vec::len).sum::<usize>() as f64 / N as f64;

    // Heap.
    let before = ALLOC.snapshot();
    let z = build(&members);
    let after = ALLOC.snapshot();
    let kept = after.since(before);
    let per = |bytes: i64| bytes as f64 / N as f64;
    println!("core: {N} members ({avg_len:.1} B avg), skiplist-encoded");
    println!(
        "core heap per member: {:.1} B requested, {:.1} B usable, {:.2} allocations",
        per(kept.requested),
        per(kept.usable),
        per(kept.blocks)
    );
    drop(z);

    // Timing, with counting off.
    ALLOC.set_counting(false);
    let mut best_build = f64::MAX;
    let mut z = Zset::new();
    for _ in 0..3 {
        drop(z);
        let t = Instant::now();
        z = build(&members);
        best_build = best_build.min(t.elapsed().as_secs_f64());
    }
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let ops: Vec<usize> = (0..OPS)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % N as u64) as usize
        })
        .collect();
    let zscore = time_op(&ops, |i| z.score(&members[i]).unwrap() as usize);
    let zrevrank = time_op(&ops, |i| z.rank(&members[i], true).unwrap());
    let zrange = time_op(&ops, |i| {
        z.range_by_rank(0, 9, false)
            .iter()
            .map(|(m, s)| m.len() + *s as usize)
            .sum::<usize>()
            + i
    });
    println!(
        "core build: {N} single adds in {:.3} s ({:.0} ns/add, best of 3)",
        best_build,
        best_build * 1e9 / N as f64
    );
    println!(
        "core ns/op (best of 3 x {OPS}): ZSCORE {zscore:.1}, ZREVRANK {zrevrank:.1}, \
         ZRANGE 0 9 WITHSCORES {zrange:.1}"
    );

    if args.iter().any(|a| a == "--no-redis") {
        return;
    }
    match redis_growth(&redis_dir, port, &members) {
        Ok(growth) => {
            println!("redis 8.6.3 used_memory growth per member: {growth:.1} B");
            println!(
                "ratio core usable / redis used_memory: {:.3}",
                per(kept.usable) / growth
            );
        }
        Err(e) => println!("redis: not measured ({e})"),
    }
}

/// Stops the server however `redis_growth` returns.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn redis_growth(dir: &str, port: u16, members: &[Vec<u8>]) -> Result<f64, String> {
    let server = Command::new(format!("{dir}/redis-server"))
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            &std::env::temp_dir().to_string_lossy(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("start {dir}/redis-server: {e}"))?;
    let _server = Server(server);
    let mut stream = None;
    for _ in 0..100 {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            stream = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let stream = stream.ok_or("redis did not accept connections")?;
    let mut w = stream.try_clone().map_err(|e| e.to_string())?;
    let mut r = BufReader::new(stream);
    let call = |argv: &[&[u8]], w: &mut TcpStream| {
        let mut buf = format!("*{}\r\n", argv.len()).into_bytes();
        for a in argv {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
        w.write_all(&buf).unwrap();
    };
    let read_reply = |r: &mut BufReader<TcpStream>| -> Vec<u8> {
        let mut line = Vec::new();
        r.read_until(b'\n', &mut line).unwrap();
        if line[0] == b'$' {
            let n: i64 = std::str::from_utf8(&line[1..line.len() - 2])
                .unwrap()
                .parse()
                .unwrap();
            if n < 0 {
                return Vec::new();
            }
            let mut body = vec![0; n as usize + 2];
            r.read_exact(&mut body).unwrap();
            body.truncate(n as usize);
            return body;
        }
        line
    };
    let used = |r: &mut BufReader<TcpStream>, w: &mut TcpStream| -> f64 {
        let mut call = |argv: &[&[u8]]| {
            let mut buf = format!("*{}\r\n", argv.len()).into_bytes();
            for a in argv {
                buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                buf.extend_from_slice(a);
                buf.extend_from_slice(b"\r\n");
            }
            w.write_all(&buf).unwrap();
        };
        call(&[b"INFO", b"memory"]);
        let info = String::from_utf8(read_reply(r)).unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    call(&[b"FLUSHALL"], &mut w);
    read_reply(&mut r);
    let before = used(&mut r, &mut w);
    for chunk in members.chunks(1000).enumerate() {
        let (c, ms) = chunk;
        for (k, m) in ms.iter().enumerate() {
            let s = score(c * 1000 + k).to_string();
            call(&[b"ZADD", b"z", s.as_bytes(), m], &mut w);
        }
        for _ in ms {
            let reply = read_reply(&mut r);
            if reply.first() != Some(&b':') {
                return Err(format!("ZADD: {}", String::from_utf8_lossy(&reply)));
            }
        }
    }
    let after = used(&mut r, &mut w);
    call(&[b"SHUTDOWN", b"NOSAVE"], &mut w);
    Ok((after - before) / members.len() as f64)
}
