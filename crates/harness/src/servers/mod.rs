//! Real servers on demand: found or built by the project's scripts, started on
//! 127.0.0.1 on a free port with data in a temporary directory, and stopped on every
//! way out of a run — normal exit, error, panic (through `Drop`), Ctrl-C or SIGTERM
//! (through a signal handler that stops whatever is registered), and even a killed
//! harness (the kernel sends the child a signal when its parent dies).

pub mod cluster;
pub mod postgres;
pub mod redis;

use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use crate::paths;

/// Processes started by this run, for the signal handler.
static RUNNING: Mutex<Vec<(u32, i32, PathBuf)>> = Mutex::new(Vec::new());
static HANDLER: Once = Once::new();

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
        install_signal_handler();
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
        RUNNING
            .lock()
            .unwrap()
            .push((child.id(), stop_signal, tempdir.clone()));
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

    fn stop(&mut self) {
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
        let _ = std::fs::remove_dir_all(&self.tempdir);
        RUNNING.lock().unwrap().retain(|(p, _, _)| *p != pid);
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

fn install_signal_handler() {
    HANDLER.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            eprintln!("\nharness: interrupted; stopping the servers this run started");
            stop_everything_registered();
            std::process::exit(130);
        });
    });
}

/// Used by the signal handler: stops every registered process and waits for it.
fn stop_everything_registered() {
    let running: Vec<_> = RUNNING.lock().map(|r| r.clone()).unwrap_or_default();
    for (pid, sig, _) in &running {
        signal(*pid, *sig);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    for (pid, _, dir) in &running {
        // SAFETY: kill with signal 0 only probes whether the pid exists; waitpid
        // reaps our own child so it does not linger as a zombie.
        while Instant::now() < deadline
            && unsafe { libc::waitpid(*pid as i32, std::ptr::null_mut(), libc::WNOHANG) } == 0
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        if unsafe { libc::kill(*pid as i32, 0) } == 0 {
            signal(*pid, libc::SIGKILL);
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Creates a fresh temporary directory for one server, first removing any left by
/// an earlier run that was killed outright (its pid, in the name, no longer exists).
pub fn make_tempdir(prefix: &str) -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    remove_orphaned_tempdirs(&base);
    for attempt in 0..100u32 {
        let dir = base.join(format!(
            "redislab-{prefix}-{}-{attempt}",
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
    }
    Err("cannot create a temporary directory".into())
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
