//! Interrupted labs. Against a user's Redis and PostgreSQL (private servers stand in
//! for them here) a SIGINT or SIGTERM at any moment leaves nothing of the lab — no
//! key under `redislab:<id>:`, no schema `redislab_<id>`, no worker process —,
//! touches nothing else, and exits with status 130. Two runs of one lab on one
//! server claim it once. An interrupted `initdb` leaves no directory, process or
//! shared memory; the System V segment of a SIGKILLed PostgreSQL is removed by the
//! next start.
//!
//! The labs run as the real binaries (`target/<profile>/lab-<id>`, built by
//! `./run.sh test` before the tests). `measure_interrupted_runs` (ignored by
//! default) is the measurement quoted in the README:
//!
//! ```sh
//! REDISLAB_INTERRUPT_RUNS=20 cargo nextest run --release -p redislab-harness \
//!     --run-ignored only --no-capture measure_interrupted_runs
//! ```

use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use redislab_harness::servers::postgres::PgServer;
use redislab_harness::servers::redis::RedisServer;
use redislab_harness::testing::{lab_binary, pg_for_test, redis_for_test};

/// The "user's" servers, with some of the user's own data on them.
struct External {
    redis: RedisServer,
    pg: Option<PgServer>,
}

/// Keys of the user's that no lab may touch (one shares the lab's prefix up to
/// the colon, one is another lab's).
const USER_KEYS: [(&str, &str); 3] = [
    ("user:keep", "mine"),
    ("redislab:05e-delayedX", "a sibling of the lab's prefix"),
    ("redislab:other-lab:k", "another lab's"),
];

impl External {
    fn start(with_pg: bool) -> Option<External> {
        let redis = redis_for_test()?;
        let pg = if with_pg { Some(pg_for_test()?) } else { None };
        let ext = External { redis, pg };
        ext.place_user_data();
        Some(ext)
    }

    fn redis_url(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.redis.port)
    }

    fn pg_url(&self) -> String {
        self.pg.as_ref().expect("started with PostgreSQL").url()
    }

    fn redis(&self, db: u8) -> redis::Connection {
        redis::Client::open(self.redis_url(db))
            .and_then(|c| c.get_connection())
            .expect("the test's own connection")
    }

    fn pg(&self) -> postgres::Client {
        postgres::Client::connect(&self.pg_url(), postgres::NoTls).expect("the test's own client")
    }

    /// `--redis-url … [--pg-url …] --dry-run`.
    fn lab_args(&self) -> Vec<String> {
        let mut args = vec!["--redis-url".to_string(), self.redis_url(0)];
        if self.pg.is_some() {
            args.extend(["--pg-url".to_string(), self.pg_url()]);
        }
        args.push("--dry-run".into());
        args
    }

    fn place_user_data(&self) {
        let mut r = self.redis(0);
        for (k, v) in USER_KEYS {
            let _: () = redis::cmd("SET").arg(k).arg(v).query(&mut r).unwrap();
        }
        if self.pg.is_some() {
            self.pg()
                .batch_execute(
                    "CREATE TABLE public.user_keep (v int); INSERT INTO public.user_keep VALUES (42);
                     CREATE SCHEMA redislab_other; CREATE TABLE redislab_other.t (v int)",
                )
                .unwrap();
        }
    }

    fn assert_user_data_intact(&self, when: &str) {
        let mut r = self.redis(0);
        for (k, v) in USER_KEYS {
            let got: Option<String> = redis::cmd("GET").arg(k).query(&mut r).unwrap();
            assert_eq!(got.as_deref(), Some(v), "{when}: the user's key {k}");
        }
        if self.pg.is_some() {
            let mut pg = self.pg();
            let v: i32 = pg
                .query_one("SELECT v FROM public.user_keep", &[])
                .unwrap()
                .get(0);
            assert_eq!(v, 42, "{when}: the user's table");
            let other: bool = pg
                .query_one("SELECT to_regclass('redislab_other.t') IS NOT NULL", &[])
                .unwrap()
                .get(0);
            assert!(other, "{when}: another lab's schema was touched");
        }
    }

    /// Everything of lab `id` on the servers: its keys (db 0 and 1) and its schema.
    fn leftovers(&self, id: &str) -> Vec<String> {
        let mut left = Vec::new();
        for db in [0, 1] {
            let mut r = self.redis(db);
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(format!("redislab:{id}:*"))
                .query(&mut r)
                .unwrap();
            left.extend(keys.into_iter().map(|k| format!("db{db} key {k}")));
        }
        if self.pg.is_some() {
            let schema = schema_of(id);
            let exists: bool = self
                .pg()
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
                    &[&schema],
                )
                .unwrap()
                .get(0);
            if exists {
                left.push(format!("schema {schema}"));
            }
        }
        left
    }

    /// Lab `id`'s keys with their values' types, its marker, and its tables: what
    /// must not change while another run is refused.
    fn snapshot(&self, id: &str) -> (Vec<String>, Option<String>, Vec<String>) {
        let mut r = self.redis(0);
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("redislab:{id}:*"))
            .query(&mut r)
            .unwrap();
        keys.sort();
        let marker: Option<String> = redis::cmd("GET")
            .arg(format!("redislab:{id}:__claim__"))
            .query(&mut r)
            .unwrap();
        let tables = self
            .pg()
            .query(
                "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1",
                &[&schema_of(id)],
            )
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        (keys, marker, tables)
    }
}

