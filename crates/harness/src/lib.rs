//! The lab harness: everything a lab needs that is not the experiment itself.
//!
//! * [`servers`]: build or find Redis and PostgreSQL, start them on loopback in a
//!   temporary directory, stop them on every exit path;
//! * [`backend`]: one client type for the core and for Redis ([`Kv`]), one for
//!   PostgreSQL ([`Pg`]), each confined to its own key prefix or schema;
//! * [`claims`]: that prefix and schema on a user's server, claimed atomically and
//!   released however the run ends;
//! * [`shutdown`]: what a run must undo, and the SIGINT/SIGTERM handler that undoes
//!   it and exits with 130;
//! * [`cluster`]: a lab's handle on a real Redis Cluster ([`ClusterKv`]), started
//!   only for labs that ask ([`Ctx::start_cluster`]);
//! * [`report`]: the rows of a lab, their cells (text and numbers) and their
//!   `out/<id>.txt` / `out/<id>.json` form; [`chart`]: the charts a lab declares;
//! * [`catalog`]: each lab's article, section, title and typical duration;
//! * [`fmt`]: numbers formatted one way (separators, units);
//! * [`check`]: comparison of a fresh run with the committed baselines;
//! * [`lab`]: the command line every lab binary shares, and the run loop;
//! * [`matrix`]: the version matrix, every exact row on several servers side by side;
//! * [`timing`]: latency distributions, server-side per-call times, bulk loading;
//! * [`trace`]: `--trace`, every command and reply in redis-cli syntax;
//! * [`progress`]: progress bars for phases longer than a second, on a terminal;
//! * [`jobs`]: who ran which job how often, for the queue labs; worker threads;
//! * [`inprocess`]: the core timed by calling `Server::execute` directly;
//! * [`alloc`]: a counting global allocator, for a structure's real heap;
//! * [`heap`]: that heap for some commands in process, beside Redis's `used_memory`
//!   growth for the same commands.

pub use redislab_alloc as alloc;
pub mod backend;
pub mod catalog;
pub mod chart;
pub mod check;
pub mod claims;
pub mod cluster;
pub mod fmt;
pub mod geo_load;
pub mod heap;
pub mod inprocess;
pub mod jobs;
pub mod lab;
pub mod matrix;
pub mod paths;
pub mod progress;
pub mod report;
pub mod servers;
pub mod shutdown;
pub mod testing;
pub mod timing;
pub mod trace;

pub use backend::{Kv, Pg};
pub use chart::{Chart, ChartKind};
pub use cluster::ClusterKv;
pub use lab::{run, Ctx, LabInfo};
pub use report::{Cell, Kind, Recorder, Report};
