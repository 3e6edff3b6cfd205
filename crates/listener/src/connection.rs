//! One client connection: a reader and a writer on the same socket.
//!
//! The **reader** feeds what arrives to the incremental [`RequestParser`] and
//! hands every complete request to the executor in one [`Job::Run`] per read (a
//! pipeline costs one hand-over, not one per command). It stops reading while
//! two runs are unanswered or while more than [`MAX_UNSENT`] bytes of replies
//! wait to be written, so a client that sends faster than it reads is slowed
//! down instead of growing the server's memory. A protocol error is handed over
//! in order too: the executor answers it after the requests before it, then the
//! connection closes.
//!
//! The **writer** writes what the executor sends, in order, and reports each
//! write (the `unsent` count the executor checks against output-buffer limits).
//! Reader and writer are separate tasks so that a client that is slow to read
//! never stops the server from reading what it sends, nor the other way round.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc::unbounded_channel, Notify};

use crate::executor::{ConnHandle, Job, SharedLimits, ToConn};
use crate::resp::RequestParser;

const READ_CHUNK: usize = 64 * 1024;
/// The reader pauses while more reply bytes than this are waiting to be written.
pub const MAX_UNSENT: usize = 4 << 20;
/// ... or while this many runs are unanswered.
const MAX_RUNS_IN_FLIGHT: usize = 2;

/// What reader and writer share.
struct Shared {
    unsent: Arc<AtomicUsize>,
    runs_in_flight: AtomicUsize,
    closed: AtomicBool,
    /// Wakes the reader when it may read again, or must stop.
    wake: Notify,
}

/// Tells the executor the connection is gone, however `serve` returns.
struct Goodbye {
    id: u64,
    jobs: mpsc::Sender<Job>,
}

impl Drop for Goodbye {
    fn drop(&mut self) {
        let _ = self.jobs.send(Job::Gone { id: self.id });
    }
}

pub async fn serve(
    stream: TcpStream,
    jobs: mpsc::Sender<Job>,
    limits: Arc<SharedLimits>,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let addr = stream.peer_addr()?.to_string();
    let laddr = stream.local_addr()?.to_string();
    let (to_conn, mut from_executor) = unbounded_channel::<ToConn>();
    let unsent = Arc::new(AtomicUsize::new(0));
    let id = crate::next_client_id();
    let kill = Arc::new(Notify::new());
    let handle = ConnHandle {
        to_conn: to_conn.clone(),
        unsent: unsent.clone(),
        kill: kill.clone(),
    };
    if jobs
        .send(Job::Connect {
            id,
            addr,
            laddr,
            conn: handle.clone(),
        })
        .is_err()
    {
        return Ok(());
    }
    let (mut rd, mut wr) = stream.into_split();
    let _goodbye = Goodbye {
        id,
        jobs: jobs.clone(),
    };
    let shared = Arc::new(Shared {
        unsent,
        runs_in_flight: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        wake: Notify::new(),
    });

    let writer_shared = shared.clone();
    let writer_jobs = jobs.clone();
    let writer = async move {
        let shared = writer_shared;
        let result: io::Result<()> = async {
            while let Some(msg) = from_executor.recv().await {
                match msg {
                    ToConn::Bytes(bytes) => {
                        let n = bytes.len();
                        let written = tokio::select! {
                            w = wr.write_all(&bytes) => w,
                            _ = kill.notified() => break,
                        };
                        shared.unsent.fetch_sub(n, Ordering::Relaxed);
                        shared.wake.notify_one();
                        written?;
                    }
                    ToConn::Done => {
                        shared.runs_in_flight.fetch_sub(1, Ordering::Relaxed);
                        shared.wake.notify_one();
                    }
                    ToConn::Paused => {
                        let _ = writer_jobs.send(Job::Resume { id });
                    }
                    ToConn::Close { flush } => {
                        if flush {
                            let _ = wr.flush().await;
                        }
                        break;
                    }
                }
            }
            Ok(())
        }
        .await;
        shared.closed.store(true, Ordering::Relaxed);
        shared.wake.notify_one();
        let _ = wr.shutdown().await;
        result
    };

    let reader = async {
        let mut parser = RequestParser::new(limits.max_bulk.load(Ordering::Relaxed));
        let mut chunk = vec![0u8; READ_CHUNK];
        loop {
            // Wait while the client has enough in flight.
            while !shared.closed.load(Ordering::Relaxed)
                && (shared.runs_in_flight.load(Ordering::Relaxed) >= MAX_RUNS_IN_FLIGHT
                    || shared.unsent.load(Ordering::Relaxed) > MAX_UNSENT)
            {
                shared.wake.notified().await;
            }
            if shared.closed.load(Ordering::Relaxed) {
                return Ok::<(), io::Error>(());
            }
            let n = tokio::select! {
                read = rd.read(&mut chunk) => read?,
                _ = shared.wake.notified() => continue,
            };
            if n == 0 {
                return Ok(());
            }
            parser.set_max_bulk(limits.max_bulk.load(Ordering::Relaxed));
            parser.feed(&chunk[..n]);
            let mut requests = Vec::new();
            let mut error = None;
            loop {
                match parser.next_request() {
                    Ok(Some(r)) => requests.push(r),
                    Ok(None) => break,
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            parser.compact();
            if !requests.is_empty() {
                shared.runs_in_flight.fetch_add(1, Ordering::Relaxed);
                let run = Job::Run {
                    id,
                    requests,
                    conn: handle.clone(),
                };
                if jobs.send(run).is_err() {
                    return Ok(());
                }
            }
            if let Some(e) = error {
                let _ = jobs.send(Job::ProtocolError { id, message: e.0 });
                // The executor answers it and closes; read nothing more.
                std::future::pending::<()>().await;
            }
            if parser.buffered() > limits.query_buffer.load(Ordering::Relaxed) {
                eprintln!(
                    "redislab-core: closing client {id} that reached max query buffer length"
                );
                return Ok(());
            }
        }
    };

    let result = tokio::select! {
        r = writer => r,
        r = reader => r,
    };
    // Output that was never written (a client dropped for not reading) is freed
    // with this task; ask the allocator to hand it back to the system.
    if shared.unsent.load(Ordering::Relaxed) > 1 << 20 {
        crate::give_memory_back();
    }
    result
}
