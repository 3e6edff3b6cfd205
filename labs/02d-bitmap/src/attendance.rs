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

/// Each day's attendance probability, fitted to the article's counts: day 1's
/// 64,960; DIFF d6 d7 = p6(1−p7) = 35,863 and DIFF1 = p7(1−p6) = 5,968 give
/// p6 ≈ 0.901 and p7 ≈ 0.602 (a busy day 6, a thin day 7); AND = Π p = 12,618
/// leaves ≈ 0.774 for each of days 2–5.
pub const DAY_RATES: [f64; DAYS] = [0.6496, 0.774, 0.774, 0.774, 0.774, 0.9009, 0.6019];

impl Attendance {
    /// Each student is present on day d with probability `DAY_RATES[d]`, each day
    /// drawn independently. Days that differ are what make DIFF and DIFF1 differ,
    /// and high rates are what make "exactly one day" (ONE) rare, as in the article.
    pub fn generate(seed: u64) -> Attendance {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut days = vec![Vec::new(); DAYS];
        for id in 0..STUDENTS {
            for (day, rate) in days.iter_mut().zip(DAY_RATES) {
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
