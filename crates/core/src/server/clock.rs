//! The clock the command path reads: the monotonic clock in whole
//! microseconds, as Redis's `call()` reads it.
//!
//! Every command reads it twice (its start: the client's last interaction,
//! the command's time; its end: the duration INFO commandstats and SLOWLOG
//! add up). Through `Instant` each reading cost a `Duration` subtraction with
//! its carries and a `u128` division to reach microseconds, about 230
//! instructions a command under callgrind; `clock_gettime` alone (the vDSO)
//! is about 21 ns on this project's VMs, a sixth of a GET's whole path.
//!
//! So where the kernel itself keeps time with the processor's time-stamp
//! counter (x86-64 Linux whose clocksource is `tsc`: a counter at a
//! constant rate, in step across cores), a reading is the counter scaled to
//! microseconds, about half the cost. Redis has the same path
//! (`monotonic.c`, `USE_PROCESSOR_CLOCK`, off in its default build, which
//! then reads `ustime()` twice a command); its INFO field
//! `monotonic_clock` says which one a server uses, and so does the core's.
//! Redis takes the counter's rate from the GHz in `/proc/cpuinfo`'s model
//! name, which virtual machines often leave out ("AMD EPYC" here); the core
//! measures it instead, against `CLOCK_MONOTONIC`, and goes back to that
//! clock every millisecond (an anchor), so a reading never strays from it
//! by more than the rate's error over one millisecond (nanoseconds), TTLs
//! and timeouts keep the kernel's time, and a counter that jumps (a
//! suspended VM) costs one millisecond's extrapolation at most.
//! `REDISLAB_CLOCK=posix` in the environment turns the counter off.

use std::cell::Cell;
use std::sync::OnceLock;

/// A reading of the monotonic clock (`CLOCK_MONOTONIC`, the clock `Instant`
/// reads on Linux), in whole microseconds from an arbitrary start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Micros(pub u64);

/// The clock now.
#[inline]
pub fn now() -> Micros {
    if counter_is_used() {
        if let Some(ticks) = read_counter() {
            let kernel = || (posix_micros(), read_counter().unwrap_or(ticks));
            return Micros(COUNTER.with(|c| c.reading(ticks, kernel)));
        }
    }
    Micros(posix_micros())
}

/// `CLOCK_MONOTONIC` in whole microseconds (the vDSO call).
fn posix_micros() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is handed, which
    // lives on this stack frame; CLOCK_MONOTONIC exists on every platform
    // the core builds for, and on failure the zeroed value stays (a reading
    // of 0, never undefined memory).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    reading(ts.tv_sec as u64, ts.tv_nsec as u64).0
}

/// What INFO's `monotonic_clock` says: `X86 TSC @ N ticks/us` (Redis's
/// wording) once this thread has measured the counter's rate, otherwise
/// `POSIX clock_gettime`.
pub fn source() -> String {
    match COUNTER
        .with(|c| c.ticks_per_micro())
        .filter(|_| counter_is_used())
    {
        Some(rate) => format!("X86 TSC @ {rate} ticks/us"),
        None => "POSIX clock_gettime".to_string(),
    }
}

/// Whether readings come from the time-stamp counter: decided once per
/// process.
fn counter_is_used() -> bool {
    static USED: OnceLock<bool> = OnceLock::new();
    *USED.get_or_init(|| {
        let wanted = std::env::var("REDISLAB_CLOCK").map_or(true, |v| v != "posix");
        let kernel_uses_tsc = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .is_ok_and(|name| name.trim() == "tsc");
        wanted && kernel_uses_tsc && read_counter().is_some()
    })
}

/// The time-stamp counter (`rdtsc`), where there is one.
#[inline(always)]
fn read_counter() -> Option<u64> {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        // SAFETY: rdtsc exists on every x86-64 processor and reads a
        // register; it touches no memory.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    {
        None
    }
}

thread_local! {
    /// Each thread scales the counter with its own anchors (no sharing, no
    /// atomics); all of them follow the same kernel clock.
    static COUNTER: Counter = const { Counter::new() };
}

/// How long a rate measurement must run before the counter is trusted
/// (the anchors' own jitter, tens of nanoseconds, is then under 10 ppm).
const CALIBRATION_US: u64 = 10_000;
/// How far a reading extrapolates from its anchor before taking a new one.
const ANCHOR_EVERY_US: u64 = 1_000;
/// The most ticks a kernel reading may take, counted from the counter
/// value before it to the one after, for the pair to become an anchor (a
/// thread preempted in between would pair a counter value with a later
/// time). About a microsecond at the usual rates; the call itself takes a
/// few dozen nanoseconds.
const ANCHOR_WINDOW_TICKS: u64 = 3_000;
/// Fixed-point fraction bits of the microseconds-per-tick scale.
const SCALE_BITS: u32 = 32;

