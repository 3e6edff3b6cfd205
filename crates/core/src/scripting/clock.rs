//! The command's time snapshot (Redis 7's `commandTimeSnapshot`): every
//! command sees the time its outermost command started. A command's
//! lookups, EXEC's whole queue and every command a script calls share one
//! time, so a key that expires during EXEC or a script is still there
//! until it ends, `SET ... PX` and `EXPIRE` in one transaction or script
//! compute the same deadline, and TIME answers the same value twice.
//!
//! The core's clock is [`crate::keyspace::now_ms`]; it asks [`frozen_ms`]
//! first. The snapshot is per thread (a server runs its commands on one
//! thread at a time); the server's `call_in` holds a [`Freeze`] at the
//! command's start time ([`Freeze::at`]), a script one at its own start
//! ([`Freeze::now`], which inside a command keeps the command's), and the
//! guard restores the previous state when it ends, even by a panic. Outside
//! a command (the active expire cycle, a refused request) the clock is the
//! wall clock.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    static FROZEN_US: Cell<Option<i64>> = const { Cell::new(None) };
}

/// The wall clock in Unix microseconds.
pub fn wall_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// The frozen time in milliseconds, if a command is running on this thread.
pub fn frozen_ms() -> Option<i64> {
    FROZEN_US.with(|f| f.get()).map(|us| us / 1000)
}

/// The time commands should see, in microseconds (TIME): the snapshot
/// inside a command, the wall clock otherwise.
pub fn now_us() -> i64 {
    FROZEN_US.with(|f| f.get()).unwrap_or_else(wall_us)
}

/// Freezes the clock until dropped (nested freezes keep the outer time).
pub struct Freeze {
    previous: Option<i64>,
}

impl Freeze {
    /// Frozen at the wall clock now, unless already frozen.
    pub fn now() -> Freeze {
        Freeze::at(wall_us)
    }

    /// Frozen at `us()` microseconds (called only if the clock is not
    /// already frozen: a command inside EXEC or a script keeps the outer
    /// time, as Redis takes its snapshot only at nesting level 0).
    pub fn at(us: impl FnOnce() -> i64) -> Freeze {
        let previous = FROZEN_US.with(|f| f.get());
        FROZEN_US.with(|f| f.set(Some(previous.unwrap_or_else(us))));
        Freeze { previous }
    }
}

impl Drop for Freeze {
    fn drop(&mut self) {
        FROZEN_US.with(|f| f.set(self.previous));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_stands_still_while_frozen() {
        assert_eq!(frozen_ms(), None);
        {
            let _f = Freeze::now();
            let a = now_us();
            std::thread::sleep(std::time::Duration::from_millis(3));
            assert_eq!(now_us(), a);
            assert_eq!(frozen_ms(), Some(a / 1000));
            let inner = Freeze::now();
            assert_eq!(now_us(), a);
            drop(inner);
            assert_eq!(now_us(), a);
        }
        assert_eq!(frozen_ms(), None);
    }
}
