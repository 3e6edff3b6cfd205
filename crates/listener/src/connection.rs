//! One client connection: a reader and a writer task on the same socket, and the
//! [`Output`] they share with the executor.
//!
//! The **reader** waits until the socket is readable, reads once, feeds what
//! arrived to the incremental [`RequestParser`] and hands every complete request
//! over as one batch: run at once on this thread when the server is free
//! ([`Executor::try_inline`]), else sent to the executor thread ([`Job::Run`]):
//! one hand-over per wake-up, however many requests the read held. The argument
//! buffers come back once their commands ran ([`Output::recycle`]) and are
//! refilled by the parser, so a steady stream of requests allocates nothing per
//! command. It stops reading while two batches are unanswered or while more
//! than [`MAX_UNSENT`] bytes of replies wait to be written, so a client that
//! sends faster than it reads is slowed down instead of growing the server's
//! memory. A protocol error is handed over in order too: the executor answers it
//! after the requests before it, then the connection closes.
//!
//! **Replies** are written once per batch (Redis's `writeToClient` from
//! `beforeSleep`), when nothing is waiting to be written before them: by the
//! executor thread at once, for a batch it ran; for a batch run on the I/O
//! thread, at the end of that thread's round, with the other connections'
//! replies ([`Output::send_later`], [`crate::flush`]). What the socket does not take at once
//! waits in [`Output`], and the **writer** task writes it when the socket can
//! take more, in order, and counts it down (the `unsent` count the executor
//! checks against output-buffer limits). So a client that reads its replies
//! costs one `send` per batch and no hand-over between threads; a client that
//! is slow to read never stops the server.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use tokio::net::TcpStream;
use tokio::sync::{mpsc::unbounded_channel, Notify};

use crate::executor::{lock, ConnHandle, Executor, Job, SharedExecutor, SharedLimits, ToConn};
use crate::resp::{Batch, RequestParser};

const READ_CHUNK: usize = 64 * 1024;
/// The reader pauses while more reply bytes than this are waiting to be written.
pub const MAX_UNSENT: usize = 4 << 20;
/// ... or while this many batches are unanswered.
pub const MAX_RUNS_IN_FLIGHT: usize = 2;
/// A writer's buffer larger than this is given back once written.
const KEEP_BUFFER: usize = 64 * 1024;
/// Spent argument vectors kept for the reader at most.
const KEEP_ARGVS: usize = 8192;

/// A connection's output and the counters its tasks and the executor share.
pub struct Output {
    stream: Arc<TcpStream>,
    state: Mutex<OutState>,
    /// Bytes accepted for this connection and not yet written to its socket.
    pub unsent: AtomicUsize,
    /// Batches handed to the executor and not yet answered.
    runs_in_flight: AtomicUsize,
    /// Jobs of this client sent through the channel and not yet handled (while
    /// there are any, its batches go the same way, to stay in order).
    queued_jobs: AtomicUsize,
    /// The writer or the executor ended the connection.
    closed: AtomicBool,
    /// Wakes the writer: there are bytes in `state.pending`.
    writer_wake: Notify,
    /// Wakes the reader when it may read again, or must stop.
    reader_wake: Notify,
    /// Requests whose commands ran, back for the reader's parser to refill,
    /// and the emptied batch vector.
    recycled: Mutex<Recycled>,
}

/// What the executor hands back: spent requests, and an emptied batch vector.
type Recycled = (Vec<Vec<Vec<u8>>>, Option<Batch>);

#[derive(Default)]
struct OutState {
    /// Bytes waiting for the socket, in order.
    pending: Vec<u8>,
    /// The writer task owns the output (it has bytes to write, or is writing
    /// them): the executor appends to `pending` instead of writing.
    writing: bool,
    /// A write failed: the connection is going away, drop what comes.
    broken: bool,
    /// `pending` holds replies kept for the end of the I/O thread's round
    /// ([`Output::send_later`]), and the connection is in that round's list.
    kept: bool,
}

impl Output {
    /// Writes `bytes` to the socket now if nothing waits before them, and keeps
    /// what the socket did not take for the writer. Returns the bytes unsent
    /// after it (what the output-buffer limits look at).
    pub fn send(&self, bytes: &[u8]) -> usize {
        if bytes.is_empty() {
            return self.unsent.load(Ordering::Relaxed);
        }
        let mut st = lock(&self.state);
        let mut rest = bytes;
        // Replies kept for the end of the round go first.
        if !st.writing && !st.broken && st.pending.is_empty() {
            let (written, broken) = write_now(&self.stream, rest);
            rest = &rest[written..];
            st.broken = broken;
        }
        if rest.is_empty() || st.broken {
            return self.unsent.load(Ordering::Relaxed);
        }
        st.pending.extend_from_slice(rest);
        let unsent = self.unsent.fetch_add(rest.len(), Ordering::Relaxed) + rest.len();
        // The writer takes over, kept replies included (the flusher then
        // finds it writing and leaves them to it).
        if !st.writing {
            st.writing = true;
            self.writer_wake.notify_one();
        }
        unsent
    }

