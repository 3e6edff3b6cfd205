//! The executor: one command at a time, like Redis's main thread.
//!
//! It owns the core's [`Server`], behind one lock ([`SharedExecutor`]). A
//! connection's batch (what one read parsed) runs on the connection's own I/O
//! thread when the lock is free ([`Executor::try_inline`]); otherwise, and for
//! anything that may start a script, it goes to the executor thread
//! ([`Job::Run`]), which also runs the cron and the blocked clients' timeouts.
//! Either way a batch of several requests first has its keys prefetched
//! ([`Server::prefetch_keys`], Redis 8's `prefetchCommands`), then the
//! executor runs each client's queue in order through
//! [`Server::call_into`], which encodes the replies in the client's protocol
//! into one output buffer the executor reuses for every batch, and writes that
//! buffer to the client's socket once per batch ([`Output::send`]: straight to
//! the socket when nothing waits before it; run inline, at the end of the I/O
//! thread's round, [`Output::send_later`], as Redis's `beforeSleep` writes
//! replies; what the socket does not take goes to the connection's writer
//! task). The requests' argument buffers go back to the
//! connection to be refilled ([`Output::recycle`]). Around that it does what
//! Redis's event loop and `serverCron` do:
//!
//! * **Blocked clients.** A blocking command with nothing to serve parks its
//!   client (the rest of its pipeline waits with it) in a FIFO queue; after any
//!   command that wrote (before the writer's next pipelined command), the
//!   queue is retried in order (a client waiting for a list only once one of
//!   its keys holds one), a client that blocks again keeps its deadline, and a
//!   client whose timeout passed gets a null array.
//! * **Bounded output.** A client's replies are produced at most
//!   [`OUT_CHUNK`] bytes at a time: unless the socket took them at once, the
//!   rest of its queue waits until the connection has written them (a 60 KB request of 3,000 GETs of 100 KB values
//!   never holds 300 MB of replies). Pushed output (published messages, MONITOR)
//!   counts against `client-output-buffer-limit`: a subscriber that does not read
//!   is disconnected at the pubsub class's hard limit, or after staying above the
//!   soft limit for its seconds, and its buffered messages are freed.
//! * **Time.** The active expire cycle every 100 ms, and `timeout` for idle
//!   clients.
//! * **Busy scripts.** While a script runs longer than `busy-reply-threshold`,
//!   the core calls back here ([`busy_handler`]): other clients' commands get
//!   the core's answer ([`BusyContext::answer`]: `-BUSY`, SCRIPT KILL or
//!   FUNCTION KILL of a script that has not written, FUNCTION STATS, and the
//!   `allow-busy` commands such as MULTI and WATCH run as usual);
//!   SHUTDOWN NOSAVE stops the server. Scripts run on the executor thread
//!   only (the one that reads the channel while a script is busy): a batch
//!   with one never runs inline, and a queue that reaches one while run
//!   inline (a script pipelined behind a blocked command that another
//!   client's push served) is continued there ([`Job::Continue`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use redislab_core::reply::Reply;
use redislab_core::server::config::ClientClass;
use redislab_core::server::{
    Blocked, BusyContext, BusyVerdict, ClientId, ClientKind, ConnectInfo, Outcome,
    ACTIVE_EXPIRE_PERIOD,
};
use redislab_core::Server;
use tokio::sync::mpsc::UnboundedSender;

use crate::connection::Output;
use crate::resp::Batch;

/// A client's replies are produced this many bytes at a time at most.
pub const OUT_CHUNK: usize = 1 << 20;

