//! A global allocator that backs the sorted sets' record buffers with
//! transparent huge pages.
//!
//! A 1,000,000-member sorted set or keyspace is tens of MB of records reached
//! at random: with 4 KiB pages nearly every step of a skiplist descent or a
//! dict probe also misses the TLB, and on a virtual machine a page walk is
//! itself several memory reads. [`HugePages`] hands out every block of a
//! zset record buffer ([`crate::records::RecordBuf`], known by its alignment)
//! of a whole number of [`HUGE_PAGE`]s (2, 4, 6, … MiB: the sizes the record
//! arena grows its shared buffer through, one huge page fault per ~30,000
//! members) as its own anonymous mapping, 2 MiB-aligned, and asks the kernel
//! for huge pages there (`madvise(MADV_HUGEPAGE)`, which works when
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `always` or `madvise`).
//! Such a block grows by moving its pages into a bigger aligned mapping
//! (`mremap`): the page tables move, the bytes are not copied, and huge pages
//! stay huge. Every other block goes to [`System`] unchanged.
//!
//! Blocks of every kind from 2 MiB were mapped at first, and it cost more
//! than it gave: a growing keyspace's dict tables are faulted in during its
//! rehash, and with
//! `defrag` at `madvise` each huge page fault may compact memory first; under
//! `redis-benchmark -P 16` SET's p99 went from about 3 ms to about 8 ms (four
//! runs beside `--no-huge-pages`), while ZSCORE on a 1M-member set (its dict
//! on huge pages) gained a third. The size alone decides, at allocation and
//! at release alike, so a block is always freed the way it was allocated.
//!
//! Redis turns transparent huge pages off for itself (`disable-thp yes`)
//! because it forks for BGSAVE and AOF rewrites, and a huge page copied on
//! write after a fork costs 2 MiB instead of 4 KiB. The core never forks, so
//! that reason does not hold for it; `redislab-core-server --no-huge-pages`
//! turns this off (before the first such block) to compare.
//!
//! The mapped bytes are counted ([`mapped_bytes`]): glibc's `mallinfo2`
//! does not see these blocks, and the server's `used_memory` adds them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};

/// The huge page size on x86_64; record buffers of whole multiples of it are
/// mapped here.
pub const HUGE_PAGE: usize = 2 << 20;

const UNDECIDED: u8 = 0;
const ON: u8 = 1;
const OFF: u8 = 2;

/// Whether huge-page blocks are mapped here: decided at the first one (on,
/// unless [`disable`] came first) and fixed from then on, so a block is
/// always freed the way it was allocated.
static STATE: AtomicU8 = AtomicU8::new(UNDECIDED);
static MAPPED: AtomicUsize = AtomicUsize::new(0);

/// The global allocator; declare it in a binary:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOC: redislab_alloc::huge::HugePages = redislab_alloc::huge::HugePages;
/// ```
pub struct HugePages;

/// Sends every block to [`System`] from now on. True if that holds (no
/// block was mapped before); false if huge pages are already in use.
pub fn disable() -> bool {
    match STATE.compare_exchange(UNDECIDED, OFF, Relaxed, Relaxed) {
        Ok(_) => true,
        Err(state) => state == OFF,
    }
}

/// Whether huge-page blocks are (or will be) mapped.
pub fn enabled() -> bool {
    STATE.load(Relaxed) != OFF
}

/// Bytes currently mapped (a huge page per block).
pub fn mapped_bytes() -> usize {
    MAPPED.load(Relaxed)
}

/// Whether a block of this layout is (or was) mapped here: a record buffer
/// (its alignment says so) of whole huge pages (see the module documentation
/// for why not every block).
fn is_mapped(size: usize, align: usize) -> bool {
    if align != crate::records::RECORD_ALIGN || size == 0 || !size.is_multiple_of(HUGE_PAGE) {
        return false;
    }
    match STATE.compare_exchange(UNDECIDED, ON, Relaxed, Relaxed) {
        Ok(_) => true,
        Err(state) => state == ON,
    }
}

