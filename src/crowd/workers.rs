//! Persistent worker threads that run one borrowed job a frame and meet before the frame
//! returns (fork–join, as ozz-animation's crowd benchmark and game engines' job systems run an
//! animation stage), with the frame's work claimed piece by piece ([`Claims`]) rather than
//! split once: each thread takes its own pieces first, then takes pieces from the back of the
//! others' (work stealing, as rayon's and Bevy's task pools balance), and a worker that has
//! not started the frame by the time the calling thread has run out of pieces skips it.
//!
//! Based on: the crowd case of `../shared/peers/ozzbench/ozz_bench.cc` (persistent threads,
//! contiguous slices, a barrier after each frame); the scoped-job pattern of rayon's `scope`
//! and crossbeam's scoped threads (a borrowed closure stays valid because the call does not
//! return until every thread that entered it has finished with it); Blumofe and Leiserson,
//! "Scheduling Multithreaded Computations by Work Stealing" (owners take from one end of their
//! queue, thieves from the other).
//!
//! Why stealing: with one fixed slice a thread, a frame lasts as long as its slowest thread,
//! and a thread is slow whenever its core is shared (another process, a virtual machine's
//! stolen time, an efficiency core beside performance cores): on the 2-vCPU CI kind with one
//! core busy, two threads ran a 1,024-character crowd no faster than one. With claims, the
//! threads that run do the work, and the frame waits only for pieces already started.
//!
//! Why not rayon: a call into a rayon pool from outside it goes through the pool's injector
//! queue, and crossbeam-deque's `Injector::push` allocates a new block every 63 jobs, so a
//! frame driven from the viewer's thread would allocate now and then. These threads are made
//! once; a frame takes a lock, wakes them through a condition variable and waits on another:
//! no allocation on any thread (the allocation tests count on these threads too). Before
//! sleeping on either, a thread spins for up to [`SPIN`] on an atomic copy of what it waits
//! for (as ozz's benchmark barrier spins), so back-to-back frames do not pay a futex wake-up
//! each: on the 2-vCPU CI kind that wake-up was what kept the second core's gain on 1,024
//! characters under ozz's.
//!
//! Cost: at most two futex wake-ups a frame per thread, none while frames follow each other
//! within [`SPIN`]; one compare-and-swap a piece claimed. Limits: [`MAX_THREADS`]; one job at
//! a time (`run` takes `&mut self`); on targets without threads (wasm32) the pool has the
//! calling thread alone.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Most threads a pool runs (the calling thread included): far past the cores of any machine
/// the crowd runs on, and it bounds the per-thread scratch a crowd keeps.
pub const MAX_THREADS: usize = 256;

/// How long a thread spins on a frame's start or end before it sleeps on the condition
/// variable: longer than a crowd frame's stage on 2 cores for 1,024 characters (about 0.7 ms
/// measured), short enough that a pool between a viewer's frames sleeps most of each one.
pub const SPIN: Duration = Duration::from_micros(1000);

/// The job of one frame: called with index 0 on the calling thread, and with its own index on
/// each worker that starts the frame in time (see [`Workers::run`]); it claims its work.
pub type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// A job with its lifetime erased, as the worker threads hold it while a frame runs.
#[derive(Clone, Copy)]
struct ErasedJob(*const (dyn Fn(usize) + Sync + 'static));

// SAFETY: the pointer is only dereferenced by the worker threads between `Workers::run`
// publishing it and `run` seeing every worker finished with it; the closure it points to is
// `Sync`, so calling it from several threads at once is allowed.
#[allow(unsafe_code)]
unsafe impl Send for ErasedJob {}

/// What the calling thread and the workers share.
struct Shared {
    state: Mutex<State>,
    /// Signalled when a frame's job is published (or the pool shuts down).
    start: Condvar,
    /// Signalled when the last worker in a closed frame finishes.
    done: Condvar,
    /// [`State::generation`] as last published, read without the lock by spinning workers.
    generation: AtomicU64,
    /// The frame's gate ([`Gate`]): open while the calling thread runs its part, with the
    /// workers inside the job counted.
    gate: AtomicU64,
}

/// A frame's gate word: [`Gate::OPEN`], the frame's generation (low 31 bits) and the count of
/// workers inside the job. A worker enters only an open gate of the frame it read the job of;
/// the calling thread closes it when its own part is done and waits for the count to reach 0.
struct Gate;

impl Gate {
    const OPEN: u64 = 1 << 63;
    const COUNT: u64 = 0xFFFF_FFFF;

    /// The open gate of generation `generation`, nobody inside.
    fn open(generation: u64) -> u64 {
        Gate::OPEN | ((generation & 0x7FFF_FFFF) << 32)
    }

    /// Whether `word` is the open gate of `generation`.
    fn admits(word: u64, generation: u64) -> bool {
        word & Gate::OPEN != 0 && (word >> 32) & 0x7FFF_FFFF == generation & 0x7FFF_FFFF
    }
}

/// Spin until `ready` or [`SPIN`] has passed; whether it became ready.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() > SPIN {
            return false;
        }
        std::thread::yield_now();
    }
}

