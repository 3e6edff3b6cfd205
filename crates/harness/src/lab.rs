//! The command line every lab shares, and the run loop: start or reach the
//! backends, run the lab's steps on each, undo what the run claimed and stop what it
//! started, write the report.
//!
//! Every way out goes through the same undo ([`crate::claims::release_all`], then
//! the servers' `Drop`): the end of the steps, an error in them or in starting a
//! backend, a panic (a guard releases the claims while unwinding), and SIGINT /
//! SIGTERM / SIGHUP, where [`crate::shutdown`]'s handler thread does it and exits
//! with 130 while the main thread, at [`crate::shutdown::finish`], waits for it and
//! prints nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};
use redislab_listener::CoreListener;

use crate::backend::{Kv, Pg};
use crate::claims;
use crate::cluster::ClusterKv;
use crate::report::{Recorder, Report};
use crate::servers::cluster::RedisCluster;
use crate::servers::postgres::{self as pgsrv, PgServer};
use crate::servers::redis::{self as redissrv, RedisServer};
use crate::servers::sentinel::{SentinelGroup, Settings as SentinelSettings};
use crate::shutdown;

/// What a lab is. Its title, article, section and what it shows come from
/// `labs/catalog.tsv` ([`crate::catalog`]).
pub struct LabInfo {
    /// The lab id, e.g. `05a-order`.
    pub id: &'static str,
    /// Whether the lab has a PostgreSQL counterpart.
    pub uses_pg: bool,
}

/// What `--help` adds under a lab's options.
const AFTER_HELP: &str = "\
Output: runs/<id>.txt and runs/<id>.json (git-ignored scratch); the committed
baselines in out/ change only with `./run.sh bless <id>`.
Exit status: 0 done, 1 the lab or a server failed, 2 bad options, 130 interrupted.";

#[derive(Parser, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Options {
    /// Directory for <id>.txt and <id>.json (default: runs/ in the repository,
    /// git-ignored; `./run.sh bless` writes the baselines in out/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Use this Redis instead of starting one. The lab works under its own key prefix
    /// there and never flushes anything.
    #[arg(long)]
    pub redis_url: Option<String>,
    /// Use this PostgreSQL (libpq string or URL) instead of starting one. The lab
    /// works in its own schema and drops only that schema.
    #[arg(long)]
    pub pg_url: Option<String>,
    /// Skip the real Redis.
    #[arg(long)]
    pub no_redis: bool,
    /// Skip PostgreSQL.
    #[arg(long)]
    pub no_pg: bool,
    /// Skip the core.
    #[arg(long)]
    pub no_core: bool,
    /// Seed for the lab's data generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Scale factor for big labs (1.0 is the article's size).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Print the table but do not write files.
    #[arg(long)]
    pub dry_run: bool,
    /// Print every command the lab sends to the core and to Redis, and every
    /// reply, in redis-cli syntax (on stderr; timings are then meaningless).
    /// Commands the core runs in process (05c's ns figures, 05k's dump) are not
    /// on a socket and are not shown.
    #[arg(long)]
    pub trace: bool,
    /// After the lab, keep the servers it started up, with its data, and print how
    /// to reach them (redis-cli -p PORT, psql ...); Enter (or Ctrl-C) stops them.
    #[arg(long)]
    pub hold: bool,
    /// Keep the servers up this many milliseconds after the steps (for tests).
    #[arg(long, default_value_t = 0, hide = true)]
    pub hold_ms: u64,
}

/// What a lab's body gets: the backends that are up, and the report to fill.
pub struct Ctx {
    pub core: Option<Kv>,
    pub redis: Option<Kv>,
    pub pg: Option<Pg>,
    pub report: Report,
    pub seed: u64,
    pub scale: f64,
    /// The pid of the redis-server this run started (None with `--redis-url` or
    /// `--no-redis`): for a lab that reads the server's memory (05k, with gdb).
    /// Servers the harness starts allow `DEBUG` from loopback
    /// (`enable-debug-command local`), as Redis's own test suite runs them.
    pub redis_pid: Option<u32>,
    /// A Redis Cluster, only for labs that ask for one ([`Ctx::start_cluster`]).
    cluster: Option<ClusterKv>,
    /// `--no-redis`: no real Redis of any kind, so no cluster either.
    no_redis: bool,
    /// PostgreSQL 15 + PostGIS, only for labs that ask for it ([`Ctx::start_postgis`]):
    /// the lab's connection, and the server (stopped after the connection closes).
    postgis: Option<Pg>,
    postgis_server: Option<PgServer>,
    /// `--no-pg`: no PostgreSQL of any kind, so no PostGIS server either.
    no_pg: bool,
}

