//! The server: databases, clients, and the one path every command takes.
//!
//! [`Server::call`] is Redis's `processCommand` followed by `call()`, in the same
//! order: look the command up (once, in [`table`]); check its arity; refuse what a
//! RESP2 client in subscribed mode may not run; inside MULTI, queue instead of
//! running (a command that cannot even be queued marks the transaction dirty);
//! then run it, with the keys it writes marked for WATCH, the time it took and
//! whether it failed recorded in the command statistics, and MONITOR fed. A
//! script's `redis.call` and the commands of an EXEC go through the same
//! [`Server::call_in`], so there is one definition of what running a command
//! means.
//!
//! A command that panics (a bug in the core) is caught here: its client gets an
//! error, the panic is logged on stderr, and the server goes on serving.
//!
//! Databases: there are [`DATABASES`] keyspaces. The one the running client
//! selected sits in [`Server::keyspace`], where every command family finds it;
//! the others wait in a vector and are swapped in when a client with another
//! selected database runs a command (a swap of two small structs, so SELECT
//! costs nothing per command).

pub mod client;
mod client_map;
pub mod clock;
pub mod config;
pub mod docs;
pub mod multi;
pub mod notify;
pub mod pubsub;
pub mod stats;
pub mod table;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::commands::Args;
use crate::keyspace::{Access, ExpireCycleStats, Keyspace};
use crate::lru::{Clock, Policy};
use crate::reply::{errors, ErrorText, Reply};
use crate::scripting::clock::Freeze;
use crate::watch::Incoming;
pub use client::{Client, ClientId, ClientKind, ConnectInfo};
use client_map::ClientMap;
use table::{flags, CommandSpec, Found, Handler};

/// The Redis release whose replies the core reproduces (INFO, HELLO, Lua's
/// `redis.REDIS_VERSION`).
pub const REDIS_VERSION: &str = "8.6.3";

/// Number of databases (`databases 16`).
pub const DATABASES: usize = 16;

/// How often Redis runs its active expire cycle (`hz 10`).
pub const ACTIVE_EXPIRE_PERIOD: Duration = Duration::from_millis(100);
/// The time one cycle may take: 25% of the period (`ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC`).
pub const ACTIVE_EXPIRE_BUDGET: Duration = Duration::from_millis(25);

/// What a blocking command waits for: any of `keys` (in database `db`) to receive
/// elements, until `timeout_ms` passes (`None`: forever).
#[derive(Clone, Debug, PartialEq)]
pub struct Blocked {
    pub db: usize,
    pub keys: Vec<Vec<u8>>,
    pub timeout_ms: Option<i64>,
    /// The type (as TYPE names it) a key must hold for the command to be worth
    /// running again, as Redis unblocks a client only when a key it waits on
    /// holds the type it waits for (`handleClientsBlockedOnKey`); `None`: retry
    /// after any write.
    pub wants: Option<&'static str>,
}

/// What a transport does after [`Server::call_into`].
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The reply (if the client wants replies) is in the output buffer.
    Done,
    /// A blocking command found nothing: retry the same command when one of the
    /// keys changes, or answer a null array at the timeout.
    Blocked(Blocked),
    /// QUIT (or CLIENT KILL of itself): write what is pending, then close.
    Close,
}

/// The core's server state.
pub struct Server {
    /// The database selected by the client whose command is running.
    pub keyspace: Keyspace,
    /// Every database; the slot of the one in `keyspace` holds an empty stand-in.
    dbs: Vec<Keyspace>,
    current_db: usize,
    pub config: config::Config,
    pub stats: stats::Stats,
    clients: ClientMap,
    next_client_id: ClientId,
    /// The in-process client behind [`Server::cmd`] and [`Server::run`].
    default_client: ClientId,
    pub(crate) pubsub: pubsub::PubSub,
    /// Clients (other than the caller's) that received output to send.
    with_output: Vec<ClientId>,
    /// Clients a command asked to close (CLIENT KILL).
    to_close: Vec<ClientId>,
    /// Messages for the running client, sent after its reply.
    self_pushes: Vec<Reply>,
    /// Set by a blocking command that found nothing, when its client may block.
    pending_block: Option<Blocked>,
    /// Depth of commands running inside another (EXEC, a script): those never block.
    nesting: u32,
    /// The generator behind random commands (ZRANDMEMBER, HRANDFIELD, skiplist
    /// levels are separate).
    pub rng: ChaCha8Rng,
    /// The Lua state and script cache, created by the first script command.
    /// Taken out while a script runs (the script's `redis.call`s borrow the rest).
    pub(crate) scripting: Option<Box<crate::scripting::Engine>>,
    /// What `PFDEBUG SIMD` reports (Redis on an AVX2 machine starts enabled; the
    /// core has one code path either way).
    pub(crate) hll_simd: bool,
    pub started: Instant,
    memory_probe: Option<fn() -> usize>,
    /// The running script's clock and the transport's busy handler.
    pub(crate) script_watch: crate::scripting::busy::SharedWatch,
    /// Redis's `server.dirty`: one per write command that succeeded, or what the
    /// command reported with [`Server::set_dirty`]. A transport retries blocked
    /// clients when it moves; INFO shows it as `rdb_changes_since_last_save`.
    dirty: u64,
    /// The changes the running command reported (`server.dirty += n`).
    dirty_reported: Option<u64>,
    running_client: ClientId,
    /// While a busy script lets other clients in ([`Server::call_while_busy`]):
    /// the `-BUSY` error for every command that is not `allow-busy`.
    busy_error: Option<&'static str>,
    shutdown_requested: bool,
    run_id: String,
    unblock_requests: Vec<(ClientId, bool)>,
    /// What the running command's lookups do (clock, eviction policy, NO-TOUCH,
    /// whether reads count): handed to every database it reaches.
    access: Access,
    /// `maxmemory-policy` as the keyspace needs it, re-read after admin commands.
    policy: Policy,
    /// A database other than the selected one was reached (MOVE, COPY DB,
    /// SWAPDB): its counters are collected after the command.
    other_db_reached: bool,
    /// The Unix time at `started`, so a command's clock needs no system call.
    started_unix_ms: i64,
    /// The monotonic clock at `started_unix_ms`: a command's time is that
    /// Unix time plus how far this clock has moved.
    started_mono: clock::Micros,
    /// The number the last command got ([`Access::command`]).
    last_command: u32,
    /// The last command's millisecond and its clocks, kept while readings
    /// stay inside that millisecond ([`Server::command_clock`]).
    clock_cache: ClockCache,
    /// Unit tests only: the next active expire cycle panics, to prove the
    /// server survives a bug there.
    #[cfg(test)]
    fail_next_expire_cycle: bool,
}

