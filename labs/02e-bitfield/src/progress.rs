//! The progress data (0–100 for each student × lesson) and its two layouts: u7 cells
//! of one string, and one hash per student.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redis::Value;
use redislab_harness::backend::error_text;
use redislab_harness::Kv;

pub const STUDENTS: usize = 100_000;
pub const LESSONS: usize = 40;
/// Commands per pipeline.
const BATCH: usize = 1_000;

/// Progress of cell `student * LESSONS + lesson`.
pub fn generate(seed: u64) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..STUDENTS * LESSONS)
        .map(|_| rng.gen_range(0..=100))
        .collect()
}

pub fn hash_key(kv: &Kv, student: usize) -> String {
    kv.key(&format!("prog:{student}"))
}

/// Sends one command per student built by `one`, in pipelines.
fn per_student(
    kv: &mut Kv,
    what: &str,
    mut one: impl FnMut(&Kv, &mut redis::Pipeline, usize),
) -> Result<Vec<Value>, String> {
    let mut replies = Vec::with_capacity(STUDENTS);
    for start in (0..STUDENTS).step_by(BATCH) {
        let mut p = redis::pipe();
        for student in start..(start + BATCH).min(STUDENTS) {
            one(kv, &mut p, student);
        }
        let batch: Vec<Value> = p
            .query(kv.conn())
            .map_err(|e| format!("{}: {what}: {}", kv.name, error_text(&e)))?;
        replies.extend(batch);
    }
    Ok(replies)
}

/// BITFIELD prog SET u7 #(s*40+0) v … SET u7 #(s*40+39) v, one command per student.
pub fn load_cells(kv: &mut Kv, key: &str, cells: &[u8]) -> Result<(), String> {
    per_student(kv, "BITFIELD SET", |_, p, s| {
        let cmd = p.cmd("BITFIELD").arg(key);
        for lesson in 0..LESSONS {
            let i = s * LESSONS + lesson;
            cmd.arg("SET").arg("u7").arg(format!("#{i}")).arg(cells[i]);
        }
    })
    .map(drop)
}

/// HSET prog:s 0 v 1 v … 39 v, one command per student.
pub fn load_hashes(kv: &mut Kv, cells: &[u8]) -> Result<(), String> {
    per_student(kv, "HSET", |kv, p, s| {
        let cmd = p.cmd("HSET").arg(hash_key(kv, s));
        for lesson in 0..LESSONS {
            cmd.arg(lesson).arg(cells[s * LESSONS + lesson]);
        }
    })
    .map(drop)
}

/// Σ MEMORY USAGE prog:s over every student, or what the server said for the
/// first one when that is not a number (e.g. a type the core does not model).
pub fn hash_bytes(kv: &mut Kv) -> Result<Result<i64, String>, String> {
    let first = hash_key(kv, 0);
    let answer = kv.reply(&["MEMORY", "USAGE", &first]);
    if answer.parse::<i64>().is_err() {
        return Ok(Err(answer));
    }
    let replies = per_student(kv, "MEMORY USAGE", |kv, p, s| {
        p.cmd("MEMORY").arg("USAGE").arg(hash_key(kv, s));
    })?;
    let mut sum = 0;
    for reply in replies {
        match reply {
            Value::Int(n) => sum += n,
            other => return Ok(Err(redislab_harness::backend::render(&other))),
        }
    }
    Ok(Ok(sum))
}

/// `used_memory` from INFO memory, if the server reports it.
pub fn used_memory(kv: &mut Kv) -> Option<i64> {
    let info: String = redis::cmd("INFO").arg("memory").query(kv.conn()).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))?
        .trim()
        .parse()
        .ok()
}
