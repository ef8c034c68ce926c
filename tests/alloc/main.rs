//! The tests that count allocations ("a warm frame allocates nothing"), with the rest of their
//! subjects' tests: the character's CPU animation stage and CCD inverse kinematics. A
//! `#[global_allocator]` serves the whole binary it is linked into, so the counting allocator
//! lives in this small binary of its own rather than under every other test. It counts per
//! thread: only allocations made on a thread while that thread counts, into that thread's own
//! counter, so tests running in parallel on other threads (counting or not) are not counted.
#![allow(unsafe_code)] // a counting global allocator

#[path = "../common/mod.rs"]
mod common;

mod character;
mod crowd;
mod ik;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Counts allocations made on this thread while counting is on (other tests run in
/// parallel on other threads and must not be counted).
struct CountingAlloc;
thread_local! {
    /// Whether allocations on this thread are counted now.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// Allocations (and reallocations) counted on this thread.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

thread_local! {
    /// This thread is a worker of a pool whose allocations a test counts
    /// ([`mark_pool_worker`]).
    static POOL_WORKER: Cell<bool> = const { Cell::new(false) };
}

/// Whether allocations on marked pool workers are counted now.
static POOL_COUNTING: AtomicBool = AtomicBool::new(false);
/// Allocations counted on marked pool workers.
static POOL_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn note_allocation() {
    let _ = COUNTING.try_with(|c| {
        if c.get() {
            let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
        }
    });
    if POOL_COUNTING.load(Ordering::Relaxed) && POOL_WORKER.try_with(Cell::get).unwrap_or(false) {
        POOL_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Marks the calling thread as a pool worker whose allocations count (a pool's start
/// handler). One test at a time may count pool workers: only the crowd test does.
fn mark_pool_worker() {
    POOL_WORKER.with(|w| w.set(true));
}

/// Turns counting on marked pool workers on (from zero) or off.
fn set_pool_counting(on: bool) {
    if on {
        POOL_ALLOCATIONS.store(0, Ordering::Relaxed);
    }
    POOL_COUNTING.store(on, Ordering::Relaxed);
}

/// Allocations counted on marked pool workers since counting went on.
fn pool_allocations() -> usize {
    POOL_ALLOCATIONS.load(Ordering::Relaxed)
}

/// Turns counting on this thread on or off.
fn set_counting(on: bool) {
    COUNTING.with(|c| c.set(on));
}

/// Allocations counted on this thread so far.
fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// Sets this thread's count back to zero.
fn reset_allocations() {
    ALLOCATIONS.with(|a| a.set(0));
}

// SAFETY: every method forwards to the system allocator, which meets GlobalAlloc's contract;
// counting touches no allocation.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's layout and pointer go to the system allocator unchanged, under
        // the same GlobalAlloc contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's layout and pointer go to the system allocator unchanged, under
        // the same GlobalAlloc contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's layout and pointer go to the system allocator unchanged, under
        // the same GlobalAlloc contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;
