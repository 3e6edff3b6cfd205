//! System V shared memory that a killed PostgreSQL leaves behind, and its removal.
//!
//! Besides its main shared memory (anonymous `mmap`, gone with the processes),
//! PostgreSQL keeps a small System V segment as an interlock. A postmaster that
//! stops removes it; one that is SIGKILLed — which is what the parent-death signal
//! does when the harness itself is SIGKILLed — does not, and since every run has a
//! new data directory (the key derives from it), no later server reuses it: each
//! such kill leaked one segment for good.
//!
//! **What is ours.** Every PostgreSQL the harness starts has its segment (id, key
//! and creator pid: the postmaster's pid and line 7 of `postmaster.pid`) recorded
//! in a registry file in the server cache, `pg-shm-segments`; the temporary
//! directory a dead run left names its segment in its `postmaster.pid` as well.
//!
//! **What is removed.** A recorded segment is removed (`IPC_RMID`) only if it still
//! is that segment (same id, key and creator pid), its creator is dead, and no
//! process is attached to it. A live server's segment, a segment still attached
//! (e.g. by backends of a killed postmaster that have not exited yet: the next
//! sweep gets it), or anyone else's is left alone. Sweeps run when a PostgreSQL
//! starts, when one is stopped, and at the end of an interrupted run.

use std::fs::OpenOptions;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// One System V segment, as PostgreSQL's `postmaster.pid` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub shmid: i32,
    pub key: i32,
    /// The postmaster that created it.
    pub creator: i32,
}

/// What [`remove_if_orphaned`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The id no longer names this segment (removed, or reused for another).
    Gone,
    /// It was ours, its creator dead and nobody attached: removed now.
    Removed,
    /// Its creator is alive.
    CreatorAlive,
    /// Its creator is dead but processes are still attached.
    Attached,
    /// It cannot be inspected or removed (permissions).
    Inaccessible,
}

const REGISTRY: &str = "pg-shm-segments";

fn registry() -> Option<PathBuf> {
    crate::paths::cache_dir().map(|d| d.join(REGISTRY))
}

/// The segment named in `<data>/postmaster.pid`: line 1 is the postmaster's pid
/// (negative for the standalone backend `initdb` runs, which has a segment too),
/// line 7 `<key> <shmid>`.
pub fn from_postmaster_pid(data: &Path) -> Option<Segment> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let creator = lines.first()?.trim().parse::<i32>().ok()?.checked_abs()?;
    let mut ids = lines.get(6)?.split_whitespace();
    // The key is written as an unsigned number; key_t is a signed int.
    let key = ids.next()?.parse::<u32>().ok()? as i32;
    let shmid = ids.next()?.parse().ok()?;
    Some(Segment {
        shmid,
        key,
        creator,
    })
}

/// True while `pid` runs; a zombie (exited, not yet reaped by its new parent) is
/// dead: it has detached from everything.
fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        }
        // Unreadable but present: count it as alive, never remove its segment.
        Err(_) => Path::new(&format!("/proc/{pid}")).exists(),
    }
}

/// Removes `seg` if it still is that segment, its creator is dead and nobody is
/// attached; otherwise leaves it alone and says why.
pub fn remove_if_orphaned(seg: Segment) -> Status {
    // SAFETY: shmid_ds is plain data; shmctl fills it or fails.
    let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
    if unsafe { libc::shmctl(seg.shmid, libc::IPC_STAT, &mut ds) } != 0 {
        return match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EACCES) | Some(libc::EPERM) => Status::Inaccessible,
            _ => Status::Gone,
        };
    }
    if ds.shm_perm.__key != seg.key || ds.shm_cpid != seg.creator {
        return Status::Gone;
    }
    if alive(seg.creator) {
        return Status::CreatorAlive;
    }
    if ds.shm_nattch > 0 {
        return Status::Attached;
    }
    // SAFETY: IPC_RMID takes no buffer.
    if unsafe { libc::shmctl(seg.shmid, libc::IPC_RMID, std::ptr::null_mut()) } == 0 {
        Status::Removed
    } else {
        Status::Inaccessible
    }
}

/// Opens the registry and locks it against other runs (released on close).
fn open_locked(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}

fn parse(line: &str) -> Option<Segment> {
    let mut f = line.split_whitespace().map(str::parse::<i32>);
    Some(Segment {
        shmid: f.next()?.ok()?,
        key: f.next()?.ok()?,
        creator: f.next()?.ok()?,
    })
}

/// Adds `seg` to the registry of the server cache.
pub fn record(seg: Segment) {
    if let Some(path) = registry() {
        if let Err(e) = record_in(&path, seg) {
            eprintln!(
                "harness: cannot record PostgreSQL's shared memory in {}: {e}",
                path.display()
            );
        }
    }
}

pub fn record_in(path: &Path, seg: Segment) -> std::io::Result<()> {
    let mut file = open_locked(path)?;
    file.seek(std::io::SeekFrom::End(0))?;
    writeln!(file, "{} {} {}", seg.shmid, seg.key, seg.creator)
}

/// Removes the segment a server left in the temporary directory `dir` (its
/// `data/postmaster.pid`), if its creator is dead; a segment still attached is
/// recorded for a later sweep. Called before such a directory is removed.
pub fn remove_from_dir(dir: &Path) {
    if let Some(seg) = from_postmaster_pid(&dir.join("data")) {
        let status = remove_if_orphaned(seg);
        if !matches!(status, Status::Gone | Status::Removed) {
            record(seg);
        }
    }
}

