//! Connection commands: PING, ECHO, SELECT, QUIT, RESET, HELLO, AUTH and the
//! CLIENT container (networking.c), plus the rows of the transaction and pub/sub
//! commands whose work lives in [`crate::server::multi`] and
//! [`crate::server::pubsub`].
//!
//! HELLO switches a client between RESP2 and RESP3; the reply is a map, so a
//! RESP3 client sees `%7` and a RESP2 client a flat array of 14 items, as on
//! Redis. There are no users or passwords: AUTH answers Redis's error for a
//! server without a password, and HELLO's AUTH option accepts only the default
//! user with any password, like a Redis whose default user has `nopass`.

use super::{flags::*, Args, CmdResult, CommandSpec, Group, Server};
use crate::reply::{errors, ErrorText, Protocol, Reply};
use crate::server::client::{Client, ClientKind, ReplyMode};
use crate::server::{multi, pubsub, DATABASES};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::client("ping", -1, pubsub::ping)
        .flags(FAST | OK_SUBSCRIBED)
        .doc("1.0.0", "Returns PONG, or the given message.", "[message]"),
    CommandSpec::new("echo", 2, echo)
        .flags(LOADING | STALE | FAST)
        .doc("1.0.0", "Returns the given string.", "message"),
    CommandSpec::client("select", 2, select)
        .flags(LOADING | STALE | FAST)
        .doc("1.0.0", "Changes the selected database.", "index"),
    CommandSpec::client("quit", -1, quit)
        .flags(
            ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | OK_SUBSCRIBED | TX_CONTROL,
        )
        .doc("1.0.0", "Closes the connection.", ""),
    CommandSpec::client("reset", 1, reset)
        .flags(
            NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | OK_SUBSCRIBED | TX_CONTROL,
        )
        .doc("6.2.0", "Resets the connection.", ""),
    CommandSpec::client("hello", -1, hello)
        .flags(NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY)
        .doc(
            "6.0.0",
            "Handshakes with the server, optionally choosing RESP2 or RESP3.",
            "[protover [AUTH username password] [SETNAME clientname]]",
        ),
    CommandSpec::new("auth", -2, auth)
        .flags(NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY)
        .doc(
            "1.0.0",
            "Authenticates the connection.",
            "[username] password",
        ),
    CommandSpec::container("client", CLIENT_SUBCOMMANDS).doc(
        "2.4.0",
        "A container for client connection commands.",
        "",
    ),
    CommandSpec::client("multi", 1, multi::multi)
        .flags(NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | TX_CONTROL)
        .group(Group::Transactions)
        .doc("1.2.0", "Starts a transaction.", ""),
    CommandSpec::client("exec", 1, multi::exec)
        .flags(NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG | TX_CONTROL)
        .group(Group::Transactions)
        .doc("1.2.0", "Executes all commands in a transaction.", ""),
    CommandSpec::client("discard", 1, multi::discard)
        .flags(NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | TX_CONTROL)
        .group(Group::Transactions)
        .doc("2.0.0", "Discards a transaction.", ""),
    CommandSpec::client("watch", -2, multi::watch)
        .flags(NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | TX_CONTROL)
        .keys(1, -1, 1)
        .group(Group::Transactions)
        .doc(
            "2.2.0",
            "Watches keys to decide whether a transaction runs.",
            "key [key ...]",
        ),
    CommandSpec::client("unwatch", 1, multi::unwatch)
        .flags(NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY)
        .group(Group::Transactions)
        .doc("2.2.0", "Forgets every watched key.", ""),
    CommandSpec::client("subscribe", -2, pubsub::subscribe)
        .flags(PUBSUB | NOSCRIPT | LOADING | STALE | DENYOOM | OK_SUBSCRIBED)
        .group(Group::PubSub)
        .doc(
            "2.0.0",
            "Listens for messages on channels.",
            "channel [channel ...]",
        ),
    CommandSpec::client("unsubscribe", -1, pubsub::unsubscribe)
        .flags(PUBSUB | NOSCRIPT | LOADING | STALE | OK_SUBSCRIBED)
        .group(Group::PubSub)
        .doc(
            "2.0.0",
            "Stops listening on channels.",
            "[channel [channel ...]]",
        ),
    CommandSpec::client("psubscribe", -2, pubsub::psubscribe)
        .flags(PUBSUB | NOSCRIPT | LOADING | STALE | DENYOOM | OK_SUBSCRIBED)
        .group(Group::PubSub)
        .doc(
            "2.0.0",
            "Listens for messages on channels matching patterns.",
            "pattern [pattern ...]",
        ),
    CommandSpec::client("punsubscribe", -1, pubsub::punsubscribe)
        .flags(PUBSUB | NOSCRIPT | LOADING | STALE | OK_SUBSCRIBED)
        .group(Group::PubSub)
        .doc(
            "2.0.0",
            "Stops listening on patterns.",
            "[pattern [pattern ...]]",
        ),
    CommandSpec::client("ssubscribe", -2, pubsub::ssubscribe)
        .flags(PUBSUB | NOSCRIPT | LOADING | STALE | DENYOOM | OK_SUBSCRIBED)
        .keys(1, -1, 1)
        .group(Group::PubSub)
        .doc(
            "7.0.0",
            "Listens for messages on shard channels.",
            "shardchannel [shardchannel ...]",
        ),
    CommandSpec::client("sunsubscribe", -1, pubsub::sunsubscribe)
        .flags(PUBSUB | NOSCRIPT | LOADING | STALE | OK_SUBSCRIBED)
        .keys(1, -1, 1)
        .group(Group::PubSub)
        .doc(
            "7.0.0",
            "Stops listening on shard channels.",
            "[shardchannel [shardchannel ...]]",
        ),
    CommandSpec::new("publish", 3, pubsub::publish)
        // MAY_REPLICATE (hidden from COMMAND INFO): read-only scripts refuse it.
        .flags(PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE)
        .group(Group::PubSub)
        .doc("2.0.0", "Posts a message to a channel.", "channel message"),
    CommandSpec::new("spublish", 3, pubsub::spublish)
        .flags(PUBSUB | LOADING | STALE | FAST | MAY_REPLICATE)
        .keys(1, 1, 1)
        .group(Group::PubSub)
        .doc(
            "7.0.0",
            "Posts a message to a shard channel.",
            "shardchannel message",
        ),
    CommandSpec::container("pubsub", PUBSUB_SUBCOMMANDS)
        .group(Group::PubSub)
        .doc(
            "2.8.0",
            "A container for pub/sub introspection commands.",
            "",
        ),
    CommandSpec::client("monitor", 1, pubsub::monitor)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .group(Group::Server)
        .doc("1.0.0", "Streams every command the server runs.", ""),
];