impl Ctx {
    /// Starts a real Redis Cluster of `masters` nodes (from the same redis-server
    /// binary) for this run, or returns the one already started. `None` with
    /// `--no-redis`. The cluster is stopped when the run ends, with the other
    /// servers. (`--redis-url` does not apply: a cluster is always the harness's.)
    pub fn start_cluster(&mut self, masters: usize) -> Result<Option<&mut ClusterKv>, String> {
        if self.no_redis {
            return Ok(None);
        }
        if self.cluster.is_none() {
            let bin = redissrv::binaries()?;
            let kv = ClusterKv::connect(RedisCluster::start(&bin, masters)?)?;
            self.report.versions.insert(
                "redis cluster".into(),
                format!("{} × {masters} masters", kv.version),
            );
            self.cluster = Some(kv);
        }
        Ok(self.cluster.as_mut())
    }

    /// Starts a real primary, one replica and three Sentinels (the same
    /// redis-server binary, `--sentinel`) for one failover experiment. The group
    /// belongs to the caller: dropping it stops all five processes (the end of the
    /// run and Ctrl-C do too). `None` with `--no-redis`; `--redis-url` does not
    /// apply (a lab crashes this primary on purpose).
    pub fn start_sentinel_group(
        &mut self,
        settings: SentinelSettings,
    ) -> Result<Option<SentinelGroup>, String> {
        if self.no_redis {
            return Ok(None);
        }
        let bin = redissrv::binaries()?;
        let group = SentinelGroup::start(&bin, settings)?;
        self.report.versions.insert(
            "redis sentinel".into(),
            format!(
                "{} · 1 primary, 1 replica, 3 Sentinels",
                self.report
                    .versions
                    .get("redis")
                    .cloned()
                    .unwrap_or_else(|| "redis-server".into())
            ),
        );
        Ok(Some(group))
    }

    /// Starts a Redis Cluster of `masters` masters with `replicas` replicas
    /// each, owned by the caller (for labs that crash a node; dropping it stops
    /// every node). `None` with `--no-redis`.
    pub fn start_replicated_cluster(
        &mut self,
        masters: usize,
        replicas: usize,
    ) -> Result<Option<RedisCluster>, String> {
        if self.no_redis {
            return Ok(None);
        }
        let bin = redissrv::binaries()?;
        let cluster = RedisCluster::start_with_replicas(&bin, masters, replicas)?;
        let version = self
            .report
            .versions
            .get("redis")
            .cloned()
            .unwrap_or_else(|| "redis-server".into());
        self.report.versions.insert(
            "redis cluster".into(),
            format!(
                "{version} · {masters} masters + {} replicas",
                masters * replicas
            ),
        );
        Ok(Some(cluster))
    }

    /// Starts Debian's PostgreSQL 15 with PostGIS 3 (`scripts/get-postgis.sh`) for
    /// this run, like the 18.4 server (initdb in a temporary directory, loopback,
    /// `nobody` when root, stopped at the end and on Ctrl-C), or returns the one
    /// already started: for the rows PostGIS answers, since PostGIS is not built
    /// for 18.4. `None` with `--no-pg`. (`--pg-url` does not apply: this server is
    /// always the harness's.) Its version is reported as `postgis server`.
    pub fn start_postgis(&mut self) -> Result<Option<&mut Pg>, String> {
        if self.no_pg {
            return Ok(None);
        }
        if self.postgis.is_none() {
            let bin = pgsrv::postgis_binaries()?;
            let server = PgServer::start(&bin)?;
            let pg = Pg::connect(&server.url(), &self.report.lab)?.on_own_server();
            self.report
                .versions
                .insert("postgis server".into(), format!("postgres {}", pg.version));
            self.postgis_server = Some(server);
            self.postgis = Some(pg);
        }
        Ok(self.postgis.as_mut())
    }

    /// The cluster, if [`Ctx::start_cluster`] started one.
    pub fn cluster(&mut self) -> Option<&mut ClusterKv> {
        self.cluster.as_mut()
    }

