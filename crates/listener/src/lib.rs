//! The core's RESP listener.
//!
//! Connections are handled by a small tokio runtime; commands are executed by one
//! dedicated thread that owns the [`Server`], so the core sees one command at a
//! time in arrival order, the way Redis's main thread does. This is what lets the
//! concurrency labs run the same client code against the core and a real Redis.

mod resp;

use std::collections::VecDeque;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use redislab_core::commands::Execution;
use redislab_core::{Reply, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

pub use resp::{parse_command, Parsed};

/// A command on its way to the executor thread, with where to send the reply.
struct Job {
    argv: Vec<Vec<u8>>,
    reply: oneshot::Sender<Reply>,
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
        let std_listener = StdListener::bind((Ipv4Addr::LOCALHOST, port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;

        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let exec_thread = std::thread::Builder::new()
            .name("core-executor".into())
            .spawn(move || execute_jobs(jobs_rx))?;

        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let io_thread = std::thread::Builder::new()
            .name("core-io".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(std_listener).expect("listener");
                    tokio::select! {
                        _ = accept_loop(listener, jobs_tx) => {}
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

/// A client waiting in BZPOPMIN/BZPOPMAX, served in the order it blocked.
struct Waiter {
    job: Job,
    deadline: Option<Instant>,
}

/// The executor: one command at a time, like Redis's main thread. Clients whose
/// blocking command found nothing wait in a FIFO queue; after every command each
/// waiter's command is tried again, and a waiter whose timeout passes gets a null
/// array.
fn execute_jobs(jobs: mpsc::Receiver<Job>) {
    let mut server = Server::new();
    let mut waiters: VecDeque<Waiter> = VecDeque::new();
    loop {
        let next = match waiters.iter().filter_map(|w| w.deadline).min() {
            Some(deadline) => jobs.recv_timeout(deadline.saturating_duration_since(Instant::now())),
            None => jobs
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match next {
            Ok(job) => match server.execute_or_block(&job.argv) {
                Execution::Done(reply) => {
                    let _ = job.reply.send(reply);
                    serve_waiters(&mut server, &mut waiters);
                }
                Execution::Blocked(blocked) => {
                    let deadline = blocked
                        .timeout_ms
                        .map(|ms| Instant::now() + Duration::from_millis(ms as u64));
                    waiters.push_back(Waiter { job, deadline });
                }
            },
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        expire_waiters(&mut waiters);
    }
}

/// Retries every waiting client in the order they blocked.
fn serve_waiters(server: &mut Server, waiters: &mut VecDeque<Waiter>) {
    let mut still_waiting = VecDeque::with_capacity(waiters.len());
    while let Some(waiter) = waiters.pop_front() {
        // A client that went away is dropped without taking an element.
        if waiter.job.reply.is_closed() {
            continue;
        }
        match server.execute_or_block(&waiter.job.argv) {
            Execution::Done(reply) => {
                let _ = waiter.job.reply.send(reply);
            }
            Execution::Blocked(_) => still_waiting.push_back(waiter),
        }
    }
    *waiters = still_waiting;
}

fn expire_waiters(waiters: &mut VecDeque<Waiter>) {
    let now = Instant::now();
    let (expired, waiting): (VecDeque<Waiter>, VecDeque<Waiter>) = waiters
        .drain(..)
        .partition(|w| w.deadline.is_some_and(|d| d <= now));
    *waiters = waiting;
    for waiter in expired {
        let _ = waiter.job.reply.send(Reply::NilArray);
    }
}

async fn accept_loop(listener: TcpListener, jobs: mpsc::Sender<Job>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let jobs = jobs.clone();
        tokio::spawn(async move {
            let _ = serve_connection(stream, jobs).await;
        });
    }
}

/// Reads commands (pipelined or not), runs each in order, writes each reply.
async fn serve_connection(mut stream: TcpStream, jobs: mpsc::Sender<Job>) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        let mut out = Vec::new();
        let mut quit = false;
        loop {
            match resp::parse_command(&buf) {
                Parsed::Incomplete => break,
                Parsed::Invalid(msg) => {
                    Reply::error(format!("ERR Protocol error: {msg}")).encode(&mut out);
                    stream.write_all(&out).await?;
                    return Ok(());
                }
                Parsed::Command(argv, used) => {
                    buf.drain(..used);
                    if argv.is_empty() {
                        continue;
                    }
                    if argv[0].eq_ignore_ascii_case(b"quit") {
                        Reply::ok().encode(&mut out);
                        quit = true;
                        break;
                    }
                    let (tx, rx) = oneshot::channel();
                    if jobs.send(Job { argv, reply: tx }).is_err() {
                        return Ok(());
                    }
                    let reply = rx
                        .await
                        .unwrap_or_else(|_| Reply::error("ERR core stopped"));
                    reply.encode(&mut out);
                }
            }
        }
        if !out.is_empty() {
            stream.write_all(&out).await?;
        }
        if quit {
            return Ok(());
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
