//! A script that runs too long: Redis's busy-script behaviour.
//!
//! A script holds the server for as long as it runs (that is what makes it
//! atomic). Redis does not let an endless one hang everyone for ever: Lua calls
//! a hook every 100,000 instructions, and once the script has run longer than
//! `busy-reply-threshold` (5 s by default, `lua-time-limit` of old) the hook lets
//! the server read other clients' requests. They are answered `-BUSY`, except
//! `SCRIPT KILL`, which stops the script if it has not written anything yet
//! (otherwise `-UNKILLABLE`: stopping it half way would break atomicity), and
//! `SHUTDOWN NOSAVE`, which stops the server.
//!
//! The core knows nothing of connections, so the part that reads requests is a
//! [`BusyHandler`] the transport installs with
//! [`crate::Server::set_busy_handler`]; the hook calls it and obeys its
//! [`BusyVerdict`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the handler is told about the running script.
#[derive(Clone, Copy, Debug)]
pub struct BusyState {
    /// The client whose script is running (its own next requests wait).
    pub client: u64,
    pub elapsed: Duration,
    /// The script already ran a write command (SCRIPT KILL must refuse).
    pub wrote: bool,
}

/// What the handler decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusyVerdict {
    Continue,
    /// SCRIPT KILL: abort the script.
    Kill,
    /// SHUTDOWN NOSAVE: abort the script; the transport stops the server.
    Shutdown,
}

/// Reads and answers other clients' requests while a script is busy.
pub type BusyHandler = Box<dyn FnMut(&BusyState) -> BusyVerdict + Send>;

/// The error a killed script ends with.
pub const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// Shared by the server (which starts and ends scripts) and the Lua hook.
#[derive(Default)]
pub struct ScriptWatch {
    started: Option<Instant>,
    client: u64,
    threshold: Duration,
    wrote: bool,
    timed_out: bool,
    handler: Option<BusyHandler>,
}

pub type SharedWatch = Arc<Mutex<ScriptWatch>>;

impl ScriptWatch {
    pub fn shared() -> SharedWatch {
        Arc::new(Mutex::new(ScriptWatch::default()))
    }

    pub fn set_handler(&mut self, handler: BusyHandler) {
        self.handler = Some(handler);
    }

    /// A script starts; `threshold_ms` is `busy-reply-threshold`.
    pub fn begin(&mut self, client: u64, threshold_ms: i64) {
        self.started = Some(Instant::now());
        self.client = client;
        self.threshold = Duration::from_millis(threshold_ms.max(0) as u64);
        self.wrote = false;
        self.timed_out = false;
    }

    pub fn end(&mut self) {
        self.started = None;
    }

    pub fn note_write(&mut self) {
        self.wrote = true;
    }

    /// Whether the running script passed its threshold (INFO, tests).
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Called by the Lua hook: `Err` aborts the script with that error text.
    pub fn check(&mut self) -> Result<(), &'static str> {
        let Some(started) = self.started else {
            return Ok(());
        };
        let elapsed = started.elapsed();
        if elapsed < self.threshold {
            return Ok(());
        }
        self.timed_out = true;
        let state = BusyState {
            client: self.client,
            elapsed,
            wrote: self.wrote,
        };
        match self.handler.as_mut().map(|h| h(&state)) {
            Some(BusyVerdict::Kill) | Some(BusyVerdict::Shutdown) => Err(KILLED),
            _ => Ok(()),
        }
    }
}
