//! The attendance data: who was present on which day, and the same data loaded as
//! one bitmap per day (bit N = student N) and as one set of ids per day.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_harness::Kv;

pub const STUDENTS: u32 = 100_000;
pub const DAYS: usize = 7;
const BATCH: usize = 10_000;

/// The ids present on each day, ascending.
pub struct Attendance {
    pub days: Vec<Vec<u32>>,
}

impl Attendance {
    /// Each student has a rate drawn uniformly from [0.4, 0.9] (mean 0.65) and is
    /// present on each day with that probability: ~65% a day, and attendance that
    /// correlates across days, as real students' does.
    pub fn generate(seed: u64) -> Attendance {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut days = vec![Vec::new(); DAYS];
        for id in 0..STUDENTS {
            let rate = rng.gen_range(0.4..0.9);
            for day in days.iter_mut() {
                if rng.gen_bool(rate) {
                    day.push(id);
                }
            }
        }
        Attendance { days }
    }
}

pub fn bitmap_key(kv: &Kv, day: usize) -> String {
    kv.key(&format!("att:d{}", day + 1))
}

pub fn set_key(kv: &Kv, day: usize) -> String {
    kv.key(&format!("attset:d{}", day + 1))
}

/// SETBIT att:dN id 1 for every present id, in ascending order, pipelined.
pub fn load_bitmaps(kv: &mut Kv, data: &Attendance) -> Result<(), String> {
    for (day, ids) in data.days.iter().enumerate() {
        let key = bitmap_key(kv, day);
        for chunk in ids.chunks(BATCH) {
            let mut p = redis::pipe();
            for id in chunk {
                p.cmd("SETBIT").arg(&key).arg(id).arg(1).ignore();
            }
            p.query::<()>(kv.conn())
                .map_err(|e| format!("{}: SETBIT: {e}", kv.name))?;
        }
    }
    Ok(())
}

/// SADD attset:dN of the same ids, 1,000 per command, pipelined.
pub fn load_sets(kv: &mut Kv, data: &Attendance) -> Result<(), String> {
    for (day, ids) in data.days.iter().enumerate() {
        let key = set_key(kv, day);
        for chunk in ids.chunks(BATCH) {
            let mut p = redis::pipe();
            for part in chunk.chunks(1_000) {
                p.cmd("SADD").arg(&key).arg(part).ignore();
            }
            p.query::<()>(kv.conn())
                .map_err(|e| format!("{}: SADD: {e}", kv.name))?;
        }
    }
    Ok(())
}
