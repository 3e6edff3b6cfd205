//! Pub/sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, their UNSUBSCRIBEs, PUBLISH,
//! SPUBLISH and PUBSUB, with Redis's frames in RESP2 (arrays) and RESP3 (push
//! frames); and the MONITOR list.
//!
//! A subscription belongs to a client; the server keeps the reverse index
//! (channel → subscribers in subscription order, and the list of patterns) so
//! PUBLISH finds its receivers. A message for another client is encoded into that
//! client's pending output, which the transport sends when it can; a client that
//! lets it grow past its output-buffer limit is disconnected by the transport,
//! as Redis does with `client-output-buffer-limit pubsub`. A message for the
//! client whose command is running (a RESP3 client publishing to itself, or
//! receiving a keyspace notification of its own write) goes after that
//! command's reply, as Redis's `server.pending_push_messages` does.
//!
//! Sharded pub/sub is standalone Redis's: one set of shard channels (a cluster
//! keeps one per slot), with its own subscription count in the frames
//! (`ssubscribe`, `sunsubscribe`, `smessage`); a shard channel is never matched
//! by a pattern. Keyspace notifications ([`super::notify`]) are published here
//! as ordinary messages.

use std::collections::HashMap;

use super::client::{Client, ClientId};
use super::table::CmdResult;
use super::Server;
use crate::commands::Args;
use crate::glob::glob_match;
use crate::reply::{Protocol, Reply};

#[derive(Default)]
pub struct PubSub {
    /// Channel → subscribed clients, in subscription order.
    channels: HashMap<Vec<u8>, Vec<ClientId>>,
    /// (pattern, client), in subscription order.
    patterns: Vec<(Vec<u8>, ClientId)>,
    /// Shard channel → subscribed clients (SSUBSCRIBE).
    shard_channels: HashMap<Vec<u8>, Vec<ClientId>>,
    /// Clients in MONITOR mode.
    pub(crate) monitors: Vec<ClientId>,
}

fn unlist(map: &mut HashMap<Vec<u8>, Vec<ClientId>>, channel: &[u8], id: ClientId) {
    if let Some(list) = map.get_mut(channel) {
        list.retain(|&c| c != id);
        if list.is_empty() {
            map.remove(channel);
        }
    }
}

impl PubSub {
    /// The client is gone (or RESET): every subscription of it.
    pub fn forget(&mut self, client: &Client) {
        for ch in &client.channels {
            unlist(&mut self.channels, ch, client.id);
        }
        for ch in &client.shard_channels {
            unlist(&mut self.shard_channels, ch, client.id);
        }
        if !client.patterns.is_empty() {
            self.patterns.retain(|(_, c)| *c != client.id);
        }
        self.monitors.retain(|&c| c != client.id);
    }

    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// Distinct patterns (Redis's `pubsub_patterns` dict), for INFO and NUMPAT.
    pub fn pattern_count(&self) -> usize {
        let mut seen: Vec<&Vec<u8>> = self.patterns.iter().map(|(p, _)| p).collect();
        seen.sort();
        seen.dedup();
        seen.len()
    }

    /// INFO's `pubsubshard_channels`.
    pub fn shard_channel_count(&self) -> usize {
        self.shard_channels.len()
    }

    /// Whether anyone listens to ordinary channels at all (keyspace
    /// notifications are not even formatted otherwise).
    pub(crate) fn has_listeners(&self) -> bool {
        !self.channels.is_empty() || !self.patterns.is_empty()
    }
}

fn frame(kind: &str, name: Option<&[u8]>, count: usize) -> Reply {
    let name = name.map_or(Reply::Nil, Reply::bulk);
    Reply::Push(vec![Reply::bulk(kind), name, Reply::Integer(count as i64)])
}

/// The frames of a (P|S)(UN)SUBSCRIBE go out as separate replies: all but the
/// last are pushed ahead of it into the client's own output.
fn answer(c: &mut Client, mut frames: Vec<Reply>) -> CmdResult {
    let last = frames.pop().unwrap_or(Reply::Nil);
    for f in &frames {
        c.push(f);
    }
    Ok(last)
}

