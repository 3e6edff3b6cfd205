//! How a run ends: the list of what it must undo, and the one signal handler that
//! undoes it when the run is interrupted.
//!
//! A run leaves things behind in three places, and all of them are recorded here
//! (or, for claims on a user's servers, in [`crate::claims`]) as soon as they exist:
//!
//! * **servers it started** (pid and the signal that stops each one gracefully),
//!   registered by [`crate::servers::ManagedProcess`] right after the spawn;
//! * **temporary directories**, registered by [`crate::servers::make_tempdir`] the
//!   moment they are created, so a directory `initdb` is filling is known too;
//! * **claims on servers it did not start** (`--redis-url`, `--pg-url`): its key
//!   prefix and its schema, with every connection it opened to them.
//!
//! Other child processes (a lab's worker processes, `initdb`) are not registered:
//! the handler finds them as the children of this process in `/proc`.
//!
//! # The interrupt, step by step
//!
//! [`install`] (called by every lab's [`crate::lab::run`], whether or not it starts
//! a server, and by every server start) sets a handler for SIGINT, SIGTERM and
//! SIGHUP. The `ctrlc` crate runs it on a thread of its own, and that thread does
//! the whole shutdown:
//!
//! 1. the run's phase moves from *running* to *interrupted* (an atomic
//!    compare-and-swap, so it happens once, and never after the run finished);
//! 2. over **fresh connections** (the lab's own may be in the middle of a
//!    command), every connection the lab opened to a claimed server is cut
//!    (`CLIENT KILL ID`, `pg_terminate_backend`): no thread of the lab can write
//!    there any more, nor start a worker process after a command that fails;
//! 3. every child process that is not a registered server is killed (its whole
//!    process group if it leads one, as `initdb` does) and reaped, until none is
//!    left, so no worker process keeps writing;
//! 4. every claim is released: on a Redis the keys under the prefix are deleted
//!    (looking twice, 50 ms apart, for commands still in the server's buffers),
//!    children are looked for once more, and the claim marker is deleted last;
//!    on a PostgreSQL the schema is dropped;
//! 5. the servers it started are stopped and waited for, the temporary
//!    directories removed, shared memory of a dead PostgreSQL of ours removed;
//! 6. `std::process::exit(130)`.
//!
//! # Why nothing races
//!
//! The lab's threads are never asked to cooperate; they are made harmless:
//!
//! * a connection the lab opens to a claimed server is registered under the claim
//!   lock, after checking the phase under the same lock; the handler flips the
//!   phase *before* it reads the list. A connection opened before the flip is on
//!   the list (and killed); one opened after it is refused before any use;
//! * the main thread ends a run through [`finish`], which moves *running* to
//!   *finished*, or, if the handler got there first, parks the thread until the
//!   handler's `exit(130)`. [`crate::lab::run_with`] prints errors only after
//!   `finish`, so the errors an interrupt causes (killed connections, a stopped
//!   server) are never printed, and the exit status is 130, never 1;
//! * a panic on any thread after the interrupt parks that thread silently (a panic
//!   hook), for the same reason;
//! * the main thread may meanwhile undo some things itself (a server start cut
//!   short by the interrupt drops that server): every step above is idempotent,
//!   and a claim is deleted only if it still carries this run's token;
//! * a signal after `finish` is ignored: the run has already undone everything
//!   itself and is printing its table; it exits with its own status.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, Once, OnceLock};
use std::time::{Duration, Instant};

const RUNNING: u8 = 0;
const INTERRUPTED: u8 = 1;
const FINISHED: u8 = 2;

static PHASE: AtomicU8 = AtomicU8::new(RUNNING);
static LAB: OnceLock<String> = OnceLock::new();
static HANDLER: Once = Once::new();
/// Servers this run started: pid and graceful stop signal.
static SERVERS: Mutex<Vec<(u32, i32)>> = Mutex::new(Vec::new());
/// Temporary directories this run created and has not removed yet.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// How long the handler waits for a server to stop before it kills it.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a parked thread waits for the handler before it exits by itself (the
/// handler's own steps are all bounded by timeouts well below this).
const PARK_LIMIT: Duration = Duration::from_secs(120);

