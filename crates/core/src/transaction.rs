//! MULTI/EXEC/DISCARD/WATCH/UNWATCH: one client's transaction state.
//!
//! Redis queues a client's commands after MULTI and runs them all at EXEC, with
//! nothing in between; a command that cannot be queued (unknown, wrong arity)
//! poisons the transaction (EXECABORT). WATCH makes EXEC answer a null array if
//! any watched key was modified since, which is how optimistic read-modify-write
//! loops learn they must retry. The listener keeps one [`ClientTx`] per connection
//! and runs EXEC inside one executor turn, so the queued commands are atomic.

use crate::commands::Server;
use crate::reply::{errors, Reply};

#[derive(Debug, Default)]
pub struct ClientTx {
    /// Commands queued since MULTI; `None` outside a transaction.
    queued: Option<Vec<Vec<Vec<u8>>>>,
    /// A command could not be queued: EXEC will refuse.
    dirty: bool,
    /// Watched keys and their versions when WATCH ran.
    watched: Vec<(Vec<u8>, u64)>,
}

impl ClientTx {
    /// Handles `argv` if it belongs to the transaction machinery (or must be
    /// queued); `None` means the caller executes it as usual.
    pub fn handle(&mut self, server: &mut Server, argv: &[Vec<u8>]) -> Option<Reply> {
        let name = String::from_utf8_lossy(argv.first()?).to_ascii_lowercase();
        if self.queued.is_some() {
            return Some(match name.as_str() {
                "exec" => self.exec(server),
                "discard" => self.discard(server),
                "multi" => Reply::error("ERR MULTI calls can not be nested"),
                "watch" => Reply::error("ERR WATCH inside MULTI is not allowed"),
                _ => self.queue(server, argv),
            });
        }
        match name.as_str() {
            "multi" if argv.len() != 1 => Some(Reply::error(errors::arity("multi"))),
            "multi" => {
                self.queued = Some(Vec::new());
                Some(Reply::ok())
            }
            "exec" => Some(Reply::error("ERR EXEC without MULTI")),
            "discard" => Some(Reply::error("ERR DISCARD without MULTI")),
            "watch" if argv.len() < 2 => Some(Reply::error(errors::arity("watch"))),
            "watch" => {
                for key in &argv[1..] {
                    if !self.watched.iter().any(|(k, _)| k == key) {
                        let version = server.keyspace.watches.watch(key);
                        self.watched.push((key.clone(), version));
                    }
                }
                Some(Reply::ok())
            }
            "unwatch" => {
                self.release(server);
                Some(Reply::ok())
            }
            _ => None,
        }
    }

    /// Forgets every watched key (UNWATCH, after EXEC/DISCARD, on disconnect).
    pub fn release(&mut self, server: &mut Server) {
        for (key, _) in self.watched.drain(..) {
            server.keyspace.watches.unwatch(&key);
        }
    }

    fn queue(&mut self, server: &mut Server, argv: &[Vec<u8>]) -> Reply {
        match server.check_command(argv) {
            Ok(()) => {
                self.queued.get_or_insert_with(Vec::new).push(argv.to_vec());
                Reply::Status("QUEUED".into())
            }
            Err(e) => {
                self.dirty = true;
                e
            }
        }
    }

    fn exec(&mut self, server: &mut Server) -> Reply {
        let queued = self.queued.take().unwrap_or_default();
        let dirty = std::mem::take(&mut self.dirty);
        let modified = self
            .watched
            .iter()
            .any(|(k, v)| server.keyspace.watches.version(k) != *v);
        self.release(server);
        if dirty {
            return Reply::error("EXECABORT Transaction discarded because of previous errors.");
        }
        if modified {
            return Reply::NilArray;
        }
        Reply::Array(queued.iter().map(|argv| server.execute(argv)).collect())
    }

    fn discard(&mut self, server: &mut Server) -> Reply {
        self.queued = None;
        self.dirty = false;
        self.release(server);
        Reply::ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn run(tx: &mut ClientTx, s: &mut Server, words: &[&str]) -> Reply {
        let a = argv(words);
        tx.handle(s, &a).unwrap_or_else(|| s.execute(&a))
    }

    #[test]
    fn exec_runs_the_queue_and_watch_aborts_on_a_write() {
        let mut s = Server::new();
        let (mut a, mut b) = (ClientTx::default(), ClientTx::default());
        assert_eq!(run(&mut a, &mut s, &["MULTI"]), Reply::ok());
        assert_eq!(
            run(&mut a, &mut s, &["SET", "k", "1"]),
            Reply::Status("QUEUED".into())
        );
        assert_eq!(
            run(&mut a, &mut s, &["INCR", "k"]),
            Reply::Status("QUEUED".into())
        );
        assert_eq!(
            run(&mut a, &mut s, &["EXEC"]),
            Reply::Array(vec![Reply::ok(), Reply::Integer(2)])
        );

        run(&mut a, &mut s, &["WATCH", "k"]);
        run(&mut b, &mut s, &["INCR", "k"]);
        run(&mut a, &mut s, &["MULTI"]);
        run(&mut a, &mut s, &["SET", "k", "10"]);
        assert_eq!(run(&mut a, &mut s, &["EXEC"]), Reply::NilArray);
        assert_eq!(s.call(&["GET", "k"]), Reply::bulk("3"));

        // A read by someone else does not abort.
        run(&mut a, &mut s, &["WATCH", "k"]);
        run(&mut b, &mut s, &["GET", "k"]);
        run(&mut a, &mut s, &["MULTI"]);
        run(&mut a, &mut s, &["SET", "k", "10"]);
        assert_eq!(
            run(&mut a, &mut s, &["EXEC"]),
            Reply::Array(vec![Reply::ok()])
        );
    }

    #[test]
    fn a_bad_command_poisons_the_transaction() {
        let mut s = Server::new();
        let mut a = ClientTx::default();
        run(&mut a, &mut s, &["MULTI"]);
        assert!(run(&mut a, &mut s, &["NOPE"]).is_error());
        assert_eq!(
            run(&mut a, &mut s, &["EXEC"]),
            Reply::error("EXECABORT Transaction discarded because of previous errors.")
        );
        assert_eq!(
            run(&mut a, &mut s, &["EXEC"]),
            Reply::error("ERR EXEC without MULTI")
        );
    }
}