const PUBSUB_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("channels", -2, pubsub::pubsub_channels)
        .flags(PUBSUB | LOADING | STALE)
        .group(Group::PubSub)
        .doc("2.8.0", "Lists the active channels.", "[pattern]"),
    CommandSpec::new("numsub", -2, pubsub::pubsub_numsub)
        .flags(PUBSUB | LOADING | STALE)
        .group(Group::PubSub)
        .doc(
            "2.8.0",
            "Counts the subscribers of channels.",
            "[channel [channel ...]]",
        ),
    CommandSpec::new("numpat", 2, pubsub::pubsub_numpat)
        .flags(PUBSUB | LOADING | STALE)
        .group(Group::PubSub)
        .doc("2.8.0", "Counts the pattern subscriptions.", ""),
    CommandSpec::new("shardchannels", -2, pubsub::pubsub_shardchannels)
        .flags(PUBSUB | LOADING | STALE)
        .group(Group::PubSub)
        .doc("7.0.0", "Lists the active shard channels.", "[pattern]"),
    CommandSpec::new("shardnumsub", -2, pubsub::pubsub_shardnumsub)
        .flags(PUBSUB | LOADING | STALE)
        .group(Group::PubSub)
        .doc(
            "7.0.0",
            "Counts the subscribers of shard channels.",
            "[shardchannel [shardchannel ...]]",
        ),
];

