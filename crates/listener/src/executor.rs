//! The executor thread: one command at a time, like Redis's main thread.
//!
//! A connection hands over every command it has read in one [`Job`] (a pipeline
//! costs one hand-over, not one per command). Commands run in order; if one blocks
//! (BZPOPMIN on empty keys), the rest of that client's pipeline waits with it, in a
//! FIFO queue of waiting clients that is retried after every other job, and the
//! blocked command answers a null array when its timeout passes.
//!
//! Between jobs, and when idle, the executor also runs the core's active expire
//! cycle every [`ACTIVE_EXPIRE_PERIOD`], as Redis's `serverCron` does, so keys
//! past their TTL go away even if nobody reads them.

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use redislab_core::commands::{Execution, ACTIVE_EXPIRE_PERIOD};
use redislab_core::transaction::ClientTx;

use crate::pubsub::{PubSub, Push};
use redislab_core::{Reply, Server};
use tokio::sync::oneshot;

/// The commands one connection read, and where their replies go.
pub struct Job {
    /// The connection's id, for its MULTI/WATCH state.
    pub client: u64,
    pub commands: VecDeque<Vec<Vec<u8>>>,
    pub replies: Vec<Reply>,
    pub done: oneshot::Sender<Vec<Reply>>,
    /// Where published messages for this connection go.
    pub push: Option<Push>,
    /// The connection closed: forget its transaction state and watched keys.
    pub closing: bool,
}

impl Job {
    pub fn new(
        client: u64,
        commands: VecDeque<Vec<Vec<u8>>>,
        done: oneshot::Sender<Vec<Reply>>,
    ) -> Job {
        let replies = Vec::with_capacity(commands.len());
        Job {
            client,
            commands,
            replies,
            done,
            push: None,
            closing: false,
        }
    }

    /// The last message of a connection.
    pub fn closing(client: u64) -> Job {
        let (done, _) = oneshot::channel();
        Job {
            client,
            commands: VecDeque::new(),
            replies: Vec::new(),
            done,
            push: None,
            closing: true,
        }
    }
}

/// Per-connection state: transactions by client id, and the pub/sub registry.
#[derive(Default)]
struct Clients {
    tx: HashMap<u64, ClientTx>,
    pubsub: PubSub,
}

/// A client whose front command is blocked.
struct Waiter {
    job: Job,
    deadline: Option<Instant>,
}

pub fn execute_jobs(jobs: mpsc::Receiver<Job>) {
    let mut server = Server::new();
    let mut clients = Clients::default();
    let mut waiters: VecDeque<Waiter> = VecDeque::new();
    let mut next_cycle = Instant::now() + ACTIVE_EXPIRE_PERIOD;
    loop {
        let wake = waiters
            .iter()
            .filter_map(|w| w.deadline)
            .min()
            .map_or(next_cycle, |d| d.min(next_cycle));
        let next = jobs.recv_timeout(wake.saturating_duration_since(Instant::now()));
        let now = Instant::now();
        if now >= next_cycle {
            server.active_expire_cycle();
            next_cycle = now + ACTIVE_EXPIRE_PERIOD;
        }
        match next {
            Ok(job) if job.closing => {
                if let Some(mut tx) = clients.tx.remove(&job.client) {
                    tx.release(&mut server);
                }
                clients.pubsub.forget(job.client);
            }
            Ok(job) => {
                if let Some(waiter) = run(&mut server, &mut clients, job) {
                    waiters.push_back(waiter);
                } else {
                    serve_waiters(&mut server, &mut clients, &mut waiters);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        expire_waiters(&mut server, &mut clients, &mut waiters);
    }
}

/// Runs a job's commands in order; returns it as a waiter if one blocks. MULTI,
/// EXEC and friends (and commands queued inside a transaction) go through the
/// client's transaction state; EXEC runs the whole queue here, in one turn.
fn run(server: &mut Server, clients: &mut Clients, mut job: Job) -> Option<Waiter> {
    while let Some(argv) = job.commands.front() {
        if let Some(frames) = clients.pubsub.handle(job.client, job.push.as_ref(), argv) {
            job.replies.extend(frames);
            job.commands.pop_front();
            continue;
        }
        let tx = clients.tx.entry(job.client).or_default();
        if let Some(reply) = tx.handle(server, argv) {
            job.replies.push(reply);
            job.commands.pop_front();
            continue;
        }
        match server.execute_or_block(argv) {
            Execution::Done(reply) => {
                job.replies.push(reply);
                job.commands.pop_front();
            }
            Execution::Blocked(blocked) => {
                let deadline = blocked
                    .timeout_ms
                    .map(|ms| Instant::now() + Duration::from_millis(ms as u64));
                return Some(Waiter { job, deadline });
            }
        }
    }
    let _ = job.done.send(job.replies);
    None
}

/// Retries every waiting client in the order they blocked. Serving one may unblock
/// none, some or all of the others, each in turn.
fn serve_waiters(server: &mut Server, clients: &mut Clients, waiters: &mut VecDeque<Waiter>) {
    let mut still_waiting = VecDeque::with_capacity(waiters.len());
    while let Some(waiter) = waiters.pop_front() {
        // A client that went away is dropped without taking an element.
        if waiter.job.done.is_closed() {
            continue;
        }
        if let Some(mut again) = run(server, clients, waiter.job) {
            again.deadline = waiter.deadline;
            still_waiting.push_back(again);
        }
    }
    *waiters = still_waiting;
}

/// Answers a null array to every blocked command whose timeout passed, then lets
/// the rest of its pipeline run.
fn expire_waiters(server: &mut Server, clients: &mut Clients, waiters: &mut VecDeque<Waiter>) {
    let now = Instant::now();
    let mut still_waiting = VecDeque::with_capacity(waiters.len());
    while let Some(mut waiter) = waiters.pop_front() {
        if waiter.deadline.is_none_or(|d| d > now) {
            still_waiting.push_back(waiter);
            continue;
        }
        waiter.job.replies.push(Reply::NilArray);
        waiter.job.commands.pop_front();
        if let Some(again) = run(server, clients, waiter.job) {
            still_waiting.push_back(again);
        }
    }
    *waiters = still_waiting;
}