/// What a connection tells the executor.
pub enum Job {
    /// A new connection, with the client id the listener gave it (so a
    /// connection gets its id at once, even while a busy script holds the
    /// executor).
    Connect {
        id: ClientId,
        addr: String,
        laddr: String,
        conn: ConnHandle,
    },
    /// Requests parsed from the connection, in order. `conn` lets a busy
    /// script's handler answer them without the executor's tables.
    Run {
        id: ClientId,
        requests: Batch,
        conn: ConnHandle,
    },
    /// The request stream broke: after the requests before it, answer this
    /// protocol error and close.
    ProtocolError {
        id: ClientId,
        message: Vec<u8>,
        out: Arc<Output>,
    },
    /// The connection wrote the chunk it was asked to: produce the next one.
    Resume { id: ClientId, out: Arc<Output> },
    /// The connection is gone.
    Gone { id: ClientId },
    /// Go on with a client's queue on the executor thread (it reached a
    /// request that may start a script while run inline).
    Continue { id: ClientId, out: Arc<Output> },
    /// Look again at the next deadline (a batch run inline blocked a client
    /// with a timeout, or asked for a shutdown).
    Wake,
}

/// What the executor tells a connection's writer (the replies themselves go
/// through [`Output::send`]).
#[derive(Debug)]
pub enum ToConn {
    /// Write everything so far, then send [`Job::Resume`].
    Paused,
    /// Close the connection (`flush`: after writing what is queued).
    Close { flush: bool },
}

/// The executor's side of a connection.
#[derive(Clone)]
pub struct ConnHandle {
    pub to_conn: UnboundedSender<ToConn>,
    /// The socket, the bytes waiting for it, and what the reader waits for.
    pub out: Arc<Output>,
    /// Closes the connection at once, even in the middle of a write to a client
    /// that does not read.
    pub kill: Arc<tokio::sync::Notify>,
}

impl ConnHandle {
    /// Writes `bytes` to the client (see [`Output::send`]); the bytes unsent
    /// after it.
    pub fn send(&self, bytes: &[u8]) -> usize {
        self.out.send(bytes)
    }
}

/// What the connections read without the executor's lock: the limits from the
/// server's config (kept current by the executor after each job), and whether
/// a script is running past `busy-reply-threshold`.
pub struct SharedLimits {
    pub max_bulk: AtomicUsize,
    pub query_buffer: AtomicUsize,
    /// Set by [`busy_handler`] while a script is busy, cleared when its job
    /// ends: a connection then hands its batch over at once (to be answered
    /// `-BUSY`) instead of waiting for the lock ([`INLINE_WAIT`]).
    pub busy_script: AtomicBool,
}

impl Default for SharedLimits {
    /// The defaults of a fresh server's config, so a connection that reads
    /// before the executor has published anything parses with the right limits.
    fn default() -> SharedLimits {
        let c = redislab_core::server::config::Config::default();
        SharedLimits {
            max_bulk: AtomicUsize::new(c.proto_max_bulk_len as usize),
            query_buffer: AtomicUsize::new(c.client_query_buffer_limit as usize),
            busy_script: AtomicBool::new(false),
        }
    }
}

enum Item {
    Request(Vec<Vec<u8>>),
    /// How many `Run`s end here (the connection counts them to know when to read).
    EndOfRun,
    ProtocolError(Vec<u8>),
}

struct Conn {
    handle: ConnHandle,
    queue: VecDeque<Item>,
    /// Blocked on its front request, until this deadline (`None`: forever).
    blocked: Option<Option<Instant>>,
    /// What that request waits for (which keys, and the type that wakes it).
    waits: Option<Blocked>,
    /// Waiting for the connection to write a chunk.
    paused: bool,
    /// Since when its pushed output has been above the soft limit.
    over_soft_since: Option<Instant>,
    /// Requests that ran, to hand back to the connection.
    spent: Vec<Vec<Vec<u8>>>,
}

pub struct Executor {
    server: Server,
    conns: HashMap<ClientId, Conn>,
    /// Blocked clients, in the order they blocked.
    waiting: VecDeque<ClientId>,
    limits: Arc<SharedLimits>,
    next_cron: Instant,
    /// Jobs that arrived while a busy script ran and need the server.
    deferred: Arc<Mutex<VecDeque<Job>>>,
    /// SHUTDOWN NOSAVE was received.
    stop: Arc<AtomicBool>,
    /// Inside [`Executor::serve_waiters`] (which loops until nothing moves, so it
    /// must not start again from a client it serves).
    serving_waiters: bool,
    /// The output buffer every batch's replies are encoded into (empty between
    /// batches; it keeps its capacity).
    out: Vec<u8>,
    /// When the executor thread means to wake next (for the cron or a
    /// blocked client's timeout).
    planned_wake: Instant,
    /// The executor thread ended (SHUTDOWN, or the listener is dropped).
    stopped: bool,
    /// While a batch runs inline: the channel to the executor thread (held
    /// only then, so that the channel still closes when the I/O thread ends).
    inline_jobs: Option<mpsc::Sender<Job>>,
}

