//! Pub/sub for the core's listener: SUBSCRIBE, PSUBSCRIBE, their UNSUBSCRIBEs and
//! PUBLISH, with Redis's RESP2 frames.
//!
//! A subscription belongs to a connection, so this lives in the listener rather
//! than the core: the executor keeps who listens to what, and PUBLISH pushes
//! `message` / `pmessage` frames straight to each subscriber's connection task.
//! A connection with at least one subscription is in "subscribed mode", where
//! Redis (over RESP2) accepts only the subscription commands, PING, QUIT and RESET.

use std::collections::HashMap;

use redislab_core::glob::glob_match;
use redislab_core::Reply;
use tokio::sync::mpsc::UnboundedSender;

/// Frames sent to a connection outside of any reply (published messages).
pub type Push = UnboundedSender<Reply>;

#[derive(Default)]
struct Subscriber {
    channels: Vec<Vec<u8>>,
    patterns: Vec<Vec<u8>>,
    push: Option<Push>,
}

impl Subscriber {
    fn count(&self) -> i64 {
        (self.channels.len() + self.patterns.len()) as i64
    }
}

#[derive(Default)]
pub struct PubSub {
    subscribers: HashMap<u64, Subscriber>,
    /// Channel → subscribed clients, in subscription order.
    channels: HashMap<Vec<u8>, Vec<u64>>,
    /// (pattern, client), in subscription order.
    patterns: Vec<(Vec<u8>, u64)>,
}

fn frame(kind: &str, name: Option<&[u8]>, count: i64) -> Reply {
    let name = name.map_or(Reply::Nil, Reply::bulk);
    Reply::Array(vec![Reply::bulk(kind), name, Reply::Integer(count)])
}

impl PubSub {
    /// Handles `argv` if it is a pub/sub command or if the client is in subscribed
    /// mode; returns the frames to send, or `None` to let the command run as usual.
    pub fn handle(
        &mut self,
        client: u64,
        push: Option<&Push>,
        argv: &[Vec<u8>],
    ) -> Option<Vec<Reply>> {
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        let subscribed = self.subscribers.get(&client).is_some_and(|s| s.count() > 0);
        let arity = |min: usize| {
            (argv.len() < min)
                .then(|| vec![Reply::error(redislab_core::reply::errors::arity(&name))])
        };
        match name.as_str() {
            "subscribe" => Some(arity(2).unwrap_or_else(|| self.subscribe(client, push, &argv[1..], false))),
            "psubscribe" => Some(arity(2).unwrap_or_else(|| self.subscribe(client, push, &argv[1..], true))),
            "unsubscribe" => Some(self.unsubscribe(client, &argv[1..], false)),
            "punsubscribe" => Some(self.unsubscribe(client, &argv[1..], true)),
            "publish" if argv.len() != 3 => arity(4),
            "publish" => Some(vec![Reply::Integer(self.publish(&argv[1], &argv[2]))]),
            "ping" if subscribed => {
                let payload = argv.get(1).map_or_else(|| Reply::bulk(""), Reply::bulk);
                Some(vec![Reply::Array(vec![Reply::bulk("pong"), payload])])
            }
            "quit" | "reset" if subscribed => None,
            _ if subscribed => Some(vec![Reply::error(format!(
                "ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
            ))]),
            _ => None,
        }
    }

    fn subscribe(
        &mut self,
        client: u64,
        push: Option<&Push>,
        names: &[Vec<u8>],
        pattern: bool,
    ) -> Vec<Reply> {
        let sub = self.subscribers.entry(client).or_default();
        if sub.push.is_none() {
            sub.push = push.cloned();
        }
        let mut frames = Vec::new();
        for name in names {
            let list = if pattern {
                &mut sub.patterns
            } else {
                &mut sub.channels
            };
            if !list.contains(name) {
                list.push(name.clone());
                if pattern {
                    self.patterns.push((name.clone(), client));
                } else {
                    self.channels.entry(name.clone()).or_default().push(client);
                }
            }
            frames.push(frame(
                if pattern { "psubscribe" } else { "subscribe" },
                Some(name),
                sub.count(),
            ));
        }
        frames
    }

    fn unsubscribe(&mut self, client: u64, names: &[Vec<u8>], pattern: bool) -> Vec<Reply> {
        let kind = if pattern {
            "punsubscribe"
        } else {
            "unsubscribe"
        };
        let Some(sub) = self.subscribers.get_mut(&client) else {
            return vec![frame(kind, None, 0)];
        };
        let all: Vec<Vec<u8>> = if names.is_empty() {
            if pattern {
                sub.patterns.clone()
            } else {
                sub.channels.clone()
            }
        } else {
            names.to_vec()
        };
        if all.is_empty() {
            return vec![frame(kind, None, sub.count())];
        }
        let mut frames = Vec::new();
        for name in all {
            if pattern {
                sub.patterns.retain(|p| *p != name);
                self.patterns.retain(|(p, c)| !(*p == name && *c == client));
            } else {
                sub.channels.retain(|c| *c != name);
                if let Some(list) = self.channels.get_mut(&name) {
                    list.retain(|c| *c != client);
                    if list.is_empty() {
                        self.channels.remove(&name);
                    }
                }
            }
            frames.push(frame(kind, Some(&name), sub.count()));
        }
        frames
    }

    /// Delivers to channel subscribers, then pattern subscribers; returns how many
    /// received it (a client matching twice counts twice, as in Redis).
    fn publish(&mut self, channel: &[u8], message: &[u8]) -> i64 {
        let mut receivers = 0;
        let deliver = |client: &u64, frame: Reply| {
            self.subscribers
                .get(client)
                .and_then(|s| s.push.as_ref())
                .is_some_and(|p| p.send(frame).is_ok())
        };
        for client in self.channels.get(channel).into_iter().flatten() {
            let msg = Reply::Array(vec![
                Reply::bulk("message"),
                Reply::bulk(channel),
                Reply::bulk(message),
            ]);
            receivers += deliver(client, msg) as i64;
        }
        for (pattern, client) in &self.patterns {
            if glob_match(pattern, channel) {
                let msg = Reply::Array(vec![
                    Reply::bulk("pmessage"),
                    Reply::bulk(pattern),
                    Reply::bulk(channel),
                    Reply::bulk(message),
                ]);
                receivers += deliver(client, msg) as i64;
            }
        }
        receivers
    }

    /// The connection closed.
    pub fn forget(&mut self, client: u64) {
        if self.subscribers.remove(&client).is_some() {
            self.channels.retain(|_, list| {
                list.retain(|c| *c != client);
                !list.is_empty()
            });
            self.patterns.retain(|(_, c)| *c != client);
        }
    }
}