fn schema_of(id: &str) -> String {
    format!("redislab_{}", id.replace('-', "_"))
}

/// A lab process, its stderr captured in a file.
struct Run {
    child: Child,
    stderr: PathBuf,
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("interrupt-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

impl Run {
    fn spawn(bin: &Path, args: &[String]) -> Run {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stderr = scratch_dir().join(format!("run-{n}.stderr"));
        let child = Command::new(bin)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        Run { child, stderr }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(self.pid(), sig);
        }
    }

    fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits for the exit; kills the lab and fails after `timeout`.
    fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the lab did not exit in {timeout:?}; stderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Polls `cond` every 2 ms until it holds; fails if the lab exits first or
    /// `timeout` passes.
    fn wait_until(&mut self, what: &str, timeout: Duration, mut cond: impl FnMut(&Run) -> bool) {
        let deadline = Instant::now() + timeout;
        loop {
            if cond(self) {
                return;
            }
            if let Some(status) = self.try_wait() {
                panic!(
                    "the lab exited ({status:?}) before {what}; stderr:\n{}",
                    self.stderr()
                );
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("no {what} within {timeout:?}; stderr:\n{}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Run {
    /// A failed test must not leave a lab running, nor its stderr file.
    fn drop(&mut self) {
        if self.try_wait().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.stderr);
        if let Some(dir) = self.stderr.parent() {
            // Only once the last run's file is gone.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The exit a graceful interrupt must give, with the handler's last words.
fn assert_interrupted(status: ExitStatus, run: &Run, when: &str) {
    let stderr = run.stderr();
    assert_eq!(
        status.code(),
        Some(130),
        "{when}: exit {status:?}; stderr:\n{stderr}"
    );
    assert!(
        stderr.contains("interrupted; clean-up done"),
        "{when}: stderr:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{when}: stderr:\n{stderr}");
}

/// A process as /proc describes it: parent, name, command line; None once it is
/// gone or a zombie.
fn proc_info(pid: i32) -> Option<(i32, String, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.rfind(')')?;
    let name = stat[stat.find('(')? + 1..close].to_string();
    let mut fields = stat[close + 1..].split_whitespace();
    if fields.next()? == "Z" {
        return None;
    }
    let ppid = fields.next()?.parse().ok()?;
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default();
    Some((ppid, name, cmdline))
}

fn alive(pid: i32) -> bool {
    proc_info(pid).is_some()
}

/// Every live descendant of `root`: (pid, name, command line).
fn descendants(root: i32) -> Vec<(i32, String, String)> {
    let all: Vec<(i32, i32, String, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| proc_info(pid).map(|(ppid, n, c)| (pid, ppid, n, c)))
        .collect();
    let mut tree = BTreeSet::from([root]);
    loop {
        let before = tree.len();
        for (pid, ppid, _, _) in &all {
            if tree.contains(ppid) {
                tree.insert(*pid);
            }
        }
        if tree.len() == before {
            break;
        }
    }
    all.into_iter()
        .filter(|(pid, _, _, _)| *pid != root && tree.contains(pid))
        .map(|(pid, _, n, c)| (pid, n, c))
        .collect()
}

/// The temporary directories the harness made for lab process `pid`.
fn tempdirs_of(pid: i32, kind: &str) -> Vec<PathBuf> {
    let prefix = format!("redislab-{kind}-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// A System V segment as /proc/sysvipc/shm lists it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shm {
    key: i64,
    shmid: i64,
    cpid: i32,
    nattch: i64,
}

fn segments() -> Vec<Shm> {
    let text = std::fs::read_to_string("/proc/sysvipc/shm").unwrap_or_default();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (Some(k), Some(id), Some(cpid), Some(nattch)) =
        (col("key"), col("shmid"), col("cpid"), col("nattch"))
    else {
        return Vec::new();
    };
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(Shm {
                key: f.get(k)?.parse().ok()?,
                shmid: f.get(id)?.parse().ok()?,
                cpid: f.get(cpid)?.parse().ok()?,
                nattch: f.get(nattch)?.parse().ok()?,
            })
        })
        .collect()
}

/// Line 1 (pid) and line 7 (key, shmid) of a data directory's postmaster.pid.
fn postmaster_segment(data: &Path) -> Option<(i32, i64, i64)> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let pid = lines.first()?.trim().parse().ok()?;
    let mut ids = lines.get(6)?.split_whitespace();
    Some((pid, ids.next()?.parse().ok()?, ids.next()?.parse().ok()?))
}

const LAB: &str = "05e-delayed";
const JOBS_KEY: &str = "redislab:05e-delayed:jobs";
const MARKER: &str = "redislab:05e-delayed:__claim__";

fn exists(ext: &External, key: &str) -> bool {
    let n: i64 = redis::cmd("EXISTS")
        .arg(key)
        .query(&mut ext.redis(0))
        .unwrap_or(0);
    n == 1
}

fn table_exists(ext: &External, table: &str) -> bool {
    ext.pg()
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .map(|r| r.get(0))
        .unwrap_or(false)
}

#[test]
fn sigint_and_sigterm_on_a_users_servers_leave_nothing_of_the_lab() {
    let Some(bin) = lab_binary(LAB) else { return };
    let Some(ext) = External::start(true) else {
        return;
    };
    type Reached = dyn Fn(&External, &Run) -> bool;
    let cases: [(&str, i32, &[&str], &Reached); 4] = [
        (
            "SIGINT right after the prefix is claimed",
            libc::SIGINT,
            &[],
            &|ext, _| exists(ext, MARKER),
        ),
        (
            "SIGTERM while 10 worker threads pop jobs on Redis",
            libc::SIGTERM,
            &["--no-core"],
            &|ext, _| exists(ext, JOBS_KEY),
        ),
        (
            "SIGINT while 10 PostgreSQL workers hold row locks",
            libc::SIGINT,
            &["--no-core"],
            &|ext, _| table_exists(ext, "redislab_05e_delayed.jobs"),
        ),
        (
            "SIGTERM after the steps, every key and table still there",
            libc::SIGTERM,
            &["--no-core", "--hold-ms", "30000"],
            &|_, run| run.stderr().contains("holding the servers"),
        ),
    ];
    for (when, sig, extra, reached) in cases {
        let mut args = ext.lab_args();
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut run = Run::spawn(&bin, &args);
        run.wait_until(when, Duration::from_secs(60), |run| reached(&ext, run));
        let present = ext.leftovers(LAB);
        run.signal(sig);
        assert!(
            !present.is_empty(),
            "{when}: the lab had nothing on the servers yet"
        );
        let status = run.wait(Duration::from_secs(30));
        assert_interrupted(status, &run, when);
        assert_eq!(
            ext.leftovers(LAB),
            Vec::<String>::new(),
            "{when}: left behind (there were {} things before the signal)",
            present.len()
        );
        ext.assert_user_data_intact(when);
    }
}

#[test]
fn an_interrupt_kills_the_labs_worker_processes_before_it_deletes_their_keys() {
    let id = "zsb-delayed-lua";
    let Some(bin) = lab_binary(id) else { return };
    let Some(ext) = External::start(false) else {
        return;
    };
    // The lab SIGKILLs one of 4 worker processes per design; the signal comes while
    // they take jobs from the queue (the plain design, then the lease design).
    let mut args = ext.lab_args();
    args.push("--no-core".into());
    for (design, sig) in [("plain", libc::SIGTERM), ("lease", libc::SIGINT)] {
        let when = format!("signal {sig} while the {design} workers run");
        let mut run = Run::spawn(&bin, &args);
        let mut workers = Vec::new();
        run.wait_until(&when, Duration::from_secs(60), |run| {
            workers = descendants(run.pid())
                .into_iter()
                .filter(|(_, _, cmd)| {
                    let args: Vec<&str> = cmd.split_whitespace().collect();
                    args.contains(&"--worker") && args.contains(&design)
                })
                .map(|(pid, _, _)| pid)
                .collect();
            workers.len() >= 3
        });
        let present = ext.leftovers(id);
        // Only the lab gets the signal (not its process group, as a terminal's
        // Ctrl-C would): the workers must be stopped by the lab itself.
        run.signal(sig);
        assert!(
            present.iter().any(|k| k.contains(&format!("{design}:"))),
            "{when}: no queue on the server yet: {present:?}"
        );
        let status = run.wait(Duration::from_secs(30));
        assert_interrupted(status, &run, &when);
        for pid in &workers {
            assert!(!alive(*pid), "{when}: worker {pid} still running");
        }
        assert_eq!(ext.leftovers(id), Vec::<String>::new(), "{when}");
        ext.assert_user_data_intact(&when);
    }
}

#[test]
fn two_runs_of_one_lab_on_one_server_claim_it_exactly_once() {
    let Some(bin) = lab_binary(LAB) else { return };
    let Some(ext) = External::start(true) else {
        return;
    };
    let mut args = ext.lab_args();
    args.push("--no-core".into());

    // Started together: one claims the prefix and runs, the other is refused.
    let mut a = Run::spawn(&bin, &args);
    let mut b = Run::spawn(&bin, &args);
    let (sa, sb) = (
        a.wait(Duration::from_secs(60)),
        b.wait(Duration::from_secs(60)),
    );
    let mut codes = [sa.code(), sb.code()];
    codes.sort();
    assert_eq!(
        codes,
        [Some(0), Some(1)],
        "A: {sa:?}\n{}\nB: {sb:?}\n{}",
        a.stderr(),
        b.stderr()
    );
    let loser = if sa.code() == Some(1) { &a } else { &b };
    assert!(
        loser
            .stderr()
            .contains("is claimed by another run of this lab"),
        "{}",
        loser.stderr()
    );
    assert_eq!(ext.leftovers(LAB), Vec::<String>::new());

    // A run holding its claim (keys, marker, tables) is not disturbed by runs that
    // are refused at the Redis prefix, at the schema, or at the schema after
    // claiming a prefix elsewhere (db 1).
    let mut held = args.clone();
    held.extend(["--hold-ms".into(), "30000".into()]);
    let mut a = Run::spawn(&bin, &held);
    a.wait_until("A holding its servers", Duration::from_secs(60), |run| {
        run.stderr().contains("holding the servers")
    });
    let before = ext.snapshot(LAB);
    assert!(
        before.0.len() > 1 && before.1.is_some() && !before.2.is_empty(),
        "A has keys, a marker and tables: {before:?}"
    );
    let pg_url = ext.pg_url();
    let refused: [(&str, Vec<String>, &str); 3] = [
        (
            "same Redis, same PostgreSQL",
            args.clone(),
            "is claimed by another run of this lab",
        ),
        (
            "no Redis, same PostgreSQL",
            vec![
                "--no-redis".into(),
                "--no-core".into(),
                "--pg-url".into(),
                pg_url.clone(),
                "--dry-run".into(),
            ],
            "in use by another run of this lab",
        ),
        (
            "Redis db 1, same PostgreSQL",
            vec![
                "--redis-url".into(),
                ext.redis_url(1),
                "--no-core".into(),
                "--pg-url".into(),
                pg_url,
                "--dry-run".into(),
            ],
            "in use by another run of this lab",
        ),
    ];
    for (what, args, message) in refused {
        let mut b = Run::spawn(&bin, &args);
        let status = b.wait(Duration::from_secs(30));
        assert_eq!(status.code(), Some(1), "{what}: {}", b.stderr());
        assert!(b.stderr().contains(message), "{what}: {}", b.stderr());
        assert_eq!(ext.snapshot(LAB), before, "{what}: A's claim was touched");
    }
    let mut db1 = ext.redis(1);
    let db1_keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut db1).unwrap();
    assert_eq!(
        db1_keys,
        Vec::<String>::new(),
        "the run refused at the schema released its prefix in db 1"
    );
    a.signal(libc::SIGINT);
    let status = a.wait(Duration::from_secs(30));
    assert_interrupted(status, &a, "A");
    assert_eq!(ext.leftovers(LAB), Vec::<String>::new());
    ext.assert_user_data_intact("after both parts");
}

#[test]
fn an_interrupted_initdb_leaves_no_directory_process_or_segment() {
    let Some(bin) = lab_binary("05a-order") else {
        return;
    };
    let args: Vec<String> = ["--no-redis", "--no-core", "--dry-run"]
        .map(String::from)
        .to_vec();
    for (sig, stage, name) in [
        (libc::SIGINT, "initdb running", "initdb"),
        (
            libc::SIGTERM,
            "initdb's bootstrap backend running",
            "postgres",
        ),
    ] {
        let mut run = Run::spawn(&bin, &args);
        let mut seen = BTreeSet::new();
        run.wait_until(stage, Duration::from_secs(60), |run| {
            let tree = descendants(run.pid());
            seen.extend(tree.iter().map(|(pid, _, _)| *pid));
            let has = |n: &str| tree.iter().any(|(_, pname, _)| pname == n);
            has("initdb") && has(name)
        });
        let dirs = tempdirs_of(run.pid(), "pg");
        run.signal(sig);
        assert!(!dirs.is_empty(), "{stage}: no data directory yet");
        let status = run.wait(Duration::from_secs(30));
        assert_interrupted(status, &run, stage);
        for dir in &dirs {
            assert!(!dir.exists(), "{stage}: {} left behind", dir.display());
        }
        for pid in &seen {
            assert!(!alive(*pid), "{stage}: process {pid} still running");
        }
        let leaked: Vec<Shm> = segments()
            .into_iter()
            .filter(|s| seen.contains(&s.cpid))
            .collect();
        assert_eq!(leaked, Vec::new(), "{stage}: shared memory left");
    }
}

#[test]
fn the_segment_of_a_sigkilled_postgres_is_removed_by_the_next_start() {
    let Some(bin) = lab_binary("05a-order") else {
        return;
    };
    let args: Vec<String> = ["--no-redis", "--no-core", "--dry-run", "--hold-ms", "30000"]
        .map(String::from)
        .to_vec();
    let mut run = Run::spawn(&bin, &args);
    run.wait_until("the lab's PostgreSQL up", Duration::from_secs(60), |run| {
        run.stderr().contains("holding the servers")
    });
    let dir = tempdirs_of(run.pid(), "pg")
        .pop()
        .expect("the lab's pg directory");
    let (postmaster, key, shmid) =
        postmaster_segment(&dir.join("data")).expect("postmaster.pid names a segment");
    // The harness killed outright: its PostgreSQL gets the parent-death SIGKILL.
    run.signal(libc::SIGKILL);
    run.wait(Duration::from_secs(10));
    let leaked = |s: &Shm| s.shmid == shmid && s.key == key && s.cpid == postmaster;
    let deadline = Instant::now() + Duration::from_secs(15);
    while alive(postmaster) || segments().iter().any(|s| leaked(s) && s.nattch > 0) {
        assert!(
            Instant::now() < deadline,
            "postmaster {postmaster} or its backends still up"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        segments().iter().any(leaked),
        "the SIGKILLed postmaster's segment {shmid} is there before the next start"
    );
    // Even when the dead run's directory is gone (a cleaned /tmp), the registry in
    // the cache knows the segment.
    std::fs::remove_dir_all(&dir).unwrap();
    let Some(server) = pg_for_test() else { return };
    assert!(
        !segments().iter().any(leaked),
        "segment {shmid} of the dead server is still there after the next start"
    );
    // The new, live server's own segment is left alone by that sweep.
    let (own_pm, own_key, own_id) =
        postmaster_segment(&server.tempdir().join("data")).expect("the new server's segment");
    let own = |s: &Shm| s.shmid == own_id && s.key == own_key && s.cpid == own_pm;
    assert!(segments().iter().any(own));
    drop(server);
    assert!(
        !segments().iter().any(own),
        "a stopped server removes its own"
    );
}

/// What one interrupted run left, for the measurement.
#[derive(Default)]
struct Tally {
    runs: usize,
    exit_130: usize,
    finished_first: usize,
    died_of_signal: usize,
    other_exit: usize,
    left_keys: usize,
    left_marker: usize,
    left_schema: usize,
    left_workers: usize,
    left_dirs: usize,
    refused_next: usize,
}

/// The measurement quoted in the README: `REDISLAB_INTERRUPT_RUNS` (20) runs of
/// 05e-delayed (Redis + PostgreSQL, worker threads) and zsb-delayed-lua (worker
/// processes), alternately, against external servers; each gets SIGINT or SIGTERM
/// (at random) at a random moment of its usual duration. After each run the test
/// counts what is left, removes it by hand, and checks that the next run is not
/// refused. `REDISLAB_LAB_DIR` points at other lab binaries (e.g. an older build,
/// for the figures before the fix); `REDISLAB_INTERRUPT_SEED` fixes the draws.
#[test]
#[ignore = "a measurement (about a minute); run with --run-ignored only"]
fn measure_interrupted_runs() {
    let labs = ["05e-delayed", "zsb-delayed-lua"];
    let bins: Vec<PathBuf> = match std::env::var_os("REDISLAB_LAB_DIR") {
        Some(dir) => labs
            .iter()
            .map(|id| PathBuf::from(&dir).join(format!("lab-{id}")))
            .collect(),
        None => {
            let Some(found) = labs.iter().map(|id| lab_binary(id)).collect() else {
                return;
            };
            found
        }
    };
    let n: usize = std::env::var("REDISLAB_INTERRUPT_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("REDISLAB_INTERRUPT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rand::random);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let Some(ext) = External::start(true) else {
        return;
    };
    // How long an uninterrupted run takes: the signal falls anywhere in it.
    let durations: Vec<Duration> = bins
        .iter()
        .map(|bin| {
            let start = Instant::now();
            let mut run = Run::spawn(bin, &ext.lab_args());
            let status = run.wait(Duration::from_secs(120));
            assert!(status.success(), "{}", run.stderr());
            start.elapsed()
        })
        .collect();
    println!("seed {seed}; uninterrupted: {durations:?}");
    let mut tally = Tally::default();
    for i in 0..n {
        let which = i % labs.len();
        let (id, bin) = (labs[which], &bins[which]);
        let sig = if rng.gen_bool(0.5) {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        let at = durations[which].mul_f64(rng.gen_range(0.0..1.0));
        let mut run = Run::spawn(bin, &ext.lab_args());
        std::thread::sleep(at);
        let before_signal = run.try_wait();
        let workers: Vec<i32> = descendants(run.pid())
            .into_iter()
            .filter(|(_, _, cmd)| cmd.contains("--worker"))
            .map(|(pid, _, _)| pid)
            .collect();
        if before_signal.is_none() {
            run.signal(sig);
        }
        let pid = run.pid();
        let status = run.wait(Duration::from_secs(60));
        tally.runs += 1;
        let outcome = match (before_signal, status.code(), status.signal()) {
            (Some(_), _, _) => {
                tally.finished_first += 1;
                "finished before the signal".to_string()
            }
            (None, Some(130), _) => {
                tally.exit_130 += 1;
                "exit 130".to_string()
            }
            (None, None, Some(s)) => {
                tally.died_of_signal += 1;
                format!("killed by signal {s}")
            }
            (None, code, _) => {
                tally.other_exit += 1;
                format!("exit {code:?}: {}", run.stderr().trim())
            }
        };
        // Worker processes that outlive the lab may still be writing: give them a
        // moment, then count.
        std::thread::sleep(Duration::from_millis(300));
        let alive_workers: Vec<i32> = workers.iter().copied().filter(|p| alive(*p)).collect();
        let left = ext.leftovers(id);
        let marker = left.iter().any(|l| l.ends_with("__claim__"));
        let keys = left.iter().filter(|l| l.contains(" key ")).count();
        let schema = left.iter().any(|l| l.starts_with("schema "));
        let dirs = tempdirs_of(pid, "redis").len() + tempdirs_of(pid, "pg").len();
        tally.left_keys += usize::from(keys > 0);
        tally.left_marker += usize::from(marker);
        tally.left_schema += usize::from(schema);
        tally.left_workers += usize::from(!alive_workers.is_empty());
        tally.left_dirs += usize::from(dirs > 0);
        println!(
            "run {i:2} {id:16} {:7} at {:5} ms: {outcome}; left: {} key(s){}{}{}{}",
            if sig == libc::SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            },
            at.as_millis(),
            keys,
            if marker { " (incl. the marker)" } else { "" },
            if schema { ", the schema" } else { "" },
            if alive_workers.is_empty() {
                String::new()
            } else {
                format!(", {} worker process(es)", alive_workers.len())
            },
            if dirs > 0 {
                format!(", {dirs} temp dir(s)")
            } else {
                String::new()
            }
        );
        // Anything of the lab's left makes the next run refuse to start.
        if !left.is_empty() {
            tally.refused_next += 1;
        }
        // Clean by hand, so the runs are independent.
        for pid in alive_workers {
            // SAFETY: kill(2) of a leftover worker of a lab this test started.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
        let mut r = ext.redis(0);
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("redislab:{id}:*"))
            .query(&mut r)
            .unwrap();
        if !keys.is_empty() {
            let _: i64 = redis::cmd("DEL").arg(&keys).query(&mut r).unwrap();
        }
        ext.pg()
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", schema_of(id)))
            .unwrap();
        for dir in tempdirs_of(pid, "redis")
            .into_iter()
            .chain(tempdirs_of(pid, "pg"))
        {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    ext.assert_user_data_intact("after the measurement");
    println!(
        "{} interrupted runs: {} exited 130, {} finished before the signal, {} died of the signal, {} other exits; left keys: {}, the claim marker: {}, the schema: {}, worker processes: {}, temp dirs: {}; the next run would have been refused after {}",
        tally.runs,
        tally.exit_130,
        tally.finished_first,
        tally.died_of_signal,
        tally.other_exit,
        tally.left_keys,
        tally.left_marker,
        tally.left_schema,
        tally.left_workers,
        tally.left_dirs,
        tally.refused_next
    );
}

/// A worker of lab zsb whose stdout nobody reads any more (the lab was
/// interrupted and dropped its pipes before killing every worker) stops
/// quietly. It wrote with `println!` and panicked on the broken pipe, a panic
/// message the interrupt test above then found in the lab's stderr (once in
/// a clean-clone CI run).
#[test]
fn a_zsb_worker_whose_stdout_is_closed_stops_without_a_panic() {
    let Some(bin) = lab_binary("zsb-delayed-lua") else {
        return;
    };
    let Some(server) = redis_for_test() else {
        return;
    };
    let url = server.url();
    let queue = "zsbtest:queue";
    let mut conn = redis::Client::open(url.as_str())
        .and_then(|c| c.get_connection())
        .expect("connect");
    for i in 0..5 {
        let _: i64 = redis::cmd("ZADD")
            .arg(queue)
            .arg(i)
            .arg(format!("job{i}"))
            .query(&mut conn)
            .expect("ZADD");
    }
    let mut child = Command::new(&bin)
        .args([
            "--worker",
            &url,
            "plain",
            queue,
            "zsbtest:processing",
            "1",
            "1000",
            "0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the worker");
    // The read end goes before the worker's first line.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for the worker");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");
    assert!(out.status.success(), "{:?}, stderr:\n{stderr}", out.status);
    // It stopped at its first line: at most the one job it popped is gone.
    let left: i64 = redis::cmd("ZCARD")
        .arg(queue)
        .query(&mut conn)
        .expect("ZCARD");
    assert!(left >= 4, "{left} jobs left");
}
