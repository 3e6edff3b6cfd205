//! The clock the command path reads: the monotonic clock in whole
//! microseconds, as Redis's `ustime()` gives it to `call()`.
//!
//! Every command reads it twice (its start: the client's last interaction,
//! the command's time; its end: the duration INFO commandstats and SLOWLOG
//! add up). Through `Instant` each reading cost a `Duration` subtraction with
//! its carries and a `u128` division to reach microseconds, about 230
//! instructions a command under callgrind; here a reading is the vDSO call and
//! one multiply-add.

/// A reading of the monotonic clock (`CLOCK_MONOTONIC`, the clock `Instant`
/// reads on Linux), in whole microseconds from an arbitrary start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Micros(pub u64);

/// The clock now.
#[inline]
pub fn now() -> Micros {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is handed, which
    // lives on this stack frame; CLOCK_MONOTONIC exists on every platform
    // the core builds for, and on failure the zeroed value stays (a reading
    // of 0, never undefined memory).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    reading(ts.tv_sec as u64, ts.tv_nsec as u64)
}

/// The whole microseconds of a clock at `secs` seconds and `nanos`
/// nanoseconds: each reading is truncated, as `ustime()`'s, so a command's
/// duration is the difference of two truncated readings, not a precise
/// interval truncated (a 0.3 µs command counts 1 µs about a third of the
/// time and 0 otherwise, and `usec` over many calls adds up to their real
/// time, where truncating each interval would count every one as 0).
#[inline]
fn reading(secs: u64, nanos: u64) -> Micros {
    Micros(secs * 1_000_000 + nanos / 1_000)
}

impl Micros {
    /// Whole microseconds from `earlier` to this reading (0 if it is later).
    #[inline]
    pub fn since(self, earlier: Micros) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// Whole seconds from this reading to now (CLIENT LIST's `idle=`, the
    /// `timeout` directive).
    pub fn elapsed_secs(self) -> u64 {
        now().since(self) / 1_000_000
    }

    /// The reading `secs` seconds before this one (tests of idle clients).
    pub fn minus_secs(self, secs: u64) -> Micros {
        Micros(self.0.saturating_sub(secs * 1_000_000))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A duration is the difference of two whole-microsecond readings.
    #[test]
    fn a_duration_is_a_difference_of_whole_microseconds() {
        let between = |a: u64, b: u64| reading(7, b).since(reading(7, a));
        assert_eq!(between(100, 400), 0);
        assert_eq!(between(900, 1_100), 1);
        assert_eq!(between(1_000, 2_999), 1);
        assert_eq!(between(5_000, 4_000), 0);
        assert_eq!(
            reading(2, 999_999_999).since(reading(1, 999_999_000)),
            1_000_000
        );
    }

    /// The clock moves forward with `Instant`, in microseconds.
    #[test]
    fn readings_follow_the_monotonic_clock() {
        let (a, i) = (now(), std::time::Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (b, elapsed) = (now(), i.elapsed());
        let us = b.since(a);
        let want = elapsed.as_micros() as u64;
        assert!(
            us + 1_000 >= want && us <= want + 1_000,
            "{us} µs against {want}"
        );
        assert_eq!(a.since(b), 0);
        // (Not more than the machine's uptime: the clock starts at boot.)
        assert_eq!(b.minus_secs(20).elapsed_secs(), 20);
    }
}
