//! A script that runs too long: Redis's busy-script behaviour (`scriptInterrupt`,
//! `scriptKill` in src/script.c, the FUNCTION LOAD timeout of
//! src/function_lua.c).
//!
//! A script holds the server for as long as it runs (that is what makes it
//! atomic). Redis does not let an endless one hang everyone for ever: Lua calls
//! a hook every 100,000 instructions, and once the script has run longer than
//! `busy-reply-threshold` (5 s by default, `lua-time-limit` of old) the hook lets
//! the server read other clients' requests. They are answered `-BUSY` (naming
//! SCRIPT KILL for an EVAL, FUNCTION KILL for a function), except
//!
//! * `SCRIPT KILL` / `FUNCTION KILL`, which stop the script if it has not
//!   written anything yet (otherwise `-UNKILLABLE`: stopping it half way would
//!   break atomicity); each only kills its own kind, and answers the other kind
//!   with the other kind's `-BUSY`;
//! * `FUNCTION STATS`, which describes the running function (or answers an
//!   EVAL's `-BUSY`);
//! * `SHUTDOWN NOSAVE`, which stops the server (the transport's business).
//!
//! The core knows nothing of connections, so the part that reads requests is a
//! [`BusyHandler`] the transport installs with
//! [`crate::Server::set_busy_handler`]; the hook calls it, the handler asks
//! [`BusyState::answer`] what to reply, and the hook obeys its [`BusyVerdict`].
//!
//! Once a script is killed (or a FUNCTION LOAD passes its 500 ms), the error
//! must reach the top even through `pcall`: Redis switches its hook to every
//! line; here [`ScriptWatch::aborting`] stays set, the hook raises it again at
//! every call, and the sandbox's `pcall`/`xpcall`/`coroutine.resume` re-raise
//! it instead of returning it.
//!
//! Every other request goes through the server's own `processCommand`
//! ([`BusyContext::answer`]): commands flagged `allow-busy` (MULTI, DISCARD,
//! WATCH, UNWATCH, HELLO, AUTH, RESET) run, any other is refused with `-BUSY`
//! like Redis's `rejectCommand`, which also makes a MULTI in progress fail at
//! EXEC, and an EXEC itself discards its transaction
//! (`EXECABORT ... because of: BUSY ...`). The hook reaches the server through
//! a raw pointer the script run leaves in the watch ([`ServerPtr`]): the script
//! holds the server for as long as it runs, but between two Lua instructions no
//! Rust code is using it, which is exactly when the hook runs.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::reply::{Protocol, Reply};
use crate::Server;

/// What the handler is told about the running script.
#[derive(Clone, Debug)]
pub struct BusyState {
    /// The client whose script is running (its own next requests wait).
    pub client: u64,
    pub elapsed: Duration,
    /// The script already ran a write command (a kill must be refused).
    pub wrote: bool,
    /// EVAL/EVALSHA (killed by SCRIPT KILL), or FCALL (FUNCTION KILL).
    pub eval: bool,
    /// The function's name, or the script's SHA.
    pub name: String,
    /// The command that started the script (FUNCTION STATS shows it).
    pub command: Vec<Vec<u8>>,
    /// FUNCTION STATS's engine figures: libraries, functions.
    pub libraries: usize,
    pub functions: usize,
}

/// What the handler decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusyVerdict {
    Continue,
    /// SCRIPT KILL / FUNCTION KILL: abort the script.
    Kill,
    /// SHUTDOWN NOSAVE: abort the script; the transport stops the server.
    Shutdown,
}

/// Reads and answers other clients' requests while a script is busy.
pub type BusyHandler = Box<dyn FnMut(&mut BusyContext) -> BusyVerdict + Send>;

/// The server a running script belongs to, left in the watch for the hook.
#[derive(Clone, Copy)]
pub(crate) struct ServerPtr(pub(crate) *mut Server);

// SAFETY: the pointer is only followed on the thread that runs the script,
// inside the Lua hook, while the script's own Rust code is not running.
unsafe impl Send for ServerPtr {}

/// What the busy handler works with: the running script's state and the
/// server, to answer other clients' requests.
pub struct BusyContext<'a> {
    state: &'a BusyState,
    server: Option<&'a mut Server>,
}