struct State {
    /// Bumped for every job published.
    generation: u64,
    job: Option<ErasedJob>,
    /// A worker's job panicked this frame.
    panicked: bool,
    exit: bool,
}

/// Worker threads kept between frames (see the module documentation).
pub struct Workers {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

/// Lock `m`, going on after a panic elsewhere (the state stays consistent: every change to it
/// is one assignment under the lock).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Workers {
    /// A pool of `threads` threads (the calling thread and `threads − 1` workers), clamped to
    /// 1..=[`MAX_THREADS`]. `on_start` runs first on each worker thread (tests mark the threads
    /// whose allocations they count). Where threads cannot be made (wasm32), fewer run: see
    /// [`Workers::threads`].
    pub fn new(threads: usize, on_start: Option<fn()>) -> Workers {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                generation: 0,
                job: None,
                panicked: false,
                exit: false,
            }),
            start: Condvar::new(),
            done: Condvar::new(),
            generation: AtomicU64::new(0),
            gate: AtomicU64::new(0),
        });
        let mut handles = Vec::with_capacity(threads.clamp(1, MAX_THREADS) - 1);
        for index in 1..threads.clamp(1, MAX_THREADS) {
            let s = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name(format!("skinview-crowd-{index}"))
                .spawn(move || {
                    if let Some(f) = on_start {
                        f();
                    }
                    work(&s, index);
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(_) => break,
            }
        }
        Workers { shared, handles }
    }

    /// Threads that run a job, the calling thread included.
    pub fn threads(&self) -> usize {
        self.handles.len() + 1
    }

    /// Run `job(0)` on this thread and `job(t)` on each worker `t` that starts the frame
    /// before `job(0)` returns; return when every call made has returned. A worker that wakes
    /// later skips the frame, so the job must claim its work ([`Claims`]) rather than expect
    /// every index: whatever the workers leave, `job(0)` takes. A panic in a worker's call is
    /// an error; one in this thread's call is resumed here, after the workers have finished.
    pub fn run(&mut self, job: Job<'_>) -> Result<()> {
        if self.handles.is_empty() {
            job(0);
            return Ok(());
        }
        #[allow(unsafe_code)]
        // SAFETY: only the lifetime is erased. A worker calls the job only after entering the
        // frame's open gate, and this function closes the gate and waits until every worker
        // that entered has left (even when this thread's own call panics) before it returns,
        // so the borrow outlives every use.
        let erased: ErasedJob = ErasedJob(unsafe {
            std::mem::transmute::<Job<'_>, *const (dyn Fn(usize) + Sync + 'static)>(job)
        });
        {
            let mut s = lock(&self.shared.state);
            s.job = Some(erased);
            s.panicked = false;
            s.generation = s.generation.wrapping_add(1);
            self.shared
                .gate
                .store(Gate::open(s.generation), Ordering::Release);
            self.shared
                .generation
                .store(s.generation, Ordering::Release);
        }
        self.shared.start.notify_all();
        let mine = catch_unwind(AssertUnwindSafe(|| job(0)));
        // Close the gate: workers not inside yet skip the frame.
        self.shared.gate.fetch_and(!Gate::OPEN, Ordering::AcqRel);
        let inside = || self.shared.gate.load(Ordering::Acquire) & Gate::COUNT;
        spin_until(|| inside() == 0);
        let panicked = {
            let mut s = lock(&self.shared.state);
            while inside() > 0 {
                s = self
                    .shared
                    .done
                    .wait(s)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            s.job = None;
            s.panicked
        };
        if let Err(p) = mine {
            resume_unwind(p);
        }
        if panicked {
            return Err(Error::Worker(
                "a crowd worker thread panicked during the frame".into(),
            ));
        }
        Ok(())
    }
}

