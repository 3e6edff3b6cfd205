//! A real Redis Cluster on loopback, for the labs about slots and sharding.
//!
//! [`RedisCluster::start`] runs `masters` (at least 3, Redis's minimum for a
//! cluster) copies of the same `redis-server` binary as the other labs, each a
//! [`RedisServer`] (so a [`super::ManagedProcess`]) with its own temporary
//! directory and `--cluster-enabled yes --cluster-config-file nodes.conf
//! --cluster-node-timeout 2000`, joins them with `redis-cli --cluster create …
//! --cluster-yes`, and waits until every node's `CLUSTER INFO` says
//! `cluster_state:ok`. There are no replicas: the labs look at slots and routing,
//! not at failover, and masters alone keep the start-up short.
//!
//! Ports: a node also listens on its cluster bus port, `port + 10000`. Both are
//! picked below the kernel's ephemeral range (32768 and up on Linux), so a
//! client's outgoing connection cannot take one between the check and the bind.
//!
//! Stopping: dropping the value drops every node, which stops it and removes its
//! directory, like any server the harness starts; Ctrl-C and a killed harness are
//! covered the same way (signal handler, parent-death signal).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::Rng;

use super::redis::RedisServer;

/// Client ports are drawn from here; bus ports are 10000 higher (20000..32767).
const PORTS: std::ops::Range<u16> = 10000..22768;
/// How long the nodes get to agree that the cluster is up.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts `masters` nodes, joins them into one cluster and waits until it is
    /// ready. On any failure the nodes already started are stopped.
    pub fn start(bin_dir: &Path, masters: usize) -> Result<RedisCluster, String> {
        if masters < 3 {
            return Err(format!(
                "a Redis Cluster needs at least 3 masters, not {masters}"
            ));
        }
        let mut nodes = Vec::with_capacity(masters);
        while nodes.len() < masters {
            nodes.push(start_node(bin_dir, &nodes)?);
        }
        let cluster = RedisCluster { nodes };
        cluster.create(bin_dir)?;
        cluster.wait_until_ok()?;
        Ok(cluster)
    }

    /// The nodes' client ports, in the order they were given to `--cluster create`
    /// (which assigns the slot ranges in that order: the first node gets 0..).
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    pub fn pids(&self) -> Vec<u32> {
        self.nodes.iter().map(RedisServer::pid).collect()
    }

    pub fn tempdirs(&self) -> Vec<std::path::PathBuf> {
        self.nodes
            .iter()
            .map(|n| n.tempdir().to_path_buf())
            .collect()
    }

    /// A cluster-aware client (slot routing, MOVED/ASK handling) seeded with every
    /// node.
    pub fn client(&self) -> Result<redis::cluster::ClusterClient, String> {
        redis::cluster::ClusterClient::new(self.urls()).map_err(|e| format!("cluster client: {e}"))
    }

    /// `redis-cli --cluster create` with every node as a master.
    fn create(&self, bin_dir: &Path) -> Result<(), String> {
        let mut cmd = Command::new(bin_dir.join("redis-cli"));
        cmd.arg("--cluster").arg("create");
        for port in self.ports() {
            cmd.arg(format!("127.0.0.1:{port}"));
        }
        cmd.args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot run redis-cli --cluster create: {e}"))?;
        // It normally takes a second or two; never wait on it forever.
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err("redis-cli --cluster create did not finish in 60 s".into());
                }
            }
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("redis-cli --cluster create: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !text.contains("[OK] All 16384 slots covered") {
            let tail: Vec<&str> = text.lines().rev().take(5).collect();
            return Err(format!(
                "redis-cli --cluster create failed ({}): {} {}",
                out.status,
                tail.into_iter().rev().collect::<Vec<_>>().join(" | "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(())
    }

    /// Polls every node until each says `cluster_state:ok` and knows all the
    /// others.
    fn wait_until_ok(&self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let want_known = format!("cluster_known_nodes:{}", self.nodes.len());
        let mut last = String::new();
        loop {
            let mut all_ok = true;
            for node in &self.nodes {
                let info = cluster_info(&node.url()).unwrap_or_else(|e| e);
                if !(info.contains("cluster_state:ok") && info.contains(&want_known)) {
                    all_ok = false;
                    last = format!("127.0.0.1:{}: {}", node.port, info.replace("\r\n", " "));
                    break;
                }
            }
            if all_ok {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the cluster did not reach cluster_state:ok in {READY_TIMEOUT:?}; last: {last}"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// One cluster-enabled node that joins no cluster (its slots stay unassigned):
/// enough for `CLUSTER KEYSLOT`, which the differential test compares with the
/// core.
pub fn start_single_node(bin_dir: &Path) -> Result<RedisServer, String> {
    start_node(bin_dir, &[])
}

fn cluster_info(url: &str) -> Result<String, String> {
    redis::Client::open(url)
        .and_then(|c| c.get_connection())
        .and_then(|mut c| redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut c))
        .map_err(|e| e.to_string())
}

/// Starts one cluster node on a port whose bus port is free too, retrying on
/// other ports if one is taken.
fn start_node(bin_dir: &Path, others: &[RedisServer]) -> Result<RedisServer, String> {
    let mut rng = rand::thread_rng();
    let mut last_error = String::from("no free port pair");
    for _ in 0..20 {
        let port = rng.gen_range(PORTS);
        if others
            .iter()
            .any(|n| n.port.abs_diff(port) == 10000 || n.port == port)
            || !free(port)
            || !free(port + 10000)
        {
            continue;
        }
        let extra = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
        ];
        match RedisServer::start_on(bin_dir, port, &extra) {
            Ok(node) => return Ok(node),
            Err(e) => last_error = e,
        }
    }
    Err(format!("cannot start a cluster node: {last_error}"))
}

fn free(port: u16) -> bool {
    std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port)).is_ok()
}