/// The executor, shared by its thread and the connections that run their
/// batches inline (see [`Executor::try_inline`]). Whoever holds the lock runs
/// commands: one at a time. A `parking_lot` mutex for its timed lock
/// ([`INLINE_WAIT`]); it is never poisoned (a command's panic is caught inside
/// the core and answered as an error).
pub type SharedExecutor = Arc<parking_lot::Mutex<Executor>>;

/// How long a connection's thread waits for the executor's lock before it
/// hands its batch to the executor thread instead. The executor thread holds
/// the lock for its cron, a client's connect or goodbye, and batches queued
/// earlier: usually microseconds. Handing over at the first refusal (as this
/// did before) started a chain: the handed-over batch kept the lock busy, so
/// the next connections' batches were handed over too, and under 50 clients
/// with `-P 16` about a fifth of all batches crossed threads, the two server
/// threads and redis-benchmark sharing two CPUs. Waiting keeps the batch on
/// the thread that read it; the bound keeps a long job (a slow command queued
/// behind a blocked client, an expire cycle) from holding up the reads, and a
/// busy script is not waited for at all ([`SharedLimits::busy_script`]).
pub const INLINE_WAIT: Duration = Duration::from_millis(1);

thread_local! {
    /// Set on the executor thread: the only thread a busy script may read
    /// other clients' jobs from.
    static ON_EXECUTOR_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Builds the server and the executor around it; `jobs` is what the executor
/// thread ([`execute_jobs`]) and a busy script's handler read.
pub fn new_executor(
    jobs: mpsc::Receiver<Job>,
    limits: Arc<SharedLimits>,
) -> (SharedExecutor, Arc<Mutex<mpsc::Receiver<Job>>>) {
    // Shared with the busy-script handler, which runs on the executor thread
    // while a script holds the server (so the locks are never contended).
    let jobs = Arc::new(Mutex::new(jobs));
    let deferred = Arc::new(Mutex::new(VecDeque::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut server = Server::new();
    if let Some(probe) = crate::heap_probe() {
        server.set_memory_probe(probe);
    }
    server.set_busy_handler(busy_handler(
        jobs.clone(),
        deferred.clone(),
        stop.clone(),
        limits.clone(),
    ));
    let now = Instant::now();
    let ex = Executor {
        server,
        conns: HashMap::new(),
        waiting: VecDeque::new(),
        limits,
        next_cron: now + ACTIVE_EXPIRE_PERIOD,
        deferred,
        stop,
        serving_waiters: false,
        out: Vec::new(),
        planned_wake: now,
        stopped: false,
        inline_jobs: None,
    };
    ex.publish_limits();
    (Arc::new(parking_lot::Mutex::new(ex)), jobs)
}

/// The executor thread: jobs from the channel, the cron, blocked clients'
/// timeouts; it holds the executor's lock only while it works.
pub fn execute_jobs(exec: SharedExecutor, jobs: Arc<Mutex<mpsc::Receiver<Job>>>) {
    ON_EXECUTOR_THREAD.with(|on| on.set(true));
    loop {
        let wake = {
            let mut ex = exec.lock();
            if ex.stop.load(Ordering::Relaxed) || ex.server.shutdown_requested() {
                ex.close_everyone();
                ex.stopped = true;
                return;
            }
            let queued = lock(&ex.deferred).pop_front();
            if let Some(job) = queued {
                ex.handle_counted(job);
                ex.limits.busy_script.store(false, Ordering::Relaxed);
                ex.cron();
                continue;
            }
            let wake = ex.next_wake();
            ex.planned_wake = wake;
            wake
        };
        let job = lock(&jobs).recv_timeout(wake.saturating_duration_since(Instant::now()));
        let mut ex = exec.lock();
        match job {
            Ok(job) => {
                ex.handle_counted(job);
                ex.limits.busy_script.store(false, Ordering::Relaxed);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                ex.close_everyone();
                ex.stopped = true;
                return;
            }
        }
        ex.cron();
    }
}

/// Whether a request may start a script (EVAL*, FCALL*, FUNCTION, SCRIPT, or
/// EXEC, which may hold one): such a batch always goes to the executor
/// thread, where a script past `busy-reply-threshold` can answer the others.
fn may_run_script(argv: &[Vec<u8>]) -> bool {
    let Some(name) = argv.first() else {
        return false;
    };
    let starts = |p: &[u8]| name.len() >= p.len() && name[..p.len()].eq_ignore_ascii_case(p);
    starts(b"eval")
        || starts(b"fcall")
        || name.eq_ignore_ascii_case(b"function")
        || name.eq_ignore_ascii_case(b"script")
        || name.eq_ignore_ascii_case(b"exec")
}

impl Executor {
    /// Runs a connection's batch on the calling thread (the connection's own
    /// I/O thread, as Redis runs commands on the thread that read them) when
    /// the executor is free within [`INLINE_WAIT`], nothing of this client
    /// waits in the channel, and no request may start a script. Gives the
    /// batch back otherwise, to go through the channel to the executor thread.
    pub fn try_inline(
        exec: &SharedExecutor,
        id: ClientId,
        out: &Output,
        requests: Batch,
        jobs: &mpsc::Sender<Job>,
        limits: &SharedLimits,
    ) -> Result<(), Batch> {
        if out.queued_jobs() > 0 || requests.iter().any(|r| may_run_script(r)) {
            return Err(requests);
        }
        let wait = if limits.busy_script.load(Ordering::Relaxed) {
            Duration::ZERO
        } else {
            INLINE_WAIT
        };
        let Some(mut ex) = exec.try_lock_for(wait) else {
            return Err(requests);
        };
        // Checked again under the lock: the executor thread counts jobs down
        // while holding it.
        if ex.stopped
            || ex.server.shutdown_requested()
            || out.queued_jobs() > 0
            || !ex.deferred_is_empty()
        {
            return Err(requests);
        }
        out.run_started();
        ex.inline_jobs = Some(jobs.clone());
        ex.run_batch(id, requests);
        ex.inline_jobs = None;
        // The executor thread sleeps until the next cron or timeout it knew of:
        // wake it if this batch blocked a client with an earlier deadline, or
        // asked for a shutdown.
        if ex.next_wake() < ex.planned_wake || ex.server.shutdown_requested() {
            ex.planned_wake = Instant::now();
            let _ = jobs.send(Job::Wake);
        }
        Ok(())
    }

    fn deferred_is_empty(&self) -> bool {
        lock(&self.deferred).is_empty()
    }

    /// [`Executor::handle`] for a job that came through the channel: its
    /// client's count of queued jobs goes down.
    fn handle_counted(&mut self, job: Job) {
        match &job {
            Job::Connect { conn, .. } | Job::Run { conn, .. } => conn.out.job_done(),
            Job::ProtocolError { out, .. }
            | Job::Resume { out, .. }
            | Job::Continue { out, .. } => out.job_done(),
            Job::Gone { .. } | Job::Wake => {}
        }
        self.handle(job);
    }

    fn run_batch(&mut self, id: ClientId, mut requests: Batch) {
        if let Some(conn) = self.conns.get_mut(&id) {
            // A pipelined batch: its keys are brought into the cache first
            // (one request alone would only hash its key twice).
            if requests.len() > 1 && conn.queue.is_empty() {
                self.server
                    .prefetch_keys(id, requests.iter().map(Vec::as_slice));
            }
            conn.queue.extend(requests.drain(..).map(Item::Request));
            conn.queue.push_back(Item::EndOfRun);
            conn.handle.out.recycle(&mut conn.spent, Some(requests));
            self.run_client(id);
        }
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Connect {
                id: client,
                addr,
                laddr,
                conn,
            } => {
                let too_many =
                    self.server.connected_clients() as i64 >= self.server.config.maxclients;
                self.server.connect_as(
                    client,
                    ConnectInfo {
                        kind: ClientKind::Connection,
                        addr,
                        laddr,
                    },
                );
                if too_many {
                    conn.send(b"-ERR max number of clients reached\r\n");
                    let _ = conn.to_conn.send(ToConn::Close { flush: true });
                    self.server.disconnect(client);
                    self.server.stats.rejected_connections += 1;
                    return;
                }
                self.conns.insert(
                    client,
                    Conn {
                        handle: conn,
                        queue: VecDeque::new(),
                        blocked: None,
                        waits: None,
                        paused: false,
                        over_soft_since: None,
                        spent: Vec::new(),
                    },
                );
            }
            Job::Run { id, requests, .. } => self.run_batch(id, requests),
            Job::ProtocolError { id, message, .. } => {
                if let Some(conn) = self.conns.get_mut(&id) {
                    conn.queue.push_back(Item::ProtocolError(message));
                    self.run_client(id);
                }
            }
            Job::Resume { id, .. } => {
                if let Some(conn) = self.conns.get_mut(&id) {
                    conn.paused = false;
                    self.run_client(id);
                }
            }
            Job::Gone { id } => self.forget(id),
            Job::Continue { id, .. } => self.run_client(id),
            Job::Wake => {}
        }
    }

    /// Runs `id`'s queue until it is empty, blocks, pauses or closes.
    fn run_client(&mut self, id: ClientId) {
        while self.run_client_until_write(id) {}
    }

    /// Runs `id`'s queue as [`Executor::run_client`] does, but stops after a
    /// command that wrote while other clients are blocked: like Redis, which
    /// serves blocked clients after each command, they are served before this
    /// client's next pipelined command (which could otherwise take what they
    /// wait for). Returns whether it stopped for that reason.
    fn run_client_until_write(&mut self, id: ClientId) -> bool {
        let dirty = self.server.dirty();
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let mut close = None;
        let mut runs_done = 0;
        let mut yielded = false;
        let mut defer = false;
        {
            let Some(conn) = self.conns.get_mut(&id) else {
                return false;
            };
            if conn.blocked.is_some() || conn.paused {
                return false;
            }
            while let Some(item) = conn.queue.front() {
                if out.len() >= OUT_CHUNK {
                    // The rest waits until the connection wrote this chunk
                    // (at once if the socket took it all).
                    conn.handle.send(&out);
                    out.clear();
                    if !conn.handle.out.all_written() {
                        conn.paused = true;
                        break;
                    }
                }
                match item {
                    Item::EndOfRun => {
                        runs_done += 1;
                        conn.queue.pop_front();
                    }
                    Item::ProtocolError(message) => {
                        let text = [&b"ERR "[..], message].concat();
                        Reply::error(text).encode(&mut out, Default::default());
                        conn.queue.clear();
                        close = Some(true);
                        break;
                    }
                    // Run inline, a script would hold the I/O thread that
                    // feeds the channel a busy script reads: the executor
                    // thread takes the rest of this client's queue.
                    Item::Request(argv) if self.inline_jobs.is_some() && may_run_script(argv) => {
                        defer = true;
                        break;
                    }
                    Item::Request(argv) => match self.server.call_into(id, argv, &mut out) {
                        Outcome::Done => {
                            if let Some(Item::Request(argv)) = conn.queue.pop_front() {
                                conn.spent.push(argv);
                            }
                            if self.server.dirty() != dirty
                                && !self.waiting.is_empty()
                                && !self.serving_waiters
                                && !conn.queue.is_empty()
                            {
                                yielded = true;
                                break;
                            }
                        }
                        Outcome::Blocked(b) => {
                            let deadline = b
                                .timeout_ms
                                .filter(|&ms| ms > 0)
                                .map(|ms| Instant::now() + Duration::from_millis(ms as u64));
                            conn.blocked = Some(deadline);
                            conn.waits = Some(b);
                            self.waiting.push_back(id);
                            break;
                        }
                        Outcome::Close => {
                            conn.queue.clear();
                            close = Some(true);
                            break;
                        }
                    },
                }
            }
            // Run inline, the replies wait for the end of the I/O thread's
            // round, as Redis writes them in beforeSleep (see crate::flush).
            if self.inline_jobs.is_some() && close.is_none() {
                conn.handle.out.send_later(&out);
            } else {
                conn.handle.send(&out);
            }
            conn.handle.out.runs_done(runs_done);
            if !conn.spent.is_empty() {
                conn.handle.out.recycle(&mut conn.spent, None);
            }
            if conn.paused {
                let _ = conn.handle.to_conn.send(ToConn::Paused);
            }
            if defer {
                if let Some(jobs) = &self.inline_jobs {
                    conn.handle.out.job_queued();
                    let _ = jobs.send(Job::Continue {
                        id,
                        out: conn.handle.out.clone(),
                    });
                }
            }
        }
        out.clear();
        if out.capacity() > OUT_CHUNK * 2 {
            out = Vec::new();
        }
        self.out = out;
        if let Some(flush) = close {
            self.close(id, flush);
        }
        self.after_commands(dirty);
        yielded
    }

    /// What follows any command: pushed output goes out, killed clients close,
    /// blocked clients are retried if something was written, config changes
    /// reach the connections.
    fn after_commands(&mut self, dirty_before: u64) {
        for id in self.server.take_clients_with_output() {
            self.flush_pushes(id);
        }
        for id in self.server.take_clients_to_close() {
            self.close(id, false);
        }
        for (id, error) in self.server.take_unblock_requests() {
            self.unblock(id, error);
        }
        if self.server.dirty() != dirty_before && !self.waiting.is_empty() && !self.serving_waiters
        {
            self.serve_waiters();
        }
        self.publish_limits();
    }

    fn flush_pushes(&mut self, id: ClientId) {
        let Some(client) = self.server.client_mut(id) else {
            return;
        };
        let bytes = client.take_pending();
        let class = if client.in_pubsub_mode() {
            ClientClass::PubSub
        } else {
            ClientClass::Normal
        };
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        if bytes.is_empty() {
            return;
        }
        let unsent = conn.handle.send(&bytes);
        let limit = self.server.config.output_limit(class);
        let now = Instant::now();
        let over_hard = limit.hard > 0 && unsent as u64 > limit.hard;
        let over_soft = limit.soft > 0 && unsent as u64 > limit.soft;
        let soft_expired = match (over_soft, conn.over_soft_since) {
            (true, Some(since)) => now.duration_since(since).as_secs() >= limit.soft_seconds,
            (true, None) => {
                conn.over_soft_since = Some(now);
                limit.soft_seconds == 0
            }
            (false, _) => {
                conn.over_soft_since = None;
                false
            }
        };
        if over_hard || soft_expired {
            eprintln!(
                "redislab-core: client {id} closed for overcoming of output buffer limits ({unsent} bytes unsent)"
            );
            self.server.stats.output_limit_disconnections += 1;
            self.close(id, false);
        }
    }

    /// Retries blocked clients in the order they blocked, until a pass serves none.
    /// A client waiting for a type (a list) is retried only when one of its keys
    /// holds that type, and keeps its place otherwise (Redis unblocks only such
    /// clients); one that blocks again keeps its first deadline, as Redis keeps
    /// the timeout of a command it re-executes.
    fn serve_waiters(&mut self) {
        self.serving_waiters = true;
        loop {
            let mut progressed = false;
            let round: Vec<ClientId> = self.waiting.drain(..).collect();
            for id in round {
                let Some(conn) = self.conns.get(&id) else {
                    continue;
                };
                if !self.worth_retrying(conn) {
                    self.waiting.push_back(id);
                    continue;
                }
                let conn = self.conns.get_mut(&id).expect("looked up above");
                let deadline = conn.blocked.take().flatten();
                let queued = conn.queue.len();
                let before = self.waiting.len();
                self.run_client(id);
                let still_blocked = self.waiting.len() > before;
                if let Some(conn) = self.conns.get_mut(&id) {
                    // The same request blocked again (nothing was popped off).
                    if still_blocked && conn.queue.len() == queued {
                        conn.blocked = Some(deadline);
                    }
                }
                progressed |= !still_blocked;
            }
            if !progressed || self.waiting.is_empty() {
                break;
            }
        }
        self.serving_waiters = false;
    }

    /// Ends a client's wait with a null reply (or the UNBLOCKED error), then
    /// lets the rest of its pipeline run.
    fn unblock(&mut self, id: ClientId, error: bool) {
        if !self.waiting.contains(&id) {
            return;
        }
        self.waiting.retain(|&w| w != id);
        self.server.blocked_timed_out(id);
        let protocol = self
            .server
            .client(id)
            .map(|c| c.protocol)
            .unwrap_or_default();
        if let Some(conn) = self.conns.get_mut(&id) {
            let mut out = Vec::new();
            let reply = if error {
                Reply::error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
            } else {
                Reply::NilArray
            };
            reply.encode(&mut out, protocol);
            conn.queue.pop_front();
            conn.blocked = None;
            conn.handle.send(&out);
        }
        self.run_client(id);
    }

    /// Whether a blocked client's keys could serve it now.
    fn worth_retrying(&self, conn: &Conn) -> bool {
        let Some(Blocked {
            db,
            keys,
            wants: Some(wanted),
            ..
        }) = &conn.waits
        else {
            return true;
        };
        let ks = self.server.db(*db);
        keys.iter()
            .any(|k| ks.peek(k).is_some_and(|v| v.type_name() == *wanted))
    }

    fn cron(&mut self) {
        let now = Instant::now();
        // Blocked clients whose timeout passed answer a null array.
        let expired: Vec<ClientId> = self
            .waiting
            .iter()
            .copied()
            .filter(|id| {
                self.conns
                    .get(id)
                    .and_then(|c| c.blocked)
                    .flatten()
                    .is_some_and(|d| d <= now)
            })
            .collect();
        for id in expired {
            self.waiting.retain(|&w| w != id);
            self.server.blocked_timed_out(id);
            let protocol = self
                .server
                .client(id)
                .map(|c| c.protocol)
                .unwrap_or_default();
            if let Some(conn) = self.conns.get_mut(&id) {
                let mut out = Vec::new();
                Reply::NilArray.encode(&mut out, protocol);
                conn.queue.pop_front();
                conn.blocked = None;
                conn.handle.send(&out);
            }
            self.run_client(id);
        }
        if now >= self.next_cron {
            self.server.active_expire_cycle();
            // Keyspace notifications of what the cycle expired.
            for id in self.server.take_clients_with_output() {
                self.flush_pushes(id);
            }
            self.close_idle_clients();
            self.next_cron = now + ACTIVE_EXPIRE_PERIOD;
        }
    }

    /// `timeout`: clients idle longer than this many seconds are closed (not
    /// blocked ones, not subscribers).
    fn close_idle_clients(&mut self) {
        let timeout = self.server.config.timeout;
        if timeout <= 0 {
            return;
        }
        let idle: Vec<ClientId> = self
            .conns
            .iter()
            .filter(|(id, c)| {
                c.blocked.is_none()
                    && self.server.client(**id).is_some_and(|cl| {
                        !cl.in_pubsub_mode() && cl.last_interaction.elapsed_secs() as i64 > timeout
                    })
            })
            .map(|(id, _)| *id)
            .collect();
        for id in idle {
            self.close(id, false);
        }
    }

    fn next_wake(&self) -> Instant {
        self.waiting
            .iter()
            .filter_map(|id| self.conns.get(id).and_then(|c| c.blocked).flatten())
            .min()
            .map_or(self.next_cron, |d| d.min(self.next_cron))
    }

    fn close(&mut self, id: ClientId, flush: bool) {
        if let Some(conn) = self.conns.get(&id) {
            let _ = conn.handle.to_conn.send(ToConn::Close { flush });
            if !flush {
                conn.handle.kill.notify_one();
            }
        }
        self.forget(id);
    }

    fn forget(&mut self, id: ClientId) {
        self.conns.remove(&id);
        self.waiting.retain(|&w| w != id);
        self.server.disconnect(id);
    }

    fn close_everyone(&mut self) {
        let ids: Vec<ClientId> = self.conns.keys().copied().collect();
        for id in ids {
            self.close(id, true);
        }
    }

    fn publish_limits(&self) {
        let c = &self.server.config;
        self.limits
            .max_bulk
            .store(c.proto_max_bulk_len as usize, Ordering::Relaxed);
        self.limits
            .query_buffer
            .store(c.client_query_buffer_limit as usize, Ordering::Relaxed);
    }
}

/// What the core calls while a script runs past `busy-reply-threshold`: answer
/// whatever arrived meanwhile, as Redis's `processEventsWhileBlocked` does.
fn busy_handler(
    jobs: Arc<Mutex<mpsc::Receiver<Job>>>,
    deferred: Arc<Mutex<VecDeque<Job>>>,
    stop: Arc<AtomicBool>,
    limits: Arc<SharedLimits>,
) -> redislab_core::server::BusyHandler {
    Box::new(move |ctx: &mut BusyContext| {
        let mut verdict = BusyVerdict::Continue;
        // A script run inline by a connection's thread (one a blocked
        // client's pipeline held) cannot read the channel that thread feeds.
        if !ON_EXECUTOR_THREAD.with(|on| on.get()) {
            return verdict;
        }
        limits.busy_script.store(true, Ordering::Relaxed);
        loop {
            let job = match lock(&jobs).try_recv() {
                Ok(job) => job,
                Err(mpsc::TryRecvError::Empty) => break,
                // The listener is being dropped: stop the script and the server.
                Err(mpsc::TryRecvError::Disconnected) => {
                    stop.store(true, Ordering::Relaxed);
                    return BusyVerdict::Shutdown;
                }
            };
            // The script's own client waits for its reply, as do jobs that
            // need the server.
            let Job::Run { id, requests, conn } = job else {
                lock(&deferred).push_back(job);
                continue;
            };
            if id == ctx.state().client {
                lock(&deferred).push_back(Job::Run { id, requests, conn });
                continue;
            }
            conn.out.job_done();
            let mut out = Vec::new();
            let mut close = false;
            for argv in &requests {
                let word = |i: usize| argv.get(i).map(|a| a.to_ascii_lowercase());
                match (word(0).as_deref(), word(1).as_deref()) {
                    (Some(b"shutdown"), Some(b"nosave")) => {
                        stop.store(true, Ordering::Relaxed);
                        verdict = BusyVerdict::Shutdown;
                        close = true;
                        break;
                    }
                    (Some(b"quit"), _) => {
                        out.extend_from_slice(b"+OK\r\n");
                        close = true;
                        break;
                    }
                    // SCRIPT KILL, FUNCTION KILL, FUNCTION STATS, an
                    // allow-busy command (MULTI, WATCH, ...), or -BUSY.
                    _ => {
                        if ctx.answer(id, argv, &mut out) == BusyVerdict::Kill {
                            verdict = BusyVerdict::Kill;
                        }
                    }
                }
            }
            conn.send(&out);
            conn.out.runs_done(1);
            if close {
                let _ = conn.to_conn.send(ToConn::Close { flush: true });
            }
        }
        verdict
    })
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection may read before the executor publishes its limits: they
    /// must already be the server's defaults (they were 0, which refused every
    /// bulk argument as too long).
    #[test]
    fn shared_limits_start_at_the_config_defaults() {
        let l = SharedLimits::default();
        assert_eq!(l.max_bulk.load(Ordering::Relaxed), 512 << 20);
        assert_eq!(l.query_buffer.load(Ordering::Relaxed), 1 << 30);
    }
}