/// The millisecond `[from, until)` (monotonic microseconds) the last
/// command's clock was computed for, its LRU/LFU clocks, and a reading of
/// the wall clock taken then with the monotonic reading it goes with (a
/// command's time snapshot is that wall time plus the monotonic clock's
/// progress since, so it reads the wall clock once a millisecond at most).
#[derive(Clone, Copy, Default)]
struct ClockCache {
    from: u64,
    until: u64,
    clock: Clock,
    wall_at: (clock::Micros, i64),
}

pub use crate::scripting::busy::{BusyContext, BusyHandler, BusyState, BusyVerdict};

impl Default for Server {
    fn default() -> Server {
        Server::with_seed(0)
    }
}

impl Server {
    pub fn new() -> Server {
        Server::default()
    }

    /// A server whose random draws (ZRANDMEMBER, HRANDFIELD) derive from `seed`.
    /// Every dict hashes with the fixed [`crate::dict::DEFAULT_SEED`], where Redis
    /// picks a random one at start-up, so a run of the core repeats exactly.
    pub fn with_seed(seed: u64) -> Server {
        let mut server = Server {
            keyspace: Keyspace::new(),
            dbs: (0..DATABASES).map(|_| Keyspace::new()).collect(),
            current_db: 0,
            config: config::Config::default(),
            stats: stats::Stats::default(),
            clients: ClientMap::default(),
            next_client_id: 1,
            default_client: 0,
            pubsub: pubsub::PubSub::default(),
            with_output: Vec::new(),
            to_close: Vec::new(),
            self_pushes: Vec::new(),
            pending_block: None,
            nesting: 0,
            rng: ChaCha8Rng::seed_from_u64(seed),
            scripting: None,
            hll_simd: true,
            started: Instant::now(),
            memory_probe: None,
            script_watch: crate::scripting::busy::ScriptWatch::shared(),
            dirty: 0,
            dirty_reported: None,
            running_client: 0,
            busy_error: None,
            shutdown_requested: false,
            run_id: String::new(),
            unblock_requests: Vec::new(),
            access: Access::default(),
            policy: Policy::Lru,
            other_db_reached: false,
            started_unix_ms: crate::keyspace::now_ms(),
            started_mono: clock::now(),
            last_command: 0,
            clock_cache: ClockCache::default(),
            #[cfg(test)]
            fail_next_expire_cycle: false,
        };
        server.refresh_policy();
        {
            use rand::Rng;
            let mut seed_rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
            server.run_id = (0..40)
                .map(|_| char::from_digit(seed_rng.gen_range(0..16), 16).unwrap_or('0'))
                .collect();
        }
        server.default_client = server.connect(ConnectInfo::in_process());
        server
    }

    // ----- clients -----

    /// A new client; its id is CLIENT ID.
    pub fn connect(&mut self, info: ConnectInfo) -> ClientId {
        let id = self.next_client_id;
        self.next_client_id += 1;
        self.clients.insert(id, Box::new(Client::new(id, info)));
        if self.clients.len() > 1 {
            self.stats.total_connections += 1;
        }
        id
    }

    /// A new client with an id its transport chose (ids must grow and never
    /// repeat; a transport that connects clients while a busy script holds the
    /// server numbers them itself).
    pub fn connect_as(&mut self, id: ClientId, info: ConnectInfo) {
        self.next_client_id = self.next_client_id.max(id + 1);
        self.clients.insert(id, Box::new(Client::new(id, info)));
        self.stats.total_connections += 1;
    }

    /// The client is gone: its subscriptions, WATCHes and MULTI state with it.
    pub fn disconnect(&mut self, id: ClientId) {
        if let Some(mut client) = self.clients.remove(id) {
            multi::unwatch_all(self, &mut client);
            self.pubsub.forget(&client);
        }
    }

    pub fn client(&self, id: ClientId) -> Option<&Client> {
        self.clients.get(id)
    }

    pub fn client_mut(&mut self, id: ClientId) -> Option<&mut Client> {
        self.clients.get_mut(id)
    }

    /// Every client but the one running a command, for CLIENT LIST and friends.
    pub(crate) fn other_clients(&self) -> impl Iterator<Item = &Client> {
        self.clients.values()
    }

    /// Number of connected clients (the in-process default client not counted).
    pub fn connected_clients(&self) -> usize {
        self.clients
            .values()
            .filter(|c| c.kind == ClientKind::Connection)
            .count()
    }

    /// Queues `frame` for client `id` (not the one running a command).
    pub(crate) fn push_to(&mut self, id: ClientId, frame: &Reply) -> bool {
        let Some(client) = self.clients.get_mut(id) else {
            return false;
        };
        client.push(frame);
        if !self.with_output.contains(&id) {
            self.with_output.push(id);
        }
        true
    }

    /// Delivers a published message to client `id`: into its pending output, or,
    /// for the client whose command is running (taken out of the table while it
    /// runs), after that command's reply. Whether the client exists.
    pub(crate) fn deliver(&mut self, id: ClientId, frame: &Reply) -> bool {
        if self.push_to(id, frame) {
            return true;
        }
        if id == self.running_client {
            self.self_pushes.push(frame.clone());
            return true;
        }
        false
    }

    /// Clients that received output (published messages, MONITOR lines) since the
    /// last call; the transport takes it with [`Client::take_pending`].
    pub fn take_clients_with_output(&mut self) -> Vec<ClientId> {
        std::mem::take(&mut self.with_output)
    }

    /// Clients a command asked to close (CLIENT KILL).
    pub fn take_clients_to_close(&mut self) -> Vec<ClientId> {
        std::mem::take(&mut self.to_close)
    }

