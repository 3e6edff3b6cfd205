//! Replies written once per round of the I/O thread, as Redis's `beforeSleep`
//! writes them (`handleClientsWithPendingWrites`).
//!
//! Redis reads and runs what every readable client sent in one turn of its
//! event loop, and only then writes the replies, one `write` per client in a
//! burst. A reply written the moment its batch has run instead wakes the
//! client (redis-benchmark, say) for that one reply; it reads it and sleeps
//! again before the next connection's reply comes, so every reply costs the
//! client a wake-up from sleep, which on a virtual machine is the most
//! expensive part of a `send` (measured: 21 % of the core's CPU under
//! `redis-benchmark -P 16`, against 5 % in Redis).
//!
//! So a batch run inline on the I/O thread keeps its replies in its
//! connection's [`Output`] ([`Output::send_later`]) and registers the
//! connection here; the thread's flusher task writes them all. The runtime of
//! that thread is tokio's current-thread one, whose run queue is first in,
//! first out: the flusher, woken by the first reply of a round, runs after the
//! connections that were already ready, i.e. at the end of the round. A
//! client that never stops sending cannot hold the others' replies back
//! either: the flusher's turn comes in queue order.
//!
//! On a thread without a flusher (none was started there), nothing is kept:
//! [`Output::send_later`] writes at once.

use std::cell::RefCell;
use std::sync::Arc;

use tokio::sync::Notify;

use crate::connection::Output;

struct Round {
    /// Connections with replies kept for the end of the round, each once.
    outputs: Vec<Arc<Output>>,
    /// Wakes this thread's flusher task.
    wake: Arc<Notify>,
}

thread_local! {
    static ROUND: RefCell<Option<Round>> = const { RefCell::new(None) };
}

/// Registers `out` to be written at the end of the round. Returns false when
/// this thread has no flusher (the caller writes at once).
pub fn at_end_of_round(out: &Arc<Output>) -> bool {
    ROUND.with(|round| {
        let mut round = round.borrow_mut();
        let Some(round) = round.as_mut() else {
            return false;
        };
        if round.outputs.is_empty() {
            round.wake.notify_one();
        }
        round.outputs.push(out.clone());
        true
    })
}

/// The flusher task: started once on the I/O thread of a current-thread
/// runtime; writes the kept replies every time a round kept some.
pub async fn flusher() {
    let wake = Arc::new(Notify::new());
    ROUND.with(|round| {
        *round.borrow_mut() = Some(Round {
            outputs: Vec::new(),
            wake: wake.clone(),
        })
    });
    // Unregisters the thread when the task is dropped (the runtime shutting
    // down), writing what was kept so far.
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            if let Some(round) = ROUND.with(|round| round.borrow_mut().take()) {
                for out in round.outputs {
                    out.flush_kept();
                }
            }
        }
    }
    let _stop = Stop;
    let mut batch = Vec::new();
    loop {
        wake.notified().await;
        ROUND.with(|round| {
            if let Some(round) = round.borrow_mut().as_mut() {
                std::mem::swap(&mut round.outputs, &mut batch);
            }
        });
        for out in batch.drain(..) {
            out.flush_kept();
        }
    }
}