    /// Runs `step` on each Redis-protocol backend (core, then redis) and merges what
    /// it recorded into the report.
    pub fn each_kv(
        &mut self,
        mut step: impl FnMut(&mut Kv, &mut Recorder) -> Result<(), String>,
    ) -> Result<(), String> {
        for kv in [self.core.as_mut(), self.redis.as_mut()]
            .into_iter()
            .flatten()
        {
            let mut rec = Recorder::new(kv.name);
            let _phase = crate::progress::Phase::new(format!("{}: the lab's steps", kv.name), None);
            step(kv, &mut rec)?;
            self.report.merge(rec)?;
        }
        Ok(())
    }

    /// Runs `step` on PostgreSQL, if it is up.
    pub fn with_pg(
        &mut self,
        step: impl FnOnce(&mut Pg, &mut Recorder) -> Result<(), String>,
    ) -> Result<(), String> {
        if let Some(pg) = self.pg.as_mut() {
            let mut rec = Recorder::new("pg");
            let _phase = crate::progress::Phase::new("pg: the lab's steps", None);
            step(pg, &mut rec)?;
            self.report.merge(rec)?;
        }
        Ok(())
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.report.notes.push(text.into());
    }

    /// The real server of this run as a note names it (`Redis 8.6.3`, `Valkey 9.1.2`),
    /// from what it reported in `INFO server`; `versions_key` is `redis`, or `redis
    /// cluster` / `redis sentinel` for the servers a lab started of its own. `None`
    /// when that server did not run.
    pub fn server_name(&self, versions_key: &str) -> Option<String> {
        Some(server_display_name(&self.server_version(versions_key)?))
    }

    /// The version part of a `versions` entry (`8.6.3`, `valkey 9.1.2`), without a
    /// cluster's or Sentinel group's description (`8.6.3 × 3 masters` → `8.6.3`).
    pub fn server_version(&self, versions_key: &str) -> Option<String> {
        let v = self.report.versions.get(versions_key)?;
        let v = v.split(" · ").next().unwrap_or(v);
        Some(v.split(" × ").next().unwrap_or(v).trim().to_string())
    }

    /// True when the real server answered row `key` with an error.
    pub fn redis_refused(&self, key: &str) -> bool {
        self.report
            .rows
            .iter()
            .find(|r| r.key == key)
            .and_then(|r| r.redis.as_ref())
            .is_some_and(|c| c.error || is_error_reply(&c.text))
    }
}

/// `8.6.3` → `Redis 8.6.3`; `valkey 9.1.2` → `Valkey 9.1.2`.
pub fn server_display_name(version: &str) -> String {
    match version.strip_prefix("valkey ") {
        Some(v) => format!("Valkey {v}"),
        None => format!("Redis {version}"),
    }
}

/// A reply text that starts with an error code (`ERR …`, `WRONGTYPE …`, …).
fn is_error_reply(text: &str) -> bool {
    const CODES: [&str; 8] = [
        "ERR",
        "WRONGTYPE",
        "NOSCRIPT",
        "CROSSSLOT",
        "NOPERM",
        "EXECABORT",
        "BUSY",
        "NOTBUSY",
    ];
    CODES.contains(&text.split_whitespace().next().unwrap_or(""))
}

/// Servers this run started; dropping this stops them.
struct Started {
    _core: Option<CoreListener>,
    _redis: Option<RedisServer>,
    _pg: Option<PgServer>,
    /// `--trace`: the proxies in front of the core and Redis.
    _proxies: Vec<crate::trace::TraceProxy>,
}

/// With `--trace`, the URL of a proxy that prints what passes to `url`
/// (credentials and database of `url` kept); else `url`.
fn traced(
    opts: &Options,
    started: &mut Started,
    name: &'static str,
    url: String,
) -> Result<String, String> {
    if !opts.trace {
        return Ok(url);
    }
    let upstream =
        crate::trace::host_port(&url).ok_or_else(|| format!("--trace: no host:port in {url}"))?;
    let proxy = crate::trace::TraceProxy::start(name, upstream.clone())?;
    let via = crate::trace::host_port(&proxy.url()).expect("proxy url");
    started._proxies.push(proxy);
    Ok(url.replacen(&upstream, &via, 1))
}

