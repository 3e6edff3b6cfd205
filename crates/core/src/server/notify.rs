//! Keyspace notifications (Redis's `notify.c`): `notify-keyspace-events`, and
//! the one function every command calls when it changed a key.
//!
//! An event has a class (generic, string, list, ..., each a letter of the
//! configuration), a name (`set`, `lpush`, `expired`...), a key and a database.
//! When its class is on and `K` or `E` is, it is published as an ordinary
//! pub/sub message: on `__keyspace@<db>__:<key>` with the event name as the
//! message (`K`), then on `__keyevent@<db>__:<event>` with the key (`E`).
//!
//! Commands call [`Server::notify`] where Redis calls `notifyKeyspaceEvent`.
//! The events that Redis raises inside the database layer (`new` from
//! `dbAdd`, `expired` from a lazy or active expiry, `keymiss` from a read
//! lookup, the hash-field expiries) are recorded by the
//! [`crate::keyspace::Keyspace`] itself, which cannot publish; the server
//! publishes those first whenever a command notifies, and after every command,
//! so the order is Redis's. Unlike Redis, nothing is formatted when no client
//! listens to any channel.
//!
//! Left out: module notifications (`d` is accepted, nothing raises it),
//! evictions (`e`: the core does not evict), streams (`t`).

use super::{pubsub, Server, DATABASES};

pub const KEYSPACE: u32 = 1 << 0;
pub const KEYEVENT: u32 = 1 << 1;
pub const GENERIC: u32 = 1 << 2;
pub const STRING: u32 = 1 << 3;
pub const LIST: u32 = 1 << 4;
pub const SET: u32 = 1 << 5;
pub const HASH: u32 = 1 << 6;
pub const ZSET: u32 = 1 << 7;
pub const EXPIRED: u32 = 1 << 8;
pub const EVICTED: u32 = 1 << 9;
pub const STREAM: u32 = 1 << 10;
/// `m`: not part of `A`.
pub const KEY_MISS: u32 = 1 << 11;
pub const MODULE: u32 = 1 << 13;
/// `n`: not part of `A`.
pub const NEW: u32 = 1 << 14;
/// `o`: not part of `A`.
pub const OVERWRITTEN: u32 = 1 << 15;
/// `c`: not part of `A`.
pub const TYPE_CHANGED: u32 = 1 << 16;
/// `A`: every class but `m`, `n`, `o` and `c`.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// `keyspaceEventsStringToFlags`: `None` for a letter that names no class.
pub fn flags_from_str(classes: &str) -> Option<u32> {
    let mut flags = 0;
    for c in classes.bytes() {
        flags |= match c {
            b'A' => ALL,
            b'g' => GENERIC,
            b'$' => STRING,
            b'l' => LIST,
            b's' => SET,
            b'h' => HASH,
            b'z' => ZSET,
            b'x' => EXPIRED,
            b'e' => EVICTED,
            b'K' => KEYSPACE,
            b'E' => KEYEVENT,
            b't' => STREAM,
            b'm' => KEY_MISS,
            b'd' => MODULE,
            b'n' => NEW,
            b'o' => OVERWRITTEN,
            b'c' => TYPE_CHANGED,
            _ => return None,
        };
    }
    Some(flags)
}

/// `keyspaceEventsFlagsToString`: the canonical spelling CONFIG GET shows.
pub fn flags_to_string(flags: u32) -> String {
    let mut out = String::new();
    if flags & ALL == ALL {
        out.push('A');
    } else {
        for (flag, letter) in [
            (GENERIC, 'g'),
            (STRING, '$'),
            (LIST, 'l'),
            (SET, 's'),
            (HASH, 'h'),
            (ZSET, 'z'),
            (EXPIRED, 'x'),
            (EVICTED, 'e'),
            (STREAM, 't'),
            (MODULE, 'd'),
            (NEW, 'n'),
            (OVERWRITTEN, 'o'),
            (TYPE_CHANGED, 'c'),
        ] {
            if flags & flag != 0 {
                out.push(letter);
            }
        }
    }
    for (flag, letter) in [(KEYSPACE, 'K'), (KEYEVENT, 'E'), (KEY_MISS, 'm')] {
        if flags & flag != 0 {
            out.push(letter);
        }
    }
    out
}