impl Workers {
    /// [`Workers::run`] over the parts of one output: every part of `parts` claimed once
    /// through `claims` (reset here), and `f(t, i, start, part)` called on the thread `t` that
    /// took part `i` (its first element at `start`).
    pub fn run_parts<T: Send>(
        &mut self,
        claims: &Claims,
        parts: &Parts<'_, T>,
        f: &(impl Fn(usize, usize, usize, &mut [T]) + Sync),
    ) -> Result<()> {
        claims.reset(parts.count());
        self.run(&|t| {
            while let Some(i) = claims.next(t) {
                if let Some((start, part)) = parts.take(i) {
                    f(t, i, start, part);
                }
            }
        })
    }
}

/// A worker's loop: wait for a new generation, enter its gate if still open, run the job, leave.
fn work(shared: &Shared, index: usize) {
    let mut seen = 0u64;
    loop {
        spin_until(|| shared.generation.load(Ordering::Acquire) != seen);
        let job = {
            let mut s = lock(&shared.state);
            while s.generation == seen && !s.exit {
                s = shared.start.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
            if s.exit {
                return;
            }
            seen = s.generation;
            s.job
        };
        let entered = shared
            .gate
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |g| {
                Gate::admits(g, seen).then_some(g + 1)
            })
            .is_ok();
        if !entered {
            continue;
        }
        let ok = match job {
            // SAFETY: see `Workers::run`: the job outlives this call, which ends before this
            // worker leaves the gate.
            #[allow(unsafe_code)]
            Some(ErasedJob(f)) => catch_unwind(AssertUnwindSafe(|| unsafe { (*f)(index) })).is_ok(),
            None => true,
        };
        if !ok {
            lock(&shared.state).panicked = true;
        }
        let before = shared.gate.fetch_sub(1, Ordering::AcqRel);
        if before & Gate::COUNT == 1 && before & Gate::OPEN == 0 {
            // The last one out of a closed frame: wake the caller (under the lock, so the
            // wake-up cannot fall between its test and its wait).
            let _s = lock(&shared.state);
            shared.done.notify_all();
        }
    }
}

/// Pieces of a frame's work (indices `0..count`), each claimed by exactly one thread: thread
/// `t` owns a contiguous share and takes it from the front; a thread whose share is done takes
/// from the back of the others' (see the module documentation). A thief leaves an owner that
/// has begun its share its last piece: the owner is in the frame and takes it itself, and a
/// piece taken cold from another core's caches could end the frame later than the owner
/// would. An owner that has not begun may never join the frame, so all of its share can be
/// taken. Made once; [`Claims::reset`] every frame. No allocation after [`Claims::new`].
pub struct Claims {
    /// Per thread: the front (low 32 bits) and end (high 32) of its unclaimed pieces.
    queues: Vec<Queue>,
}

/// One thread's queue: the front (low 32 bits) and end (high 32) of its unclaimed pieces, and
/// where its share began; on a line of its own (the owner's claims do not evict the others').
#[repr(align(128))]
struct Queue {
    word: AtomicU64,
    start: AtomicU64,
}

impl Claims {
    /// Claims for `threads` threads (at least 1).
    pub fn new(threads: usize) -> Claims {
        Claims {
            queues: (0..threads.max(1))
                .map(|_| Queue {
                    word: AtomicU64::new(0),
                    start: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    /// Hand out pieces `0..count` anew: thread `t` owns `owned(count, t)`. Call between frames
    /// (no thread claiming). Counts past `u32::MAX` are cut to it.
    pub fn reset(&self, count: usize) {
        let threads = self.queues.len();
        for (t, q) in self.queues.iter().enumerate() {
            let r = owned(count.min(u32::MAX as usize), t, threads);
            q.start.store(r.start as u64, Ordering::Release);
            q.word
                .store(((r.end as u64) << 32) | r.start as u64, Ordering::Release);
        }
    }

    /// The next piece for thread `t`: its own from the front, then the others' from the back
    /// (each once per reset); `None` when every piece is claimed.
    pub fn next(&self, t: usize) -> Option<usize> {
        let threads = self.queues.len();
        if let Some(q) = self.queues.get(t)
            && let Ok(w) = q
                .word
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                    ((w & 0xFFFF_FFFF) < (w >> 32)).then_some(w + 1)
                })
        {
            return Some((w & 0xFFFF_FFFF) as usize);
        }
        (1..threads).find_map(|k| {
            let q = &self.queues[(t + k) % threads];
            let start = q.start.load(Ordering::Acquire);
            q.word
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                    let (front, end) = (w & 0xFFFF_FFFF, w >> 32);
                    let begun = front != start;
                    (front < end && (end - front >= 2 || !begun)).then(|| w - (1 << 32))
                })
                .ok()
                .map(|w| (w >> 32) as usize - 1)
        })
    }
}

