//! `redislab-core-server` maps its sorted sets' record buffers on
//! transparent huge pages (`redislab_alloc::huge`) and still reports them in
//! `used_memory`; `--no-huge-pages` leaves them to malloc. The same 300,000-member sorted set
//! is built in both and the two servers' `used_memory` growth must agree
//! (a mapped block left out of the count would show as megabytes missing).

mod common;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{info_field, Raw};

struct Served {
    child: Child,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn serve(extra: &[&str]) -> Served {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_redislab-core-server"))
        .args(["--port", &port.to_string()])
        .args(extra)
        .stderr(Stdio::null())
        .spawn()
        .expect("start redislab-core-server");
    let served = Served { child, port };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    served
}

/// `used_memory` growth for 300,000 members, and the process's AnonHugePages.
fn build(served: &Served) -> (i64, u64) {
    let mut raw = Raw::connect(served.port);
    let used = |raw: &mut Raw| -> i64 { info_field(raw, "memory", "used_memory").parse().unwrap() };
    let before = used(&mut raw);
    for start in (0..300_000).step_by(1000) {
        let mut args = vec!["ZADD".to_string(), "z".to_string()];
        for i in start..start + 1000 {
            args.push(i.to_string());
            args.push(format!("m:{i:012}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(raw.call(&args), ":1000\r\n");
    }
    let growth = used(&mut raw) - before;
    let smaps = std::fs::read_to_string(format!("/proc/{}/smaps_rollup", served.child.id()))
        .unwrap_or_default();
    let huge_kb = smaps
        .lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    (growth, huge_kb)
}

#[test]
fn record_pages_go_on_huge_pages_and_are_counted_in_used_memory() {
    let (on, huge_on) = build(&serve(&[]));
    let (off, huge_off) = build(&serve(&["--no-huge-pages"]));
    assert_eq!(huge_off, 0, "--no-huge-pages still mapped huge pages");
    // The same blocks either way: the same count within a few pages.
    assert!(
        on >= off - (4 << 20) && on <= off + (4 << 20),
        "used_memory growth {on} with huge pages vs {off} without"
    );
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.contains("[always]") || thp.contains("[madvise]") {
        assert!(huge_on > 0, "no AnonHugePages with THP '{}'", thp.trim());
    }
}
