//! The Sentinel group (primary, replica, three Sentinels) fails over when its
//! primary is SIGKILLed, and leaves nothing behind: not after it is dropped,
//! not after the failover lab that uses it is interrupted.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redislab_harness::servers::redis as redissrv;
use redislab_harness::servers::sentinel::{role, SentinelGroup, Settings};
use redislab_harness::testing::lab_binary;

fn alive(pid: u32) -> bool {
    // A zombie has exited; /proc/<pid>/stat says Z.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

fn conn(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .unwrap()
        .get_connection()
        .unwrap()
}

#[test]
fn a_sentinel_group_fails_over_and_leaves_nothing_when_dropped() {
    let bin = match redissrv::binaries() {
        Ok(bin) => bin,
        Err(e) if std::env::var_os("REDISLAB_REQUIRE_SERVERS").is_some() => panic!("{e}"),
        Err(e) => return eprintln!("SKIPPED: {e}"),
    };
    let mut group = SentinelGroup::start(&bin, Settings::default()).expect("the group starts");
    let first = group.primary_port().unwrap();
    let heir = group.replica_port();
    let mut pids = group.pids();
    let mut dirs = group.tempdirs();
    assert_eq!(pids.len(), 5, "primary, replica, 3 Sentinels");
    assert_eq!(role(first).unwrap(), "master");
    assert_eq!(role(heir).unwrap(), "slave");
    for port in group.sentinel_ports() {
        assert_eq!(role(port).unwrap(), "sentinel");
    }
    assert_eq!(group.master_port().unwrap(), first);

    // What the primary acknowledged with WAIT is on the replica after the failover.
    let mut c = conn(first);
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    let acked: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut c).unwrap();
    assert_eq!(acked, 1);
    drop(c);
    let killed = group.kill_primary().unwrap();
    assert!(!alive(pids[0]), "the killed primary is gone at once");
    let took = group
        .wait_for_promotion(killed)
        .expect("the replica is promoted");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert_eq!(group.master_port().unwrap(), heir);
    let mut c = conn(heir);
    let v: String = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, "v");
    let _: () = redis::cmd("SET").arg("k2").arg("w").query(&mut c).unwrap();
    drop(c);

    group.restart_primary_as_replica().unwrap();
    assert_eq!(role(first).unwrap(), "slave");
    pids.extend(group.pids());
    dirs.extend(group.tempdirs());
    drop(group);
    for pid in pids {
        assert!(!alive(pid), "process {pid} of the group still running");
    }
    for dir in dirs {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

/// Every live descendant of `root` (pid, command line).
fn descendants(root: u32) -> Vec<(u32, String)> {
    let all: Vec<(u32, u32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| alive(pid))
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let ppid = stat
                .rsplit(')')
                .next()?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default();
            Some((pid, ppid, cmd))
        })
        .collect();
    let mut tree = BTreeSet::from([root]);
    loop {
        let before = tree.len();
        for (pid, ppid, _) in &all {
            if tree.contains(ppid) {
                tree.insert(*pid);
            }
        }
        if tree.len() == before {
            break;
        }
    }
    all.into_iter()
        .filter(|(pid, _, _)| *pid != root && tree.contains(pid))
        .map(|(pid, _, cmd)| (pid, cmd))
        .collect()
}

/// The temporary directories the harness made for lab process `pid`.
fn tempdirs_of(pid: u32) -> Vec<PathBuf> {
    let mine = format!("-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("redislab-") && name.contains(&mine)
        })
        .map(|e| e.path())
        .collect()
}

#[test]
fn an_interrupted_failover_lab_leaves_no_server_or_directory() {
    let Some(bin) = lab_binary("05m-failover") else {
        return;
    };
    for (sig, after) in [
        (libc::SIGINT, "its Sentinels run"),
        (libc::SIGTERM, "a primary was killed"),
    ] {
        let stderr_path = std::env::temp_dir().join(format!(
            "sentinel-interrupt-{}-{sig}.stderr",
            std::process::id()
        ));
        let mut child = Command::new(&bin)
            .args(["--no-core", "--dry-run"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut seen: BTreeSet<u32> = BTreeSet::new();
        let deadline = Instant::now() + Duration::from_secs(90);
        // SIGINT once three Sentinels are up; SIGTERM once the first primary is
        // gone (some data server of the group died while the lab ran).
        let mut data_servers = BTreeSet::new();
        loop {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the lab exited before {after}: {}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
            assert!(Instant::now() < deadline, "no moment where {after}");
            let tree = descendants(pid);
            seen.extend(tree.iter().map(|(p, _)| *p));
            let sentinels: Vec<u32> = tree
                .iter()
                .filter(|(_, c)| c.contains("[sentinel]"))
                .map(|(p, _)| *p)
                .collect();
            let servers: Vec<u32> = tree
                .iter()
                .filter(|(_, c)| c.contains("redis-server") && !c.contains("[sentinel]"))
                .map(|(p, _)| *p)
                .collect();
            if sentinels.len() == 3 {
                data_servers.extend(servers.iter().copied());
            }
            let ready = match sig {
                libc::SIGINT => sentinels.len() == 3,
                _ => sentinels.len() == 3 && data_servers.iter().any(|p| !alive(*p)),
            };
            if ready {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(pid as i32, sig);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the lab did not exit in 30 s after the signal");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let _ = std::fs::remove_file(&stderr_path);
        assert_eq!(status.code(), Some(130), "{after}: {status:?}\n{stderr}");
        assert!(
            stderr.contains("interrupted; clean-up done"),
            "{after}: {stderr}"
        );
        for p in &seen {
            assert!(!alive(*p), "{after}: process {p} still running");
        }
        assert_eq!(tempdirs_of(pid), Vec::<PathBuf>::new(), "{after}");
    }
}
