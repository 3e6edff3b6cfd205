//! What a lab gets to talk to a real Redis Cluster: [`ClusterKv`].
//!
//! It owns the cluster the harness started for this run (stopped when it is
//! dropped), a cluster-aware connection from the `redis` crate (it computes each
//! key's slot, sends the command to the node serving it and follows MOVED), and
//! plain connections to each node for what must go to one node in particular.
//! Nodes are named `n1`, `n2`, … in the order of their slot ranges, so a report
//! says "n2" rather than a random port.
//!
//! A lab asks for one with [`crate::Ctx::start_cluster`]; labs that do not ask
//! never start a cluster.

use redis::cluster::ClusterConnection;
use redis::Value;

use crate::backend::{error_text, render};
use crate::servers::cluster::RedisCluster;

/// One node and the slot ranges it serves.
pub struct NodeSlots {
    /// `n1`, `n2`, … by the first slot the node serves.
    pub name: String,
    pub port: u16,
    pub ranges: Vec<(u16, u16)>,
}

pub struct ClusterKv {
    pub version: String,
    conn: ClusterConnection,
    nodes: Vec<NodeSlots>,
    // Last: the connections above close before the servers stop.
    server: RedisCluster,
}

impl ClusterKv {
    /// Connects to a cluster that is up, and reads its slot map from `CLUSTER SLOTS`.
    pub fn connect(server: RedisCluster) -> Result<ClusterKv, String> {
        let conn = server
            .client()?
            .get_connection()
            .map_err(|e| format!("cluster: cannot connect: {}", error_text(&e)))?;
        let mut first = node_connection(server.ports()[0])?;
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut first)
            .map_err(|e| format!("cluster: INFO failed: {}", error_text(&e)))?;
        let version = crate::backend::server_version(&info);
        let nodes = slot_map(&mut first)?;
        Ok(ClusterKv {
            version,
            conn,
            nodes,
            server,
        })
    }

    /// The cluster-aware connection.
    pub fn conn(&mut self) -> &mut ClusterConnection {
        &mut self.conn
    }

    pub fn nodes(&self) -> &[NodeSlots] {
        &self.nodes
    }

    pub fn server(&self) -> &RedisCluster {
        &self.server
    }

    /// The node serving `slot`, by name.
    pub fn node_of_slot(&self, slot: u16) -> Option<&str> {
        self.nodes
            .iter()
            .find(|n| n.ranges.iter().any(|&(a, b)| (a..=b).contains(&slot)))
            .map(|n| n.name.as_str())
    }

    /// A plain (not cluster-aware) connection to the node named `name`.
    pub fn node(&self, name: &str) -> Result<redis::Connection, String> {
        let node = self
            .nodes
            .iter()
            .find(|n| n.name == name)
            .ok_or_else(|| format!("cluster: no node {name}"))?;
        node_connection(node.port)
    }

    /// Sends one command through the cluster-aware connection; a server error
    /// comes back as its own text.
    pub fn cmd(&mut self, args: &[&str]) -> Result<Value, String> {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query::<Value>(&mut self.conn)
            .map_err(|e| error_text(&e))
    }

    /// Like [`ClusterKv::cmd`], rendered as a table cell (errors as their text).
    pub fn reply(&mut self, args: &[&str]) -> String {
        match self.cmd(args) {
            Ok(v) => render(&v),
            Err(e) => e,
        }
    }
}

fn node_connection(port: u16) -> Result<redis::Connection, String> {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection())
        .map_err(|e| format!("cluster: cannot connect to node {port}: {e}"))
}

/// `CLUSTER SLOTS`: `[[start, end, [ip, port, id, …], replicas…], …]`.
fn slot_map(conn: &mut redis::Connection) -> Result<Vec<NodeSlots>, String> {
    let reply: Vec<Value> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query(conn)
        .map_err(|e| format!("cluster: CLUSTER SLOTS failed: {}", error_text(&e)))?;
    let mut by_port: Vec<(u16, Vec<(u16, u16)>)> = Vec::new();
    for entry in reply {
        let Value::Array(fields) = entry else {
            return Err("cluster: unexpected CLUSTER SLOTS reply".into());
        };
        let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(master))) =
            (fields.first(), fields.get(1), fields.get(2))
        else {
            return Err("cluster: unexpected CLUSTER SLOTS entry".into());
        };
        let Some(Value::Int(port)) = master.get(1) else {
            return Err("cluster: CLUSTER SLOTS entry without a port".into());
        };
        let range = (*start as u16, *end as u16);
        match by_port.iter_mut().find(|(p, _)| *p as i64 == *port) {
            Some((_, ranges)) => ranges.push(range),
            None => by_port.push((*port as u16, vec![range])),
        }
    }
    for (_, ranges) in &mut by_port {
        ranges.sort();
    }
    by_port.sort_by_key(|(_, ranges)| ranges[0]);
    Ok(by_port
        .into_iter()
        .enumerate()
        .map(|(i, (port, ranges))| NodeSlots {
            name: format!("n{}", i + 1),
            port,
            ranges,
        })
        .collect())
}