/// The classes worth recording: none unless `K` or `E` says where to publish.
fn effective(flags: u32) -> u32 {
    if flags & (KEYSPACE | KEYEVENT) == 0 {
        0
    } else {
        flags
    }
}

impl Server {
    /// `notifyKeyspaceEvent(class, event, key, db)`: called by a command after
    /// it changed `key` in database `db`.
    pub(crate) fn notify(&mut self, class: u32, event: &'static str, key: &[u8], db: usize) {
        let mask = effective(self.config.notify_keyspace_events);
        if mask == 0 {
            return;
        }
        // What the databases raised before this point goes first.
        self.publish_key_events();
        if mask & class != 0 {
            self.publish_key_event(mask, event, key, db);
        }
    }

    /// [`Server::notify`] in the database the running command selected.
    pub(crate) fn notify_here(&mut self, class: u32, event: &'static str, key: &[u8]) {
        let db = self.current_db;
        self.notify(class, event, key, db);
    }

    /// Publishes the events the databases recorded (see the module docs).
    pub(crate) fn publish_key_events(&mut self) {
        let mask = effective(self.config.notify_keyspace_events);
        for db in 0..DATABASES {
            if !self.db(db).has_events() {
                continue;
            }
            let events = if db == self.current_db {
                self.keyspace.take_events()
            } else {
                self.dbs[db].take_events()
            };
            for (event, key) in events {
                self.publish_key_event(mask, event, &key, db);
            }
        }
    }

    fn publish_key_event(&mut self, mask: u32, event: &str, key: &[u8], db: usize) {
        if !self.pubsub.has_listeners() {
            return;
        }
        if mask & KEYSPACE != 0 {
            let mut channel = format!("__keyspace@{db}__:").into_bytes();
            channel.extend_from_slice(key);
            pubsub::publish_message(self, &channel, event.as_bytes());
        }
        if mask & KEYEVENT != 0 {
            let channel = format!("__keyevent@{db}__:{event}");
            pubsub::publish_message(self, channel.as_bytes(), key);
        }
    }