/// Inside EXEC a client may not start listening to shard channels (Redis's
/// `CLIENT_DENY_BLOCKING`; SUBSCRIBE and PSUBSCRIBE are let through in MULTI for
/// backward compatibility, and scripts may run none of them).
fn deny_blocking(s: &Server, name: &str) -> Result<(), Reply> {
    if s.nesting > 0 {
        return Err(Reply::error(format!(
            "ERR {name} isn't allowed for a DENY BLOCKING client"
        )));
    }
    Ok(())
}

pub fn subscribe(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let mut frames = Vec::new();
    for i in 1..a.len() {
        let ch = a.bytes(i);
        if c.channels.insert(ch.to_vec()) {
            s.pubsub.channels.entry(ch.to_vec()).or_default().push(c.id);
        }
        frames.push(frame("subscribe", Some(ch), c.subscriptions()));
    }
    answer(c, frames)
}

pub fn psubscribe(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let mut frames = Vec::new();
    for i in 1..a.len() {
        let p = a.bytes(i);
        if c.patterns.insert(p.to_vec()) {
            s.pubsub.patterns.push((p.to_vec(), c.id));
        }
        frames.push(frame("psubscribe", Some(p), c.subscriptions()));
    }
    answer(c, frames)
}

/// SSUBSCRIBE shardchannel [shardchannel ...]
pub fn ssubscribe(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    deny_blocking(s, "SSUBSCRIBE")?;
    let mut frames = Vec::new();
    for i in 1..a.len() {
        let ch = a.bytes(i);
        if c.shard_channels.insert(ch.to_vec()) {
            s.pubsub
                .shard_channels
                .entry(ch.to_vec())
                .or_default()
                .push(c.id);
        }
        frames.push(frame("ssubscribe", Some(ch), c.shard_channels.len()));
    }
    answer(c, frames)
}

/// The names an UNSUBSCRIBE works on: its arguments, or every subscription.
fn names_of(a: &Args, all: &std::collections::BTreeSet<Vec<u8>>) -> Vec<Vec<u8>> {
    if a.len() > 1 {
        (1..a.len()).map(|i| a.bytes(i).to_vec()).collect()
    } else {
        all.iter().cloned().collect()
    }
}

pub fn unsubscribe(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let names = names_of(a, &c.channels);
    if names.is_empty() {
        return Ok(frame("unsubscribe", None, c.subscriptions()));
    }
    let mut frames = Vec::new();
    for ch in names {
        if c.channels.remove(&ch) {
            unlist(&mut s.pubsub.channels, &ch, c.id);
        }
        frames.push(frame("unsubscribe", Some(&ch), c.subscriptions()));
    }
    answer(c, frames)
}

pub fn punsubscribe(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let names = names_of(a, &c.patterns);
    if names.is_empty() {
        return Ok(frame("punsubscribe", None, c.subscriptions()));
    }
    let mut frames = Vec::new();
    for p in names {
        if c.patterns.remove(&p) {
            s.pubsub
                .patterns
                .retain(|(q, id)| !(*q == p && *id == c.id));
        }
        frames.push(frame("punsubscribe", Some(&p), c.subscriptions()));
    }
    answer(c, frames)
}

/// SUNSUBSCRIBE [shardchannel ...]
pub fn sunsubscribe(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let names = names_of(a, &c.shard_channels);
    if names.is_empty() {
        return Ok(frame("sunsubscribe", None, c.shard_channels.len()));
    }
    let mut frames = Vec::new();
    for ch in names {
        if c.shard_channels.remove(&ch) {
            unlist(&mut s.pubsub.shard_channels, &ch, c.id);
        }
        frames.push(frame("sunsubscribe", Some(&ch), c.shard_channels.len()));
    }
    answer(c, frames)
}

/// PUBLISH channel message
pub fn publish(s: &mut Server, a: &Args) -> CmdResult {
    let receivers = publish_message(s, a.bytes(1), a.bytes(2));
    s.stats.pubsub_messages += 1;
    Ok(Reply::Integer(receivers))
}

