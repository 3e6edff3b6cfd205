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

use clap::Parser;
use redislab_listener::CoreListener;

use crate::backend::{Kv, Pg};
use crate::claims;
use crate::cluster::ClusterKv;
use crate::report::{Recorder, Report};
use crate::servers::cluster::RedisCluster;
use crate::servers::postgres::{self as pgsrv, PgServer};
use crate::servers::redis::{self as redissrv, RedisServer};
use crate::shutdown;

/// What a lab is, for its report header.
pub struct LabInfo {
    /// The lab id, e.g. `05a-order`.
    pub id: &'static str,
    pub title: &'static str,
    /// Where in the articles the experiment comes from.
    pub source: &'static str,
    /// Whether the lab has a PostgreSQL counterpart.
    pub uses_pg: bool,
}

#[derive(Parser, Debug)]
#[command(about = "Run one lab against the core, a real Redis and a real PostgreSQL")]
pub struct Options {
    /// Directory for <id>.txt and <id>.json (default: the repository's out/).
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
    /// Keep the servers up this many milliseconds after the steps (to try Ctrl-C
    /// or inspect them with redis-cli).
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
    /// A Redis Cluster, only for labs that ask for one ([`Ctx::start_cluster`]).
    cluster: Option<ClusterKv>,
    /// `--no-redis`: no real Redis of any kind, so no cluster either.
    no_redis: bool,
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
            step(pg, &mut rec)?;
            self.report.merge(rec)?;
        }
        Ok(())
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.report.notes.push(text.into());
    }
}

/// Servers this run started; dropping this stops them.
struct Started {
    _core: Option<CoreListener>,
    _redis: Option<RedisServer>,
    _pg: Option<PgServer>,
}

/// Parses the command line, runs `body`, writes the report. Every lab's `main` is a
/// call to this.
pub fn run(info: LabInfo, body: impl FnOnce(&mut Ctx) -> Result<(), String>) -> ExitCode {
    let opts = Options::parse();
    match run_with(&info, &opts, body) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", info.id);
            ExitCode::FAILURE
        }
    }
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
                ..
            } = ctx;
            // The lab's connections go first (an open transaction would hold the
            // schema's locks), then its claims on a user's servers are released over
            // fresh connections, then the servers it started are stopped.
            drop((core, redis, pg, cluster));
            let problems = claims::release_all();
            drop(started);
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

    print!("{}", report.to_text());
    if !opts.dry_run {
        let dir = opts
            .out
            .clone()
            .unwrap_or_else(crate::paths::default_out_dir);
        report.write(&dir)?;
        eprintln!(
            "{}: wrote {}",
            info.id,
            dir.join(format!("{}.txt", info.id)).display()
        );
    }
    if !problems.is_empty() {
        return Err("the run finished, but its clean-up did not (see above)".into());
    }
    Ok(())
}

fn start_backends(info: &LabInfo, opts: &Options) -> Result<(Ctx, Started), String> {
    let mut report = Report {
        lab: info.id.into(),
        title: info.title.into(),
        source: info.source.into(),
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
    };
    let prefix = format!("redislab:{}:", info.id);

    let core = if opts.no_core {
        None
    } else {
        let listener =
            CoreListener::start(0).map_err(|e| format!("cannot start the core's listener: {e}"))?;
        let kv = Kv::connect("core", &listener.url(), "")?;
        started._core = Some(listener);
        Some(kv)
    };

    let redis = if opts.no_redis {
        None
    } else if let Some(url) = &opts.redis_url {
        Some(Kv::connect("redis", url, &prefix)?)
    } else {
        let bin = redissrv::binaries()?;
        let server = RedisServer::start(&bin, &[])?;
        let kv = Kv::connect("redis", &server.url(), "")?;
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
        cluster: None,
        no_redis: opts.no_redis,
    };
    Ok((ctx, started))
}