    pub(crate) fn close_client(&mut self, id: ClientId) {
        if !self.to_close.contains(&id) {
            self.to_close.push(id);
        }
    }

    // ----- databases -----

    /// Makes database `db` the one in [`Server::keyspace`].
    pub(crate) fn switch_db(&mut self, db: usize) {
        if db != self.current_db && db < DATABASES {
            std::mem::swap(&mut self.keyspace, &mut self.dbs[self.current_db]);
            std::mem::swap(&mut self.keyspace, &mut self.dbs[db]);
            self.current_db = db;
            self.keyspace.set_access(self.access);
        }
    }

    /// The index of the database in [`Server::keyspace`].
    pub fn current_db(&self) -> usize {
        self.current_db
    }

    /// Database `db`, wherever it is kept.
    pub fn db(&self, db: usize) -> &Keyspace {
        if db == self.current_db {
            &self.keyspace
        } else {
            &self.dbs[db]
        }
    }

    pub fn db_mut(&mut self, db: usize) -> &mut Keyspace {
        if db == self.current_db {
            &mut self.keyspace
        } else {
            self.other_db_reached = true;
            let ks = &mut self.dbs[db];
            ks.set_access(self.access);
            ks
        }
    }

    /// SWAPDB: databases `a` and `b` trade their data; clients stay where they
    /// are, and so do the watched keys (they belong to the database number).
    /// Each side's watchers see what replaced their keys
    /// (`touchAllWatchedKeysInDb(db1, db2)` both ways, [`crate::watch::Watches::swapped`]).
    pub(crate) fn swap_dbs(&mut self, a: usize, b: usize) {
        if a == b || a >= DATABASES || b >= DATABASES {
            return;
        }
        let now = crate::keyspace::now_ms();
        for (emptied, replaced) in [(a, b), (b, a)] {
            let seen: Vec<(Vec<u8>, bool, Incoming)> = self
                .db(emptied)
                .watches
                .watched_keys()
                .into_iter()
                .map(|key| {
                    let here = self.db(emptied).exists_physically(&key);
                    let there = self.db(replaced);
                    let incoming = if !there.exists_physically(&key) {
                        Incoming::Absent
                    } else if there.is_expired(&key, now) {
                        Incoming::Expired
                    } else {
                        Incoming::Live
                    };
                    (key, here, incoming)
                })
                .collect();
            let watches = &mut self.db_mut(emptied).watches;
            for (key, here, incoming) in seen {
                watches.swapped(&key, here, incoming);
            }
        }
        let cur = self.current_db;
        std::mem::swap(&mut self.keyspace, &mut self.dbs[cur]);
        self.dbs.swap(a, b);
        let (lo, hi) = (a.min(b), a.max(b));
        let (left, right) = self.dbs.split_at_mut(hi);
        std::mem::swap(&mut left[lo].watches, &mut right[0].watches);
        std::mem::swap(&mut self.keyspace, &mut self.dbs[cur]);
        self.keyspace.set_access(self.access);
        self.other_db_reached = true;
    }

    /// Re-reads `maxmemory-policy` (and the LFU tuning) into the form lookups use.
    fn refresh_policy(&mut self) {
        let get = |name: &str| self.config.others.get(name).map_or("", |v| v.as_str());
        self.policy = Policy::from_config(
            get("maxmemory-policy"),
            get("lfu-log-factor"),
            get("lfu-decay-time"),
        );
    }

    /// The eviction policy lookups follow (OBJECT FREQ and IDLETIME check it).
    pub fn eviction_policy(&self) -> Policy {
        self.policy
    }

    /// The LRU/LFU clocks of the running command (`LRU_CLOCK()`).
    pub fn lru_clock(&self) -> Clock {
        self.access.clock
    }

    /// Moves the hits, misses and lazily expired keys the databases counted
    /// into the server's statistics.
    fn collect_keyspace_counters(&mut self) {
        let mut all = self.keyspace.take_counters();
        if std::mem::take(&mut self.other_db_reached) {
            for ks in &mut self.dbs {
                let c = ks.take_counters();
                all.hits += c.hits;
                all.misses += c.misses;
                all.expired += c.expired;
            }
        }
        self.stats.keyspace_hits += all.hits;
        self.stats.keyspace_misses += all.misses;
        self.stats.expired_keys += all.expired;
    }

    // ----- running commands -----

    /// Runs one command for client `id` and returns its reply: the one entry
    /// point (`processCommand`). A blocking command with nothing to serve answers
    /// at once for an in-process client; a transport's client is told to block
    /// by [`Server::call_into`].
    pub fn call(&mut self, id: ClientId, argv: &[Vec<u8>]) -> Reply {
        self.call_then(id, argv, |_, _, reply| reply)
            .unwrap_or_else(|| Reply::error("ERR no such client"))
    }

    /// [`Server::call`], then `then` with the reply and the client, before the
    /// client goes back into the table (one lookup to take it out, one to put
    /// it back). None if there is no client `id`.
    fn call_then<R>(
        &mut self,
        id: ClientId,
        argv: &[Vec<u8>],
        then: impl FnOnce(&mut Server, &mut Client, Reply) -> R,
    ) -> Option<R> {
        let mut client = self.clients.take(id)?;
        self.pending_block = None;
        self.running_client = id;
        let reply = self.process_command(&mut client, argv);
        for frame in std::mem::take(&mut self.self_pushes) {
            frame.encode(&mut client.deferred, client.protocol);
        }
        let result = then(self, &mut client, reply);
        self.clients.put_back(id, client);
        Some(result)
    }