/// A fresh zeroed mapping of `len` bytes (a multiple of a huge page),
/// 2 MiB-aligned, advised for huge pages; null if the kernel refuses.
unsafe fn map(len: usize) -> *mut u8 {
    let span = len + HUGE_PAGE;
    // SAFETY: an anonymous private mapping touches no existing memory.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    let start = raw as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    let (head, tail) = (aligned - start, start + span - (aligned + len));
    // SAFETY: the head and the tail lie inside the mapping just made and
    // outside the block handed out; the advice only concerns that block.
    unsafe {
        if head > 0 {
            libc::munmap(raw, head);
        }
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    MAPPED.fetch_add(len, Relaxed);
    aligned as *mut u8
}

unsafe fn unmap(ptr: *mut u8, len: usize) {
    // SAFETY: `ptr..ptr + len` is a block [`map`] made and nobody uses any
    // more.
    unsafe {
        libc::munmap(ptr.cast(), len);
    }
    MAPPED.fetch_sub(len, Relaxed);
}

/// A mapped block of `old` bytes as one of `new` bytes: shrunk in place, or
/// grown by moving its pages to the start of a fresh aligned mapping of the
/// new size (no bytes copied; 2 MiB-aligned source and target let the kernel
/// move huge pages whole). Null if the kernel refuses (the old block is then
/// untouched).
unsafe fn remap(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
    if new <= old {
        // SAFETY: the tail past `new` belongs to this block, which its owner
        // no longer reads there.
        unsafe {
            libc::munmap(ptr.add(new).cast(), old - new);
        }
        MAPPED.fetch_sub(old - new, Relaxed);
        return ptr;
    }
    // SAFETY: a fresh mapping; the old block's pages then replace its first
    // `old` bytes (MREMAP_FIXED unmaps what was there, which is ours).
    unsafe {
        let target = map(new);
        if target.is_null() {
            return target;
        }
        let moved = libc::mremap(
            ptr.cast(),
            old,
            old,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            target.cast::<libc::c_void>(),
        );
        if moved == libc::MAP_FAILED {
            unmap(target, new);
            return std::ptr::null_mut();
        }
        // The old range is gone (its pages live on at `target`).
        MAPPED.fetch_sub(old, Relaxed);
        target
    }
}

// SAFETY: a block is mapped or from System by its size alone (and the state,
// which never changes once a block was mapped), at allocation and at release
// alike; mapped blocks are aligned to 2 MiB, as much as any layout mapped here
// may ask.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_mapped(layout.size(), layout.align()) {
            unsafe { map(layout.size()) }
        } else {
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_mapped(layout.size(), layout.align()) {
            // A fresh anonymous mapping reads as zeros.
            unsafe { map(layout.size()) }
        } else {
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_mapped(layout.size(), layout.align()) {
            unsafe { unmap(ptr, layout.size()) }
        } else {
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let was = is_mapped(layout.size(), layout.align());
        let will = is_mapped(new_size, layout.align());
        if !was && !will {
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if was && will {
            if new_size == layout.size() {
                return ptr;
            }
            // SAFETY: a mapped block of `layout.size()` bytes.
            let moved = unsafe { remap(ptr, layout.size(), new_size) };
            if !moved.is_null() {
                return moved;
            }
        }
        // Into or out of a mapped block (or a remap refused): a new block,
        // the bytes copied.
        // SAFETY: `new_size` with the old alignment is a valid layout (the
        // caller guarantees it does not overflow `isize`).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live and hold at least this many bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::RECORD_ALIGN;

    /// The tests read the one global count of mapped bytes: one at a time.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A record buffer of exactly 2 MiB is mapped 2 MiB-aligned, zeroed,
    /// counted, and keeps its bytes when it grows into System's and back;
    /// other sizes are System's. (The test calls the allocator directly; the test
    /// binary's own global allocator is System.)
    #[test]
    fn huge_page_blocks_are_aligned_zeroed_counted_and_kept_across_realloc() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let a = HugePages;
        let page = Layout::from_size_align(HUGE_PAGE, RECORD_ALIGN).unwrap();
        let before = mapped_bytes();
        unsafe {
            let p = a.alloc_zeroed(page);
            assert!(!p.is_null());
            assert_eq!(p as usize % HUGE_PAGE, 0);
            assert_eq!(mapped_bytes() - before, HUGE_PAGE);
            assert!(std::slice::from_raw_parts(p, HUGE_PAGE)
                .iter()
                .all(|&b| b == 0));
            p.write_bytes(0xAB, HUGE_PAGE);
            assert_eq!(a.realloc(p, page, HUGE_PAGE), p);
            // Bigger: System's, the bytes kept, the mapping gone.
            let q = a.realloc(p, page, HUGE_PAGE + RECORD_ALIGN);
            assert_eq!(*q.add(HUGE_PAGE - 1), 0xAB);
            assert_eq!(mapped_bytes(), before);
            // Back to one huge page: mapped again.
            let bigger = Layout::from_size_align(HUGE_PAGE + RECORD_ALIGN, RECORD_ALIGN).unwrap();
            let r = a.realloc(q, bigger, HUGE_PAGE);
            assert_eq!(r as usize % HUGE_PAGE, 0);
            assert_eq!(*r, 0xAB);
            assert_eq!(mapped_bytes() - before, HUGE_PAGE);
            a.dealloc(r, page);
            assert_eq!(mapped_bytes(), before);
            let small = Layout::from_size_align(256, RECORD_ALIGN).unwrap();
            let s = a.alloc(small);
            assert_eq!(mapped_bytes(), before, "a small block is System's");
            a.dealloc(s, small);
        }
        assert!(enabled());
        assert!(!disable(), "a block was mapped: too late to turn off");
    }

    /// A record buffer's growth: 2 → 6 → 10 MiB moves the pages (bytes kept
    /// at both ends, aligned, counted), 10 → 6 shrinks in place; a block of
    /// whole huge pages that is no record buffer is System's.
    #[test]
    fn record_buffers_grow_by_moving_pages_and_other_blocks_are_systems() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let a = HugePages;
        let before = mapped_bytes();
        unsafe {
            let two = Layout::from_size_align(HUGE_PAGE, RECORD_ALIGN).unwrap();
            let p = a.alloc(two);
            p.write_bytes(0x5A, HUGE_PAGE);
            let q = a.realloc(p, two, 3 * HUGE_PAGE);
            assert_eq!(q as usize % HUGE_PAGE, 0);
            assert_eq!(mapped_bytes() - before, 3 * HUGE_PAGE);
            assert_eq!((*q, *q.add(HUGE_PAGE - 1)), (0x5A, 0x5A));
            assert_eq!(*q.add(HUGE_PAGE), 0, "the new part reads as zeros");
            q.add(3 * HUGE_PAGE - 1).write(7);
            let six = Layout::from_size_align(3 * HUGE_PAGE, RECORD_ALIGN).unwrap();
            let r = a.realloc(q, six, 5 * HUGE_PAGE);
            assert_eq!(r as usize % HUGE_PAGE, 0);
            assert_eq!(mapped_bytes() - before, 5 * HUGE_PAGE);
            assert_eq!((*r, *r.add(3 * HUGE_PAGE - 1)), (0x5A, 7));
            let ten = Layout::from_size_align(5 * HUGE_PAGE, RECORD_ALIGN).unwrap();
            let t = a.realloc(r, ten, 3 * HUGE_PAGE);
            assert_eq!(t, r, "shrunk in place");
            assert_eq!(mapped_bytes() - before, 3 * HUGE_PAGE);
            a.dealloc(t, six);
            assert_eq!(mapped_bytes(), before);
            // A block of the same size with another alignment (a dict table,
            // any Vec) is System's.
            let other = Layout::from_size_align(2 * HUGE_PAGE, 8).unwrap();
            let f = a.alloc(other);
            assert_eq!(mapped_bytes(), before, "not a record buffer: System's");
            a.dealloc(f, other);
        }
    }
}
