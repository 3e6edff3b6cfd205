//! The core's RESP listener.
//!
//! Connections are served by a small tokio runtime on one thread (reading,
//! parsing, writing). The core's [`redislab_core::Server`] sits behind one lock,
//! so it sees one command at a time in arrival order, the way Redis's main
//! thread does: a connection's batch of requests runs on that I/O thread when
//! the server is free (as Redis runs what it reads on the thread that read it),
//! otherwise it goes to the executor thread, which also runs the cron, the
//! blocked clients' timeouts and every script (so that a script running too long
//! still lets the executor answer `-BUSY` to everyone). This is what lets the
//! concurrency labs run the same client code against the core and a real Redis.
//!
//! With [`Options::io_threads`] above 1 (Redis's `io-threads`), connections are
//! read, parsed and written by that many threads, and every batch is executed
//! by the executor thread, one command at a time.
//!
//! The listen socket has Redis's `tcp-backlog` (511), so thousands of clients
//! connecting at once are queued by the kernel rather than refused.

mod connection;
mod executor;
mod flush;
mod resp;

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::os::fd::AsRawFd;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::executor::{Job, SharedExecutor, SharedLimits};

pub use resp::{parse_all, split_args, ProtocolError, RequestParser};

/// Redis's default `tcp-backlog`.
pub const TCP_BACKLOG: i32 = 511;

/// How the listener runs.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Threads reading, parsing and writing connections (Redis's `io-threads`):
    /// 1 (the default) runs commands on that thread when the server is free;
    /// more hand every batch to the executor thread.
    pub io_threads: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { io_threads: 1 }
    }
}

/// A running listener. Dropping it stops accepting, closes the executor and joins
/// both threads.
pub struct CoreListener {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    io_thread: Option<JoinHandle<()>>,
    exec_thread: Option<JoinHandle<()>>,
}

impl CoreListener {
    /// Starts on 127.0.0.1, on `port` or on a free port when `port` is 0.
    pub fn start(port: u16) -> io::Result<CoreListener> {
        CoreListener::start_with(port, Options::default())
    }

    /// [`CoreListener::start`] with [`Options`].
    pub fn start_with(port: u16, options: Options) -> io::Result<CoreListener> {
        let std_listener = StdListener::bind((Ipv4Addr::LOCALHOST, port))?;
        // std listens with a backlog of 128; listen() again raises it.
        // SAFETY: a valid listening socket descriptor we own.
        if unsafe { libc::listen(std_listener.as_raw_fd(), TCP_BACKLOG) } != 0 {
            return Err(io::Error::last_os_error());
        }
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;

        let limits = Arc::new(SharedLimits::default());
        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let (exec, jobs_rx) = executor::new_executor(jobs_rx, limits.clone());
        let exec_for_thread = exec.clone();
        let inline = (options.io_threads <= 1).then_some(exec);
        let exec_thread = std::thread::Builder::new()
            .name("core-executor".into())
            // Commands recurse (cjson/cmsgpack nesting up to Redis's 1000
            // levels, Lua's C stack): 2 MB, the default, is tight in a debug
            // build; the pages are only touched when used.
            .stack_size(16 << 20)
            .spawn(move || executor::execute_jobs(exec_for_thread, jobs_rx))?;

        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let runtime = if options.io_threads <= 1 {
            tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()?
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(options.io_threads)
                .thread_name("core-io")
                .enable_io()
                .enable_time()
                .build()?
        };
        let io_thread = std::thread::Builder::new()
            .name("core-io".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = TcpListener::from_std(std_listener) else {
                        return;
                    };
                    // The thread that runs batches inline writes their
                    // replies at the end of each round (crate::flush).
                    if inline.is_some() {
                        tokio::spawn(flush::flusher());
                    }
                    tokio::select! {
                        _ = accept_loop(listener, jobs_tx, inline, limits) => {}
                        _ = shutdown_rx => {}
                    }
                });
            })?;

        Ok(CoreListener {
            addr,
            shutdown: Some(shutdown_tx),
            io_thread: Some(io_thread),
            exec_thread: Some(exec_thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    /// Whether the executor stopped (SHUTDOWN NOSAVE during a busy script).
    pub fn is_stopped(&self) -> bool {
        self.exec_thread.as_ref().is_none_or(|t| t.is_finished())
    }
}

impl Drop for CoreListener {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        // The io thread owns the only job sender; once it ends the executor ends too.
        if let Some(t) = self.io_thread.take() {
            let _ = t.join();
        }
        if let Some(t) = self.exec_thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    jobs: mpsc::Sender<Job>,
    exec: Option<SharedExecutor>,
    limits: Arc<SharedLimits>,
) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(pair) => pair,
            Err(_) => {
                // Out of descriptors or similar: wait a little instead of spinning.
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let jobs = jobs.clone();
        let exec = exec.clone();
        let limits = limits.clone();
        tokio::spawn(async move {
            let _ = connection::serve(stream, jobs, exec, limits).await;
        });
    }
}

/// Client ids for connections: they grow for the process's lifetime (2 and up;
/// 1 is the core's own in-process client).
pub(crate) fn next_client_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(2);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The heap in use by the process, from glibc's allocator statistics (INFO's
/// `used_memory` on the core), plus the huge-page blocks a binary running on
/// [`redislab_alloc::huge::HugePages`] mapped itself (0 otherwise).
pub(crate) fn heap_probe() -> Option<fn() -> usize> {
    fn in_use() -> usize {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let info = unsafe { libc::mallinfo2() };
        info.uordblks + info.hblkhd + redislab_alloc::huge::mapped_bytes()
    }
    Some(in_use)
}

/// Asks the allocator to return freed memory to the system (after a client with
/// a large unsent buffer was dropped).
pub(crate) fn give_memory_back() {
    // SAFETY: malloc_trim is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
