//! `skinview check`'s worker processes. Each model is checked in a child process (this same
//! program, `check --worker`), which reads requests on its standard input, one JSON line each
//! (the model's path and its config, overrides applied; for `--html`, where to draw its
//! pictures, and the result when it is already known), and answers each with one line: the
//! model's result and its pictures, as JSON. The pictures are drawn there too, so a page of
//! many models keeps the parent's memory flat as well. A worker is replaced
//! after [`WORKER_MODELS`] models, so what a driver keeps per readback (lavapipe: about 0.45 MB)
//! is given back and the run's resident memory stays flat in the number of files; a worker
//! that dies (a crash in a driver, an abort) costs only the model it was on, which gets an
//! error finding, and a fresh worker takes the next model.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use skinview::check::html::Pictures;
use skinview::check::{CheckConfig, ModelResult};
use skinview::gpu::GpuContext;

use super::{CliError, CliResult};

/// Models one worker checks before it is replaced: enough that starting a process and a GPU
/// device (about 0.3 s on lavapipe) is a small share of the time, few enough that what a
/// driver keeps stays in tens of megabytes.
pub const WORKER_MODELS: usize = 32;

/// Largest answer line read from a worker (bytes): a model's result with every finding,
/// clip and joint box fits in far less.
const MAX_ANSWER_BYTES: u64 = 64 << 20;

/// One model to check (and draw): a worker's input line, and what the parent asks for.
#[derive(Clone, Serialize, Deserialize)]
pub struct Job {
    /// The model file.
    pub path: PathBuf,
    /// Its config, overrides applied.
    pub config: CheckConfig,
    /// Its result when already known (an earlier report's, a merged one's): not checked
    /// again, only drawn.
    pub result: Option<ModelResult>,
    /// Draw its pictures into this page folder, named from this row number.
    pub draw: Option<(PathBuf, usize)>,
}

/// A worker's answer line.
#[derive(Serialize, Deserialize)]
struct Answer {
    result: ModelResult,
    pictures: Option<Pictures>,
}

/// A running worker.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    checked: usize,
}

impl Worker {
    /// Start `check --worker`.
    fn start() -> CliResult<Worker> {
        let exe = std::env::current_exe()
            .map_err(|e| CliError::Usage(format!("cannot find skinview's own program: {e}")))?;
        let mut child = Command::new(exe)
            .args(["check", "--worker"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| CliError::Usage(format!("cannot start a check worker: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(CliError::Usage("a check worker has no pipes".into()));
        };
        Ok(Worker {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            checked: 0,
        })
    }

    /// The worker's answer to `job` (None: it died or answered nonsense).
    fn run(&mut self, job: &Job) -> Option<Answer> {
        let line = serde_json::to_string(job).ok()?;
        writeln!(self.stdin, "{line}").ok()?;
        self.stdin.flush().ok()?;
        let mut answer = String::new();
        let read = std::io::Read::take(&mut self.stdout, MAX_ANSWER_BYTES)
            .read_line(&mut answer)
            .ok()?;
        self.checked += 1;
        if read == 0 {
            return None;
        }
        serde_json::from_str(&answer).ok()
    }

    /// Close its input and wait for it to end.
    fn stop(self) {
        let Worker {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = child.wait();
    }

    /// End a worker that is no longer answering.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `jobs` (check, draw) in `workers` worker processes at once; `done()` after each.
/// Results and pictures in the order of `jobs`.
pub fn run_all(
    jobs: &[Job],
    workers: usize,
    done: impl Fn() + Sync,
) -> CliResult<Vec<(ModelResult, Option<Pictures>)>> {
    let next = AtomicUsize::new(0);
    let answers: Mutex<Vec<Option<Answer>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| {
                if let Err(e) = work(jobs, &next, &answers, &done)
                    && let Ok(mut f) = failure.lock()
                {
                    f.get_or_insert(e);
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let answers = answers
        .into_inner()
        .map_err(|_| CliError::Usage("a check worker thread panicked".into()))?;
    Ok(answers
        .into_iter()
        .zip(jobs)
        .map(|(a, job)| match a {
            Some(a) => (a.result, a.pictures),
            None => (ModelResult::crashed(&job.path), None),
        })
        .collect())
}

/// One thread's share: take the next job, run it in this thread's worker (started, replaced
/// after [`WORKER_MODELS`] or a death), store the answer.
fn work(
    jobs: &[Job],
    next: &AtomicUsize,
    answers: &Mutex<Vec<Option<Answer>>>,
    done: &(impl Fn() + Sync),
) -> CliResult<()> {
    let mut worker: Option<Worker> = None;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = jobs.get(i) else {
            break;
        };
        let mut answer = None;
        // Twice: a worker that had died before this job (between answers) gets replaced and
        // the job tried again on a fresh one; a second death is the model's.
        for _ in 0..2 {
            let mut w = match worker.take() {
                Some(w) if w.checked < WORKER_MODELS => w,
                Some(w) => {
                    w.stop();
                    Worker::start()?
                }
                None => Worker::start()?,
            };
            let fresh = w.checked == 0;
            match w.run(job) {
                Some(a) => {
                    worker = Some(w);
                    answer = Some(a);
                    break;
                }
                None => {
                    w.kill();
                    if fresh {
                        break;
                    }
                }
            }
        }
        if let Ok(mut all) = answers.lock() {
            all[i] = answer;
        }
        done();
    }
    if let Some(w) = worker {
        w.stop();
    }
    Ok(())
}

/// `check --worker`: answer each job read on standard input with its result and pictures,
/// one JSON line each, until the input ends (the GPU set up at the first job that wants it).
pub fn serve() -> CliResult {
    let mut gpu: Option<GpuContext> = None;
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| CliError::Usage(format!("worker input: {e}")))?;
        let job: Job = serde_json::from_str(&line)
            .map_err(|e| CliError::Usage(format!("worker input: {e}")))?;
        if planted_crash(&job.path) {
            std::process::abort();
        }
        if !job.config.no_gpu && gpu.is_none() {
            gpu = Some(super::gpu()?);
        }
        let ctx = gpu.as_ref().filter(|_| !job.config.no_gpu);
        let result = match job.result {
            Some(r) => r,
            None => skinview::check::check_model_guarded(&job.path, &job.config, ctx),
        };
        let pictures = job.draw.map(|(dir, index)| match ctx {
            Some(ctx) => draw(ctx, &result, index, &dir),
            None => Pictures::none(&result, "not drawn: CPU checks only"),
        });
        let answer = serde_json::to_string(&Answer { result, pictures })
            .map_err(|e| CliError::Usage(format!("worker answer: {e}")))?;
        writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .map_err(|e| CliError::Usage(format!("worker output: {e}")))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A model's pictures; a panic while drawing is that model's missing pictures.
fn draw(ctx: &GpuContext, result: &ModelResult, index: usize, dir: &Path) -> Pictures {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        skinview::check::html::draw_model(ctx, result, index, dir)
    }))
    .unwrap_or_else(|_| Pictures::none(result, "not drawn: the renderer crashed"))
}

/// Fault injection for the tests: a worker aborts (as a driver crash would end it) on a model
/// whose path contains the text of `SKINVIEW_CHECK_ABORT_ON`.
const ABORT_ON: &str = "SKINVIEW_CHECK_ABORT_ON";

fn planted_crash(path: &Path) -> bool {
    std::env::var(ABORT_ON)
        .is_ok_and(|text| !text.is_empty() && path.to_string_lossy().contains(&text))
}