impl BusyContext<'_> {
    pub fn state(&self) -> &BusyState {
        self.state
    }

    /// Answers one request of another client while the script is busy,
    /// appending the reply to `out` in that client's protocol, and says whether
    /// it kills the script. SHUTDOWN NOSAVE and QUIT are the transport's.
    pub fn answer(&mut self, client: u64, argv: &[Vec<u8>], out: &mut Vec<u8>) -> BusyVerdict {
        let protocol = self
            .server
            .as_ref()
            .and_then(|s| s.client_protocol(client))
            .unwrap_or(Protocol::Resp2);
        if let Some((reply, verdict)) = self.state.answer_itself(argv) {
            reply.encode(out, protocol);
            return verdict;
        }
        match self.server.as_mut() {
            Some(server) => server.call_while_busy(client, argv, self.state.busy_error(), out),
            None => Reply::error(self.state.busy_error()).encode(out, protocol),
        }
        BusyVerdict::Continue
    }
}

/// The error a killed script ends with (Redis's wording for both kinds).
pub const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";
/// The error of a FUNCTION LOAD whose code ran longer than [`LOAD_TIMEOUT`].
pub const LOAD_TIMED_OUT: &str = "ERR FUNCTION LOAD timeout";
/// How long a library's code may run while it registers its functions.
pub const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// `shared.slowevalerr`: busy with an EVAL.
pub const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
/// `shared.slowscripterr`: busy with a function.
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";

impl BusyState {
    /// The `-BUSY` error other commands get.
    pub fn busy_error(&self) -> &'static str {
        if self.eval {
            BUSY_EVAL
        } else {
            BUSY_FUNCTION
        }
    }

    /// The requests the script's own state answers while it is busy (SCRIPT
    /// KILL, FUNCTION KILL, FUNCTION STATS), with whether the script dies.
    fn answer_itself(&self, argv: &[Vec<u8>]) -> Option<(Reply, BusyVerdict)> {
        let word = |i: usize| argv.get(i).map(|a| a.to_ascii_lowercase());
        match (word(0).as_deref(), word(1).as_deref(), argv.len()) {
            (Some(b"script"), Some(b"kill"), 2) => Some(self.kill(true)),
            (Some(b"function"), Some(b"kill"), 2) => Some(self.kill(false)),
            (Some(b"function"), Some(b"stats"), 2) => {
                Some((self.function_stats(), BusyVerdict::Continue))
            }
            _ => None,
        }
    }

    /// `scriptKill`: SCRIPT KILL (`eval`) or FUNCTION KILL.
    fn kill(&self, eval: bool) -> (Reply, BusyVerdict) {
        let refusal = if self.wrote {
            Some(UNKILLABLE)
        } else if eval && !self.eval {
            Some(BUSY_FUNCTION)
        } else if !eval && self.eval {
            Some(BUSY_EVAL)
        } else {
            None
        };
        match refusal {
            Some(e) => (Reply::error(e), BusyVerdict::Continue),
            None => (Reply::ok(), BusyVerdict::Kill),
        }
    }

    /// FUNCTION STATS while a script runs.
    fn function_stats(&self) -> Reply {
        if self.eval {
            return Reply::error(BUSY_EVAL);
        }
        let running = Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk(&self.name)),
            (
                Reply::bulk("command"),
                Reply::Array(self.command.iter().map(Reply::bulk).collect()),
            ),
            (
                Reply::bulk("duration_ms"),
                Reply::Integer(self.elapsed.as_millis() as i64),
            ),
        ]);
        stats_reply(running, self.libraries, self.functions)
    }
}

/// FUNCTION STATS's reply: the running script (or null) and the one engine.
pub fn stats_reply(running: Reply, libraries: usize, functions: usize) -> Reply {
    Reply::Map(vec![
        (Reply::bulk("running_script"), running),
        (
            Reply::bulk("engines"),
            Reply::Map(vec![(
                Reply::bulk("LUA"),
                Reply::Map(vec![
                    (
                        Reply::bulk("libraries_count"),
                        Reply::Integer(libraries as i64),
                    ),
                    (
                        Reply::bulk("functions_count"),
                        Reply::Integer(functions as i64),
                    ),
                ]),
            )]),
        ),
    ])
}

/// What is running in the Lua states, if anything.
#[derive(Default)]
enum Activity {
    #[default]
    Idle,
    /// A script or function, since `started`.
    Running { started: Instant, state: BusyState },
    /// A library's code registering its functions (FUNCTION LOAD).
    Loading { deadline: Option<Instant> },
}

/// Shared by the server (which starts and ends scripts) and the Lua hooks.
#[derive(Default)]
pub struct ScriptWatch {
    activity: Activity,
    threshold: Duration,
    timed_out: bool,
    /// Set once the script is killed or the load timed out: the error every
    /// later hook call and protected call raises again.
    aborting: Option<&'static str>,
    handler: Option<BusyHandler>,
    /// The running script's server, for the handler (see [`ServerPtr`]).
    server: Option<ServerPtr>,
    /// DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call `noscript` commands.
    pub deny_scripts_disabled: bool,
}

pub type SharedWatch = Arc<Mutex<ScriptWatch>>;