    /// [`Output::send`] at the end of the I/O thread's round (see
    /// [`crate::flush`]): the bytes wait in `pending`, counted as unsent, until
    /// this thread's flusher writes them. Written at once on a thread without a
    /// flusher, and handed to the writer if it is writing already.
    pub fn send_later(self: &Arc<Self>, bytes: &[u8]) -> usize {
        if bytes.is_empty() {
            return self.unsent.load(Ordering::Relaxed);
        }
        let mut st = lock(&self.state);
        if st.writing || st.broken || (!st.kept && !crate::flush::at_end_of_round(self)) {
            drop(st);
            return self.send(bytes);
        }
        st.kept = true;
        st.pending.extend_from_slice(bytes);
        self.unsent.fetch_add(bytes.len(), Ordering::Relaxed) + bytes.len()
    }

    /// The flusher's part: writes the kept replies, unless the writer took them
    /// over or the connection broke; what the socket does not take goes to the
    /// writer.
    pub fn flush_kept(&self) {
        let mut st = lock(&self.state);
        if !std::mem::take(&mut st.kept) || st.writing || st.broken {
            return;
        }
        let (written, broken) = write_now(&self.stream, &st.pending);
        st.broken = broken;
        st.pending.drain(..written);
        let before = self.unsent.fetch_sub(written, Ordering::Relaxed);
        if !st.pending.is_empty() && !st.broken {
            st.writing = true;
            self.writer_wake.notify_one();
        }
        // The reader may have stopped for the bytes just written.
        if before > MAX_UNSENT && before - written <= MAX_UNSENT {
            self.reader_wake.notify_one();
        }
    }

    pub fn queued_jobs(&self) -> usize {
        self.queued_jobs.load(Ordering::Acquire)
    }

    /// A job of this client is about to go through the channel.
    pub fn job_queued(&self) {
        self.queued_jobs.fetch_add(1, Ordering::AcqRel);
    }

    /// The executor handled one of this client's queued jobs.
    pub fn job_done(&self) {
        self.queued_jobs.fetch_sub(1, Ordering::AcqRel);
    }