/// Parses the command line, runs `body`, writes the report. Every lab's `main` is a
/// call to this.
pub fn run(info: LabInfo, body: impl FnOnce(&mut Ctx) -> Result<(), String>) -> ExitCode {
    let opts = parse_options(&info);
    if opts.no_core && opts.no_redis && (opts.no_pg || !info.uses_pg) {
        // Nothing would run: a table of empty rows is not a result.
        let _ = lab_command(&info)
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "every backend is switched off (--no-core, --no-redis and, for a lab with a PostgreSQL counterpart, --no-pg): nothing would run",
            )
            .print();
        return ExitCode::from(2);
    }
    match run_with(&info, &opts, body) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", info.id);
            ExitCode::FAILURE
        }
    }
}

/// Parses the command line; `--help` names the lab, its article and what it shows.
/// A bad option exits with clap's status 2.
fn parse_options(info: &LabInfo) -> Options {
    let matches = lab_command(info).get_matches();
    Options::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The lab's command line: [`Options`] with the lab's name, title and help.
fn lab_command(info: &LabInfo) -> clap::Command {
    let entry = crate::catalog::entry(info.id);
    let about = format!("{} — {}", info.id, entry.title);
    let long_about = format!(
        "{about}\n\n{}\n\nShows: {}\nTypical duration: about {} s on 2 cores.",
        entry.source_line(),
        entry.shows,
        entry.seconds
    );
    Options::command()
        .name(&*Box::leak(format!("lab-{}", info.id).into_boxed_str()))
        .about(about)
        .long_about(long_about)
}

/// Releases the run's claims if the run unwinds (a panic in a lab's steps).
struct ReleaseOnUnwind;

impl Drop for ReleaseOnUnwind {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for problem in claims::release_all() {
                eprintln!("{problem}");
            }
        }
    }
}

pub fn run_with(
    info: &LabInfo,
    opts: &Options,
    body: impl FnOnce(&mut Ctx) -> Result<(), String>,
) -> Result<(), String> {
    shutdown::install(info.id);
    let guard = ReleaseOnUnwind;
    let (outcome, problems) = match start_backends(info, opts) {
        Ok((mut ctx, started)) => {
            let outcome = body(&mut ctx);
            if opts.hold && outcome.is_ok() {
                print_and_write(info, opts, &ctx.report)?;
                hold(info, &started, &ctx);
            }
            if opts.hold_ms > 0 {
                eprintln!("{}: holding the servers for {} ms", info.id, opts.hold_ms);
                std::thread::sleep(std::time::Duration::from_millis(opts.hold_ms));
            }
            let Ctx {
                core,
                redis,
                pg,
                report,
                cluster,
                postgis,
                postgis_server,
                ..
            } = ctx;
            // The lab's connections go first (an open transaction would hold the
            // schema's locks), then its claims on a user's servers are released over
            // fresh connections, then the servers it started are stopped.
            drop((core, redis, pg, cluster, postgis));
            let problems = claims::release_all();
            drop(started);
            drop(postgis_server);
            (outcome.map(|()| report), problems)
        }
        // A backend was refused or failed to start: release what was claimed
        // before it (e.g. the Redis prefix when the schema was refused).
        Err(e) => (Err(e), claims::release_all()),
    };
    drop(guard);
    // From here on the run is over: a signal no longer interrupts it. If one came
    // first, this waits for the handler's exit(130) and nothing below is printed.
    shutdown::finish();
    for problem in &problems {
        eprintln!("{}: {problem}", info.id);
    }
    let report = outcome?;
    if !opts.hold {
        print_and_write(info, opts, &report)?;
    }
    if !problems.is_empty() {
        return Err("the run finished, but its clean-up did not (see above)".into());
    }
    Ok(())
}

/// Prints the table (coloured on a terminal) and writes the report files.
fn print_and_write(info: &LabInfo, opts: &Options, report: &Report) -> Result<(), String> {
    if colour_stdout() {
        print!("{}", report.to_coloured_text());
    } else {
        print!("{}", report.to_text());
    }
    if !opts.dry_run {
        let dir = opts
            .out
            .clone()
            .unwrap_or_else(crate::paths::default_out_dir);
        report.write(&dir)?;
        eprintln!(
            "{}: wrote {}",
            info.id,
            shown_path(&dir.join(format!("{}.txt", info.id)))
        );
    }
    Ok(())
}