/// What a script run needs to tell the watch when it starts.
pub struct RunInfo {
    pub client: u64,
    pub threshold_ms: i64,
    pub eval: bool,
    pub name: String,
    pub command: Vec<Vec<u8>>,
    pub libraries: usize,
    pub functions: usize,
    pub(crate) server: Option<ServerPtr>,
}

impl ScriptWatch {
    pub fn shared() -> SharedWatch {
        Arc::new(Mutex::new(ScriptWatch::default()))
    }

    pub fn set_handler(&mut self, handler: BusyHandler) {
        self.handler = Some(handler);
    }

    /// A script starts.
    pub fn begin(&mut self, run: RunInfo) {
        self.threshold = Duration::from_millis(run.threshold_ms.max(0) as u64);
        self.timed_out = false;
        self.aborting = None;
        self.server = run.server;
        self.activity = Activity::Running {
            started: Instant::now(),
            state: BusyState {
                client: run.client,
                elapsed: Duration::ZERO,
                wrote: false,
                eval: run.eval,
                name: run.name,
                command: run.command,
                libraries: run.libraries,
                functions: run.functions,
            },
        };
    }

    /// A library's code starts running (`timeout`: none for a restore).
    pub fn begin_load(&mut self, timeout: Option<Duration>) {
        self.aborting = None;
        self.activity = Activity::Loading {
            deadline: timeout.map(|t| Instant::now() + t),
        };
    }

    pub fn end(&mut self) {
        self.server = None;
        self.activity = Activity::Idle;
        self.aborting = None;
    }

    /// Whether a script (not a load) is running.
    pub fn running(&self) -> bool {
        matches!(self.activity, Activity::Running { .. })
    }

    /// The running script, for FUNCTION STATS from a script's own context.
    pub fn state(&self) -> Option<BusyState> {
        match &self.activity {
            Activity::Running { started, state } => {
                let mut s = state.clone();
                s.elapsed = started.elapsed();
                Some(s)
            }
            _ => None,
        }
    }

    pub fn note_write(&mut self) {
        if let Activity::Running { state, .. } = &mut self.activity {
            state.wrote = true;
        }
    }

    pub fn wrote(&self) -> bool {
        matches!(&self.activity, Activity::Running { state, .. } if state.wrote)
    }

    /// Whether the running script passed its threshold (INFO, tests).
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The error a killed script (or timed-out load) must end with, if any.
    pub fn aborting(&self) -> Option<&'static str> {
        self.aborting
    }

    /// The hook's first half: `Err` aborts the script with that error text;
    /// `Some` means the script is busy and the handler must run (it is taken
    /// out, with the state and the server, so the watch's lock can be released).
    fn poll(&mut self) -> Result<Option<PendingCall>, &'static str> {
        if let Some(e) = self.aborting {
            return Err(e);
        }
        match &mut self.activity {
            Activity::Idle => Ok(None),
            Activity::Loading { deadline } => {
                if deadline.is_some_and(|d| Instant::now() > d) {
                    self.aborting = Some(LOAD_TIMED_OUT);
                    return Err(LOAD_TIMED_OUT);
                }
                Ok(None)
            }
            Activity::Running { started, state } => {
                let elapsed = started.elapsed();
                // Redis installs no hook with a zero threshold: such a script
                // is never busy (and cannot be killed).
                if self.threshold.is_zero() || elapsed < self.threshold {
                    return Ok(None);
                }
                self.timed_out = true;
                state.elapsed = elapsed;
                let state = state.clone();
                Ok(self
                    .handler
                    .take()
                    .map(|handler| (handler, state, self.server)))
            }
        }
    }

    /// The hook's second half: the handler goes back, its verdict is obeyed.
    fn obey(&mut self, handler: BusyHandler, verdict: BusyVerdict) -> Result<(), &'static str> {
        self.handler.get_or_insert(handler);
        match verdict {
            BusyVerdict::Kill | BusyVerdict::Shutdown => {
                self.aborting = Some(KILLED);
                Err(KILLED)
            }
            BusyVerdict::Continue => Ok(()),
        }
    }

    /// The hook without a server (unit tests of the watch alone).
    #[cfg(test)]
    fn check(&mut self) -> Result<(), &'static str> {
        let Some((mut handler, state, _)) = self.poll()? else {
            return Ok(());
        };
        let verdict = handler(&mut BusyContext {
            state: &state,
            server: None,
        });
        self.obey(handler, verdict)
    }
}

/// The handler taken out of the watch for one call, with what it works on.
type PendingCall = (BusyHandler, BusyState, Option<ServerPtr>);

