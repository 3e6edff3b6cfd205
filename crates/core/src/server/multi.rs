//! MULTI/EXEC/DISCARD/WATCH/UNWATCH: transactions (Redis's `multi.c`).
//!
//! After MULTI, [`super::Server::call`] queues every command except the
//! transaction commands themselves (and QUIT/RESET), answering `+QUEUED`; a
//! command that cannot be queued (unknown, wrong arity, not allowed in MULTI)
//! makes the transaction dirty, and EXEC then answers EXECABORT. EXEC runs the
//! queue in one go through the same call path as any command, so nothing of
//! another client interleaves.
//!
//! WATCH is optimistic locking: EXEC answers a null array if a watched key was
//! modified (written, deleted, expired, flushed) since WATCH. Each database keeps
//! versions of its watched keys ([`crate::watch`]); the client remembers the
//! version it saw.

use super::client::{Client, ClientId, MultiState, Watched};
use super::table::{self, flags, CmdResult, CommandSpec, Found};
use super::Server;
use crate::commands::Args;
use crate::reply::Reply;
use crate::watch::Dirty;

/// Queues a command inside MULTI (its checks already passed).
pub(super) fn queue(client: &mut Client, spec: &CommandSpec, argv: &[Vec<u8>]) -> Reply {
    let m = client.multi.get_or_insert_with(MultiState::default);
    m.has_writes |= spec.has(flags::WRITE);
    m.has_denyoom |= spec.has(flags::DENYOOM);
    m.queued.push(argv.to_vec());
    Reply::Status("QUEUED".into())
}

pub fn multi(_: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    if c.multi.is_some() {
        return Err(Reply::error("ERR MULTI calls can not be nested"));
    }
    c.multi = Some(MultiState::default());
    Ok(Reply::ok())
}

pub fn exec(s: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    let Some(m) = c.multi.take() else {
        return Err(Reply::error("ERR EXEC without MULTI"));
    };
    // A touched watched key (CLIENT_DIRTY_CAS), or `isWatchedKeyExpired`: a
    // watched key that has passed its deadline since WATCH (and that no lookup
    // deleted yet) fails the transaction too; one already stale at WATCH does not.
    let now = crate::keyspace::now_ms();
    let modified = watch_dirty(s, c)
        || c.watched.iter().any(|w| {
            let stale = s
                .db(w.db)
                .watches
                .watcher(&w.key, c.id)
                .is_some_and(|x| x.stale);
            !stale && s.db(w.db).is_expired(&w.key, now)
        });
    unwatch_all(s, c);
    if m.dirty {
        return Err(Reply::error(
            "EXECABORT Transaction discarded because of previous errors.",
        ));
    }
    if modified {
        return Ok(Reply::NilArray);
    }
    let mut replies = Vec::with_capacity(m.queued.len());
    for argv in &m.queued {
        let reply = match table::resolve(argv) {
            Found::Command(spec, fullname) => s.call_nested(c, spec, fullname, argv),
            // Checked when queued; a table cannot lose a command in between.
            _ => super::unknown_command(argv),
        };
        replies.push(reply);
    }
    Ok(Reply::Array(replies))
}

pub fn discard(s: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    if c.multi.take().is_none() {
        return Err(Reply::error("ERR DISCARD without MULTI"));
    }
    unwatch_all(s, c);
    Ok(Reply::ok())
}

/// `execCommandAbort`: an EXEC refused before it could run (over maxmemory,
/// busy script) discards the transaction and names the reason.
pub(super) fn exec_abort(s: &mut Server, c: &mut Client, reason: &Reply) -> Reply {
    c.multi = None;
    unwatch_all(s, c);
    let mut text = b"EXECABORT Transaction discarded because of: ".to_vec();
    if let Reply::Error(e) = reason {
        text.extend_from_slice(e.as_bytes());
    }
    Reply::Error(text.into())
}

pub fn watch(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    if c.multi.is_some() {
        return Err(Reply::error("ERR WATCH inside MULTI is not allowed"));
    }
    // No point in watching more once the transaction is condemned.
    if watch_dirty(s, c) {
        return Ok(Reply::ok());
    }
    let now = crate::keyspace::now_ms();
    for i in 1..a.len() {
        let key = a.bytes(i);
        if c.watched.iter().any(|w| w.db == c.db && w.key == key) {
            continue;
        }
        // A key already past its TTL stays where it is (WATCH deletes nothing):
        // the watcher is marked stale, so its deletion later is no change.
        let stale = s.keyspace.is_expired(key, now);
        s.keyspace.watches.watch(key, c.id, stale);
        c.watched.push(Watched {
            db: c.db,
            key: key.to_vec(),
        });
    }
    Ok(Reply::ok())
}