    /// Before a `setKey`: the type of the live value at `key` in the selected
    /// database, when `o` or `c` may need it (`None` otherwise, or if absent).
    pub(crate) fn overwrite_probe(&self, key: &[u8]) -> Option<&'static str> {
        if self.config.notify_keyspace_events & (OVERWRITTEN | TYPE_CHANGED) == 0 {
            return None;
        }
        if self.keyspace.is_expired(key, crate::keyspace::now_ms()) {
            return None;
        }
        self.keyspace.peek(key).map(|v| v.type_name())
    }

    /// `setKey` replaced a value of type `old` (from
    /// [`Server::overwrite_probe`]) at `key`: `overwritten`, and `type_changed`
    /// when the new value's type differs.
    pub(crate) fn notify_overwritten(&mut self, key: &[u8], old: Option<&'static str>) {
        let Some(old) = old else {
            return;
        };
        self.notify_here(OVERWRITTEN, "overwritten", key);
        let new = self.keyspace.peek(key).map(|v| v.type_name());
        if new != Some(old) {
            self.notify_here(TYPE_CHANGED, "type_changed", key);
        }
    }

    /// After CONFIG SET: every database records the classes now on.
    pub(crate) fn refresh_notify_mask(&mut self) {
        let mask = effective(self.config.notify_keyspace_events);
        self.keyspace.notify_mask = mask;
        for ks in &mut self.dbs {
            ks.notify_mask = mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_and_print_as_redis_does() {
        assert_eq!(flags_from_str("KEA"), Some(KEYSPACE | KEYEVENT | ALL));
        assert_eq!(flags_to_string(flags_from_str("KEA").unwrap()), "AKE");
        assert_eq!(flags_to_string(flags_from_str("Elgx").unwrap()), "glxE");
        assert_eq!(flags_to_string(flags_from_str("mnAK").unwrap()), "AKm");
        assert_eq!(flags_to_string(flags_from_str("oc$").unwrap()), "$oc");
        assert_eq!(flags_to_string(0), "");
        assert_eq!(flags_from_str("Q"), None);
        assert_eq!(flags_from_str(""), Some(0));
    }
}

#[cfg(test)]
mod delivery_tests {
    use crate::reply::{Protocol, Reply};
    use crate::server::{ConnectInfo, Server};

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    /// What a `PSUBSCRIBE __key*__:*` subscriber receives for `(channel, message)`s.
    fn pmessages(pairs: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (channel, message) in pairs {
            Reply::Push(vec![
                Reply::bulk("pmessage"),
                Reply::bulk("__key*__:*"),
                Reply::bulk(*channel),
                Reply::bulk(*message),
            ])
            .encode(&mut out, Protocol::Resp2);
        }
        out
    }

    #[test]
    fn events_reach_a_pattern_subscriber_in_redis_order() {
        let mut s = Server::new();
        let sub = s.connect(ConnectInfo::in_process());
        s.call(sub, &argv(&["PSUBSCRIBE", "__key*__:*"]));
        s.client_mut(sub).unwrap().take_pending();
        s.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        assert_eq!(
            s.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
            Reply::Map(vec![(
                Reply::bulk("notify-keyspace-events"),
                Reply::bulk("AKE")
            )])
        );
        s.cmd(&["LPUSH", "l", "a"]);
        s.cmd(&["SELECT", "2"]);
        s.cmd(&["SET", "k", "v", "EX", "100"]);
        s.cmd(&["MOVE", "k", "0"]);
        s.cmd(&["GET", "missing"]);
        let got = s.client_mut(sub).unwrap().take_pending();
        let want = pmessages(&[
            ("__keyspace@0__:l", "lpush"),
            ("__keyevent@0__:lpush", "l"),
            ("__keyspace@2__:k", "set"),
            ("__keyevent@2__:set", "k"),
            ("__keyspace@2__:k", "expire"),
            ("__keyevent@2__:expire", "k"),
            ("__keyspace@2__:k", "move_from"),
            ("__keyevent@2__:move_from", "k"),
            ("__keyspace@0__:k", "move_to"),
            ("__keyevent@0__:move_to", "k"),
        ]);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
        // `n` and `m` are not part of A.
        s.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Enm"]);
        s.cmd(&["SADD", "fresh", "x"]);
        // OBJECT looks up with LOOKUP_NONOTIFY: a miss but no keymiss event
        // (Redis 8.6.3 checked by hand; the core used to notify).
        s.cmd(&["OBJECT", "ENCODING", "nothing"]);
        s.cmd(&["OBJECT", "FREQ", "nothing"]);
        s.cmd(&["GET", "nothing"]);
        let got = s.client_mut(sub).unwrap().take_pending();
        let want = pmessages(&[
            ("__keyevent@2__:new", "fresh"),
            ("__keyevent@2__:keymiss", "nothing"),
        ]);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
    }

    #[test]
    fn a_resp3_client_gets_its_own_events_after_the_reply() {
        let mut s = Server::new();
        let c = s.connect(ConnectInfo::in_process());
        s.call(c, &argv(&["HELLO", "3"]));
        s.call(c, &argv(&["CONFIG", "SET", "notify-keyspace-events", "KA"]));
        s.call(c, &argv(&["SUBSCRIBE", "__keyspace@0__:x"]));
        s.client_mut(c).unwrap().take_pending();
        let mut out = Vec::new();
        s.call_into(c, &argv(&["INCR", "x"]), &mut out);
        let mut want = Vec::new();
        Reply::Integer(1).encode(&mut want, Protocol::Resp3);
        Reply::Push(vec![
            Reply::bulk("message"),
            Reply::bulk("__keyspace@0__:x"),
            Reply::bulk("incrby"),
        ])
        .encode(&mut want, Protocol::Resp3);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want)
        );
    }

    #[test]
    fn bad_flags_are_refused_with_redis_words() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KQ"]),
            Reply::error("ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
        );
    }
}
