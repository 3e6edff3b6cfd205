//! A primary, one replica and three Sentinels on loopback, for the failover labs.
//!
//! [`SentinelGroup::start`] runs four processes of the same `redis-server` binary
//! as every other lab, plus the replica:
//!
//! * the **primary**, a [`RedisServer`] like any other;
//! * the **replica**, a [`RedisServer`] started with `--replicaof` the primary,
//!   waited for until its link is up and the first sync is done;
//! * three **Sentinels**, `redis-server sentinel.conf --sentinel`, each with its
//!   own temporary directory holding its config file (Sentinel rewrites it as it
//!   learns the topology, so it must be a file of its own), monitoring the
//!   primary under [`MASTER_NAME`] with a quorum of 2.
//!
//! The start returns once every Sentinel has found the replica and the two other
//! Sentinels (they learn of each other through hello messages on the primary,
//! every 2 s), so a failover can happen as soon as the lab kills the primary.
//! [`Settings`] holds the Sentinel timings; the labs use short ones
//! (`down-after-milliseconds` 1000, `failover-timeout` 3000) so a failover takes
//! seconds, not the default minute.
//!
//! Ports: every process takes a free port from the kernel, as a standalone
//! [`RedisServer`] does (Sentinel has no bus port to pair, unlike a cluster node).
//!
//! Stopping: each process is a [`super::ManagedProcess`], so dropping the group
//! stops all five and removes their directories, and the harness's signal
//! handler stops them on Ctrl-C, SIGTERM or SIGHUP; a killed harness takes them
//! with it (parent-death signal). [`SentinelGroup::kill_primary`] is the crash
//! the labs study: SIGKILL, no shutdown, no last reply;
//! [`SentinelGroup::restart_primary_as_replica`] brings it back as the new
//! primary's replica, so the group has a replica again.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::redis::RedisServer;
use super::{free_port, make_tempdir, remove_tempdir, wait_until_ready, ManagedProcess};

/// The name the Sentinels monitor the primary under.
pub const MASTER_NAME: &str = "redislab";
/// How long the group gets to come up (replica synced, Sentinels acquainted).
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// Sentinel's timings for the group.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// `sentinel down-after-milliseconds`: how long the primary must stay silent
    /// before a Sentinel thinks it down.
    pub down_after_ms: u64,
    /// `sentinel failover-timeout`.
    pub failover_timeout_ms: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            down_after_ms: 1_000,
            failover_timeout_ms: 3_000,
        }
    }
}

/// One Sentinel process.
struct Sentinel {
    port: u16,
    process: ManagedProcess,
}

pub struct SentinelGroup {
    /// `None` once [`SentinelGroup::kill_primary`] killed it.
    primary: Option<RedisServer>,
    replica: RedisServer,
    sentinels: Vec<Sentinel>,
    settings: Settings,
    bin_dir: PathBuf,
    /// The port the group's first primary listened on (kept after a kill).
    first_primary_port: u16,
}

/// Both data servers start a full sync at once (the default waits 5 s for more
/// replicas to share a diskless transfer).
const DATA_SERVER: [&str; 2] = ["--repl-diskless-sync-delay", "0"];

impl SentinelGroup {
    /// Starts the primary, the replica and three Sentinels, and waits until they
    /// all know each other. On any failure what was started is stopped.
    pub fn start(bin_dir: &Path, settings: Settings) -> Result<SentinelGroup, String> {
        let primary = RedisServer::start(bin_dir, &DATA_SERVER)?;
        let primary_port = primary.port.to_string();
        let mut replica_args = DATA_SERVER.to_vec();
        replica_args.extend(["--replicaof", "127.0.0.1", &primary_port]);
        let replica = RedisServer::start(bin_dir, &replica_args)?;
        wait_for_sync(&replica)?;
        let mut sentinels = Vec::new();
        for _ in 0..3 {
            sentinels.push(start_sentinel(bin_dir, primary.port, settings)?);
        }
        let group = SentinelGroup {
            first_primary_port: primary.port,
            primary: Some(primary),
            replica,
            sentinels,
            settings,
            bin_dir: bin_dir.to_path_buf(),
        };
        group.wait_until_acquainted()?;
        Ok(group)
    }

    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// The port of the primary the group started with (`None` once killed).
    pub fn primary_port(&self) -> Option<u16> {
        self.primary.as_ref().map(|p| p.port)
    }