thread_local! {
    static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
}

/// A lock that a panic elsewhere cannot make unusable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Installs the handler (once per process) and names the lab in its messages.
pub fn install(lab: &str) {
    let _ = LAB.set(lab.to_string());
    install_handler();
}

/// Installs the handler without naming a lab (servers started by tests).
pub fn install_handler() {
    HANDLER.call_once(|| {
        let default_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if interrupted() && !IN_HANDLER.with(Cell::get) {
                park_forever();
            }
            default_hook(info);
        }));
        if let Err(e) = ctrlc::set_handler(on_signal) {
            eprintln!(
                "{}: cannot install the SIGINT/SIGTERM handler ({e}); an interrupted run will not clean up",
                lab_name()
            );
        }
    });
}

/// True once a signal has started the shutdown.
pub fn interrupted() -> bool {
    PHASE.load(Ordering::SeqCst) == INTERRUPTED
}

/// Ends the run's *running* phase. From here on a signal is ignored. If a signal
/// came first, the handler owns the shutdown and this never returns.
pub fn finish() {
    if PHASE
        .compare_exchange(RUNNING, FINISHED, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
        && interrupted()
    {
        park_forever();
    }
}

/// Blocks the calling thread while the handler shuts the run down. Bounded, in
/// case the handler itself died: then the thread exits with 130 on its own.
pub fn park_forever() -> ! {
    let start = Instant::now();
    while start.elapsed() < PARK_LIMIT {
        std::thread::sleep(Duration::from_millis(200));
    }
    std::process::exit(130);
}

fn lab_name() -> &'static str {
    LAB.get().map_or("harness", String::as_str)
}

pub(crate) fn register_server(pid: u32, stop_signal: i32) {
    lock(&SERVERS).push((pid, stop_signal));
}

pub(crate) fn forget_server(pid: u32) {
    lock(&SERVERS).retain(|(p, _)| *p != pid);
}

pub(crate) fn register_dir(dir: PathBuf) {
    lock(&DIRS).push(dir);
}

pub(crate) fn forget_dir(dir: &std::path::Path) {
    lock(&DIRS).retain(|d| d != dir);
}

fn on_signal() {
    if PHASE
        .compare_exchange(RUNNING, INTERRUPTED, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return;
    }
    IN_HANDLER.with(|h| h.set(true));
    let outcome = std::panic::catch_unwind(undo_everything);
    if outcome.is_err() {
        eprintln!(
            "{}: the clean-up after the interrupt failed (see above)",
            lab_name()
        );
    }
    std::process::exit(130);
}

fn undo_everything() {
    let lab = lab_name();
    eprintln!("\n{lab}: interrupted; undoing what this run did");
    // First no thread of the lab can write to a claimed server any more, so the
    // main thread cannot start another worker after its first failed command...
    let mut problems = crate::claims::cut_connections();
    // ...then its worker processes (and initdb) go...
    let servers: Vec<u32> = lock(&SERVERS).iter().map(|(p, _)| *p).collect();
    let mut killed = Vec::new();
    for _ in 0..50 {
        let round = kill_children(&servers);
        if round.is_empty() {
            break;
        }
        killed.extend(round);
    }
    // ...then what they wrote; should one more process have appeared meanwhile, it
    // is killed and its keys looked for again before the claim marker goes.
    problems.extend(crate::claims::release_all_interrupted(&mut || {
        let round = kill_children(&servers);
        let found = !round.is_empty();
        killed.extend(round);
        found
    }));
    if !killed.is_empty() {
        eprintln!(
            "{lab}: killed {} child process(es): {}",
            killed.len(),
            killed.join(", ")
        );
    }
    let stopped = stop_servers();
    let dirs: Vec<PathBuf> = lock(&DIRS).drain(..).collect();
    for dir in &dirs {
        crate::servers::shm::remove_from_dir(dir);
        if let Err(e) = std::fs::remove_dir_all(dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                eprintln!("{lab}: cannot remove {}: {e}", dir.display());
            }
        }
    }
    crate::servers::shm::sweep();
    for p in &problems {
        eprintln!("{lab}: {p}");
    }
    // The counts are what this thread found; the main thread may have stopped a
    // server or removed a directory itself after its start-up was cut short.
    eprintln!(
        "{lab}: interrupted; clean-up {} ({stopped} server(s) stopped, {} temporary dir(s) removed here); exiting with status 130",
        if problems.is_empty() {
            "done"
        } else {
            "incomplete (see above)"
        },
        dirs.len()
    );
}