    /// A batch is handed over (inline or through the channel).
    pub fn run_started(&self) {
        self.runs_in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether everything accepted so far is in the socket.
    pub fn all_written(&self) -> bool {
        let st = lock(&self.state);
        !st.writing && st.pending.is_empty()
    }

    /// `n` batches were answered: the reader may read again if it waited for
    /// that (only then is it woken, so a client with one batch at a time is
    /// never woken from this thread).
    pub fn runs_done(&self, n: usize) {
        if n == 0 {
            return;
        }
        let before = self.runs_in_flight.fetch_sub(n, Ordering::Relaxed);
        if before >= MAX_RUNS_IN_FLIGHT && before - n < MAX_RUNS_IN_FLIGHT {
            self.reader_wake.notify_one();
        }
    }

    /// Hands spent requests (and the emptied batch vector) back to the reader.
    pub fn recycle(&self, spent: &mut Vec<Vec<Vec<u8>>>, batch: Option<Batch>) {
        let mut r = lock(&self.recycled);
        let room = KEEP_ARGVS.saturating_sub(r.0.len());
        r.0.extend(spent.drain(..).take(room));
        spent.clear();
        if let Some(b) = batch {
            r.1.get_or_insert(b);
        }
    }
}

/// Writes what the socket takes of `bytes` now, without waiting: the bytes
/// written, and whether the socket broke (closed, or an error other than
/// "would block").
fn write_now(stream: &TcpStream, bytes: &[u8]) -> (usize, bool) {
    let mut written = 0;
    while written < bytes.len() {
        match stream.try_write(&bytes[written..]) {
            Ok(0) => return (written, true),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return (written, true),
        }
    }
    (written, false)
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
    exec: Option<SharedExecutor>,
    limits: Arc<SharedLimits>,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let addr = stream.peer_addr()?.to_string();
    let laddr = stream.local_addr()?.to_string();
    let stream = Arc::new(stream);
    let (to_conn, mut from_executor) = unbounded_channel::<ToConn>();
    let id = crate::next_client_id();
    let kill = Arc::new(Notify::new());
    let out = Arc::new(Output {
        stream: stream.clone(),
        state: Mutex::new(OutState::default()),
        unsent: AtomicUsize::new(0),
        runs_in_flight: AtomicUsize::new(0),
        queued_jobs: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        writer_wake: Notify::new(),
        reader_wake: Notify::new(),
        recycled: Mutex::new((Vec::new(), None)),
    });
    let handle = ConnHandle {
        to_conn,
        out: out.clone(),
        kill: kill.clone(),
    };
    out.job_queued();
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
    let _goodbye = Goodbye {
        id,
        jobs: jobs.clone(),
    };

    let writer_jobs = jobs.clone();
    let writer_out = out.clone();
    let writer = async move {
        let out = writer_out;
        let mut buf: Vec<u8> = Vec::new();
        let result: io::Result<()> = async {
            loop {
                // The executor's control messages come after the bytes it
                // accepted before them: write those first.
                let msg = tokio::select! {
                    biased;
                    _ = kill.notified() => return Ok(()),
                    _ = out.writer_wake.notified() => None,
                    msg = from_executor.recv() => Some(msg),
                };
                tokio::select! {
                    biased;
                    _ = kill.notified() => return Ok(()),
                    r = drain(&out, &mut buf) => r?,
                }
                match msg {
                    None => {}
                    Some(Some(ToConn::Paused)) => {
                        out.job_queued();
                        let _ = writer_jobs.send(Job::Resume {
                            id,
                            out: out.clone(),
                        });
                    }
                    Some(Some(ToConn::Close { flush })) => {
                        if !flush {
                            return Ok(());
                        }
                        // SAFETY: shutdown on the descriptor of a socket we hold.
                        unsafe {
                            libc::shutdown(out.stream.as_raw_fd(), libc::SHUT_WR);
                        }
                        return Ok(());
                    }
                    Some(None) => return Ok(()),
                }
            }
        }
        .await;
        result
    };
    let writer = async {
        let r = writer.await;
        out.closed.store(true, Ordering::Relaxed);
        lock(&out.state).broken = true;
        out.reader_wake.notify_one();
        r
    };

    let reader = async {
        let mut parser = RequestParser::new(limits.max_bulk.load(Ordering::Relaxed));
        let mut chunk = vec![0u8; READ_CHUNK];
        loop {
            // Wait while the client has enough in flight.
            while !out.closed.load(Ordering::Relaxed)
                && (out.runs_in_flight.load(Ordering::Relaxed) >= MAX_RUNS_IN_FLIGHT
                    || out.unsent.load(Ordering::Relaxed) > MAX_UNSENT)
            {
                out.reader_wake.notified().await;
            }
            if out.closed.load(Ordering::Relaxed) {
                return Ok::<(), io::Error>(());
            }
            stream.readable().await?;
            let n = match read_once(&stream, &mut chunk) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            parser.set_max_bulk(limits.max_bulk.load(Ordering::Relaxed));
            parser.feed(&chunk[..n]);
            let mut requests = {
                let mut r = lock(&out.recycled);
                // The spent argument vectors went cold while the other
                // connections ran: ask for all of them at once, then read
                // them (one wait for memory instead of one per request).
                for argv in &r.0 {
                    redislab_core::dict::prefetch(argv.as_ptr());
                }
                for argv in r.0.drain(..) {
                    parser.recycle(argv);
                }
                r.1.take().unwrap_or_default()
            };
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
                let queued = match &exec {
                    Some(exec) => {
                        Executor::try_inline(exec, id, &out, requests, &jobs, &limits).err()
                    }
                    None => Some(requests),
                };
                if let Some(requests) = queued {
                    out.run_started();
                    out.job_queued();
                    let run = Job::Run {
                        id,
                        requests,
                        conn: handle.clone(),
                    };
                    if jobs.send(run).is_err() {
                        return Ok(());
                    }
                }
            } else {
                lock(&out.recycled).1.get_or_insert(requests);
            }
            if let Some(e) = error {
                out.job_queued();
                let _ = jobs.send(Job::ProtocolError {
                    id,
                    message: e.0,
                    out: out.clone(),
                });
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
    // here; ask the allocator to hand it back to the system.
    let unsent = {
        let mut st = lock(&out.state);
        st.broken = true;
        std::mem::take(&mut st.pending).len()
    };
    if unsent > 1 << 20 {
        crate::give_memory_back();
    }
    result
}

/// One `read` of what the socket holds. A short read emptied the socket, so the
/// readiness is cleared at once (Redis reads once per readable event too): the
/// next wait goes straight to the poller instead of costing a `read` that
/// would only say `EAGAIN`. Data arriving after the read is a new edge, which
/// sets the readiness again (tokio clears it only if no event came since).
fn read_once(stream: &TcpStream, chunk: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    let fd = stream.as_raw_fd();
    let r = stream.try_io(tokio::io::Interest::READABLE, || {
        // SAFETY: reads into a buffer we own, of its length, from our socket.
        let n = unsafe { libc::recv(fd, chunk.as_mut_ptr().cast(), chunk.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        got = n as usize;
        if got > 0 && got < chunk.len() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(got)
    });
    match r {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => Ok(got),
        other => other,
    }
}

/// Writes what waits in `out` until nothing does, then gives the output back to
/// the executor's direct writes.
async fn drain(out: &Output, buf: &mut Vec<u8>) -> io::Result<()> {
    loop {
        {
            let mut st = lock(&out.state);
            if st.pending.is_empty() {
                st.writing = false;
                return Ok(());
            }
            std::mem::swap(&mut st.pending, buf);
        }
        let mut at = 0;
        while at < buf.len() {
            out.stream.writable().await?;
            match out.stream.try_write(&buf[at..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        out.unsent.fetch_sub(buf.len(), Ordering::Relaxed);
        out.reader_wake.notify_one();
        buf.clear();
        if buf.capacity() > KEEP_BUFFER {
            *buf = Vec::new();
        }
    }
}
