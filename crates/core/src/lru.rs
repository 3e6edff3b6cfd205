//! The 24 bits every Redis object keeps for eviction (`robj.lru`, evict.c):
//! what OBJECT IDLETIME and OBJECT FREQ read.
//!
//! Under an LRU policy (the default, `noeviction` included) the field holds the
//! LRU clock of the last access: Unix seconds modulo 2^24
//! (`LRU_CLOCK_RESOLUTION` 1000 ms, `LRU_CLOCK_MAX`), and the idle time is the
//! clock's distance to it, wrapping once. Under an LFU policy
//! (`allkeys-lfu`, `volatile-lfu`) the same bits hold the minutes of the last
//! decrement (16 bits) and a logarithmic access counter (8 bits) that starts at
//! 5 (`LFU_INIT_VAL`), grows with probability `1 / ((c - 5) * lfu-log-factor + 1)`
//! per access and loses one per `lfu-decay-time` minutes without access. Under an
//! LRM policy (`allkeys-lrm`, `volatile-lrm`, new in 8.6) the clock moves on
//! modification only, not on reads.
//!
//! Differences from the C code: the clock is passed in by the server (taken once
//! per command from the command's start time, as Redis reads the cached
//! `server.lruclock`); `rand()` for the counter is a xorshift generator owned by
//! each database.

/// `LRU_CLOCK_MAX`: the clock has 24 bits.
pub const LRU_CLOCK_MAX: u32 = (1 << 24) - 1;
/// `LRU_CLOCK_RESOLUTION`: one tick per second.
pub const LRU_CLOCK_RESOLUTION_MS: i64 = 1000;
/// `LFU_INIT_VAL`: the counter of a new key.
pub const LFU_INIT_VAL: u32 = 5;

/// Which meaning the field has, from `maxmemory-policy`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    /// Every policy without LFU or LRM in its name.
    Lru,
    Lfu {
        log_factor: i64,
        decay_time: i64,
    },
    Lrm,
}

impl Policy {
    /// The policy a `maxmemory-policy` value selects, with the LFU tuning.
    pub fn from_config(policy: &str, log_factor: &str, decay_time: &str) -> Policy {
        let policy = policy.to_ascii_lowercase();
        if policy.ends_with("-lfu") {
            Policy::Lfu {
                log_factor: log_factor.parse().unwrap_or(10),
                decay_time: decay_time.parse().unwrap_or(1),
            }
        } else if policy.ends_with("-lrm") {
            Policy::Lrm
        } else {
            Policy::Lru
        }
    }

    pub fn is_lfu(self) -> bool {
        matches!(self, Policy::Lfu { .. })
    }
}

/// The clocks of one moment, as the server hands them to the keyspace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Clock {
    /// `LRU_CLOCK()`.
    pub lru: u32,
    /// `LFUGetTimeInMinutes()`: Unix minutes modulo 2^16.
    pub minutes: u32,
}

impl Clock {
    pub fn at_unix_ms(ms: i64) -> Clock {
        let secs = ms.max(0) / LRU_CLOCK_RESOLUTION_MS;
        Clock {
            lru: (secs as u64 & u64::from(LRU_CLOCK_MAX)) as u32,
            minutes: ((secs / 60) & 0xffff) as u32,
        }
    }
}

/// `initObjectLRUOrLFU`: the field of a key just added.
pub fn initial(policy: Policy, clock: Clock) -> u32 {
    match policy {
        Policy::Lfu { .. } => (clock.minutes << 8) | LFU_INIT_VAL,
        Policy::Lru | Policy::Lrm => clock.lru,
    }
}

/// `estimateObjectIdleTime`: milliseconds since the last access.
pub fn idle_ms(field: u32, clock: Clock) -> u64 {
    let (now, then) = (u64::from(clock.lru), u64::from(field & LRU_CLOCK_MAX));
    let ticks = if now >= then {
        now - then
    } else {
        now + (u64::from(LRU_CLOCK_MAX) - then)
    };
    ticks * LRU_CLOCK_RESOLUTION_MS as u64
}