/// SPUBLISH shardchannel message
pub fn spublish(s: &mut Server, a: &Args) -> CmdResult {
    let (channel, message) = (a.bytes(1), a.bytes(2));
    let msg = Reply::Push(vec![
        Reply::bulk("smessage"),
        Reply::bulk(channel),
        Reply::bulk(message),
    ]);
    let mut receivers = 0;
    let subscribers = s
        .pubsub
        .shard_channels
        .get(channel)
        .cloned()
        .unwrap_or_default();
    for id in subscribers {
        receivers += s.deliver(id, &msg) as i64;
    }
    s.stats.pubsub_messages += 1;
    Ok(Reply::Integer(receivers))
}

/// `pubsubPublishMessage`: delivers to channel subscribers, then pattern
/// subscribers; returns how many received it (a client matching twice counts
/// twice, as in Redis).
pub(crate) fn publish_message(s: &mut Server, channel: &[u8], message: &[u8]) -> i64 {
    let mut receivers = 0;
    if let Some(subscribers) = s.pubsub.channels.get(channel).cloned() {
        let msg = Reply::Push(vec![
            Reply::bulk("message"),
            Reply::bulk(channel),
            Reply::bulk(message),
        ]);
        for id in subscribers {
            receivers += s.deliver(id, &msg) as i64;
        }
    }
    if s.pubsub.patterns.is_empty() {
        return receivers;
    }
    let matching: Vec<(Vec<u8>, ClientId)> = s
        .pubsub
        .patterns
        .iter()
        .filter(|(p, _)| glob_match(p, channel))
        .cloned()
        .collect();
    for (pattern, id) in matching {
        let msg = Reply::Push(vec![
            Reply::bulk("pmessage"),
            Reply::bulk(pattern),
            Reply::bulk(channel),
            Reply::bulk(message),
        ]);
        receivers += s.deliver(id, &msg) as i64;
    }
    receivers
}

/// PING: in subscribed mode over RESP2, Redis answers `["pong", payload]`.
pub fn ping(_: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    if a.len() > 2 {
        return Err(Reply::error(crate::reply::errors::arity("ping")));
    }
    if c.in_pubsub_mode() && c.protocol == Protocol::Resp2 {
        let payload = if a.len() == 2 {
            Reply::bulk(a.bytes(1))
        } else {
            Reply::bulk("")
        };
        return Ok(Reply::Array(vec![Reply::bulk("pong"), payload]));
    }
    Ok(if a.len() == 2 {
        Reply::bulk(a.bytes(1))
    } else {
        Reply::Status("PONG".into())
    })
}

/// PUBSUB CHANNELS [pattern]
pub fn pubsub_channels(s: &mut Server, a: &Args) -> CmdResult {
    let mut names: Vec<&Vec<u8>> = s
        .pubsub
        .channels
        .keys()
        .filter(|ch| a.len() < 3 || glob_match(a.bytes(2), ch))
        .collect();
    names.sort();
    Ok(Reply::Array(names.into_iter().map(Reply::bulk).collect()))
}

/// PUBSUB NUMSUB [channel ...]
pub fn pubsub_numsub(s: &mut Server, a: &Args) -> CmdResult {
    let pairs = (2..a.len())
        .flat_map(|i| {
            let n = s.pubsub.channels.get(a.bytes(i)).map_or(0, |l| l.len());
            [Reply::bulk(a.bytes(i)), Reply::Integer(n as i64)]
        })
        .collect();
    // An array of pairs in RESP3 too (`addReplyArrayLen`).
    Ok(Reply::Array(pairs))
}

/// PUBSUB SHARDCHANNELS [pattern]
pub fn pubsub_shardchannels(s: &mut Server, a: &Args) -> CmdResult {
    let mut names: Vec<&Vec<u8>> = s
        .pubsub
        .shard_channels
        .keys()
        .filter(|ch| a.len() < 3 || glob_match(a.bytes(2), ch))
        .collect();
    names.sort();
    Ok(Reply::Array(names.into_iter().map(Reply::bulk).collect()))
}