/// Thread `t`'s contiguous share of `count` pieces over `threads` threads (as ozz's crowd
/// splits its characters).
pub fn owned(count: usize, t: usize, threads: usize) -> std::ops::Range<usize> {
    let threads = threads.max(1);
    count * t / threads..count * (t + 1) / threads
}

/// One slice written by several threads in claimed, disjoint parts: part `i` is
/// `ends[i - 1]..ends[i]` (`ends` ascending, the first part from 0), and each part is handed
/// out once per `Parts` ([`Parts::take`]), so no two threads ever hold the same elements.
pub struct Parts<'a, T> {
    ptr: *mut T,
    len: usize,
    ends: &'a [usize],
    /// Per part: taken.
    taken: &'a [AtomicBool],
    _slice: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: `Parts` hands out each part once (`taken`), so threads sharing it only ever hold
// disjoint `&mut` subslices of a slice it borrowed mutably; `T: Send` lets those move across.
#[allow(unsafe_code)]
unsafe impl<T: Send> Sync for Parts<'_, T> {}

impl<'a, T> Parts<'a, T> {
    /// `slice` in the parts ending at `ends`; `taken` (one flag a part, any values: they are
    /// cleared here) records which are out. An error when `ends` does not ascend within the
    /// slice or `taken` has fewer flags than parts.
    pub fn new(
        slice: &'a mut [T],
        ends: &'a [usize],
        taken: &'a [AtomicBool],
    ) -> Result<Parts<'a, T>> {
        let within = ends.last().is_none_or(|&e| e <= slice.len());
        if !ends.is_sorted() || !within || taken.len() < ends.len() {
            return Err(Error::Worker(format!(
                "{} parts ending at {:?}… of a slice of {} with {} flags",
                ends.len(),
                &ends[..ends.len().min(4)],
                slice.len(),
                taken.len()
            )));
        }
        for f in taken {
            f.store(false, Ordering::Relaxed);
        }
        Ok(Parts {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            ends,
            taken,
            _slice: std::marker::PhantomData,
        })
    }

    /// Parts.
    pub fn count(&self) -> usize {
        self.ends.len()
    }

    /// Part `i` with its first element's index, once: `None` when taken already, past the
    /// parts, or past the slice.
    #[allow(clippy::mut_from_ref)] // each part at most once: `taken`
    pub fn take(&self, i: usize) -> Option<(usize, &mut [T])> {
        let start = match i {
            0 => 0,
            _ => *self.ends.get(i - 1)?,
        };
        let end = *self.ends.get(i)?;
        if end > self.len || self.taken.get(i)?.swap(true, Ordering::AcqRel) {
            return None;
        }
        // SAFETY: `start..end` lies in the borrowed slice (`ends` ascends, checked in `new`, and
        // `end` is within it), and part `i` was not taken before (the swap above), so this is
        // the only live reference to those elements: parts do not overlap as `ends` ascends.
        #[allow(unsafe_code)]
        let part = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), end - start) };
        Some((start, part))
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        {
            let mut s = lock(&self.shared.state);
            s.exit = true;
            // Spinning workers see a new generation and go to the lock, which says exit.
            s.generation = s.generation.wrapping_add(1);
            self.shared
                .generation
                .store(s.generation, Ordering::Release);
        }
        self.shared.start.notify_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// Every piece is claimed once a frame, whatever the thread count and the pieces per
    /// thread, over many frames, and what the job wrote is all there when `run` returns.
    #[test]
    fn every_piece_is_claimed_once_a_frame() {
        for threads in [1, 2, 7] {
            let mut pool = Workers::new(threads, None);
            assert_eq!(pool.threads(), threads);
            let claims = Claims::new(threads);
            for count in [0, 1, 5, 64, 1000] {
                let hits: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
                for _ in 0..100 {
                    claims.reset(count);
                    pool.run(&|t| {
                        while let Some(p) = claims.next(t) {
                            hits[p].fetch_add(1, Ordering::Relaxed);
                        }
                    })
                    .expect("the pool runs the frame");
                }
                for (p, h) in hits.iter().enumerate() {
                    assert_eq!(
                        h.load(Ordering::Relaxed),
                        100,
                        "{threads} threads: piece {p}"
                    );
                }
            }
        }
    }

    /// An owner takes its share from the front, in order; a thread whose share is done takes
    /// the others' from the back, the next thread's first, all of a share not begun and all
    /// but the last piece of one begun.
    #[test]
    fn owners_take_from_the_front_thieves_from_the_back() {
        let claims = Claims::new(3);
        claims.reset(9); // shares 0..3, 3..6, 6..9
        let mine: Vec<usize> = std::iter::from_fn(|| claims.next(1)).take(4).collect();
        assert_eq!(mine, [3, 4, 5, 8]);
        assert_eq!(claims.next(0), Some(0));
        assert_eq!(claims.next(2), Some(6));
        let rest: Vec<usize> = std::iter::from_fn(|| claims.next(2)).collect();
        assert_eq!(rest, [7, 2], "piece 1 is left to thread 0, which has begun");
        assert_eq!((claims.next(0), claims.next(0)), (Some(1), None));
        // Shares never begun are taken whole.
        claims.reset(9);
        let all: Vec<usize> = std::iter::from_fn(|| claims.next(0)).collect();
        assert_eq!(all, [0, 1, 2, 5, 4, 3, 8, 7, 6]);
    }

    /// A frame does not wait for a worker that has not started it: while the only worker
    /// sleeps (its start hook), frames whose pieces the calling thread claims return at once.
    #[test]
    fn a_frame_does_not_wait_for_a_worker_that_has_not_started() {
        fn sleepy() {
            std::thread::sleep(Duration::from_millis(1500));
        }
        let mut pool = Workers::new(2, Some(sleepy));
        let claims = Claims::new(2);
        let done = AtomicUsize::new(0);
        let t0 = Instant::now();
        for _ in 0..10 {
            claims.reset(16);
            pool.run(&|t| {
                while claims.next(t).is_some() {
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
            .expect("the pool runs the frame");
        }
        // Ten frames of sixteen counts take microseconds; the worker sleeps far longer.
        assert!(
            t0.elapsed() < Duration::from_millis(1000),
            "{:?}",
            t0.elapsed()
        );
        assert_eq!(done.load(Ordering::Relaxed), 160);
    }

    /// Parts are handed out once each, and ends that do not ascend are refused.
    #[test]
    fn parts_are_taken_once() {
        let mut v = [0u32; 10];
        let ends = [3, 3, 10];
        let taken: Vec<AtomicBool> = (0..3).map(|_| AtomicBool::new(true)).collect();
        let parts = Parts::new(&mut v, &ends, &taken).expect("ends ordered and within the slice");
        let (s0, a) = parts.take(0).expect("part 0 not taken yet");
        let (s2, c) = parts.take(2).expect("part 2 not taken yet");
        assert_eq!((s0, a.len(), s2, c.len()), (0, 3, 3, 7));
        assert!(parts.take(0).is_none() && parts.take(3).is_none());
        assert_eq!(parts.take(1).map(|(s, p)| (s, p.len())), Some((3, 0)));
        a.fill(1);
        c.fill(2);
        assert_eq!(v, [1, 1, 1, 2, 2, 2, 2, 2, 2, 2]);
        for bad in [&[5, 3][..], &[3, 11][..]] {
            assert!(Parts::new(&mut v, bad, &taken).is_err(), "{bad:?}");
        }
    }

    /// A worker that panics is reported, and the pool keeps working.
    #[test]
    fn a_worker_panic_is_an_error() {
        let mut pool = Workers::new(3, None);
        let entered = AtomicBool::new(false);
        let r = pool.run(&|t| {
            if t == 2 {
                entered.store(true, Ordering::Release);
                panic!("planted");
            }
            if t == 0 {
                // Hold the frame open until worker 2 is in it (it may start late).
                let t0 = Instant::now();
                while !entered.load(Ordering::Acquire) && t0.elapsed() < Duration::from_secs(20) {
                    std::thread::yield_now();
                }
            }
        });
        assert!(matches!(r, Err(Error::Worker(_))), "{r:?}");
        pool.run(&|_| {}).expect("the pool runs the frame");
    }
}
