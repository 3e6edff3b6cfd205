//! What the core's timing examples share.

/// CPU time of this thread (`CLOCK_THREAD_CPUTIME_ID`), in ns: what a busy
/// neighbour on a shared machine moves least (the wall clock also counts the
/// time another process had the core).
pub fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for clock_gettime to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
