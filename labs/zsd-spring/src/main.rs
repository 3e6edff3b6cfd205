//! zsd-spring — the leaderboard half of seed 004 ("Redis sorted set: leaderboard,
//! priority queue and sliding window", Java 21 / Spring Boot), checked on the core
//! and on Redis with the Rust `redis` client:
//!
//! * [`session`]: the redis-cli session of section 2 and the Java demo's printed
//!   output of section 3, with the same calls through the typed client;
//! * [`atomic`]: `incrementScore` (ZINCRBY) under 20 concurrent clients loses
//!   nothing; the read-add-write loop beside it loses most updates;
//! * [`tiebreak`]: `points + (1 − millis/1e13)`: where neighbouring milliseconds
//!   collapse into one double (the article says points under a few million are
//!   safe), and incrementScore adding the fraction again;
//! * [`blocking`]: BZPOPMIN on a shared (multiplexed) connection holds back the
//!   other callers' commands; a dedicated connection is the fix.
//!
//! The queue and sliding-window sections are labs zsa, zsb and zsc.

mod atomic;
mod blocking;
mod session;
mod tiebreak;

use std::process::ExitCode;

use redislab_harness::{run, LabInfo};

const LAB: LabInfo = LabInfo {
    id: "zsd-spring",
    uses_pg: false,
};

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        session::declare(r);
        atomic::declare(r);
        tiebreak::declare(r);
        blocking::declare(r);
        ctx.each_kv(|kv, rec| {
            session::run(kv, rec)?;
            atomic::run(kv, rec)?;
            tiebreak::run(kv, rec)?;
            blocking::run(kv, rec)
        })?;
        ctx.note(format!(
            "Atomicity: {} clients (threads, one connection each, released together by a barrier) × {} updates of one member.",
            atomic::CLIENTS,
            atomic::UPDATES
        ));
        ctx.note(format!(
            "Tie-break: T0 = {} ms; the scores are computed as Java does (long points + double fraction) and sent as the shortest text that reads back as the same double. Two neighbouring milliseconds differ by 10⁻¹³ in the fraction; doubles between 2⁹ = 512 and 1024 are 2⁻⁴³ ≈ 1.1·10⁻¹³ apart, so from a few hundred points on some neighbouring milliseconds share a score, and at a million points nearly all do: the article's 'under a few million' is about 10⁴ times too generous for a millisecond tie-break. Collapsed members then order by member name (REV: descending), as any tie.",
            tiebreak::T0
        ));
        ctx.note("Blocking: the Rust client's multiplexed connection, like Lettuce's shared connection, sends every caller's commands down one socket and the server answers them in order, so a ZSCORE queued behind BZPOPMIN waits for its timeout. Separate connections (a pool, or one per worker) fix it. The client's default 500 ms response timeout ends a 1 s BZPOPMIN on the client's side with its own error.");
        Ok(())
    })
}
