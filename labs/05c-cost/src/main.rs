//! 05c-cost — what each sorted-set command costs on a zset of 1,000,000 members, and
//! what the set costs in memory.
//!
//! Article 05, section 3.4. One zset `lb` (seeded points, uniform in [0, 1,000,000))
//! is loaded into the core and Redis; every command of the article's table is timed
//! as a distribution of client round trips, beside Redis's own server-side
//! `usec_per_call`. Memory: `MEMORY USAGE lb` on both (the core models Redis's
//! accounting), Redis's `used_memory` around the load, and the core's real heap for
//! the same set, counted by a global allocator in this process. Finally the core's
//! per-operation cost in process (`Server::execute`, no socket) beside Redis's
//! server-side time for the same commands.

mod inproc;
mod kv;
mod rows;

use std::collections::BTreeMap;
use std::process::ExitCode;

use redislab_harness::alloc::CountingAlloc;
use redislab_harness::inprocess::{self, member};
use redislab_harness::{run, LabInfo};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const LAB: LabInfo = LabInfo {
    id: "05c-cost",
    uses_pg: false,
};

/// Members at scale 1.
const MEMBERS: f64 = 1_000_000.0;
/// The score range of ZCOUNT and ZRANGE BYSCORE (the article's): 20% of the uniform
/// points.
const LO: u32 = 400_000;
const HI: u32 = 600_000;
/// ZADD commands per pipeline when loading.
const ZADD_BATCH: usize = 1_000;

/// The seeded data: `lb` has users 1..=n, `lb2` users `first2..first2+n`, so the two
/// share the last half of `lb`'s users.
pub struct Data {
    pub n: usize,
    pub lb: Vec<u32>,
    pub lb2: Vec<u32>,
    pub first2: u32,
    pub user: u32,
    pub seed: u64,
}

impl Data {
    fn generate(seed: u64, scale: f64) -> Data {
        let n = ((MEMBERS * scale).round() as usize).max(100);
        Data {
            n,
            lb: inprocess::leaderboard(seed, n),
            lb2: inprocess::leaderboard(seed.wrapping_add(1), n),
            first2: (n / 2) as u32 + 1,
            user: inprocess::user_of(n),
            seed,
        }
    }

    pub fn points_of(&self, user: u32) -> u32 {
        self.lb[user as usize - 1]
    }

    /// Members in both `lb` and `lb2`.
    pub fn shared(&self) -> usize {
        self.n - (self.first2 as usize - 1)
    }
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let data = Data::generate(ctx.seed, ctx.scale);
        let user = member(data.user);
        rows::declare(&mut ctx.report, &data, &user);

        let mut redis_server = BTreeMap::new();
        ctx.each_kv(|kv, rec| kv::steps(kv, rec, &data, &mut redis_server))?;
        if ctx.core.is_some() {
            for rec in inproc::steps(&ALLOC, &data, &redis_server)? {
                ctx.report.merge(rec)?;
            }
        }

        rows::summary(ctx, &user);
        rows::notes(ctx, &data, &user);
        Ok(())
    })
}