pub fn unwatch(s: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    unwatch_all(s, c);
    Ok(Reply::ok())
}

/// Forgets every watched key (UNWATCH, after EXEC/DISCARD, RESET, on disconnect).
pub(crate) fn unwatch_all(s: &mut Server, c: &mut Client) {
    for w in c.watched.drain(..) {
        s.db_mut(w.db).watches.unwatch(&w.key, c.id);
    }
}

/// Redis's CLIENT_DIRTY_CAS: one of the client's watched keys was touched.
pub(crate) fn watch_dirty(s: &Server, c: &Client) -> bool {
    c.watched.iter().any(|w| {
        s.db(w.db)
            .watches
            .watcher(&w.key, c.id)
            .is_some_and(|x| x.dirty != Dirty::No)
    })
}

/// How many keys the client still watches (CLIENT LIST's `watch=`): none once
/// a write dirtied it, as Redis unwatches all of them then.
pub(crate) fn watch_count(s: &Server, c: &Client) -> usize {
    if c.watched.iter().any(|w| dropped(s, c.id, w)) {
        0
    } else {
        c.watched.len()
    }
}

fn dropped(s: &Server, client: ClientId, w: &Watched) -> bool {
    s.db(w.db)
        .watches
        .watcher(&w.key, client)
        .is_some_and(|x| x.dirty == Dirty::Unwatched)
}

/// INFO's `watching_clients` and `total_watched_keys` (distinct keys over the
/// databases), counting only clients a write has not unwatched.
pub(crate) fn watch_totals<'a>(
    s: &Server,
    clients: impl Iterator<Item = &'a Client>,
) -> (usize, usize) {
    let mut unwatched = std::collections::HashSet::new();
    let mut watching = 0;
    for c in clients {
        if c.watched.iter().any(|w| dropped(s, c.id, w)) {
            unwatched.insert(c.id);
        } else if !c.watched.is_empty() {
            watching += 1;
        }
    }
    let keys = (0..super::DATABASES)
        .map(|db| {
            s.db(db)
                .watches
                .iter()
                .filter(|(_, ws)| {
                    ws.iter()
                        .any(|w| w.dirty != Dirty::Unwatched && !unwatched.contains(&w.client))
                })
                .count()
        })
        .sum();
    (watching, keys)
}