/// One thread's conversion from counter ticks to microseconds.
struct Counter {
    /// The first anchor (the start of the rate measurement).
    first: Cell<Option<(u64, u64)>>,
    /// The latest anchor: a counter value and the clock's microseconds then.
    anchor: Cell<(u64, u64)>,
    /// Microseconds per tick, `SCALE_BITS` fraction bits; 0 until measured.
    scale: Cell<u64>,
    /// Ticks in `ANCHOR_EVERY_US`: farther from the anchor, take a new one.
    horizon: Cell<u64>,
    /// The last reading given, so that readings never go back (a new
    /// anchor can land slightly behind the extrapolation before it).
    last: Cell<u64>,
}

impl Counter {
    const fn new() -> Counter {
        Counter {
            first: Cell::new(None),
            anchor: Cell::new((0, 0)),
            scale: Cell::new(0),
            horizon: Cell::new(0),
            last: Cell::new(0),
        }
    }

    /// The reading for counter value `ticks`: extrapolated from the anchor
    /// when it is near, otherwise the kernel's (`kernel()` gives its
    /// microseconds and the counter just after), which becomes the new
    /// anchor if the counter moved little while it was read.
    #[inline]
    fn reading(&self, ticks: u64, kernel: impl FnOnce() -> (u64, u64)) -> u64 {
        let (at, micros) = self.anchor.get();
        // A counter that went backwards wraps to a huge distance: re-anchor.
        let since = ticks.wrapping_sub(at);
        let value = if since < self.horizon.get() {
            // since < horizon keeps the product in range (see `measure`).
            micros + ((since * self.scale.get()) >> SCALE_BITS)
        } else {
            let (micros, after) = kernel();
            let took = after.wrapping_sub(ticks);
            if took <= ANCHOR_WINDOW_TICKS {
                self.anchor_at(ticks + took / 2, micros);
            }
            micros
        };
        let value = value.max(self.last.get());
        self.last.set(value);
        value
    }

    /// A new anchor `(ticks, micros)`, and the rate from the first anchor
    /// once enough time has passed.
    #[cold]
    fn anchor_at(&self, ticks: u64, micros: u64) {
        self.anchor.set((ticks, micros));
        match self.first.get() {
            None => self.first.set(Some((ticks, micros))),
            Some((t0, m0)) if ticks > t0 && micros >= m0 + CALIBRATION_US => {
                self.measure(ticks - t0, micros - m0);
            }
            Some((t0, _)) if ticks < t0 => {
                // The counter went back (or the thread moved to a counter
                // out of step): measure again from here.
                self.first.set(Some((ticks, micros)));
                self.scale.set(0);
                self.horizon.set(0);
            }
            Some(_) => {}
        }
    }

    /// The scale from `ticks` counted in `micros` microseconds. A counter
    /// slower than one tick per microsecond is not used (its scale would
    /// not fit); otherwise `horizon * scale` stays below 2^(SCALE_BITS +
    /// log2(ANCHOR_EVERY_US) + 1), far inside a `u64`.
    fn measure(&self, ticks: u64, micros: u64) {
        // Rounded to nearest: a truncated scale would read an exact number of
        // microseconds' ticks as one microsecond less.
        let scale =
            ((u128::from(micros) << SCALE_BITS) + u128::from(ticks) / 2) / u128::from(ticks);
        match u64::try_from(scale) {
            Ok(scale) if scale > 0 && scale <= 1 << SCALE_BITS => {
                self.scale.set(scale);
                let horizon = (u128::from(ANCHOR_EVERY_US) << SCALE_BITS) / u128::from(scale);
                self.horizon.set(u64::try_from(horizon).unwrap_or(0));
            }
            _ => {
                self.scale.set(0);
                self.horizon.set(0);
            }
        }
    }

    /// Counter ticks per microsecond, once measured (rounded).
    fn ticks_per_micro(&self) -> Option<u64> {
        let scale = self.scale.get();
        let one = 1u128 << SCALE_BITS;
        (scale > 0).then(|| ((one + u128::from(scale) / 2) / u128::from(scale)) as u64)
    }
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

