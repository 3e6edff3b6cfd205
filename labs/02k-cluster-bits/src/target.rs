//! One way to drive the cluster (through its cluster-aware connection, asking
//! each node directly where a step must) and the core (one node), so every step
//! is written once.

use redis::{ConnectionLike, Value};
use redislab_harness::backend::{error_text, render};
use redislab_harness::{ClusterKv, Kv};

/// A node of the cluster: its name (`n1`…, by slot range), port and slots.
#[derive(Clone)]
pub struct Node {
    pub name: String,
    pub port: u16,
    pub ranges: Vec<(u16, u16)>,
}

pub struct Target<'a> {
    /// The report column: `redis` (the cluster) or `core`.
    pub column: &'static str,
    conn: &'a mut dyn ConnectionLike,
    prefix: String,
    /// The cluster's nodes; `None` for the core, which is one node.
    pub nodes: Option<Vec<Node>>,
}

impl<'a> Target<'a> {
    pub fn cluster(cluster: &'a mut ClusterKv) -> Target<'a> {
        let nodes = cluster
            .nodes()
            .iter()
            .map(|n| Node {
                name: n.name.clone(),
                port: n.port,
                ranges: n.ranges.clone(),
            })
            .collect();
        Target {
            column: "redis",
            conn: cluster.conn(),
            prefix: String::new(),
            nodes: Some(nodes),
        }
    }

    pub fn core(kv: &'a mut Kv) -> Target<'a> {
        let prefix = kv.key("");
        Target {
            column: "core",
            conn: kv.conn(),
            prefix,
            nodes: None,
        }
    }

    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The reply, or the server's own error text.
    pub fn query<T: redis::FromRedisValue>(&mut self, cmd: &redis::Cmd) -> Result<T, String> {
        cmd.query(self.conn).map_err(|e| error_text(&e))
    }

    /// The reply rendered as a table cell (an error as its text).
    pub fn reply(&mut self, cmd: &redis::Cmd) -> String {
        match cmd.query::<Value>(self.conn) {
            Ok(v) => render(&v),
            Err(e) => error_text(&e),
        }
    }

    /// The name of the node serving `key` (the cluster's answer to CLUSTER
    /// KEYSLOT, then its slot map); `None` on the core.
    pub fn node_of(&mut self, key: &str) -> Result<Option<String>, String> {
        let Some(nodes) = self.nodes.clone() else {
            return Ok(None);
        };
        let slot: u16 = self.query(redis::cmd("CLUSTER").arg("KEYSLOT").arg(key))?;
        nodes
            .iter()
            .find(|n| n.ranges.iter().any(|&(a, b)| (a..=b).contains(&slot)))
            .map(|n| Some(n.name.clone()))
            .ok_or_else(|| format!("no node serves slot {slot}"))
    }
}

/// A plain connection to one node (for INFO and SCAN, which a cluster-aware
/// client would send to a random node).
pub fn node_conn(node: &Node) -> Result<redis::Connection, String> {
    redis::Client::open(format!("redis://127.0.0.1:{}/", node.port))
        .and_then(|c| c.get_connection())
        .map_err(|e| format!("node {}: cannot connect: {e}", node.name))
}

/// `INFO memory`'s `used_memory_dataset` of one node, bytes.
pub fn dataset_bytes(node: &Node) -> Result<f64, String> {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query(&mut node_conn(node)?)
        .map_err(|e| format!("node {}: INFO: {}", node.name, error_text(&e)))?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory_dataset:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("node {}: no used_memory_dataset in INFO", node.name))
}