/// `--hold`: says how to reach the servers this run started (with the lab's data
/// still in them) and waits for Enter (or end of input, or Ctrl-C).
fn hold(info: &LabInfo, started: &Started, ctx: &Ctx) {
    let id = info.id;
    eprintln!("{id}: holding the servers; the lab's data is still in them:");
    let port = |url: &str| {
        url.rsplit(':')
            .next()
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string()
    };
    if let Some(core) = &started._core {
        eprintln!("  core   redis-cli -p {}", port(&core.url()));
    }
    if let Some(redis) = &started._redis {
        eprintln!("  redis  redis-cli -p {}", port(&redis.url()));
    } else if let Some(kv) = &ctx.redis {
        eprintln!("  redis  {} (yours; keys under redislab:{id}:)", kv.url());
    }
    if let Some(pg) = &started._pg {
        eprintln!(
            "  pg     psql '{}' (schema redislab_{})",
            pg.url(),
            id.replace('-', "_")
        );
    }
    if let Some(cluster) = &ctx.cluster {
        eprintln!("  redis cluster  {}", cluster.server().urls().join(" "));
    }
    if let Some(server) = &ctx.postgis_server {
        eprintln!(
            "  postgis  psql '{}' (schema redislab_{})",
            server.url(),
            id.replace('-', "_")
        );
    }
    eprintln!("{id}: press Enter to stop them (the lab then cleans up as usual)");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

fn start_backends(info: &LabInfo, opts: &Options) -> Result<(Ctx, Started), String> {
    let entry = crate::catalog::entry(info.id);
    let mut report = Report {
        lab: info.id.into(),
        title: entry.title.clone(),
        source: entry.source_line(),
        article: Some(entry.article.clone()),
        section: entry.section.clone(),
        ..Default::default()
    };
    report.params.insert("seed".into(), opts.seed.to_string());
    if opts.scale != 1.0 {
        report.params.insert("scale".into(), opts.scale.to_string());
    }
    let mut started = Started {
        _core: None,
        _redis: None,
        _pg: None,
        _proxies: Vec::new(),
    };
    let prefix = format!("redislab:{}:", info.id);

    let core = if opts.no_core {
        None
    } else {
        let listener =
            CoreListener::start(0).map_err(|e| format!("cannot start the core's listener: {e}"))?;
        let url = traced(opts, &mut started, "core", listener.url())?;
        let kv = Kv::connect("core", &url, "")?;
        started._core = Some(listener);
        Some(kv)
    };

    let redis = if opts.no_redis {
        None
    } else if let Some(url) = &opts.redis_url {
        let url = traced(opts, &mut started, "redis", url.clone())?;
        Some(Kv::connect("redis", &url, &prefix)?)
    } else {
        let bin = redissrv::binaries()?;
        let server = RedisServer::start(&bin, &["--enable-debug-command", "local"])?;
        let url = traced(opts, &mut started, "redis", server.url())?;
        let kv = Kv::connect("redis", &url, "")?;
        started._redis = Some(server);
        Some(kv)
    };

    let pg = if opts.no_pg || !info.uses_pg {
        None
    } else if let Some(url) = &opts.pg_url {
        Some(Pg::connect(url, info.id)?)
    } else {
        let bin = pgsrv::binaries()?;
        let server = PgServer::start(&bin)?;
        let pg = Pg::connect(&server.url(), info.id)?.on_own_server();
        started._pg = Some(server);
        Some(pg)
    };

    for (name, version) in [
        ("core", core.as_ref().map(|k| k.version.clone())),
        ("redis", redis.as_ref().map(|k| k.version.clone())),
        ("postgres", pg.as_ref().map(|p| p.version.clone())),
    ] {
        if let Some(v) = version {
            report.versions.insert(name.into(), v);
        }
    }
    let ctx = Ctx {
        core,
        redis,
        pg,
        report,
        seed: opts.seed,
        scale: opts.scale,
        redis_pid: started._redis.as_ref().map(RedisServer::pid),
        cluster: None,
        no_redis: opts.no_redis,
        postgis: None,
        postgis_server: None,
        no_pg: opts.no_pg || !info.uses_pg,
    };
    Ok((ctx, started))
}

/// Colour only on a terminal, and never when `NO_COLOR` is set (no-color.org).
fn colour_stdout() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// `path` relative to the repository when it is inside it (`runs/05a-order.txt`).
fn shown_path(path: &std::path::Path) -> String {
    let root = crate::paths::repo_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}
