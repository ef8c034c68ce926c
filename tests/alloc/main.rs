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
mod ik;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made on this thread while counting is on (other tests run in
/// parallel on other threads and must not be counted).
struct CountingAlloc;
thread_local! {
    /// Whether allocations on this thread are counted now.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// Allocations (and reallocations) counted on this thread.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    let _ = COUNTING.try_with(|c| {
        if c.get() {
            let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
        }
    });
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