#[cfg(test)]
mod tests {
    use crate::server::ConnectInfo;
    use crate::{Reply, Server};

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn exec_fails_when_a_watched_key_expired_since_watch() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        s.call(a, &argv(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]));
        s.call(a, &argv(&["SET", "key", "1", "PX", "20"]));
        s.call(a, &argv(&["WATCH", "key"]));
        std::thread::sleep(std::time::Duration::from_millis(30));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["INCR", "key"]));
        assert_eq!(s.call(a, &argv(&["EXEC"])), Reply::NilArray);
    }

    /// EXEC's queue runs at one time, EXEC's start (Redis's
    /// `commandTimeSnapshot` is taken at nesting level 0): a key set with
    /// PX 5 is still there, its PTTL whole, after a 20 ms sleep inside the
    /// same transaction, and TIME answers the same value before and after.
    #[test]
    fn exec_runs_its_queue_at_the_time_it_started() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        s.call(a, &argv(&["MULTI"]));
        for words in [
            &["SET", "k", "v", "PX", "5"][..],
            &["TIME"],
            &["DEBUG", "SLEEP", "0.02"],
            &["GET", "k"],
            &["PTTL", "k"],
            &["TIME"],
        ] {
            s.call(a, &argv(words));
        }
        let Reply::Array(replies) = s.call(a, &argv(&["EXEC"])) else {
            panic!("EXEC answered no array");
        };
        assert_eq!(replies[3], Reply::bulk("v"));
        assert_eq!(replies[4], Reply::Integer(5));
        assert_eq!(replies[1], replies[5], "TIME moved inside EXEC");
        // The next command has a time of its own: the key is gone.
        assert_eq!(s.call(a, &argv(&["GET", "k"])), Reply::Nil);
    }

    #[test]
    fn exec_runs_the_queue_and_watch_aborts_on_a_write() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        let b = s.connect(ConnectInfo::in_process());
        let queued = Reply::Status("QUEUED".into());
        assert_eq!(s.call(a, &argv(&["MULTI"])), Reply::ok());
        assert_eq!(s.call(a, &argv(&["SET", "k", "1"])), queued);
        assert_eq!(s.call(a, &argv(&["INCR", "k"])), queued);
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::Array(vec![Reply::ok(), Reply::Integer(2)])
        );

        s.call(a, &argv(&["WATCH", "k"]));
        s.call(b, &argv(&["INCR", "k"]));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["SET", "k", "10"]));
        assert_eq!(s.call(a, &argv(&["EXEC"])), Reply::NilArray);
        assert_eq!(s.cmd(&["GET", "k"]), Reply::bulk("3"));

        // A read by someone else does not abort.
        s.call(a, &argv(&["WATCH", "k"]));
        s.call(b, &argv(&["GET", "k"]));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["SET", "k", "10"]));
        assert_eq!(s.call(a, &argv(&["EXEC"])), Reply::Array(vec![Reply::ok()]));
    }

    #[test]
    fn a_bad_command_poisons_the_transaction() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        s.call(a, &argv(&["MULTI"]));
        assert!(s.call(a, &argv(&["NOPE"])).is_error());
        assert!(s.call(a, &argv(&["GET"])).is_error());
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::error("EXECABORT Transaction discarded because of previous errors.")
        );
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::error("ERR EXEC without MULTI")
        );
    }

    #[test]
    fn publish_inside_multi_is_queued() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        s.call(a, &argv(&["MULTI"]));
        assert_eq!(
            s.call(a, &argv(&["PUBLISH", "ch", "hi"])),
            Reply::Status("QUEUED".into())
        );
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::Array(vec![Reply::Integer(0)])
        );
    }

    #[test]
    fn a_write_in_another_database_does_not_abort() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        let b = s.connect(ConnectInfo::in_process());
        s.call(a, &argv(&["WATCH", "k"]));
        s.call(b, &argv(&["SELECT", "1"]));
        s.call(b, &argv(&["SET", "k", "x"]));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["PING"]));
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::Array(vec![Reply::Status("PONG".into())])
        );
    }

    fn a_lot_of_memory() -> usize {
        1 << 40
    }

    /// Over maxmemory (the core evicts nothing: `noeviction`), a DENYOOM
    /// command is refused, inside MULTI too (the transaction then fails), an
    /// EXEC whose queue holds one is refused and discarded, and a read-only
    /// transaction or DISCARD still works (multi.tcl's OOM tests; before, the
    /// core ignored maxmemory outside scripts).
    #[test]
    fn over_maxmemory_denyoom_commands_and_their_transactions_are_refused() {
        let oom = "OOM command not allowed when used memory > 'maxmemory'.";
        let mut s = Server::new();
        s.set_memory_probe(a_lot_of_memory);
        let a = s.connect(ConnectInfo::in_process());
        s.call(a, &argv(&["SET", "x", "value"]));
        s.call(a, &argv(&["CONFIG", "SET", "maxmemory", "1mb"]));
        assert_eq!(s.call(a, &argv(&["SET", "y", "1"])), Reply::error(oom));
        assert_eq!(s.call(a, &argv(&["GET", "x"])), Reply::bulk("value"));
        assert_eq!(s.call(a, &argv(&["DEL", "x"])), Reply::Integer(1));
        // A refused command makes the transaction fail.
        s.call(a, &argv(&["MULTI"]));
        assert_eq!(s.call(a, &argv(&["LPUSH", "l", "v"])), Reply::error(oom));
        assert_eq!(s.call(a, &argv(&["DISCARD"])), Reply::ok());
        // Queued before the limit, refused at EXEC, and the state is gone.
        let admin = s.connect(ConnectInfo::in_process());
        s.call(admin, &argv(&["CONFIG", "SET", "maxmemory", "0"]));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["SET", "x", "1"]));
        s.call(a, &argv(&["GET", "x"]));
        s.call(admin, &argv(&["CONFIG", "SET", "maxmemory", "1"]));
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::error(format!("EXECABORT Transaction discarded because of: {oom}"))
        );
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::error("ERR EXEC without MULTI")
        );
        // A read-only transaction runs.
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["GET", "x"]));
        s.call(a, &argv(&["PING"]));
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::Array(vec![Reply::Nil, Reply::Status("PONG".into())])
        );
        // The refused EXEC counts as EXECABORT, as Redis's execCommandAbort.
        assert_eq!(s.stats.errors.get("OOM"), Some(&2));
        assert_eq!(s.stats.errors.get("EXECABORT"), Some(&1));
    }
}