/// Removes every recorded segment whose server is dead; returns how many.
pub fn sweep() -> usize {
    match registry() {
        Some(path) if path.exists() => sweep_in(&path).unwrap_or_else(|e| {
            eprintln!("harness: cannot sweep {}: {e}", path.display());
            0
        }),
        _ => 0,
    }
}

/// [`sweep`] on the registry at `path`: entries whose segment is gone or was
/// removed are dropped, the others kept for a later sweep.
pub fn sweep_in(path: &Path) -> std::io::Result<usize> {
    let mut file = open_locked(path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let mut keep: Vec<Segment> = Vec::new();
    let mut removed = 0;
    for seg in text.lines().filter_map(parse) {
        if keep.contains(&seg) {
            continue;
        }
        match remove_if_orphaned(seg) {
            Status::Removed => removed += 1,
            Status::Gone => {}
            Status::CreatorAlive | Status::Attached | Status::Inaccessible => keep.push(seg),
        }
    }
    let body: String = keep
        .iter()
        .map(|s| format!("{} {} {}\n", s.shmid, s.key, s.creator))
        .collect();
    file.set_len(0)?;
    file.seek(std::io::SeekFrom::Start(0))?;
    file.write_all(body.as_bytes())?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A segment created by a child process that has exited: what a killed
    /// postmaster leaves.
    fn segment_of_a_dead_process() -> Segment {
        let mut fds = [0; 2];
        // SAFETY: pipe, fork; the child only calls async-signal-safe functions
        // (shmget, write, _exit) before it exits.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let pid = libc::fork();
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                let id = libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600);
                libc::write(fds[1], (&id as *const i32).cast(), 4);
                libc::_exit(0);
            }
            let mut id = 0i32;
            assert_eq!(libc::read(fds[0], (&mut id as *mut i32).cast(), 4), 4);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
            libc::close(fds[0]);
            libc::close(fds[1]);
            assert!(id >= 0, "shmget failed in the child");
            Segment {
                shmid: id,
                key: libc::IPC_PRIVATE,
                creator: pid,
            }
        }
    }

    fn exists(shmid: i32) -> bool {
        // SAFETY: as in remove_if_orphaned.
        let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
        unsafe { libc::shmctl(shmid, libc::IPC_STAT, &mut ds) == 0 }
    }

    #[test]
    fn a_dead_creators_segment_is_removed_and_only_when_it_matches() {
        let seg = segment_of_a_dead_process();
        assert!(exists(seg.shmid));
        // Another creator or another key: not the segment we recorded.
        let other_creator = Segment {
            creator: seg.creator + 1,
            ..seg
        };
        assert_eq!(remove_if_orphaned(other_creator), Status::Gone);
        let other_key = Segment { key: 1234, ..seg };
        assert_eq!(remove_if_orphaned(other_key), Status::Gone);
        assert!(
            exists(seg.shmid),
            "a mismatching record removed the segment"
        );
        assert_eq!(remove_if_orphaned(seg), Status::Removed);
        assert!(!exists(seg.shmid));
        assert_eq!(remove_if_orphaned(seg), Status::Gone);
    }

    #[test]
    fn a_live_creators_segment_is_kept() {
        // SAFETY: a private segment of this (live) process, removed at the end.
        let id = unsafe { libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600) };
        assert!(id >= 0);
        let seg = Segment {
            shmid: id,
            key: libc::IPC_PRIVATE,
            creator: std::process::id() as i32,
        };
        assert_eq!(remove_if_orphaned(seg), Status::CreatorAlive);
        assert!(exists(id));
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    }

    #[test]
    fn the_registry_forgets_what_it_removed_and_keeps_the_rest() {
        let dir = std::env::temp_dir().join(format!("redislab-shmtest-{}", std::process::id()));
        let path = dir.join(REGISTRY);
        let dead = segment_of_a_dead_process();
        // SAFETY: as above.
        let live_id = unsafe { libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600) };
        let live = Segment {
            shmid: live_id,
            key: libc::IPC_PRIVATE,
            creator: std::process::id() as i32,
        };
        record_in(&path, dead).unwrap();
        record_in(&path, dead).unwrap();
        record_in(&path, live).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"not a line\n")
            .unwrap();
        assert_eq!(sweep_in(&path).unwrap(), 1);
        assert!(!exists(dead.shmid) && exists(live.shmid));
        let left = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            left,
            format!("{} {} {}\n", live.shmid, live.key, live.creator)
        );
        unsafe { libc::shmctl(live_id, libc::IPC_RMID, std::ptr::null_mut()) };
        assert_eq!(sweep_in(&path).unwrap(), 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn postmaster_pid_names_the_segment() {
        let dir = std::env::temp_dir().join(format!("redislab-pmtest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("postmaster.pid"),
            "18187\n/tmp/x/data\n1796115825\n45035\n\n127.0.0.1\n 10018916        19\nready   \n",
        )
        .unwrap();
        assert_eq!(
            from_postmaster_pid(&dir),
            Some(Segment {
                shmid: 19,
                key: 10018916,
                creator: 18187
            })
        );
        std::fs::write(
            dir.join("postmaster.pid"),
            "-24302\n/tmp/x/data\n1796115825\n0\n\n\n 10018916        31\n",
        )
        .unwrap();
        assert_eq!(
            from_postmaster_pid(&dir).map(|s| (s.creator, s.shmid)),
            Some((24302, 31)),
            "a standalone backend's pid is written negative"
        );
        std::fs::write(dir.join("postmaster.pid"), "18187\n").unwrap();
        assert_eq!(from_postmaster_pid(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
