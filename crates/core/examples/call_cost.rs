//! The fixed cost of the command path in process: `Server::call_into` (lookup,
//! checks, `call()`'s bookkeeping, the handler, the RESP encoding) for SET, GET
//! and INCR on a small keyspace, as a transport's connection client runs them.
//!
//! `cargo run --release -p redislab-core --example call_cost [-- N]`
//!
//! Prints ns per command (best of five passes of N commands, default 1,000,000),
//! and allocations per command (a counting global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use redislab_core::server::{ClientKind, ConnectInfo};
use redislab_core::Server;

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const KEYS: usize = 1000;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let mut s = Server::new();
    let id = s.connect(ConnectInfo {
        kind: ClientKind::Connection,
        addr: "127.0.0.1:1".into(),
        laddr: "127.0.0.1:2".into(),
    });
    let key = |prefix: &str, i: usize| format!("{prefix}:{:012}", i % KEYS).into_bytes();
    let set: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| vec![b"SET".to_vec(), key("k", i), b"xxx".to_vec()])
        .collect();
    let get: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| vec![b"GET".to_vec(), key("k", i)])
        .collect();
    let incr: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| vec![b"INCR".to_vec(), key("n", i)])
        .collect();
    let mut out = Vec::with_capacity(1 << 20);
    for (name, argvs) in [("SET", &set), ("GET", &get), ("INCR", &incr)] {
        let mut best = f64::MAX;
        let mut allocs = 0.0;
        for _ in 0..5 {
            let a0 = ALLOCATIONS.load(Relaxed);
            let t = Instant::now();
            for i in 0..n {
                s.call_into(id, &argvs[i % KEYS], &mut out);
                if out.len() > 1 << 19 {
                    out.clear();
                }
            }
            let ns = t.elapsed().as_nanos() as f64 / n as f64;
            allocs = (ALLOCATIONS.load(Relaxed) - a0) as f64 / n as f64;
            best = best.min(ns);
            out.clear();
        }
        println!("{name:5} {best:7.1} ns/command  {allocs:.2} allocations/command");
    }
}
