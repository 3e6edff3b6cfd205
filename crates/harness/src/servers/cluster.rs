//! A real Redis Cluster on loopback, for the labs about slots and sharding.
//!
//! [`RedisCluster::start`] runs `masters` (at least 3, Redis's minimum for a
//! cluster) copies of the same `redis-server` binary as the other labs, each a
//! [`RedisServer`] (so a [`super::ManagedProcess`]) with its own temporary
//! directory and `--cluster-enabled yes --cluster-config-file nodes.conf
//! --cluster-node-timeout 2000`, joins them with `redis-cli --cluster create …
//! --cluster-yes`, and waits until every node's `CLUSTER INFO` says
//! `cluster_state:ok`. [`RedisCluster::start`] makes masters only (the slot and
//! routing labs; masters alone keep the start-up short);
//! [`RedisCluster::start_with_replicas`] adds replicas (`--cluster-replicas N`)
//! for the failover labs, which crash a master with [`RedisCluster::kill_node`]
//! and watch its replica take over after the node timeout.
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
/// `--cluster-node-timeout`: how long a node may stay silent before the others
/// think it failed (and its replica, if any, takes over).
const NODE_TIMEOUT: Duration = Duration::from_millis(2000);
/// How long the nodes get to agree that the cluster is up.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts `masters` nodes, joins them into one cluster and waits until it is
    /// ready. On any failure the nodes already started are stopped.
    pub fn start(bin_dir: &Path, masters: usize) -> Result<RedisCluster, String> {
        Self::start_with_replicas(bin_dir, masters, 0)
    }

    /// [`RedisCluster::start`] with `replicas` replicas per master, and waits
    /// until every replica has finished its first sync.
    pub fn start_with_replicas(
        bin_dir: &Path,
        masters: usize,
        replicas: usize,
    ) -> Result<RedisCluster, String> {
        if masters < 3 {
            return Err(format!(
                "a Redis Cluster needs at least 3 masters, not {masters}"
            ));
        }
        let total = masters * (1 + replicas);
        let mut nodes = Vec::with_capacity(total);
        while nodes.len() < total {
            nodes.push(start_node(bin_dir, &nodes)?);
        }
        let cluster = RedisCluster { nodes };
        cluster.create(bin_dir, replicas)?;
        cluster.wait_until_ok()?;
        if replicas > 0 {
            cluster.wait_for_replicas()?;
        }
        Ok(cluster)
    }

    /// SIGKILLs the node on `port` (a crash) and returns the moment it died. Its
    /// directory goes with it; the other nodes notice after the node timeout.
    pub fn kill_node(&mut self, port: u16) -> Result<Instant, String> {
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port == port)
            .ok_or_else(|| format!("no cluster node on port {port}"))?;
        let at = Instant::now();
        node.kill();
        Ok(at)
    }

    /// The node timeout every node runs with (`--cluster-node-timeout`).
    pub fn node_timeout(&self) -> Duration {
        NODE_TIMEOUT
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

    /// `redis-cli --cluster create` with `replicas` replicas per master (it
    /// picks which nodes are replicas, and of which master).
    fn create(&self, bin_dir: &Path, replicas: usize) -> Result<(), String> {
        let mut cmd = Command::new(bin_dir.join("redis-cli"));
        cmd.arg("--cluster").arg("create");
        for port in self.ports() {
            cmd.arg(format!("127.0.0.1:{port}"));
        }
        cmd.args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
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

impl RedisCluster {
    /// Polls every replica until its link to its master is up and synced.
    fn wait_for_replicas(&self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        for node in &self.nodes {
            loop {
                let info = redis::Client::open(node.url())
                    .and_then(|c| c.get_connection())
                    .and_then(|mut c| {
                        redis::cmd("INFO")
                            .arg("replication")
                            .query::<String>(&mut c)
                    })
                    .unwrap_or_default();
                let replica = info.contains("role:slave");
                if info.contains("role:master")
                    || (replica
                        && info.contains("master_link_status:up")
                        && info.contains("master_sync_in_progress:0"))
                {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "cluster replica 127.0.0.1:{} did not sync in {READY_TIMEOUT:?}",
                        node.port
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // ...and every node's slot map names a replica for every range (the
        // replicas' roles reach the other nodes by gossip).
        for node in &self.nodes {
            while !slots_have_replicas(&node.url()) {
                if Instant::now() > deadline {
                    return Err(format!(
                        "cluster node 127.0.0.1:{} does not list a replica for every slot range in {READY_TIMEOUT:?}",
                        node.port
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }
}

/// True when every range of the node's `CLUSTER SLOTS` has a replica entry.
fn slots_have_replicas(url: &str) -> bool {
    redis::Client::open(url)
        .and_then(|c| c.get_connection())
        .and_then(|mut c| {
            redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query::<Vec<redis::Value>>(&mut c)
        })
        .is_ok_and(|ranges| {
            !ranges.is_empty()
                && ranges
                    .iter()
                    .all(|r| matches!(r, redis::Value::Array(f) if f.len() >= 4))
        })
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
        let timeout = NODE_TIMEOUT.as_millis().to_string();
        let extra = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            &timeout,
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
