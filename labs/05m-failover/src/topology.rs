//! The two topologies the scheduler is crashed on: a primary + replica watched
//! by three Sentinels, and a 3-master + 3-replica Redis Cluster (the master
//! serving the queue's slot is the one killed).

use std::time::Instant;

use redislab_harness::servers::cluster::RedisCluster;
use redislab_harness::servers::sentinel::{role, SentinelGroup};

use crate::locate::{connect, slot_owner, Locator};
use crate::scenario::Failover;

pub struct Sentinel(pub SentinelGroup);

impl Failover for Sentinel {
    fn locator(&self) -> Locator {
        Locator::Sentinel(self.0.sentinel_ports())
    }
    fn kill(&mut self) -> Result<Instant, String> {
        self.0.kill_primary()
    }
    fn promoted(&self) -> bool {
        role(self.0.replica_port()).is_ok_and(|r| r == "master")
    }
    /// As soon as the replica is promoted, the crashed primary comes back as
    /// its replica (empty, synced from it), so WAIT 1 can be satisfied again.
    /// (As a replica it refuses writes, so a client that still finds its port
    /// through a Sentinel not switched yet cannot write into an empty server.)
    fn recover(&mut self) -> Result<bool, String> {
        self.0.restart_primary_as_replica()?;
        Ok(true)
    }
}

pub struct Cluster {
    pub cluster: RedisCluster,
    slot: u16,
    /// The master of the queue's slot, and its replica(s).
    victim: u16,
    heirs: Vec<u16>,
}

impl Cluster {
    /// `key` is any of the queue's keys (they share a hash tag).
    pub fn new(cluster: RedisCluster, key: &str) -> Result<Cluster, String> {
        let port = cluster.ports()[0];
        let mut conn = connect(port)?;
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut conn)
            .map_err(|e| e.to_string())?;
        let (victim, heirs) = slot_owner(&mut conn, slot)?;
        if heirs.is_empty() {
            return Err(format!("the master of slot {slot} has no replica"));
        }
        Ok(Cluster {
            cluster,
            slot,
            victim,
            heirs,
        })
    }
}

impl Failover for Cluster {
    fn locator(&self) -> Locator {
        Locator::Cluster {
            ports: self.cluster.ports(),
            slot: self.slot,
        }
    }
    fn kill(&mut self) -> Result<Instant, String> {
        self.cluster.kill_node(self.victim)
    }
    /// The crashed master stays down (its cluster state died with it): the
    /// new master has no replica for the rest of the scenario.
    fn recover(&mut self) -> Result<bool, String> {
        Ok(true)
    }
    fn promoted(&self) -> bool {
        self.heirs
            .iter()
            .any(|&p| role(p).is_ok_and(|r| r == "master"))
    }
}