const CLIENT_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::client("id", 2, client_id)
        .flags(NOSCRIPT | LOADING | STALE)
        .doc("5.0.0", "Returns the connection's id.", ""),
    CommandSpec::client("setname", 3, client_setname)
        .flags(NOSCRIPT | LOADING | STALE)
        .doc("2.6.9", "Sets the connection's name.", "connection-name"),
    CommandSpec::client("getname", 2, client_getname)
        .flags(NOSCRIPT | LOADING | STALE)
        .doc("2.6.9", "Returns the connection's name.", ""),
    CommandSpec::client("setinfo", 4, client_setinfo)
        .flags(NOSCRIPT | LOADING | STALE)
        .doc("7.2.0", "Sets the connection's library name or version.", "<LIB-NAME libname | LIB-VER libver>"),
    CommandSpec::client("list", -2, client_list)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc("2.4.0", "Lists open connections.", "[TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]"),
    CommandSpec::client("info", 2, client_info)
        .flags(NOSCRIPT | LOADING | STALE)
        .doc("6.2.0", "Returns information about the connection.", ""),
    CommandSpec::client("kill", -3, client_kill)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc("2.4.0", "Terminates open connections.", "<ip:port | <[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME <YES | NO>]> [[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME <YES | NO>] ...]>"),
    CommandSpec::client("reply", 3, client_reply)
        .flags(NOSCRIPT | LOADING | STALE)
        .doc("3.2.0", "Instructs the server whether to reply to commands.", "<ON | OFF | SKIP>"),
    CommandSpec::client("no-evict", 3, client_no_evict)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc("7.0.0", "Sets the client eviction mode of the connection.", "<ON | OFF>"),
    CommandSpec::client("no-touch", 3, client_no_touch)
        .flags(NOSCRIPT | LOADING | STALE)
        .doc("7.2.0", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "<ON | OFF>"),
    CommandSpec::client("unblock", -3, client_unblock)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc("5.0.0", "Unblocks a client blocked by a blocking command from a different connection.", "client-id [TIMEOUT | ERROR]"),
    CommandSpec::new("help", 2, client_help)
        .flags(LOADING | STALE)
        .doc("5.0.0", "Returns helpful text about the different subcommands.", ""),
];

pub fn echo(_: &mut Server, a: &Args) -> CmdResult {
    Ok(Reply::bulk(a.bytes(1)))
}

pub fn select(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let db = super::keys::int32_arg(a, 1, None)?;
    if db < 0 || db >= DATABASES as i64 {
        return Err(Reply::error("ERR DB index is out of range"));
    }
    c.db = db as usize;
    s.switch_db(c.db);
    Ok(Reply::ok())
}

pub fn quit(_: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    c.close_requested = true;
    Ok(Reply::ok())
}

/// RESET: back to a fresh connection's state (`clearClientConnectionState`).
pub fn reset(s: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    if c.monitor {
        c.monitor = false;
        s.pubsub.monitors.retain(|&id| id != c.id);
    }
    c.db = 0;
    c.protocol = Protocol::Resp2;
    c.multi = None;
    multi::unwatch_all(s, c);
    s.pubsub.forget(c);
    c.channels.clear();
    c.patterns.clear();
    c.shard_channels.clear();
    c.name = None;
    c.reply_mode = ReplyMode::On;
    c.no_evict = false;
    c.no_touch = false;
    Ok(Reply::Status("RESET".into()))
}

/// `validateClientAttr`: printable ASCII without spaces.
fn valid_attr(value: &[u8]) -> bool {
    value.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

pub fn hello(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let mut protocol = None;
    let mut next = 1;
    if a.len() >= 2 {
        let ver = a
            .int(1)
            .map_err(|_| Reply::error("ERR Protocol version is not an integer or out of range"))?;
        if !(2..=3).contains(&ver) {
            return Err(Reply::error("NOPROTO unsupported protocol version"));
        }
        protocol = Some(if ver == 3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        });
        next = 2;
    }
    let mut name = None;
    let mut j = next;
    while j < a.len() {
        let more = a.len() - 1 - j;
        if a.is(j, "auth") && more >= 2 {
            if a.bytes(j + 1) != b"default" {
                return Err(Reply::error(
                    "WRONGPASS invalid username-password pair or user is disabled.",
                ));
            }
            j += 3;
        } else if a.is(j, "setname") && more >= 1 {
            let n = a.bytes(j + 1);
            if !valid_attr(n) {
                return Err(Reply::error(
                    "ERR Client names cannot contain spaces, newlines or special characters.",
                ));
            }
            name = Some(n);
            j += 2;
        } else {
            let opt = String::from_utf8_lossy(a.bytes(j)).into_owned();
            return Err(Reply::error(format!(
                "ERR Syntax error in HELLO option '{opt}'"
            )));
        }
    }
    if let Some(n) = name {
        c.name = (!n.is_empty()).then(|| String::from_utf8_lossy(n).into_owned());
    }
    if let Some(p) = protocol {
        c.protocol = p;
    }
    let _ = s;
    Ok(Reply::Map(vec![
        (Reply::bulk("server"), Reply::bulk("redis")),
        (
            Reply::bulk("version"),
            Reply::bulk(crate::server::REDIS_VERSION),
        ),
        (Reply::bulk("proto"), Reply::Integer(c.protocol.number())),
        (Reply::bulk("id"), Reply::Integer(c.id as i64)),
        (Reply::bulk("mode"), Reply::bulk("standalone")),
        (Reply::bulk("role"), Reply::bulk("master")),
        (Reply::bulk("modules"), Reply::Array(Vec::new())),
    ]))
}

