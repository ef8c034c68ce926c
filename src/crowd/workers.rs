//! Persistent worker threads that run one borrowed job a frame, each thread its own part, and
//! meet before the frame returns (fork–join with a barrier, as ozz-animation's crowd benchmark
//! and game engines' job systems run an animation stage).
//!
//! Based on: the crowd case of `../shared/peers/ozzbench/ozz_bench.cc` (persistent threads,
//! contiguous slices, a barrier after each frame); the scoped-job pattern of rayon's `scope`
//! and crossbeam's scoped threads (a borrowed closure stays valid because the call does not
//! return until every thread has finished with it).
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
//! within [`SPIN`]. Limits: [`MAX_THREADS`]; one job at a time
//! (`run` takes `&mut self`); on targets without threads (wasm32) the pool has the calling
//! thread alone.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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

/// The job of one frame: called once with each thread index `0..threads` (0 on the caller).
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
    /// Signalled when the last worker finishes a frame.
    done: Condvar,
    /// [`State::generation`] as last published, read without the lock by spinning workers.
    generation: AtomicU64,
    /// [`State::running`] as last set, read without the lock by the spinning caller.
    running: AtomicUsize,
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
    /// Workers still running this frame's job.
    running: usize,
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
                running: 0,
                panicked: false,
                exit: false,
            }),
            start: Condvar::new(),
            done: Condvar::new(),
            generation: AtomicU64::new(0),
            running: AtomicUsize::new(0),
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

    /// Run `job(t)` for every thread index `t` in `0..threads()`, index 0 on this thread, and
    /// return when every call has returned. A panic in a worker's call is an error; one in
    /// this thread's call is resumed here, after the workers have finished.
    pub fn run(&mut self, job: Job<'_>) -> Result<()> {
        let workers = self.handles.len();
        if workers == 0 {
            job(0);
            return Ok(());
        }
        #[allow(unsafe_code)]
        // SAFETY: only the lifetime is erased. The workers call the job between the
        // publication below and their `running` count reaching zero, and this function waits
        // for that count (even when this thread's own call panics) before it returns, so the
        // borrow outlives every use.
        let erased: ErasedJob = ErasedJob(unsafe {
            std::mem::transmute::<Job<'_>, *const (dyn Fn(usize) + Sync + 'static)>(job)
        });
        {
            let mut s = lock(&self.shared.state);
            s.job = Some(erased);
            s.running = workers;
            s.panicked = false;
            s.generation = s.generation.wrapping_add(1);
            self.shared.running.store(workers, Ordering::Release);
            self.shared
                .generation
                .store(s.generation, Ordering::Release);
        }
        self.shared.start.notify_all();
        let mine = catch_unwind(AssertUnwindSafe(|| job(0)));
        spin_until(|| self.shared.running.load(Ordering::Acquire) == 0);
        let panicked = {
            let mut s = lock(&self.shared.state);
            while s.running > 0 {
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

/// A worker's loop: wait for a new generation, run its part, count itself done.
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
        let ok = match job {
            // SAFETY: see `Workers::run`: the job outlives this call, which ends before this
            // worker lowers `running`.
            #[allow(unsafe_code)]
            Some(ErasedJob(f)) => catch_unwind(AssertUnwindSafe(|| unsafe { (*f)(index) })).is_ok(),
            None => true,
        };
        let mut s = lock(&shared.state);
        s.panicked |= !ok;
        s.running -= 1;
        shared.running.store(s.running, Ordering::Release);
        if s.running == 0 {
            shared.done.notify_all();
        }
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
    use super::*;

    /// Every index runs once a frame, over many frames, and results written through the
    /// borrowed job are all there when `run` returns.
    #[test]
    fn every_index_runs_once_a_frame() {
        for threads in [1, 2, 7] {
            let mut pool = Workers::new(threads, None);
            assert_eq!(pool.threads(), threads);
            let counts: Vec<AtomicUsize> = (0..threads).map(|_| AtomicUsize::new(0)).collect();
            for _ in 0..200 {
                pool.run(&|t| {
                    counts[t].fetch_add(1, Ordering::Relaxed);
                })
                .unwrap();
            }
            for c in &counts {
                assert_eq!(c.load(Ordering::Relaxed), 200);
            }
        }
    }

    /// A worker that panics is reported, and the pool keeps working.
    #[test]
    fn a_worker_panic_is_an_error() {
        let mut pool = Workers::new(3, None);
        let r = pool.run(&|t| {
            if t == 2 {
                panic!("planted");
            }
        });
        assert!(matches!(r, Err(Error::Worker(_))), "{r:?}");
        pool.run(&|_| {}).unwrap();
    }
}