    /// Before a transport runs a pipelined batch of `id`'s requests: the
    /// first key of each is prefetched in the client's database (Redis 8's
    /// `prefetchCommands`), so the lookups that follow find their buckets,
    /// entries and bytes in the cache. A hint only: nothing is looked up for
    /// real, no statistics move, and a request that turns out to be something
    /// else (a SELECT before it, a container command) costs a few lookups.
    pub fn prefetch_keys<'a>(&self, id: ClientId, requests: impl Iterator<Item = &'a [Vec<u8>]>) {
        let Some(client) = self.clients.get(id) else {
            return;
        };
        let Some(ks) = self.dbs.get(client.db).map(|_| self.db(client.db)) else {
            return;
        };
        // A pipeline mostly repeats one command: its name is looked up once.
        let mut last: Option<(&[u8], Option<usize>)> = None;
        ks.prefetch(requests.filter_map(|argv| {
            let name = argv.first()?.as_slice();
            let first = match last {
                Some((n, first)) if n == name => first,
                _ => {
                    let first = table::lookup(name)
                        .filter(|spec| !spec.is_container())
                        .and_then(|spec| usize::try_from(spec.keys.first).ok())
                        .filter(|&f| f > 0);
                    last = Some((name, first));
                    first
                }
            };
            argv.get(first?).map(Vec::as_slice)
        }));
    }

    /// [`Server::call`] for a transport: the reply is encoded into `out` in the
    /// client's protocol (unless CLIENT REPLY turned replies off), and the outcome
    /// says whether the client must block or close.
    pub fn call_into(&mut self, id: ClientId, argv: &[Vec<u8>], out: &mut Vec<u8>) -> Outcome {
        self.call_then(id, argv, |server, client, reply| {
            server.reply_into(client, reply, out)
        })
        .unwrap_or(Outcome::Close)
    }

    /// The end of [`Server::call_into`]: what the client is told, and its
    /// reply and queued frames written into `out`.
    fn reply_into(&mut self, client: &mut Client, reply: Reply, out: &mut Vec<u8>) -> Outcome {
        let blocked = self.pending_block.take();
        client.blocked = blocked.is_some();
        if let Some(blocked) = blocked {
            return Outcome::Blocked(blocked);
        }
        // Frames queued for this client go first (the extra frames of a
        // multi-channel SUBSCRIBE, messages it published to itself).
        if !client.pending.is_empty() {
            out.extend_from_slice(&client.take_pending());
        }
        // A push frame (a (P|S)(UN)SUBSCRIBE answer) goes out even under
        // CLIENT REPLY OFF / SKIP, as Redis's CLIENT_PUSHING does.
        if client.reply_mode.take_turn() || matches!(reply, Reply::Push(_)) {
            reply.encode(out, client.protocol);
        }
        out.append(&mut client.deferred);
        if client.close_requested {
            Outcome::Close
        } else {
            Outcome::Done
        }
    }

    /// One request of another client while a script is busy (the hook's
    /// handler, through [`crate::scripting::busy::BusyContext::answer`]):
    /// processCommand refuses it with `busy_error` unless it is `allow-busy`.
    /// What belongs to the script's own command (the selected database, the
    /// running client, frames it sent itself) is put back afterwards.
    pub(crate) fn call_while_busy(
        &mut self,
        id: ClientId,
        argv: &[Vec<u8>],
        busy_error: &'static str,
        out: &mut Vec<u8>,
    ) {
        // A connection the transport has not registered yet (it connected
        // during the script) can only be told to wait.
        if !self.clients.contains(id) {
            Reply::error(busy_error).encode(out, crate::reply::Protocol::Resp2);
            return;
        }
        let db = self.current_db;
        let running = self.running_client;
        let pushes = std::mem::take(&mut self.self_pushes);
        let block = self.pending_block.take();
        self.busy_error = Some(busy_error);
        self.call_into(id, argv, out);
        self.busy_error = None;
        self.pending_block = block;
        self.self_pushes = pushes;
        self.running_client = running;
        self.switch_db(db);
    }

    /// A connected client's protocol.
    pub(crate) fn client_protocol(&self, id: ClientId) -> Option<crate::reply::Protocol> {
        self.clients.get(id).map(|c| c.protocol)
    }

    /// Convenience for tests and in-process use: string arguments, on the
    /// server's own in-process client.
    pub fn cmd(&mut self, argv: &[&str]) -> Reply {
        let owned: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
        self.call(self.default_client, &owned)
    }

    /// Convenience: byte arguments, on the in-process client.
    pub fn run(&mut self, argv: &[Vec<u8>]) -> Reply {
        self.call(self.default_client, argv)
    }

    /// `processCommand`: every check before a command may run, then the command.
    fn process_command(&mut self, client: &mut Client, argv: &[Vec<u8>]) -> Reply {
        // The clock is read once per command, in `call_in` (which also sets
        // the client's last interaction); a refused or queued request reads
        // it here.
        if argv.is_empty() {
            client.last_interaction = clock::now();
            return Reply::error("ERR empty command");
        }
        let (spec, fullname) = match table::resolve(argv) {
            Found::Command(spec, fullname) => (spec, fullname),
            Found::Unknown => return self.reject(client, None, unknown_command(argv)),
            Found::UnknownSubcommand(container) => {
                let e = table::unknown_subcommand_error(container, &argv[1]);
                return self.reject(client, None, e);
            }
        };
        client.last_command = fullname;
        if !spec.arity_ok(argv.len()) {
            let e = Reply::error(errors::arity(fullname));
            return self.reject(client, Some(fullname), e);
        }
        if client.multi.is_some() && spec.has(flags::NO_MULTI) {
            let e = Reply::error("ERR Command not allowed inside a transaction");
            return self.reject(client, Some(fullname), e);
        }
        // The maxmemory directive: the core evicts nothing, so over the limit a
        // command that may grow memory is refused, and so is an EXEC whose
        // queue holds one. Not while a busy script lets commands in.
        if self.config.maxmemory > 0 && self.busy_error.is_none() {
            let denyoom = spec.has(flags::DENYOOM)
                || (fullname == "exec" && client.multi.as_ref().is_some_and(|m| m.has_denyoom));
            if denyoom && self.over_maxmemory() {
                let e = Reply::error("OOM command not allowed when used memory > 'maxmemory'.");
                return self.reject(client, Some(fullname), e);
            }
        }
        if client.in_pubsub_mode()
            && client.protocol == crate::reply::Protocol::Resp2
            && !spec.has(flags::OK_SUBSCRIBED)
        {
            let e = Reply::error(format!(
                "ERR Can't execute '{fullname}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
            ));
            return self.reject(client, Some(fullname), e);
        }
        // A busy script lets other clients in only for `allow-busy` commands.
        if let Some(e) = self.busy_error {
            if !spec.has(flags::ALLOW_BUSY) {
                return self.reject(client, Some(fullname), Reply::error(e));
            }
        }
        if client.multi.is_some() && !spec.has(flags::TX_CONTROL) {
            client.last_interaction = clock::now();
            return multi::queue(client, spec, argv);
        }
        self.switch_db(client.db);
        self.call_in(client, spec, fullname, argv)
    }

    /// The LRU/LFU clocks of a command started at `started` and its wall
    /// time in Unix microseconds (its time snapshot): the clocks computed
    /// once per millisecond (three divisions in a row) and reused by the
    /// commands of the same millisecond, the wall time that millisecond's
    /// reading of the wall clock plus the monotonic clock's progress since.
    fn command_clock(&mut self, started: clock::Micros) -> (Clock, i64) {
        let c = &mut self.clock_cache;
        if !(c.from..c.until).contains(&started.0) {
            let ms = started.since(self.started_mono) / 1000;
            c.from = self.started_mono.0 + ms * 1000;
            c.until = c.from + 1000;
            c.clock = Clock::at_unix_ms(self.started_unix_ms + ms as i64);
            c.wall_at = (started, crate::scripting::clock::wall_us());
        }
        let (mono, wall) = c.wall_at;
        (c.clock, wall + started.since(mono) as i64)
    }

    /// `rejectCommand`: the error goes to the client, the error statistics count
    /// it, a MULTI in progress becomes dirty, and a known command's
    /// `rejected_calls` grows.
    fn reject(
        &mut self,
        client: &mut Client,
        fullname: Option<&'static str>,
        error: Reply,
    ) -> Reply {
        client.last_interaction = clock::now();
        if let Some(m) = client.multi.as_mut() {
            m.dirty = true;
        }
        if let Some(name) = fullname {
            self.stats.command(name).rejected += 1;
        }
        // A refused EXEC discards its transaction (`execCommandAbort`).
        let error = if fullname == Some("exec") {
            multi::exec_abort(self, client, &error)
        } else {
            error
        };
        self.stats.count_error(&error);
        error
    }

    /// Redis's `call()`: runs a command that passed every check, for `client`
    /// (a connection, the client of a script, or EXEC's own client). Its one
    /// clock reading is the command's time, the client's last interaction
    /// and the start of the command's duration, which (as Redis's) leaves
    /// the lookup and the checks before it out.
    pub(crate) fn call_in(
        &mut self,
        client: &mut Client,
        spec: &'static CommandSpec,
        fullname: &'static str,
        argv: &[Vec<u8>],
    ) -> Reply {
        let started = clock::now();
        client.last_interaction = started;
        let writes = spec.has(flags::WRITE);
        // One reading serves the command's clock and the start of its
        // duration.
        let (clock, wall_us) = self.command_clock(started);
        // Redis's `commandTimeSnapshot`: this command's lookups (and, for
        // EXEC or a script, every command inside, which keeps this one's)
        // see the time it started.
        let _time = Freeze::at(|| wall_us);
        let outer = self.access;
        let access = Access {
            clock,
            policy: self.policy,
            // TOUCH touches even for a CLIENT NO-TOUCH client.
            no_touch: client.no_touch && spec.name != "touch",
            count_reads: !writes,
            // Never 0, which means "no command" to the keyspace.
            command: self.last_command.checked_add(1).unwrap_or(1),
        };
        // The keyspace's copy is written from the value built here, not
        // read back from `self.access` just after its fields were stored
        // one by one (a load spanning several narrower stores waits for
        // them: perf annotate showed a fifth of call_in's samples there).
        self.keyspace.set_access(access);
        self.access = access;
        self.last_command = access.command;
        self.switch_db(client.db);
        if writes {
            self.keyspace.watches.begin_write();
        }
        let args = Args::new(argv);
        let outer_reported = self.dirty_reported.take();
        let outcome = catch_unwind(AssertUnwindSafe(|| match spec.handler {
            Handler::Server(f) => f(self, &args),
            Handler::Client(f) => f(self, client, &args),
            Handler::Legacy(f) => match f(self, &args) {
                Reply::Error(e) => Err(Reply::Error(e)),
                other => Ok(other),
            },
            Handler::Container => Err(Reply::error(errors::arity(fullname))),
        }));
        // Redis's duration is the difference of two microsecond clock readings
        // (`ustime()`), not a precise interval truncated: a 0.3 µs command
        // counts 1 µs about a third of the time and 0 otherwise, so `usec` over
        // many calls is their real time (a truncated interval would be 0).
        let usec = clock::now().since(started);
        // A command may have switched databases (SELECT, MOVE, a script).
        if writes {
            self.db_mut(client.db).end_watched_write();
            self.keyspace.end_watched_write();
        }
        self.collect_keyspace_counters();
        if self.config.notify_keyspace_events != 0 {
            self.publish_key_events();
        }
        if spec.has(flags::ADMIN) {
            // CONFIG SET may have changed maxmemory-policy or the keyspace events.
            self.refresh_policy();
            self.refresh_notify_mask();
        }
        self.access = outer;
        self.keyspace.set_access(outer);
        let (reply, failed) = match outcome {
            Ok(Ok(reply)) => (reply, false),
            Ok(Err(error)) => (error, true),
            Err(panic) => (self.panicked(fullname, argv, panic), true),
        };
        if self.nesting > 0 || client.kind != ClientKind::Connection {
            // Inside EXEC or a script, or for an in-process caller, nothing
            // blocks: the null reply stands.
            self.pending_block = None;
        }
        // A blocking command that found nothing wrote nothing either.
        match std::mem::replace(&mut self.dirty_reported, outer_reported) {
            Some(n) => self.dirty += n,
            None if writes && !failed && self.pending_block.is_none() => self.dirty += 1,
            None => {}
        }
        // A command that blocked is counted once, when it is finally served or
        // times out (Redis skips the statistics of a call that blocked).
        if self.pending_block.is_none() {
            let stat = self.stats.commands.at(spec.slot, fullname);
            stat.record(usec);
            if failed {
                stat.failed += 1;
                self.stats.count_error(&reply);
            }
            self.stats.total_commands += 1;
            if !spec.has(flags::SKIP_SLOWLOG) {
                self.stats
                    .slowlog_consider(&self.config, client, argv, usec);
            }
        }
        if !spec.has(flags::SKIP_MONITOR) && !spec.has(flags::ADMIN) {
            self.feed_monitors(client, argv);
        }
        reply
    }

    /// Runs a command inside another one (EXEC's queue, a script's `redis.call`):
    /// nothing blocks, and the outer command's database comes back afterwards.
    pub(crate) fn call_nested(
        &mut self,
        client: &mut Client,
        spec: &'static CommandSpec,
        fullname: &'static str,
        argv: &[Vec<u8>],
    ) -> Reply {
        self.nesting += 1;
        let reply = self.call_in(client, spec, fullname, argv);
        self.nesting -= 1;
        reply
    }

    fn panicked(
        &mut self,
        fullname: &str,
        argv: &[Vec<u8>],
        panic: Box<dyn std::any::Any + Send>,
    ) -> Reply {
        let what = panic_text(panic.as_ref());
        let shown: Vec<String> = argv
            .iter()
            .take(8)
            .map(|a| String::from_utf8_lossy(&a[..a.len().min(64)]).into_owned())
            .collect();
        eprintln!("redislab-core: BUG: '{fullname}' panicked on {shown:?}: {what}");
        self.stats.panics += 1;
        Reply::error(format!(
            "ERR internal error in '{fullname}' (a bug in the core, logged): {}",
            what.replace(['\r', '\n'], " ")
        ))
    }

    /// Called by a blocking command that found nothing to serve: it is only
    /// worth retrying once one of `keys` holds a value of type `wants`. Only a
    /// connection's own command (not one inside EXEC or a script) really blocks.
    pub(crate) fn block_for(
        &mut self,
        keys: Vec<Vec<u8>>,
        timeout_ms: Option<i64>,
        wants: Option<&'static str>,
    ) {
        if self.nesting == 0 {
            self.pending_block = Some(Blocked {
                db: self.current_db,
                keys,
                timeout_ms,
                wants,
            });
        }
    }

    /// A blocked client's timeout passed (the transport answered it): its
    /// command is counted now, once (`updateStatsOnUnblock`).
    /// (Also after CLIENT UNBLOCK.)
    pub fn blocked_timed_out(&mut self, id: ClientId) {
        let Some(client) = self.clients.get_mut(id) else {
            return;
        };
        client.blocked = false;
        let name = client.last_command;
        self.stats.command(name).calls += 1;
        self.stats.total_commands += 1;
    }

    /// MONITOR: every command, as `+<time> [<db> <addr>] "name" "arg" ...`.
    /// (EVAL and FCALL feed themselves, before their script's commands.)
    pub(crate) fn feed_monitors(&mut self, client: &Client, argv: &[Vec<u8>]) {
        if self.pubsub.monitors.is_empty() {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let origin = if client.id == client::SCRIPT_CLIENT_ID {
            "lua".to_string()
        } else {
            client.addr.clone()
        };
        let mut line = format!(
            "{}.{:06} [{} {}]",
            now.as_secs(),
            now.subsec_micros(),
            client.db,
            origin
        );
        for arg in argv {
            line.push(' ');
            line.push_str(&repr(arg));
        }
        let frame = Reply::Status(line.into());
        for id in self.pubsub.monitors.clone() {
            if id != client.id {
                self.push_to(id, &frame);
            }
        }
    }

    // ----- time-driven work -----

    /// One run of Redis's slow active expire cycle over every database: deletes
    /// keys whose TTL passed even if nobody reads them again. The transport calls
    /// this about every [`ACTIVE_EXPIRE_PERIOD`] (Redis: 10 times a second, 25% of
    /// that period at most).
    ///
    /// A panic inside it (a bug in the core) is caught like a command's: it is
    /// logged and counted, and the server goes on serving (the cycle runs on
    /// the thread that runs commands, and used to take the server down).
    pub fn active_expire_cycle(&mut self) -> ExpireCycleStats {
        if !self.config.active_expire {
            return ExpireCycleStats::default();
        }
        match catch_unwind(AssertUnwindSafe(|| self.expire_cycle_over_databases())) {
            Ok(stats) => stats,
            Err(panic) => {
                let what = panic_text(panic.as_ref());
                eprintln!("redislab-core: BUG: the active expire cycle panicked: {what}");
                self.stats.panics += 1;
                ExpireCycleStats::default()
            }
        }
    }

    fn expire_cycle_over_databases(&mut self) -> ExpireCycleStats {
        #[cfg(test)]
        if std::mem::take(&mut self.fail_next_expire_cycle) {
            panic!("a bug planted by a test");
        }
        let mut total = ExpireCycleStats::default();
        let now = crate::keyspace::now_ms();
        let started = Instant::now();
        let mut fields = 0;
        for db in 0..DATABASES {
            let left = ACTIVE_EXPIRE_BUDGET.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            let ks = self.db_mut(db);
            // Hash fields first, as Redis interleaves them (`activeSubexpiresCycle`).
            if !ks.subexpires.is_empty() {
                fields += crate::hash::subexpires::active_expire(
                    ks,
                    now,
                    crate::hash::subexpires::FIELDS_PER_CYCLE,
                ) as u64;
            }
            if ks.volatile_len() == 0 {
                continue;
            }
            let stats = ks.active_expire_cycle(now, left);
            total.examined += stats.examined;
            total.expired += stats.expired;
        }
        self.publish_key_events();
        self.stats.expired_keys += total.expired as u64;
        self.stats.expired_keys_active += total.expired as u64;
        self.stats.expired_subkeys += fields;
        self.stats.expired_subkeys_active += fields;
        total
    }

    /// INFO's `used_memory`: the heap in use, as reported by the allocator probe a
    /// binary installs ([`Server::set_memory_probe`]), else 0.
    pub fn used_memory(&self) -> usize {
        self.memory_probe.map_or(0, |probe| probe())
    }

    /// Whether used memory is over `maxmemory`. Redis would evict first; the
    /// core evicts nothing, so this is `performEvictions` failing under
    /// `noeviction`.
    pub(crate) fn over_maxmemory(&self) -> bool {
        let max = self.config.maxmemory;
        max > 0 && self.used_memory() as u64 > max
    }

    /// Installs what answers other clients while a script is busy (see
    /// [`crate::scripting::busy`]).
    pub fn set_busy_handler(&mut self, handler: BusyHandler) {
        self.lock_watch().set_handler(handler);
    }

    pub(crate) fn lock_watch(
        &self,
    ) -> std::sync::MutexGuard<'_, crate::scripting::busy::ScriptWatch> {
        self.script_watch
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The client whose command is running (CLIENT ID of the caller).
    pub fn running_client(&self) -> ClientId {
        self.running_client
    }

    /// CLIENT UNBLOCK: the transport answers `id`'s blocked command (a null, or
    /// the UNBLOCKED error when `error`).
    pub(crate) fn request_unblock(&mut self, id: ClientId, error: bool) {
        self.unblock_requests.push((id, error));
    }

    /// The CLIENT UNBLOCK requests since the last call.
    pub fn take_unblock_requests(&mut self) -> Vec<(ClientId, bool)> {
        std::mem::take(&mut self.unblock_requests)
    }

    /// A 40-hex-digit id of this server's run (INFO's `run_id`), drawn once.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// SHUTDOWN: the transport stops the server once the reply is out.
    pub(crate) fn request_shutdown(&mut self) {
        self.shutdown_requested = true;
    }

    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested
    }

    /// How many changes commands made (moves whenever data may have changed).
    pub fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Called by a command whose count of changes is not "one per successful
    /// write" (Redis's `server.dirty += n`): a SETBIT that changed no bit reports
    /// 0, MSET one per key, a PFCOUNT that refreshed its cache 1.
    pub(crate) fn set_dirty(&mut self, changes: u64) {
        self.dirty_reported = Some(changes);
    }

    /// Installs a function that reports the process's heap in use (the listener's
    /// counting allocator).
    pub fn set_memory_probe(&mut self, probe: fn() -> usize) {
        self.memory_probe = Some(probe);
    }

    /// Names of all commands the core implements, lower case.
    pub fn command_names() -> impl Iterator<Item = &'static str> {
        table::all().into_iter().map(|c| c.name)
    }
}