/// Called by the Lua hook every 100,000 instructions: `Err` aborts the script
/// with that error text. The watch is unlocked while the handler runs, since
/// the commands it answers may look at the watch themselves.
pub fn on_hook(watch: &SharedWatch) -> Result<(), &'static str> {
    let Some((mut handler, state, server)) = lock(watch).poll()? else {
        return Ok(());
    };
    let verdict = handler(&mut BusyContext {
        state: &state,
        // SAFETY: see `ServerPtr`: the script that holds the server is between
        // two Lua instructions, so nothing else uses it until this returns.
        server: server.map(|p| unsafe { &mut *p.0 }),
    });
    lock(watch).obey(handler, verdict)
}

fn lock(watch: &SharedWatch) -> std::sync::MutexGuard<'_, ScriptWatch> {
    watch
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(eval: bool, wrote: bool) -> BusyState {
        BusyState {
            client: 1,
            elapsed: Duration::from_millis(42),
            wrote,
            eval,
            name: "f".into(),
            command: vec![b"fcall".to_vec(), b"f".to_vec(), b"0".to_vec()],
            libraries: 1,
            functions: 2,
        }
    }

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn text(answer: (Vec<u8>, BusyVerdict)) -> (String, BusyVerdict) {
        (String::from_utf8(answer.0).unwrap(), answer.1)
    }

    /// What the handler answers without a server (RESP2).
    fn answer(state: &BusyState, argv: &[Vec<u8>]) -> (Vec<u8>, BusyVerdict) {
        let mut out = Vec::new();
        let mut ctx = BusyContext {
            state,
            server: None,
        };
        let verdict = ctx.answer(7, argv, &mut out);
        (out, verdict)
    }

    #[test]
    fn each_kill_only_stops_its_own_kind() {
        let eval = state(true, false);
        let func = state(false, false);
        assert_eq!(
            text(answer(&eval, &argv(&["SCRIPT", "KILL"]))),
            ("+OK\r\n".into(), BusyVerdict::Kill)
        );
        assert_eq!(
            text(answer(&eval, &argv(&["function", "kill"]))),
            (format!("-{BUSY_EVAL}\r\n"), BusyVerdict::Continue)
        );
        assert_eq!(
            text(answer(&func, &argv(&["FUNCTION", "KILL"]))),
            ("+OK\r\n".into(), BusyVerdict::Kill)
        );
        assert_eq!(
            text(answer(&func, &argv(&["script", "kill"]))),
            (format!("-{BUSY_FUNCTION}\r\n"), BusyVerdict::Continue)
        );
        let (t, v) = text(answer(&state(false, true), &argv(&["function", "kill"])));
        assert!(t.starts_with("-UNKILLABLE Sorry"), "{t}");
        assert_eq!(v, BusyVerdict::Continue);
        assert_eq!(
            text(answer(&func, &argv(&["PING"]))).0,
            format!("-{BUSY_FUNCTION}\r\n")
        );
    }

    #[test]
    fn function_stats_while_busy() {
        let (t, _) = text(answer(&state(false, false), &argv(&["FUNCTION", "STATS"])));
        assert!(t.starts_with("*4\r\n$14\r\nrunning_script\r\n*6\r\n$4\r\nname\r\n$1\r\nf\r\n"));
        assert!(t.contains("$11\r\nduration_ms\r\n:42\r\n"), "{t}");
        assert!(t.ends_with("$15\r\nfunctions_count\r\n:2\r\n"), "{t}");
        let (t, _) = text(answer(&state(true, false), &argv(&["FUNCTION", "STATS"])));
        assert_eq!(t, format!("-{BUSY_EVAL}\r\n"));
    }

    #[test]
    fn a_killed_script_keeps_failing_and_a_load_times_out() {
        let mut w = ScriptWatch::default();
        w.set_handler(Box::new(|_| BusyVerdict::Kill));
        w.begin(RunInfo {
            client: 1,
            threshold_ms: 1,
            eval: true,
            name: "x".into(),
            command: vec![],
            libraries: 0,
            functions: 0,
            server: None,
        });
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(w.check(), Err(KILLED));
        assert_eq!(w.aborting(), Some(KILLED));
        assert_eq!(w.check(), Err(KILLED));
        w.end();
        assert_eq!(w.check(), Ok(()));
        w.begin_load(Some(Duration::ZERO));
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(w.check(), Err(LOAD_TIMED_OUT));
        w.begin_load(None);
        assert_eq!(w.check(), Ok(()));
        // busy-reply-threshold 0: never busy.
        w.begin(RunInfo {
            client: 1,
            threshold_ms: 0,
            eval: true,
            name: "x".into(),
            command: vec![],
            libraries: 0,
            functions: 0,
            server: None,
        });
        assert_eq!(w.check(), Ok(()));
        assert!(!w.timed_out());
    }
}
