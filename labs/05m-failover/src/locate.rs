//! Where the primary is now: what a client does after its primary died. With
//! Sentinel it asks the Sentinels (`SENTINEL get-master-addr-by-name`); on a
//! Cluster it asks any node that answers for its slot map (`CLUSTER SLOTS`) and
//! takes the master of the queue's slot. Either answer can be stale for a
//! moment (the dead primary), so a caller connects, and tries again on failure.

use std::time::Duration;

use redislab_harness::servers::sentinel::MASTER_NAME;

#[derive(Clone)]
pub enum Locator {
    /// The Sentinels' ports.
    Sentinel(Vec<u16>),
    /// Every node's port, and the slot of the queue's keys.
    Cluster { ports: Vec<u16>, slot: u16 },
}

/// A connection that gives up quickly: a dead server must not stall a worker.
pub fn connect(port: u16) -> Result<redis::Connection, String> {
    let conn = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(300)))
        .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))
        .and_then(|_| conn.set_write_timeout(Some(Duration::from_secs(2))))
        .map_err(|e| e.to_string())?;
    Ok(conn)
}

impl Locator {
    /// The port of the primary (of the queue's slot), as the topology says now.
    pub fn primary(&self) -> Result<u16, String> {
        let mut last = String::from("nobody answered");
        match self {
            Locator::Sentinel(ports) => {
                for &port in ports {
                    let asked = connect(port).and_then(|mut c| {
                        redis::cmd("SENTINEL")
                            .arg("get-master-addr-by-name")
                            .arg(MASTER_NAME)
                            .query::<Option<(String, u16)>>(&mut c)
                            .map_err(|e| e.to_string())
                    });
                    match asked {
                        Ok(Some((_, p))) => return Ok(p),
                        Ok(None) => last = format!("Sentinel {port} knows no {MASTER_NAME}"),
                        Err(e) => last = e,
                    }
                }
            }
            Locator::Cluster { ports, slot } => {
                for &port in ports {
                    match connect(port).and_then(|mut c| slot_master(&mut c, *slot)) {
                        Ok(p) => return Ok(p),
                        Err(e) => last = e,
                    }
                }
            }
        }
        Err(last)
    }
}

/// The master serving `slot` in a node's `CLUSTER SLOTS`, and its replicas.
pub fn slot_owner(conn: &mut redis::Connection, slot: u16) -> Result<(u16, Vec<u16>), String> {
    let ranges: Vec<redis::Value> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query(conn)
        .map_err(|e| e.to_string())?;
    for range in ranges {
        let redis::Value::Array(f) = range else {
            continue;
        };
        let (Some(redis::Value::Int(a)), Some(redis::Value::Int(b))) = (f.first(), f.get(1)) else {
            continue;
        };
        if !(*a..=*b).contains(&i64::from(slot)) {
            continue;
        }
        let port = |v: &redis::Value| match v {
            redis::Value::Array(n) => match n.get(1) {
                Some(redis::Value::Int(p)) => Some(*p as u16),
                _ => None,
            },
            _ => None,
        };
        let master = f
            .get(2)
            .and_then(port)
            .ok_or("CLUSTER SLOTS without a master")?;
        return Ok((master, f.iter().skip(3).filter_map(port).collect()));
    }
    Err(format!("no node serves slot {slot}"))
}

fn slot_master(conn: &mut redis::Connection, slot: u16) -> Result<u16, String> {
    slot_owner(conn, slot).map(|(m, _)| m)
}