/// Redis's wording: the name, then up to ~128 bytes of quoted arguments,
/// each as C's `%.*s` prints it (at most so many bytes, up to a NUL), and
/// the client's bytes kept as they are.
pub(crate) fn unknown_command(argv: &[Vec<u8>]) -> Reply {
    let mut text = b"ERR unknown command '".to_vec();
    text.extend_from_slice(c_prefix(&argv[0], 128));
    text.push(b'\'');
    if argv.len() >= 2 {
        let mut listed = Vec::new();
        for arg in &argv[1..] {
            if listed.len() >= 128 {
                break;
            }
            listed.push(b'\'');
            listed.extend_from_slice(c_prefix(arg, 128 - listed.len() + 1));
            listed.extend_from_slice(b"' ");
        }
        text.extend_from_slice(b", with args beginning with: ");
        text.extend_from_slice(&listed);
    }
    Reply::Error(ErrorText::one_line(text))
}

/// What C's `%.<max>s` prints of `bytes`: up to the first NUL, at most
/// `max` bytes.
pub(crate) fn c_prefix(bytes: &[u8], max: usize) -> &[u8] {
    let s = crate::num::c_str(bytes);
    &s[..s.len().min(max)]
}

/// `sdscatrepr`: a quoted string with `\\`, `\"`, `\n`, `\r`, `\t`, `\a`,
/// `\b` escaped and other non-printable bytes as `\xHH`.
pub(crate) fn repr(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// A panic's message, when it carries one.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bug in the active expire cycle is logged and counted like a
    /// command's; the server goes on, and the next cycle runs as usual.
    #[test]
    fn a_panic_in_the_expire_cycle_leaves_the_server_serving() {
        let mut s = Server::new();
        s.cmd(&["SET", "gone", "v", "PX", "1"]);
        s.cmd(&["SET", "kept", "v"]);
        std::thread::sleep(std::time::Duration::from_millis(5));
        s.fail_next_expire_cycle = true;
        assert_eq!(s.active_expire_cycle(), ExpireCycleStats::default());
        assert_eq!(s.stats.panics, 1);
        assert_eq!(s.cmd(&["GET", "kept"]), Reply::bulk("v"));
        let stats = s.active_expire_cycle();
        assert_eq!(stats.expired, 1);
        assert_eq!(s.stats.panics, 1);
    }

    /// The clock kept for a millisecond is the one computed afresh, on both
    /// sides of every boundary, forward and (a reading before the kept
    /// millisecond) backward.
    #[test]
    fn the_kept_command_clock_is_the_computed_one() {
        let mut s = Server::new();
        s.started_unix_ms = 1_733_400_059_998;
        let (mono, unix_ms) = (s.started_mono.0, s.started_unix_ms);
        let computed = |us: u64| Clock::at_unix_ms(unix_ms + ((us - mono) / 1000) as i64);
        let readings: Vec<u64> = [0, 1, 999, 1_000, 1_001, 1_999, 2_000, 60_000_999, 61_000, 5]
            .iter()
            .map(|d| mono + d)
            .collect();
        for &us in &readings {
            let expected = computed(us);
            assert_eq!(
                s.command_clock(clock::Micros(us)).0,
                expected,
                "at +{}",
                us - mono
            );
        }
        // 59,998 ms + 2 ms crosses a second and a minute.
        assert_ne!(computed(mono), computed(mono + 2_000));
    }

    #[test]
    fn unknown_commands_and_arity_read_like_redis() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["NOPE", "a", "b"]),
            Reply::error("ERR unknown command 'NOPE', with args beginning with: 'a' 'b' ")
        );
        assert_eq!(s.cmd(&["nope"]), Reply::error("ERR unknown command 'nope'"));
        assert_eq!(
            s.cmd(&["zscore", "k"]),
            Reply::error("ERR wrong number of arguments for 'zscore' command")
        );
    }

    /// A transport's prefetch of a batch is a hint: whatever the requests
    /// (empty, unknown, short of their key, a container command, another
    /// client's id), it looks nothing up for real, so no statistics move and
    /// the keys answer as before, also in a dict halfway through a rehash.
    #[test]
    fn prefetching_a_batch_changes_nothing() {
        let mut s = Server::new();
        let c = s.connect(ConnectInfo::in_process());
        let argv = |w: &[&str]| w.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        for i in 0..1500 {
            s.call(c, &argv(&["SET", &format!("k{i}"), "v"]));
        }
        let (hits, misses) = (s.stats.keyspace_hits, s.stats.keyspace_misses);
        let batch = [
            vec![],
            argv(&["GET"]),
            argv(&["GET", "k1"]),
            argv(&["get", "nothere"]),
            argv(&["CONFIG", "GET", "k2"]),
            argv(&["NOPE", "k3"]),
            argv(&["MSET", "k4", "v", "k5", "v"]),
            vec![vec![0xff; 40], vec![0; 3]],
        ];
        s.prefetch_keys(c, batch.iter().map(Vec::as_slice));
        s.prefetch_keys(9999, batch.iter().map(Vec::as_slice));
        assert_eq!(
            (s.stats.keyspace_hits, s.stats.keyspace_misses),
            (hits, misses)
        );
        assert_eq!(s.call(c, &argv(&["GET", "k1"])), Reply::bulk("v"));
        assert_eq!(s.call(c, &argv(&["DBSIZE"])), Reply::Integer(1500));
    }

    #[test]
    fn each_client_has_its_own_database() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        let b = s.connect(ConnectInfo::in_process());
        let argv = |w: &[&str]| w.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        assert_eq!(s.call(b, &argv(&["SELECT", "3"])), Reply::ok());
        s.call(a, &argv(&["SET", "k", "in0"]));
        s.call(b, &argv(&["SET", "k", "in3"]));
        assert_eq!(s.call(a, &argv(&["GET", "k"])), Reply::bulk("in0"));
        assert_eq!(s.call(b, &argv(&["GET", "k"])), Reply::bulk("in3"));
        assert_eq!(s.db(3).len(), 1);
        assert_eq!(s.db(0).len(), 1);
    }

    /// The command path counts a call in the row's numbered slot; the paths
    /// that count by name (a rejected call, a blocked client's timeout, a
    /// script's failures) reach the same line of INFO commandstats.
    #[test]
    fn commandstats_by_slot_and_by_name_are_one_line() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v"]);
        s.cmd(&["SET", "k"]); // wrong arity: rejected
        s.cmd(&["CONFIG", "GET", "maxmemory"]);
        s.cmd(&["config", "get", "timeout"]);
        s.cmd(&["CONFIG", "GET"]); // rejected as config|get
        assert_eq!(s.stats.commands["set"].calls, 1);
        assert_eq!(s.stats.commands["set"].rejected, 1);
        assert_eq!(s.stats.commands["config|get"].calls, 2);
        assert_eq!(s.stats.commands["config|get"].rejected, 1);
        s.stats.command("set").calls += 1;
        assert_eq!(s.stats.commands["set"].calls, 2);
        let names: Vec<&str> = s.stats.commands_sorted().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["config|get", "set"]);
        let bytes = s.cmd(&["INFO", "commandstats"]).to_resp2();
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("cmdstat_set:calls=2,"), "{text}");
        assert!(
            text.contains("cmdstat_config|get:calls=2,") && text.contains("rejected_calls=1"),
            "{text}"
        );
        s.cmd(&["CONFIG", "RESETSTAT"]);
        assert!(s.stats.commands.get("set").is_none());
        s.cmd(&["SET", "k", "v"]);
        assert_eq!(s.stats.commands["set"].calls, 1);
    }

    /// Every request counts as an interaction (CLIENT LIST's `idle`): one
    /// that runs, one that is refused before it could, one queued by MULTI.
    #[test]
    fn refused_and_queued_requests_are_interactions_too() {
        let mut s = Server::new();
        let id = s.connect(ConnectInfo::in_process());
        // Within the machine's uptime (the monotonic clock starts at boot).
        let long_ago = clock::now().minus_secs(30);
        let requests: [&[&str]; 5] = [&["PING"], &["NOPE"], &["GET"], &["MULTI"], &["GET", "k"]];
        for argv in requests {
            s.clients.get_mut(id).unwrap().last_interaction = long_ago;
            let owned: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
            s.call(id, &owned);
            let idle = s.clients.get(id).unwrap().last_interaction.elapsed_secs();
            assert!(idle < 10, "{argv:?} left idle for {idle} s");
        }
    }

    /// The same over real calls: their `usec` is a share of the loop's wall
    /// time that only a dropped sub-microsecond call could lose (a ratio
    /// within one run, not a speed target).
    #[test]
    fn sub_microsecond_calls_add_up_in_commandstats() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v"]);
        let get = vec![b"GET".to_vec(), b"k".to_vec()];
        let calls = 200_000u64;
        let wall = Instant::now();
        for _ in 0..calls {
            s.run(&get);
        }
        let wall_us = wall.elapsed().as_micros() as u64;
        let stat = &s.stats.commands["get"];
        assert_eq!(stat.calls, calls);
        // The measured window (the command's function, from after the lookup
        // and checks) is about 0.42 of the loop here; truncated intervals
        // kept ~0.2 on a busy machine and nothing on a quiet one.
        assert!(
            stat.usec >= wall_us / 4,
            "{} µs of {wall_us} µs over {calls} GETs: sub-microsecond calls were dropped",
            stat.usec
        );
        // Each difference of whole microseconds exceeds the real interval by
        // under 1 µs.
        assert!(
            stat.usec <= wall_us + calls,
            "{} > {wall_us} + {calls}",
            stat.usec
        );
    }

    /// `+OK` and the other fixed status lines are borrowed, not allocated.
    #[test]
    fn ok_is_a_borrowed_status() {
        assert!(matches!(
            Reply::ok(),
            Reply::Status(std::borrow::Cow::Borrowed("OK"))
        ));
        let mut s = Server::new();
        assert!(matches!(
            s.cmd(&["SET", "k", "v"]),
            Reply::Status(std::borrow::Cow::Borrowed("OK"))
        ));
        assert_eq!(s.cmd(&["SET", "k", "v"]).to_resp2(), b"+OK\r\n");
    }
}