/// One process as `/proc/<pid>/stat` describes it.
struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    name: String,
}

/// Every process, from `/proc`.
fn processes() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
            let open = stat.find('(')?;
            let close = stat.rfind(')')?;
            let name = stat.get(open + 1..close)?.to_string();
            let mut fields = stat[close + 1..].split_whitespace().skip(1);
            let ppid = fields.next()?.parse().ok()?;
            let pgrp = fields.next()?.parse().ok()?;
            Some(Proc {
                pid,
                ppid,
                pgrp,
                name,
            })
        })
        .collect()
}

/// Kills and reaps every child of this process that is not one of `servers`; a
/// child leading its own process group is killed with its group (initdb and the
/// bootstrap postgres it runs). Returns their names.
fn kill_children(servers: &[u32]) -> Vec<String> {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let children: Vec<Proc> = processes()
        .into_iter()
        .filter(|p| p.ppid == me && !servers.contains(&(p.pid as u32)))
        .collect();
    for &Proc { pid, pgrp, .. } in &children {
        // SAFETY: kill(2) on our own children (or the group one of them leads).
        unsafe {
            if pgrp == pid {
                libc::kill(-pid, libc::SIGKILL);
            } else {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    for &Proc { pid, pgrp, .. } in &children {
        // SAFETY: waitpid reaps our own child; kill(…, 0) only probes.
        unsafe {
            while Instant::now() < deadline {
                let reaped = libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
                let group_gone = pgrp != pid || libc::kill(-pid, 0) != 0;
                if reaped != 0 && group_gone {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
    children.into_iter().map(|p| p.name).collect()
}

/// Stops every registered server (all signalled at once, then each waited for)
/// and returns how many there were.
fn stop_servers() -> usize {
    let servers: Vec<(u32, i32)> = lock(&SERVERS).clone();
    for &(pid, sig) in &servers {
        // SAFETY: kill(2) on a server we started.
        unsafe {
            libc::kill(pid as i32, sig);
        }
    }
    let deadline = Instant::now() + STOP_TIMEOUT;
    for &(pid, _) in &servers {
        // SAFETY: waitpid reaps our own child; kill(…, 0) only probes.
        unsafe {
            while Instant::now() < deadline
                && libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) == 0
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            if libc::kill(pid as i32, 0) == 0 {
                eprintln!(
                    "{}: server {pid} did not stop in {STOP_TIMEOUT:?}; killing it",
                    lab_name()
                );
                libc::kill(pid as i32, libc::SIGKILL);
                libc::waitpid(pid as i32, std::ptr::null_mut(), 0);
            }
        }
        forget_server(pid);
    }
    servers.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_lists_this_process_with_its_parent() {
        let me = std::process::id() as i32;
        let found = processes().into_iter().find(|p| p.pid == me);
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        assert_eq!(found.as_ref().map(|p| p.ppid), Some(parent));
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_string_lossy();
        // The kernel keeps the first 15 bytes of the name.
        let short: String = name.chars().take(15).collect();
        assert_eq!(found.map(|p| p.name), Some(short));
    }
}
