//! The data structures of the Redis articles, written to answer like Redis 8.
//!
//! This crate knows nothing about sockets, servers or lab tables. It has three
//! layers, each usable on its own:
//!
//! * the structures ([`zset`], [`dict`], [`hash`], [`strings`] on [`sds`]): plain Rust types with the
//!   algorithms Redis uses, and what Redis's MEMORY USAGE would say about them
//!   ([`memory`]);
//! * lists ([`list`]): a listpack, or a quicklist of listpack nodes, with
//!   Redis's conversion points and node splits/merges;
//! * the keyspace ([`keyspace`]): named values with types and expiry;
//! * geo ([`geo`]): the 52-bit geohash a geo set keeps as zset scores, Redis's
//!   haversine and its 9-cell search;
//! * the Cluster key slot ([`cluster_slot`]): which of 16384 slots a key hashes to;
//! * the server ([`server`]): clients, sixteen databases, the command table and the
//!   one path every command takes (`Server::call`), MULTI, pub/sub, CONFIG and
//!   statistics;
//! * the command families ([`commands`]): `argv` in, a [`Reply`] out, with Redis's
//!   exact replies, error strings and number formatting; EVAL's Lua runs in
//!   [`scripting`].
//!
//! In-process use:
//!
//! ```
//! use redislab_core::{Server, Reply};
//! let mut server = Server::new();
//! server.cmd(&["ZADD", "lb", "100", "zed"]);
//! assert_eq!(server.cmd(&["ZSCORE", "lb", "zed"]), Reply::Double(100.0));
//! ```

pub mod bitmap;
pub mod cluster_slot;
pub mod commands;
pub mod dict;
pub mod geo;
pub mod glob;
pub mod hash;
pub mod hll;
pub mod inline_bytes;
pub mod intset;
pub mod keyspace;
pub mod ldouble;
pub mod list;
pub mod lpcodec;
pub mod lru;
pub mod memory;
pub mod num;
pub mod packed;
pub mod rdb;
pub mod reply;
pub mod sampling;
pub mod scripting;
pub mod sds;
pub mod server;
pub mod set;
pub mod short_eq;
pub mod strings;
pub mod watch;
pub mod zset;

pub use reply::Reply;
pub use server::Server;

/// Version of this crate, reported by the labs next to the real servers' versions.
pub const CORE_VERSION: &str = env!("CARGO_PKG_VERSION");
