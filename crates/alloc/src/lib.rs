//! A counting global allocator, to measure what a structure really holds on the heap
//! and how many allocations a code path makes.
//!
//! [`CountingAlloc`] wraps [`std::alloc::System`] and keeps, for the whole process,
//! the bytes currently allocated as requested, the same at the allocator's usable
//! size (`malloc_usable_size`, on glibc), the number of live allocations, and the
//! number of allocating calls made so far (`alloc`, `alloc_zeroed`, `realloc`). One
//! copy serves the labs (through `redislab_harness::alloc`), the core's and the
//! listener's allocation tests and the core's examples. A binary that wants it
//! declares
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();
//! ```
//!
//! and reads [`CountingAlloc::snapshot`] before and after building something; the
//! difference is what the thing keeps (everything else it allocated on the way has
//! been freed by then). The counters cover every thread, so the other threads of the
//! process should be idle between the two snapshots.
//!
//! Counting costs an atomic update and a `malloc_usable_size` per allocation and per
//! free, which shows in timings of allocation-heavy code: a lab that also times
//! things turns it off with [`CountingAlloc::set_counting`] once it has its
//! snapshots. Snapshots only compare within a stretch where counting stayed on.

pub mod huge;
pub mod records;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering::Relaxed};

/// The live heap at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Heap {
    /// Bytes the program asked for (sum of `Layout::size` of live allocations).
    pub requested: i64,
    /// The same at the allocator's usable size of each block (what malloc really
    /// set aside, before its own per-chunk header); equals `requested` where the
    /// platform cannot say.
    pub usable: i64,
    /// Live allocations.
    pub blocks: i64,
}

impl Heap {
    /// `self - before`: what was allocated in between and is still live.
    pub fn since(self, before: Heap) -> Heap {
        Heap {
            requested: self.requested - before.requested,
            usable: self.usable - before.usable,
            blocks: self.blocks - before.blocks,
        }
    }
}

/// [`System`], counting. Signed counters: memory allocated before the counter
/// existed can be freed through it without wrapping around.
pub struct CountingAlloc {
    on: AtomicBool,
    requested: AtomicIsize,
    usable: AtomicIsize,
    blocks: AtomicIsize,
    calls: AtomicU64,
}

impl CountingAlloc {
    pub const fn new() -> CountingAlloc {
        CountingAlloc {
            on: AtomicBool::new(true),
            requested: AtomicIsize::new(0),
            usable: AtomicIsize::new(0),
            blocks: AtomicIsize::new(0),
            calls: AtomicU64::new(0),
        }
    }

    /// Turns counting on (the initial state) or off; off, every call goes straight
    /// to [`System`].
    pub fn set_counting(&self, on: bool) {
        self.on.store(on, Relaxed);
    }

    pub fn snapshot(&self) -> Heap {
        Heap {
            requested: self.requested.load(Relaxed) as i64,
            usable: self.usable.load(Relaxed) as i64,
            blocks: self.blocks.load(Relaxed) as i64,
        }
    }

    /// Allocating calls (`alloc`, `alloc_zeroed`, `realloc`) made while counting
    /// was on: the difference over a stretch of code is how often it allocated.
    pub fn calls(&self) -> u64 {
        self.calls.load(Relaxed)
    }

    fn added(&self, ptr: *mut u8, size: usize) {
        if !ptr.is_null() && self.on.load(Relaxed) {
            self.calls.fetch_add(1, Relaxed);
            self.requested.fetch_add(size as isize, Relaxed);
            self.usable
                .fetch_add(usable_size(ptr, size) as isize, Relaxed);
            self.blocks.fetch_add(1, Relaxed);
        }
    }

    fn removed(&self, ptr: *mut u8, size: usize) {
        if !self.on.load(Relaxed) {
            return;
        }
        self.requested.fetch_sub(size as isize, Relaxed);
        self.usable
            .fetch_sub(usable_size(ptr, size) as isize, Relaxed);
        self.blocks.fetch_sub(1, Relaxed);
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        CountingAlloc::new()
    }
}

/// What malloc set aside for the block at `ptr` (System allocates every block with
/// malloc, calloc, realloc or posix_memalign, so glibc can answer for any of them).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn usable_size(ptr: *mut u8, _size: usize) -> usize {
    // SAFETY: `ptr` is a live block from the System allocator (glibc malloc).
    unsafe { libc::malloc_usable_size(ptr.cast()) }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn usable_size(_ptr: *mut u8, size: usize) -> usize {
    size
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        self.added(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        self.added(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Counted before the block is gone: its usable size is read from it.
        self.removed(ptr, layout.size());
        System.dealloc(ptr, layout);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !self.on.load(Relaxed) {
            return System.realloc(ptr, layout, new_size);
        }
        self.calls.fetch_add(1, Relaxed);
        let old_usable = usable_size(ptr, layout.size());
        let new = System.realloc(ptr, layout, new_size);
        if !new.is_null() {
            self.requested
                .fetch_add(new_size as isize - layout.size() as isize, Relaxed);
            self.usable.fetch_add(
                usable_size(new, new_size) as isize - old_usable as isize,
                Relaxed,
            );
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_is_live() {
        let a = CountingAlloc::new();
        let layout = Layout::from_size_align(100, 8).unwrap();
        unsafe {
            let p = a.alloc(layout);
            let live = a.snapshot();
            assert_eq!(live.requested, 100);
            assert_eq!(live.blocks, 1);
            assert!(live.usable >= 100);
            let q = a.realloc(p, layout, 300);
            assert_eq!(a.snapshot().requested, 300);
            assert_eq!(a.snapshot().blocks, 1);
            assert_eq!(a.calls(), 2);
            a.dealloc(q, Layout::from_size_align(300, 8).unwrap());
        }
        assert_eq!(a.snapshot(), Heap::default());
        a.set_counting(false);
        unsafe {
            let p = a.alloc(layout);
            a.dealloc(p, layout);
        }
        assert_eq!(a.snapshot(), Heap::default());
        assert_eq!(a.calls(), 2, "nothing counted while off");
        let after = Heap {
            requested: 10,
            usable: 16,
            blocks: 1,
        };
        assert_eq!(after.since(after), Heap::default());
    }
}