/// PUBSUB SHARDNUMSUB [shardchannel ...]
pub fn pubsub_shardnumsub(s: &mut Server, a: &Args) -> CmdResult {
    let pairs = (2..a.len())
        .flat_map(|i| {
            let n = s
                .pubsub
                .shard_channels
                .get(a.bytes(i))
                .map_or(0, |l| l.len());
            [Reply::bulk(a.bytes(i)), Reply::Integer(n as i64)]
        })
        .collect();
    // An array of pairs in RESP3 too (`addReplyArrayLen`).
    Ok(Reply::Array(pairs))
}

/// PUBSUB NUMPAT
pub fn pubsub_numpat(s: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Integer(s.pubsub.pattern_count() as i64))
}

/// MONITOR: from now on the client receives every command the server runs.
pub fn monitor(s: &mut Server, c: &mut Client, _: &Args) -> CmdResult {
    if !c.monitor {
        c.monitor = true;
        s.pubsub.monitors.push(c.id);
    }
    Ok(Reply::ok())
}

#[cfg(test)]
mod tests {
    use crate::reply::{Protocol, Reply};
    use crate::server::{ConnectInfo, Server};

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn push(words: &[&str], count: i64) -> Vec<u8> {
        let mut frame: Vec<Reply> = words.iter().map(|w| Reply::bulk(*w)).collect();
        frame.push(Reply::Integer(count));
        let mut out = Vec::new();
        Reply::Push(frame).encode(&mut out, Protocol::Resp3);
        out
    }

    #[test]
    fn subscription_answers_go_out_under_client_reply_off() {
        let mut s = Server::new();
        let c = s.connect(ConnectInfo::in_process());
        let mut out = Vec::new();
        s.call_into(c, &argv(&["HELLO", "3"]), &mut out);
        out.clear();
        s.call_into(c, &argv(&["CLIENT", "REPLY", "OFF"]), &mut out);
        s.call_into(c, &argv(&["SUBSCRIBE", "a", "b"]), &mut out);
        s.call_into(c, &argv(&["PING"]), &mut out);
        let mut want = push(&["subscribe", "a"], 1);
        want.extend(push(&["subscribe", "b"], 2));
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want)
        );
    }

    #[test]
    fn shard_channels_count_apart_and_never_match_patterns() {
        let mut s = Server::new();
        let sub = s.connect(ConnectInfo::in_process());
        s.call(sub, &argv(&["PSUBSCRIBE", "*"]));
        s.call(sub, &argv(&["SUBSCRIBE", "plain"]));
        assert_eq!(
            s.call(sub, &argv(&["SSUBSCRIBE", "s1"])),
            Reply::Push(vec![
                Reply::bulk("ssubscribe"),
                Reply::bulk("s1"),
                Reply::Integer(1)
            ])
        );
        s.client_mut(sub).unwrap().take_pending();
        assert_eq!(s.cmd(&["SPUBLISH", "s1", "m"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["SPUBLISH", "plain", "m"]), Reply::Integer(0));
        assert_eq!(s.cmd(&["PUBLISH", "s1", "m"]), Reply::Integer(1));
        assert_eq!(
            s.cmd(&["PUBSUB", "SHARDNUMSUB", "s1", "x"]),
            Reply::Array(vec![
                Reply::bulk("s1"),
                Reply::Integer(1),
                Reply::bulk("x"),
                Reply::Integer(0)
            ])
        );
        let mut want = Vec::new();
        Reply::Push(vec![
            Reply::bulk("smessage"),
            Reply::bulk("s1"),
            Reply::bulk("m"),
        ])
        .encode(&mut want, Protocol::Resp2);
        Reply::Push(vec![
            Reply::bulk("pmessage"),
            Reply::bulk("*"),
            Reply::bulk("s1"),
            Reply::bulk("m"),
        ])
        .encode(&mut want, Protocol::Resp2);
        assert_eq!(s.client_mut(sub).unwrap().take_pending(), want);
        s.disconnect(sub);
        assert_eq!(s.cmd(&["PUBSUB", "SHARDCHANNELS"]), Reply::Array(vec![]));
    }
}
