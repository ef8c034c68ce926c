//! `skinview check`'s worker processes. Each model is checked in a child process (this same
//! program, `check --worker`), which reads requests on its standard input, one JSON line each
//! (the model's path and its config, overrides applied), and answers each with one line: the
//! model's result as JSON. A worker is replaced
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
use skinview::check::{Check, CheckConfig, Finding, ModelResult, Severity};
use skinview::gpu::GpuContext;

use super::{CliError, CliResult};

/// Models one worker checks before it is replaced: enough that starting a process and a GPU
/// device (about 0.3 s on lavapipe) is a small share of the time, few enough that what a
/// driver keeps stays in tens of megabytes.
pub const WORKER_MODELS: usize = 32;

/// Largest answer line read from a worker (bytes): a model's result with every finding,
/// clip and joint box fits in far less.
const MAX_ANSWER_BYTES: u64 = 64 << 20;

/// One model to check: a worker's input line.
#[derive(Serialize, Deserialize)]
struct Request {
    path: String,
    config: CheckConfig,
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

    /// The worker's result for `path` under `config` (None: it died or answered nonsense).
    fn check(&mut self, path: &Path, config: &CheckConfig) -> Option<ModelResult> {
        let request = Request {
            path: path.to_string_lossy().into_owned(),
            config: config.clone(),
        };
        let line = serde_json::to_string(&request).ok()?;
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

/// The result of a model whose worker died while checking it.
pub fn crashed(path: &Path) -> ModelResult {
    let mut r = ModelResult::new(path);
    r.worst = Some(Severity::Error);
    r.findings.push(Finding::new(
        Check::Import,
        Severity::Error,
        "the check crashed (a bug in skinview or the GPU driver: please report it with the file)"
            .into(),
    ));
    r
}

/// Check `files`, each under its config, in `jobs` worker processes at once; `done()` after
/// each model. Results in the order of `files`.
pub fn check_all(
    files: &[(PathBuf, CheckConfig)],
    jobs: usize,
    done: impl Fn() + Sync,
) -> CliResult<Vec<ModelResult>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<ModelResult>>> = Mutex::new(vec![None; files.len()]);
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, files.len().max(1)) {
            scope.spawn(|| {
                if let Err(e) = work(files, &next, &results, &done)
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
    let results = results
        .into_inner()
        .map_err(|_| CliError::Usage("a check worker thread panicked".into()))?;
    Ok(results
        .into_iter()
        .zip(files)
        .map(|(r, (f, _))| r.unwrap_or_else(|| crashed(f)))
        .collect())
}

/// One thread's share: take the next model, check it in this thread's worker (started,
/// replaced after [`WORKER_MODELS`] or a death), store the result.
fn work(
    files: &[(PathBuf, CheckConfig)],
    next: &AtomicUsize,
    results: &Mutex<Vec<Option<ModelResult>>>,
    done: &(impl Fn() + Sync),
) -> CliResult<()> {
    let mut worker: Option<Worker> = None;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some((path, config)) = files.get(i) else {
            break;
        };
        let mut result = None;
        // Twice: a worker that had died before this model (between answers) gets replaced
        // and the model tried again on a fresh one; a second death is the model's.
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
            match w.check(path, config) {
                Some(r) => {
                    worker = Some(w);
                    result = Some(r);
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
        let result = result.unwrap_or_else(|| crashed(path));
        if let Ok(mut all) = results.lock() {
            all[i] = Some(result);
        }
        done();
    }
    if let Some(w) = worker {
        w.stop();
    }
    Ok(())
}

/// `check --worker`: answer each request read on standard input with its result, one JSON
/// line each, until the input ends (the GPU set up at the first request that wants it).
pub fn serve() -> CliResult {
    let mut gpu: Option<GpuContext> = None;
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| CliError::Usage(format!("worker input: {e}")))?;
        let request: Request = serde_json::from_str(&line)
            .map_err(|e| CliError::Usage(format!("worker input: {e}")))?;
        if planted_crash(&request.path) {
            std::process::abort();
        }
        if !request.config.no_gpu && gpu.is_none() {
            gpu = Some(super::gpu()?);
        }
        let ctx = gpu.as_ref().filter(|_| !request.config.no_gpu);
        let result = super::check::check_one(Path::new(&request.path), &request.config, ctx);
        let answer = serde_json::to_string(&result)
            .map_err(|e| CliError::Usage(format!("worker answer: {e}")))?;
        writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .map_err(|e| CliError::Usage(format!("worker output: {e}")))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// Fault injection for the tests: a worker aborts (as a driver crash would end it) on a model
/// whose path contains the text of `SKINVIEW_CHECK_ABORT_ON`.
const ABORT_ON: &str = "SKINVIEW_CHECK_ABORT_ON";

fn planted_crash(path: &str) -> bool {
    std::env::var(ABORT_ON).is_ok_and(|text| !text.is_empty() && path.contains(&text))
}