/// `LFUTimeElapsed`: minutes since `ldt`, the 16-bit clock wrapping once.
fn minutes_elapsed(ldt: u32, clock: Clock) -> u32 {
    if clock.minutes >= ldt {
        clock.minutes - ldt
    } else {
        65535 - ldt + clock.minutes
    }
}

/// `LFUDecrAndReturn`: the counter after the decay owed since the last access
/// (the field itself is not changed).
pub fn lfu_counter(field: u32, decay_time: i64, clock: Clock) -> u32 {
    let ldt = (field >> 8) & 0xffff;
    let counter = field & 255;
    let periods = if decay_time > 0 {
        u64::from(minutes_elapsed(ldt, clock)) / decay_time as u64
    } else {
        0
    };
    counter.saturating_sub(periods.min(255) as u32)
}

/// `LFULogIncr`: one access, counted with probability falling as the counter
/// grows; `r` is the uniform draw in [0, 1] (`rand()/RAND_MAX`).
pub fn lfu_log_incr(counter: u32, log_factor: i64, r: f64) -> u32 {
    if counter >= 255 {
        return 255;
    }
    let base = (f64::from(counter) - f64::from(LFU_INIT_VAL)).max(0.0);
    let p = 1.0 / (base * log_factor as f64 + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// `updateLFU`: decay, count the access, stamp the minutes.
pub fn lfu_touched(field: u32, log_factor: i64, decay_time: i64, clock: Clock, r: f64) -> u32 {
    let counter = lfu_log_incr(lfu_counter(field, decay_time, clock), log_factor, r);
    (clock.minutes << 8) | counter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_time_counts_seconds_and_wraps_once() {
        let t0 = Clock::at_unix_ms(1_700_000_000_123);
        let field = initial(Policy::Lru, t0);
        assert_eq!(idle_ms(field, t0), 0);
        let later = Clock::at_unix_ms(1_700_000_007_999);
        assert_eq!(idle_ms(field, later), 7000);
        // The 24-bit clock wrapped between the access and now.
        let wrapped = Clock { lru: 3, minutes: 0 };
        assert_eq!(idle_ms(LRU_CLOCK_MAX - 2, wrapped), 5000);
    }

    #[test]
    fn lfu_counter_starts_at_5_grows_logarithmically_and_decays() {
        let now = Clock::at_unix_ms(1_700_000_000_000);
        let lfu = Policy::from_config("allkeys-lfu", "10", "1");
        assert_eq!(
            lfu,
            Policy::Lfu {
                log_factor: 10,
                decay_time: 1
            }
        );
        let field = initial(lfu, now);
        assert_eq!(lfu_counter(field, 1, now), 5);
        // At the initial value every access counts; above it, fewer do.
        assert_eq!(lfu_log_incr(5, 10, 0.999), 6);
        assert_eq!(lfu_log_incr(6, 10, 0.5), 6);
        assert_eq!(lfu_log_incr(6, 10, 0.05), 7);
        assert_eq!(lfu_log_incr(255, 10, 0.0), 255);
        // Three minutes untouched: three periods of decay.
        let later = Clock::at_unix_ms(1_700_000_000_000 + 3 * 60_000);
        assert_eq!(lfu_counter(field, 1, later), 2);
        assert_eq!(
            lfu_counter(field, 0, later),
            5,
            "decay-time 0: never decays"
        );
        let touched = lfu_touched(field, 10, 1, later, 0.0);
        assert_eq!(touched & 255, 3);
        assert_eq!(touched >> 8, later.minutes);
        assert_eq!(Policy::from_config("noeviction", "10", "1"), Policy::Lru);
        assert_eq!(Policy::from_config("volatile-lrm", "10", "1"), Policy::Lrm);
    }
}