    /// A counter of 2,500 ticks per microsecond, read at `micros` on the
    /// kernel's clock.
    fn ticks_at(micros: u64) -> u64 {
        1_000_000_007 + micros * 2_500
    }

    /// Until the rate is measured every reading is the kernel's; then
    /// readings within a millisecond of the anchor are the counter scaled,
    /// without a kernel reading, and the next one past it re-anchors.
    #[test]
    fn the_counter_is_scaled_between_anchors_to_the_kernel_clock() {
        let c = Counter::new();
        let kernel_reads = Cell::new(0);
        let read = |c: &Counter, micros: u64, kernel: u64| {
            c.reading(ticks_at(micros), || {
                kernel_reads.set(kernel_reads.get() + 1);
                (kernel, ticks_at(micros))
            })
        };
        // Calibration: 10 ms of kernel readings.
        for us in (0..=CALIBRATION_US).step_by(500) {
            assert_eq!(read(&c, 5_000 + us, 5_000 + us), 5_000 + us);
        }
        assert_eq!(kernel_reads.get(), 21);
        assert_eq!(c.ticks_per_micro(), Some(2_500));
        // Inside the horizon: scaled, no kernel reading (the kernel value
        // handed in is wrong on purpose, to show it is not read).
        let anchor = 5_000 + CALIBRATION_US;
        for us in [1, 2, 499, 998] {
            assert_eq!(read(&c, anchor + us, 0), anchor + us);
        }
        assert_eq!(kernel_reads.get(), 21);
        // Past it: a kernel reading, which becomes the new anchor.
        assert_eq!(read(&c, anchor + 1_001, anchor + 1_001), anchor + 1_001);
        assert_eq!(kernel_reads.get(), 22);
        assert_eq!(read(&c, anchor + 1_500, 0), anchor + 1_500);
        assert_eq!(kernel_reads.get(), 22);
        // A kernel reading during which the counter moved too far (the thread
        // was preempted) is used but does not become an anchor.
        let late = anchor + 2_002;
        let slow = c.reading(ticks_at(late), || {
            (late, ticks_at(late) + ANCHOR_WINDOW_TICKS + 1)
        });
        assert_eq!(slow, late);
        assert_eq!(read(&c, late + 1, late + 1), late + 1);
        assert_eq!(kernel_reads.get(), 23);
    }

    /// A new anchor behind the extrapolation does not take readings back,
    /// and a counter that goes back is measured again from the kernel clock.
    #[test]
    fn readings_never_go_back() {
        let c = Counter::new();
        for us in (0..=CALIBRATION_US).step_by(1_000) {
            c.reading(ticks_at(us), || (us, ticks_at(us)));
        }
        let anchor = CALIBRATION_US;
        let read =
            |micros: u64, kernel: u64| c.reading(ticks_at(micros), || (kernel, ticks_at(micros)));
        assert_eq!(read(anchor + 900, 0), anchor + 900);
        // The kernel says 3 µs less than the counter's extrapolation.
        assert_eq!(read(anchor + 2_000, anchor + 897), anchor + 900);
        assert_eq!(read(anchor + 2_001, 0), anchor + 900);
        // (The rate is measured again from the first anchor: 10,897 µs in
        // 12,000 µs' ticks now, so 10 µs' ticks read as 9.)
        assert_eq!(read(anchor + 2_010, 0), anchor + 906);
        // The counter restarts near zero (a suspended machine): the kernel
        // clock is read, and the rate measured again before it is trusted.
        assert_eq!(c.reading(5, || (anchor + 3_000, 5)), anchor + 3_000);
        assert_eq!(c.ticks_per_micro(), None);
        assert_eq!(c.reading(6, || (anchor + 3_001, 6)), anchor + 3_001);
    }

    /// The process's own clock (the counter where the kernel uses it) stays
    /// within a few microseconds of `CLOCK_MONOTONIC`, read side by side
    /// for 30 ms, long enough to measure the rate and re-anchor many times.
    #[test]
    fn the_clock_stays_with_the_kernel_clock() {
        let until = posix_micros() + 30_000;
        let mut worst = 0i64;
        loop {
            let (before, ours, after) = (posix_micros(), now().0, posix_micros());
            let off = if ours < before {
                before as i64 - ours as i64
            } else {
                (ours as i64 - after as i64).max(0)
            };
            worst = worst.max(off);
            if after > until {
                break;
            }
        }
        assert!(
            worst <= 2,
            "{worst} µs away from CLOCK_MONOTONIC ({})",
            source()
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