pub fn auth(_: &mut Server, a: &Args) -> CmdResult {
    if a.len() > 3 {
        return Err(Reply::error(errors::SYNTAX));
    }
    if a.len() == 2 {
        return Err(Reply::error(
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
        ));
    }
    if a.bytes(1) == b"default" {
        return Ok(Reply::ok());
    }
    Err(Reply::error(
        "WRONGPASS invalid username-password pair or user is disabled.",
    ))
}

fn client_id(_: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    Ok(Reply::Integer(c.id as i64))
}

fn client_setname(_: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let n = a.bytes(2);
    if !valid_attr(n) {
        return Err(Reply::error(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    c.name = (!n.is_empty()).then(|| String::from_utf8_lossy(n).into_owned());
    Ok(Reply::ok())
}

fn client_getname(_: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    Ok(c.name.as_ref().map_or(Reply::Nil, Reply::bulk))
}

fn client_setinfo(_: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let value = a.bytes(3);
    let attr = String::from_utf8_lossy(a.bytes(2)).into_owned();
    let lib_name = a.is(2, "lib-name");
    if !lib_name && !a.is(2, "lib-ver") {
        let text = ErrorText::naming("ERR Unrecognized option '", a.bytes(2), "'");
        return Err(Reply::Error(text));
    }
    if !valid_attr(value) {
        return Err(Reply::error(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            attr.to_ascii_lowercase()
        )));
    }
    let v = (!value.is_empty()).then(|| String::from_utf8_lossy(value).into_owned());
    if lib_name {
        c.lib_name = v;
    } else {
        c.lib_ver = v;
    }
    Ok(Reply::ok())
}

/// One line of CLIENT LIST / CLIENT INFO, with Redis's fields in Redis's order.
fn client_line(s: &Server, c: &Client) -> String {
    let mut flags = String::new();
    if c.monitor {
        flags.push('O');
    }
    if c.in_pubsub_mode() {
        flags.push('P');
    }
    if c.multi.is_some() {
        flags.push('x');
    }
    if multi::watch_dirty(s, c) {
        flags.push('d');
    }
    if c.close_requested {
        flags.push('c');
    }
    if c.no_evict {
        flags.push('e');
    }
    if c.no_touch {
        flags.push('T');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let now = std::time::Instant::now();
    format!(
        "id={} addr={} laddr={} fd=8 name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} watch={} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem=1024 events=r cmd={} user=default redir=-1 resp={} lib-name={} lib-ver={} io-thread=0 tot-net-in=0 tot-net-out=0 tot-cmds=0",
        c.id,
        c.addr,
        c.laddr,
        c.name.as_deref().unwrap_or(""),
        now.duration_since(c.created).as_secs(),
        c.last_interaction.elapsed_secs(),
        flags,
        c.db,
        c.channels.len(),
        c.patterns.len(),
        c.shard_channels.len(),
        c.multi.as_ref().map_or(-1, |m| m.queued.len() as i64),
        multi::watch_count(s, c),
        c.last_command,
        c.protocol.number(),
        c.lib_name.as_deref().unwrap_or(""),
        c.lib_ver.as_deref().unwrap_or(""),
    )
}

fn client_list(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let mut ids: Option<Vec<u64>> = None;
    let mut kind: Option<String> = None;
    let mut j = 2;
    while j < a.len() {
        if a.is(j, "type") && j + 1 < a.len() {
            let t = String::from_utf8_lossy(a.bytes(j + 1)).to_ascii_lowercase();
            if !["normal", "master", "replica", "slave", "pubsub"].contains(&t.as_str()) {
                return Err(Reply::error(format!(
                    "ERR Unknown client type '{}'",
                    String::from_utf8_lossy(a.bytes(j + 1))
                )));
            }
            kind = Some(t);
            j += 2;
        } else if a.is(j, "id") && j + 1 < a.len() {
            let mut list = Vec::new();
            j += 1;
            while j < a.len() {
                let id = a
                    .int(j)
                    .ok()
                    .filter(|&v| v > 0)
                    .ok_or_else(|| Reply::error("ERR Invalid client ID"))?;
                list.push(id as u64);
                j += 1;
            }
            ids = Some(list);
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
    }
    let mut lines: Vec<(u64, String)> = s
        .other_clients()
        .chain(std::iter::once(&*c))
        .filter(|x| x.kind == ClientKind::Connection || x.id == c.id)
        .filter(|x| ids.as_ref().is_none_or(|l| l.contains(&x.id)))
        .filter(|x| match kind.as_deref() {
            None => true,
            Some("pubsub") => x.in_pubsub_mode(),
            Some("normal") => !x.in_pubsub_mode(),
            _ => false,
        })
        .map(|x| (x.id, client_line(s, x)))
        .collect();
    lines.sort();
    let mut text = String::new();
    for (_, l) in lines {
        text.push_str(&l);
        text.push('\n');
    }
    Ok(Reply::Verbatim(text))
}

fn client_info(s: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    Ok(Reply::Verbatim(format!("{}\n", client_line(s, c))))
}

/// CLIENT KILL ip:port, or the filter form (ID, ADDR, LADDR, TYPE, SKIPME).
fn client_kill(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let old_style = a.len() == 3;
    let (mut id, mut addr, mut laddr, mut kind) = (None, None, None, None);
    let mut skipme = true;
    if old_style {
        addr = Some(String::from_utf8_lossy(a.bytes(2)).into_owned());
        skipme = false;
    } else {
        let mut j = 2;
        while j < a.len() {
            if j + 1 >= a.len() {
                return Err(Reply::error(errors::SYNTAX));
            }
            let v = String::from_utf8_lossy(a.bytes(j + 1)).into_owned();
            match () {
                _ if a.is(j, "id") => {
                    let n =
                        a.int(j + 1).ok().filter(|&n| n > 0).ok_or_else(|| {
                            Reply::error("ERR client-id should be greater than 0")
                        })?;
                    id = Some(n as u64);
                }
                _ if a.is(j, "addr") => addr = Some(v),
                _ if a.is(j, "laddr") => laddr = Some(v),
                _ if a.is(j, "type") => {
                    let t = v.to_ascii_lowercase();
                    if !["normal", "master", "replica", "slave", "pubsub"].contains(&t.as_str()) {
                        return Err(Reply::error(format!("ERR Unknown client type '{v}'")));
                    }
                    kind = Some(t);
                }
                _ if a.is(j, "skipme") => {
                    skipme = match v.to_ascii_lowercase().as_str() {
                        "yes" => true,
                        "no" => false,
                        _ => return Err(Reply::error(errors::SYNTAX)),
                    }
                }
                _ if a.is(j, "user") => {
                    if v != "default" {
                        return Err(Reply::error(format!("ERR No such user '{v}'")));
                    }
                }
                _ => return Err(Reply::error(errors::SYNTAX)),
            }
            j += 2;
        }
    }
    let matches = |x: &Client| {
        id.is_none_or(|i| x.id == i)
            && addr.as_ref().is_none_or(|a| &x.addr == a)
            && laddr.as_ref().is_none_or(|a| &x.laddr == a)
            && kind.as_deref().is_none_or(|k| match k {
                "pubsub" => x.in_pubsub_mode(),
                "normal" => !x.in_pubsub_mode(),
                _ => false,
            })
    };
    let victims: Vec<u64> = s
        .other_clients()
        .filter(|x| x.kind == ClientKind::Connection && matches(x))
        .map(|x| x.id)
        .collect();
    let mut killed = victims.len();
    for v in victims {
        s.close_client(v);
    }
    if !skipme && matches(c) {
        c.close_requested = true;
        killed += 1;
    }
    if old_style {
        return if killed == 0 {
            Err(Reply::error("ERR No such client"))
        } else {
            Ok(Reply::ok())
        };
    }
    Ok(Reply::Integer(killed as i64))
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if that client was blocked; the
/// transport then answers its blocked command as a timeout (null) or with the
/// UNBLOCKED error.
fn client_unblock(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let id = a.int(2)?;
    let error = match a.len() {
        3 => false,
        4 if a.is(3, "timeout") => false,
        4 if a.is(3, "error") => true,
        4 => {
            return Err(Reply::error(
                "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR",
            ))
        }
        _ => return Err(Reply::error(errors::SYNTAX)),
    };
    let blocked = id != c.id as i64
        && s.client(id as u64)
            .is_some_and(|t| t.blocked && t.kind == ClientKind::Connection);
    if blocked {
        s.request_unblock(id as u64, error);
    }
    Ok(Reply::Integer(blocked as i64))
}

fn client_reply(_: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    match () {
        _ if a.is(2, "on") => {
            c.reply_mode = ReplyMode::On;
            Ok(Reply::ok())
        }
        _ if a.is(2, "off") => {
            c.reply_mode = ReplyMode::Off;
            Ok(Reply::ok())
        }
        _ if a.is(2, "skip") => {
            if c.reply_mode != ReplyMode::Off {
                c.reply_mode = ReplyMode::SkipNext;
            }
            Ok(Reply::ok())
        }
        _ => Err(Reply::error(errors::SYNTAX)),
    }
}

fn on_off(a: &Args, i: usize) -> Result<bool, Reply> {
    if a.is(i, "on") {
        Ok(true)
    } else if a.is(i, "off") {
        Ok(false)
    } else {
        Err(Reply::error(errors::SYNTAX))
    }
}

fn client_no_evict(_: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    c.no_evict = on_off(a, 2)?;
    Ok(Reply::ok())
}

fn client_no_touch(_: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    c.no_touch = on_off(a, 2)?;
    Ok(Reply::ok())
}

fn client_help(_: &mut Server, _: &Args) -> CmdResult {
    let lines = [
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "LIST [options ...]",
        "    Return information about client connections.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Will not touch LRU/LFU stats when this mode is on.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are:",
        "    * LIB-NAME: the client lib name.",
        "    * LIB-VER: the client lib version.",
        "HELP",
        "    Print this help.",
    ];
    Ok(Reply::Array(
        lines.iter().map(|l| Reply::Status((*l).into())).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use crate::reply::Protocol;
    use crate::server::ConnectInfo;
    use crate::{Reply, Server};

    fn argv(w: &[&str]) -> Vec<Vec<u8>> {
        w.iter().map(|x| x.as_bytes().to_vec()).collect()
    }

    #[test]
    fn hello_switches_protocols_and_answers_a_map() {
        let mut s = Server::new();
        let c = s.connect(ConnectInfo::in_process());
        let reply = s.call(c, &argv(&["HELLO", "3", "SETNAME", "teacher"]));
        let Reply::Map(pairs) = reply else {
            panic!("{reply:?}")
        };
        assert_eq!(pairs[2], (Reply::bulk("proto"), Reply::Integer(3)));
        assert_eq!(s.client(c).unwrap().protocol, Protocol::Resp3);
        assert_eq!(
            s.call(c, &argv(&["CLIENT", "GETNAME"])),
            Reply::bulk("teacher")
        );
        assert_eq!(
            s.call(c, &argv(&["HELLO", "4"])),
            Reply::error("NOPROTO unsupported protocol version")
        );
        assert_eq!(
            s.call(c, &argv(&["HELLO", "3", "FOO"])),
            Reply::error("ERR Syntax error in HELLO option 'FOO'")
        );
    }

    #[test]
    fn select_checks_its_index() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["SELECT", "16"]),
            Reply::error("ERR DB index is out of range")
        );
        // Redis 8.6.3 (getIntFromObjectOrReply) says this, not "invalid DB index".
        assert_eq!(
            s.cmd(&["SELECT", "x"]),
            Reply::error("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.cmd(&["SELECT", "4294967296"]),
            Reply::error(
                "ERR value is out of range, value must between -2147483648 and 2147483647"
            )
        );
        assert_eq!(s.cmd(&["SELECT", "15"]), Reply::ok());
        s.cmd(&["SELECT", "0"]);
    }

    #[test]
    fn subscribed_mode_allows_only_the_subscription_commands() {
        let mut s = Server::new();
        let c = s.connect(ConnectInfo::in_process());
        s.call(c, &argv(&["SUBSCRIBE", "a", "b"]));
        assert_eq!(
            s.call(c, &argv(&["GET", "k"])),
            Reply::error("ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
        );
        assert_eq!(
            s.call(c, &argv(&["PING"])),
            Reply::Array(vec![Reply::bulk("pong"), Reply::bulk("")])
        );
        assert_eq!(s.call(c, &argv(&["RESET"])), Reply::Status("RESET".into()));
        assert_eq!(s.call(c, &argv(&["GET", "k"])), Reply::Nil);
    }
}