    /// The port of the replica (the primary after a failover).
    pub fn replica_port(&self) -> u16 {
        self.replica.port
    }

    pub fn sentinel_ports(&self) -> Vec<u16> {
        self.sentinels.iter().map(|s| s.port).collect()
    }

    /// Every process of the group still running: primary, replica, Sentinels.
    pub fn pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self.primary.iter().map(RedisServer::pid).collect();
        pids.push(self.replica.pid());
        pids.extend(self.sentinels.iter().map(|s| s.process.pid()));
        pids
    }

    pub fn tempdirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .primary
            .iter()
            .map(|p| p.tempdir().to_path_buf())
            .collect();
        dirs.push(self.replica.tempdir().to_path_buf());
        dirs.extend(
            self.sentinels
                .iter()
                .map(|s| s.process.tempdir().to_path_buf()),
        );
        dirs
    }

    /// SIGKILLs the primary and returns the moment it was killed. Its directory
    /// goes with it; the Sentinels notice after `down_after_ms`.
    pub fn kill_primary(&mut self) -> Result<Instant, String> {
        let mut primary = self
            .primary
            .take()
            .ok_or("the primary was already killed")?;
        let at = Instant::now();
        primary.kill();
        Ok(at)
    }

    /// Brings the killed primary back on its port as a replica of the new
    /// primary (the former replica), as an operator or a supervisor with the
    /// current topology would: an empty redis-server with `--replicaof`, which
    /// syncs and which the Sentinels then list as the new primary's replica. (Not
    /// as an empty primary: a client asking a Sentinel that has not switched yet
    /// would write to it, and the Sentinels only demote a returning primary after
    /// it has reported itself as one for 8 s.) Call it once the replica is
    /// promoted. Returns once it has synced.
    pub fn restart_primary_as_replica(&mut self) -> Result<(), String> {
        if self.primary.is_some() {
            return Err("the primary is still running".into());
        }
        let heir = self.replica.port.to_string();
        let mut args = DATA_SERVER.to_vec();
        args.extend(["--replicaof", "127.0.0.1", &heir]);
        let server = RedisServer::start_on(&self.bin_dir, self.first_primary_port, &args)?;
        wait_for_sync(&server)?;
        self.primary = Some(server);
        Ok(())
    }

    /// The primary's port as the Sentinels say it (`SENTINEL
    /// get-master-addr-by-name`), from the first Sentinel that answers.
    pub fn master_port(&self) -> Result<u16, String> {
        let mut last = String::from("no Sentinel answered");
        for s in &self.sentinels {
            match sentinel_master(s.port) {
                Ok(port) => return Ok(port),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// True when every Sentinel answers `port` for the primary.
    pub fn all_sentinels_name(&self, port: u16) -> bool {
        self.sentinels
            .iter()
            .all(|s| sentinel_master(s.port).is_ok_and(|p| p == port))
    }

    /// Waits until the replica calls itself a master (Sentinel promoted it) and
    /// every Sentinel names it; returns how long that took from `since`.
    pub fn wait_for_promotion(&self, since: Instant) -> Result<Duration, String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let want = self.replica.port;
        loop {
            let promoted = role(want).is_ok_and(|r| r == "master") && self.all_sentinels_name(want);
            if promoted {
                return Ok(since.elapsed());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the Sentinels did not promote the replica in {READY_TIMEOUT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Polls every Sentinel until each knows one replica and two other Sentinels.
    fn wait_until_acquainted(&self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut last = String::new();
        loop {
            let mut ready = true;
            for s in &self.sentinels {
                match sentinel_counts(s.port) {
                    Ok((1, 2)) => {}
                    Ok((replicas, others)) => {
                        ready = false;
                        last = format!(
                            "Sentinel {} knows {replicas} replica(s), {others} other Sentinel(s)",
                            s.port
                        );
                        break;
                    }
                    Err(e) => {
                        ready = false;
                        last = e;
                        break;
                    }
                }
            }
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the Sentinels did not find each other in {READY_TIMEOUT:?}; last: {last}"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn connect(port: u16) -> Result<redis::Connection, String> {
    let conn = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(500)))
        .map_err(|e| format!("127.0.0.1:{port}: {e}"))?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    Ok(conn)
}

/// `ROLE`'s first field: `master`, `slave` or `sentinel`.
pub fn role(port: u16) -> Result<String, String> {
    let reply: Vec<redis::Value> = redis::cmd("ROLE")
        .query(&mut connect(port)?)
        .map_err(|e| e.to_string())?;
    match reply.first() {
        Some(redis::Value::BulkString(b)) => Ok(String::from_utf8_lossy(b).into_owned()),
        other => Err(format!("unexpected ROLE reply {other:?}")),
    }
}

fn sentinel_master(port: u16) -> Result<u16, String> {
    let addr: Option<(String, u16)> = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(MASTER_NAME)
        .query(&mut connect(port)?)
        .map_err(|e| e.to_string())?;
    addr.map(|(_, p)| p)
        .ok_or_else(|| format!("Sentinel {port} does not know {MASTER_NAME}"))
}

/// `SENTINEL MASTER`'s `num-slaves` and `num-other-sentinels`.
fn sentinel_counts(port: u16) -> Result<(u64, u64), String> {
    let fields: Vec<String> = redis::cmd("SENTINEL")
        .arg("MASTER")
        .arg(MASTER_NAME)
        .query(&mut connect(port)?)
        .map_err(|e| e.to_string())?;
    let get = |name: &str| {
        fields
            .chunks(2)
            .find(|kv| kv[0] == name)
            .and_then(|kv| kv.get(1)?.parse().ok())
            .unwrap_or(0)
    };
    Ok((get("num-slaves"), get("num-other-sentinels")))
}

/// Waits until the replica's link to its primary is up and the first sync done.
fn wait_for_sync(replica: &RedisServer) -> Result<(), String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let info: String = connect(replica.port)
            .and_then(|mut c| {
                redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut c)
                    .map_err(|e| e.to_string())
            })
            .unwrap_or_default();
        if info.contains("master_link_status:up") && info.contains("master_sync_in_progress:0") {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the replica on {} did not sync in {READY_TIMEOUT:?}",
                replica.port
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One Sentinel, its config in a temporary directory of its own.
fn start_sentinel(bin_dir: &Path, primary: u16, settings: Settings) -> Result<Sentinel, String> {
    let mut last_error = String::new();
    // A free port can be taken between probing and binding; try a few.
    for _ in 0..5 {
        let port = free_port().map_err(|e| format!("no free port: {e}"))?;
        let dir = make_tempdir("sentinel")?;
        let conf = dir.join("sentinel.conf");
        let text = format!(
            "port {port}\nbind 127.0.0.1\nprotected-mode yes\ndaemonize no\n\
             dir {dir}\nlogfile {log}\n\
             sentinel monitor {MASTER_NAME} 127.0.0.1 {primary} 2\n\
             sentinel down-after-milliseconds {MASTER_NAME} {down}\n\
             sentinel failover-timeout {MASTER_NAME} {failover}\n\
             sentinel parallel-syncs {MASTER_NAME} 1\n",
            dir = dir.display(),
            log = dir.join("sentinel.log").display(),
            down = settings.down_after_ms,
            failover = settings.failover_timeout_ms,
        );
        if let Err(e) = std::fs::write(&conf, text) {
            remove_tempdir(&dir);
            return Err(format!("cannot write {}: {e}", conf.display()));
        }
        let mut cmd = Command::new(bin_dir.join("redis-server"));
        cmd.arg(&conf)
            .arg("--sentinel")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut process = ManagedProcess::spawn("redis-sentinel", cmd, libc::SIGTERM, dir.clone())
            .inspect_err(|_| remove_tempdir(&dir))?;
        let ready = wait_until_ready(&mut process, Duration::from_secs(20), || {
            connect(port)
                .and_then(|mut c| {
                    redis::cmd("PING")
                        .query::<String>(&mut c)
                        .map_err(|e| e.to_string())
                })
                .is_ok()
        });
        match ready {
            Ok(()) => return Ok(Sentinel { port, process }),
            Err(e) => {
                let log = std::fs::read_to_string(dir.join("sentinel.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(3).collect();
                last_error = format!("{e}; last log lines: {}", tail.join(" | "));
                // Dropping `process` stops it and removes its directory.
            }
        }
    }
    Err(format!("cannot start a Sentinel: {last_error}"))
}
