//! Real servers on demand: found or built by the project's scripts, started on
//! 127.0.0.1 on a free port with data in a temporary directory, and stopped on every
//! way out of a run — normal exit, error, panic (through `Drop`), SIGINT, SIGTERM or
//! SIGHUP (through [`crate::shutdown`], which knows every server and temporary
//! directory of the run), and even a killed harness (the kernel sends the child a
//! signal when its parent dies; what that leaves — the temporary directory, a
//! PostgreSQL's System V segment — is removed by the next run, see [`shm`]).

pub mod cluster;
pub mod postgres;
pub mod redis;
pub mod sentinel;
pub mod shm;

use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{paths, shutdown};

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// Runs one of the project's `scripts/get-*.sh` and returns the directory it prints.
/// Its progress messages go straight to the terminal.
pub fn provision(script: &str, override_var: &str) -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os(override_var) {
        return Ok(PathBuf::from(dir));
    }
    let path = paths::scripts_dir().join(script);
    let out = Command::new("bash")
        .arg(&path)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed (see its messages above)",
            path.display()
        ));
    }
    let dir = String::from_utf8_lossy(&out.stdout)
        .trim()
        .lines()
        .last()
        .unwrap_or("")
        .to_string();
    if dir.is_empty() {
        return Err(format!("{} printed no directory", path.display()));
    }
    Ok(PathBuf::from(dir))
}

/// A child server process that is stopped, and its temporary directory removed,
/// when this value is dropped.
pub struct ManagedProcess {
    child: Child,
    name: &'static str,
    stop_signal: i32,
    tempdir: PathBuf,
}

impl ManagedProcess {
    /// Spawns `cmd` in its own process group (so a terminal's Ctrl-C reaches the
    /// harness first, which then stops it in order) with a parent-death signal.
    pub fn spawn(
        name: &'static str,
        mut cmd: Command,
        stop_signal: i32,
        tempdir: PathBuf,
    ) -> Result<Self, String> {
        shutdown::install_handler();
        cmd.process_group(0);
        // SAFETY: prctl is async-signal-safe and touches only the child's own state.
        unsafe {
            cmd.pre_exec(|| {
                // prctl is variadic and reads a full unsigned long: pass one.
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        shutdown::register_server(child.id(), stop_signal);
        Ok(ManagedProcess {
            child,
            name,
            stop_signal,
            tempdir,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// True while the process has not exited.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn tempdir(&self) -> &Path {
        &self.tempdir
    }

    /// Stops the process (its graceful signal, then SIGKILL after 10 s) and removes
    /// its directory. Doing it again does nothing more.
    pub(crate) fn stop(&mut self) {
        let pid = self.child.id();
        if self.is_running() {
            signal(pid, self.stop_signal);
            let deadline = Instant::now() + Duration::from_secs(10);
            while self.is_running() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if self.is_running() {
                eprintln!("harness: {} did not stop in 10 s; killing it", self.name);
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
        remove_tempdir(&self.tempdir);
        shutdown::forget_server(pid);
    }
}

impl ManagedProcess {
    /// Kills the process outright (SIGKILL: no shutdown, no last replies), reaps
    /// it and removes its directory: a crash, for the failover labs. Dropping the
    /// value afterwards does nothing more.
    pub(crate) fn kill(&mut self) {
        let pid = self.child.id();
        if self.is_running() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        remove_tempdir(&self.tempdir);
        shutdown::forget_server(pid);
    }
}

impl Drop for ManagedProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: plain kill(2) on a pid we started.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Creates a fresh temporary directory for one server, first removing any left by
/// an earlier run that was killed outright (its pid, in the name, no longer exists).
/// The directory is registered with [`crate::shutdown`] before it is returned, so
/// an interrupt removes it even while `initdb` is still filling it.
pub fn make_tempdir(prefix: &str) -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    remove_orphaned_tempdirs(&base);
    for attempt in 0..100u32 {
        let dir = base.join(format!(
            "redislab-{prefix}-{}-{attempt}",
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                shutdown::register_dir(dir.clone());
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
    }
    Err("cannot create a temporary directory".into())
}

/// Removes a directory made by [`make_tempdir`] and forgets it; first the System V
/// segment of a PostgreSQL that died in it, if any (one killed during `initdb`).
pub fn remove_tempdir(dir: &Path) {
    shm::remove_from_dir(dir);
    let _ = std::fs::remove_dir_all(dir);
    shutdown::forget_dir(dir);
}

fn remove_orphaned_tempdirs(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // redislab-<kind>-<pid>-<attempt>
        let parts: Vec<&str> = name.split('-').collect();
        if parts.len() != 4 || parts[0] != "redislab" {
            continue;
        }
        let Ok(pid) = parts[2].parse::<u32>() else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            // A PostgreSQL killed with its run names its System V segment here.
            shm::remove_from_dir(&entry.path());
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Polls `ready` until it succeeds, the process dies, or `timeout` passes.
pub fn wait_until_ready(
    process: &mut ManagedProcess,
    timeout: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        if ready() {
            return Ok(());
        }
        if !process.is_running() {
            return Err(format!("{} exited during start-up", process.name));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "{} did not become ready in {timeout:?}",
                process.name
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
