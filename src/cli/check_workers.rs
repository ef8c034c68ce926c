//! `skinview check`'s worker processes. Each model is checked in a child process (this same
//! program, `check --worker`), which reads requests on its standard input, one JSON line each
//! (the model's path and its config, overrides applied; for `--html`, where to draw its
//! pictures, and the result when it is already known), and answers each on its standard
//! output: a line as it enters each stage of the job (`{"stage":"frames"}`), then the model's
//! result and its pictures (`{"answer":...}`). The pictures are drawn there too, so a page of
//! many models keeps the parent's memory flat as well. A worker is replaced
//! after [`WORKER_MODELS`] models, so what a driver keeps per readback (lavapipe: about 0.45 MB)
//! is given back and the run's resident memory stays flat in the number of files; a worker
//! that dies (a crash in a driver, an abort) costs only the model it was on, which gets an
//! error finding, and a fresh worker takes the next model. A worker that does not answer
//! within the model's `timeout_s` (a hang) is ended the same way, and the model reported as
//! timed out in the last stage it entered. The last lines of a worker's standard error are
//! kept for the finding of a model it crashed or hung on.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use skinview::check::html::Pictures;
use skinview::check::{CheckConfig, ModelResult, Stage};
use skinview::gpu::GpuContext;

use super::{CliError, CliResult};

/// Models one worker checks before it is replaced: enough that starting a process and a GPU
/// device (about 0.3 s on lavapipe) is a small share of the time, few enough that what a
/// driver keeps stays in tens of megabytes.
pub const WORKER_MODELS: usize = 32;

/// Largest answer line read from a worker (bytes): a model's result with every finding,
/// clip and joint box fits in far less.
const MAX_ANSWER_BYTES: u64 = 64 << 20;

/// Lines of a worker's standard error kept (the last ones), for the finding of a model it
/// crashed or hung on: a panic's message and place, or a driver's last complaints, fit;
/// a chatty driver's whole log would bury the finding and grow the report.
const STDERR_LINES: usize = 20;

/// Longest line of a worker's standard error kept (bytes; a longer one is kept in pieces of
/// this size): a message with a path or two, not a dump of binary data.
const STDERR_LINE_BYTES: u64 = 1000;

/// How long an ended worker's standard error is waited for (its pipe closes as the process
/// ends; this is only the reader taking the last lines, and a grandchild that kept the pipe
/// open must not stall the run).
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// One model to check (and draw): a worker's input line, and what the parent asks for.
#[derive(Clone, Serialize, Deserialize)]
pub struct Job {
    /// The model file.
    #[serde(with = "wire_path")]
    pub path: PathBuf,
    /// Its config, overrides applied.
    pub config: CheckConfig,
    /// Its result when already known (an earlier report's, a merged one's): not checked
    /// again, only drawn.
    pub result: Option<ModelResult>,
    /// Draw its pictures into a page folder.
    pub draw: Option<Draw>,
}

/// Where a model's pictures go.
#[derive(Clone, Serialize, Deserialize)]
pub struct Draw {
    /// The page folder.
    #[serde(with = "wire_path")]
    pub dir: PathBuf,
    /// The model's row, which names its pictures.
    pub row: usize,
}

/// Paths between the parent and its workers: as text when they are UTF-8, else as their
/// bytes (Unix) or UTF-16 units (Windows). JSON strings hold only Unicode, so a file whose
/// name is in another encoding would otherwise never reach its worker.
mod wire_path {
    use std::path::{Path, PathBuf};

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Wire {
        Text(String),
        #[cfg(unix)]
        Bytes(Vec<u8>),
        #[cfg(windows)]
        Wide(Vec<u16>),
    }

    pub fn serialize<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
        match path.to_str() {
            Some(text) => Wire::Text(text.to_string()),
            None => raw(path),
        }
        .serialize(s)
    }

    #[cfg(unix)]
    fn raw(path: &Path) -> Wire {
        use std::os::unix::ffi::OsStrExt;
        Wire::Bytes(path.as_os_str().as_bytes().to_vec())
    }

    #[cfg(windows)]
    fn raw(path: &Path) -> Wire {
        use std::os::windows::ffi::OsStrExt;
        Wire::Wide(path.as_os_str().encode_wide().collect())
    }

    #[cfg(not(any(unix, windows)))]
    fn raw(path: &Path) -> Wire {
        Wire::Text(path.to_string_lossy().into_owned())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        Ok(match Wire::deserialize(d)? {
            Wire::Text(text) => PathBuf::from(text),
            #[cfg(unix)]
            Wire::Bytes(bytes) => {
                use std::os::unix::ffi::OsStringExt;
                PathBuf::from(std::ffi::OsString::from_vec(bytes))
            }
            #[cfg(windows)]
            Wire::Wide(units) => {
                use std::os::windows::ffi::OsStringExt;
                PathBuf::from(std::ffi::OsString::from_wide(&units))
            }
        })
    }
}

/// A worker's answer to a job.
#[derive(Serialize, Deserialize)]
struct Answer {
    result: ModelResult,
    pictures: Option<Pictures>,
}

/// A worker's output line: `{"stage":"frames"}` as it enters each stage of a job, then
/// `{"answer":{...}}`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    Stage(Stage),
    Answer(Box<Answer>),
}

/// What became of a job sent to a worker.
enum Outcome {
    Answered(Box<Answer>),
    /// The worker died or answered nonsense.
    Died,
    /// No answer within the job's `timeout_s`; the last stage the worker entered.
    TimedOut(Option<Stage>),
}

/// What the parent keeps of a job.
enum Reply {
    Answered(Box<Answer>),
    /// The worker died on it, with its last lines on standard error.
    Crashed(Vec<String>),
    /// The worker passed the time limit on it (in the stage, with its last lines).
    TimedOut(Option<Stage>, Vec<String>),
}

/// A running worker: its output lines and its standard error are read by threads of their
/// own, so the parent's wait for an answer is bounded by the job's time limit.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Line>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Disconnected when the standard error reader has read to the end.
    stderr_open: mpsc::Receiver<()>,
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
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| CliError::Usage(format!("cannot start a check worker: {e}")))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(CliError::Usage("a check worker has no pipes".into()));
        };
        let (line_tx, lines) = mpsc::channel();
        let (open_tx, stderr_open) = mpsc::channel();
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_LINES)));
        let kept = Arc::clone(&tail);
        let threads = std::thread::Builder::new()
            .name("check-worker-out".into())
            .spawn(move || read_lines(stdout, &line_tx))
            .and_then(|_| {
                std::thread::Builder::new()
                    .name("check-worker-err".into())
                    .spawn(move || read_stderr(stderr, &kept, open_tx))
            });
        if let Err(e) = threads {
            let _ = child.kill();
            let _ = child.wait();
            return Err(CliError::Usage(format!("cannot watch a check worker: {e}")));
        }
        Ok(Worker {
            child,
            stdin,
            lines,
            stderr: tail,
            stderr_open,
            checked: 0,
        })
    }

    /// Send `job` and wait for its answer, `timeout` at most (no answer past it:
    /// [`Outcome::TimedOut`], the worker still running).
    fn run(&mut self, job: &Job, timeout: Duration) -> Outcome {
        let sent = serde_json::to_string(job).ok().and_then(|line| {
            writeln!(self.stdin, "{line}")
                .and_then(|()| self.stdin.flush())
                .ok()
        });
        self.checked += 1;
        if sent.is_none() {
            return Outcome::Died;
        }
        let deadline = Instant::now() + timeout;
        let mut stage = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Line::Stage(s)) => stage = Some(s),
                Ok(Line::Answer(a)) => return Outcome::Answered(a),
                Err(mpsc::RecvTimeoutError::Timeout) => return Outcome::TimedOut(stage),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Outcome::Died,
            }
        }
    }

    /// Close its input and wait for it to end.
    fn stop(self) {
        let Worker {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = child.wait();
    }

    /// End a worker that is no longer answering (dead or hung); the last lines it wrote on
    /// standard error.
    fn kill(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Disconnected once the reader has every line; a timeout when something else holds
        // the pipe: the lines so far.
        let _ = self.stderr_open.recv_timeout(STDERR_DRAIN);
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// A worker's output lines onto `lines`, until it ends, writes a line that is not one
/// ([`MAX_ANSWER_BYTES`] at most, JSON), or nobody listens.
fn read_lines(stdout: ChildStdout, lines: &mpsc::Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    let mut text = String::new();
    loop {
        text.clear();
        let read = Read::take(&mut reader, MAX_ANSWER_BYTES).read_line(&mut text);
        if !matches!(read, Ok(n) if n > 0) || !text.ends_with('\n') {
            return;
        }
        let Ok(line) = serde_json::from_str::<Line>(&text) else {
            return;
        };
        if lines.send(line).is_err() {
            return;
        }
    }
}

/// A worker's standard error read to its end, the last [`STDERR_LINES`] non-blank lines kept
/// in `tail`; `open` dropped at the end.
fn read_stderr(stderr: ChildStderr, tail: &Mutex<VecDeque<String>>, open: mpsc::Sender<()>) {
    let mut reader = BufReader::new(stderr);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match Read::take(&mut reader, STDERR_LINE_BYTES).read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&bytes).trim_end().to_string();
        if line.is_empty() {
            continue;
        }
        if let Ok(mut t) = tail.lock() {
            if t.len() >= STDERR_LINES {
                t.pop_front();
            }
            t.push_back(line);
        }
    }
    drop(open);
}

/// Run `jobs` (check, draw) in `workers` worker processes at once; `done()` after each.
/// Results and pictures in the order of `jobs`.
pub fn run_all(
    jobs: &[Job],
    workers: usize,
    done: impl Fn() + Sync,
) -> CliResult<Vec<(ModelResult, Option<Pictures>)>> {
    let next = AtomicUsize::new(0);
    let replies: Mutex<Vec<Option<Reply>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let failure: Mutex<Option<CliError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| {
                if let Err(e) = work(jobs, &next, &replies, &done)
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
    let replies = replies
        .into_inner()
        .map_err(|_| CliError::Usage("a check worker thread panicked".into()))?;
    Ok(replies
        .into_iter()
        .zip(jobs)
        .map(|(reply, job)| outcome(job, reply))
        .collect())
}

/// A job's result and pictures from its reply. A model whose result was known keeps it when
/// its drawing crashed or timed out (its pictures say why they are missing).
fn outcome(job: &Job, reply: Option<Reply>) -> (ModelResult, Option<Pictures>) {
    let reply = reply.unwrap_or(Reply::Crashed(Vec::new()));
    match (reply, &job.result) {
        (Reply::Answered(a), _) => {
            let Answer { result, pictures } = *a;
            (result, pictures)
        }
        (Reply::Crashed(_), Some(known)) => {
            let why = "not drawn: the worker crashed";
            (known.clone(), Some(Pictures::none(known, why)))
        }
        (Reply::TimedOut(stage, _), Some(known)) => {
            let why = format!(
                "not drawn: timed out after {} s in stage \"{}\"",
                job.config.timeout_s,
                stage.map_or("none", Stage::name)
            );
            (known.clone(), Some(Pictures::none(known, why)))
        }
        (Reply::Crashed(stderr), None) => (ModelResult::crashed(&job.path, stderr), None),
        (Reply::TimedOut(stage, stderr), None) => (
            ModelResult::timed_out(&job.path, job.config.timeout_s, stage, stderr),
            None,
        ),
    }
}

/// One thread's share: take the next job, run it in this thread's worker (started, replaced
/// after [`WORKER_MODELS`], a death or a time-out), store the reply.
fn work(
    jobs: &[Job],
    next: &AtomicUsize,
    replies: &Mutex<Vec<Option<Reply>>>,
    done: &(impl Fn() + Sync),
) -> CliResult<()> {
    let mut worker: Option<Worker> = None;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = jobs.get(i) else {
            break;
        };
        let mut reply = None;
        // Twice: a worker that had died before this job (between answers) gets replaced and
        // the job tried again on a fresh one; a second death is the model's. A time-out is
        // the model's at once (trying again would double the wait for a hang).
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
            match w.run(job, job.config.timeout()) {
                Outcome::Answered(a) => {
                    worker = Some(w);
                    reply = Some(Reply::Answered(a));
                    break;
                }
                Outcome::TimedOut(stage) => {
                    reply = Some(Reply::TimedOut(stage, w.kill()));
                    break;
                }
                Outcome::Died => {
                    let stderr = w.kill();
                    if fresh {
                        reply = Some(Reply::Crashed(stderr));
                        break;
                    }
                }
            }
        }
        if let Ok(mut all) = replies.lock() {
            all[i] = reply;
        }
        done();
    }
    if let Some(w) = worker {
        w.stop();
    }
    Ok(())
}

/// `check --worker`: answer each job read on standard input with its result and pictures,
/// one JSON line each, after a line for each stage as it enters it, until the input ends
/// (the GPU set up at the first job that wants it).
pub fn serve() -> CliResult {
    let mut gpu: Option<GpuContext> = None;
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| CliError::Usage(format!("worker input: {e}")))?;
        let job: Job = serde_json::from_str(&line)
            .map_err(|e| CliError::Usage(format!("worker input: {e}")))?;
        if planted(ABORT_ON, &job.path, None) {
            eprintln!("planted crash on {}", job.path.display());
            std::process::abort();
        }
        let path = job.path.as_path();
        let mut stage = |s: Stage| enter(&mut stdout, path, s);
        if !job.config.no_gpu && gpu.is_none() {
            stage(Stage::GpuSetup);
            gpu = Some(super::gpu()?);
        }
        let ctx = gpu.as_ref().filter(|_| !job.config.no_gpu);
        let result = match job.result {
            Some(r) => r,
            None => skinview::check::check_model_guarded(path, &job.config, ctx, &mut stage),
        };
        let pictures = job.draw.map(|d| match ctx {
            Some(ctx) => {
                stage(Stage::Draw);
                draw(ctx, path, &result, &d)
            }
            None => Pictures::none(&result, "not drawn: CPU checks only"),
        });
        let answer = serde_json::to_string(&Line::Answer(Box::new(Answer { result, pictures })))
            .map_err(|e| CliError::Usage(format!("worker answer: {e}")))?;
        writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .map_err(|e| CliError::Usage(format!("worker output: {e}")))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// Tell the parent the job enters `stage` (a parent gone is found at the answer); the
/// planted hang of `SKINVIEW_CHECK_HANG_ON` never returns.
fn enter(out: &mut impl Write, path: &Path, stage: Stage) {
    if let Ok(line) = serde_json::to_string(&Line::Stage(stage)) {
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    }
    if planted(HANG_ON, path, Some(stage)) {
        eprintln!(
            "planted hang in stage {} on {}",
            stage.name(),
            path.display()
        );
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

/// A model's pictures; a panic while drawing is that model's missing pictures.
fn draw(ctx: &GpuContext, path: &Path, result: &ModelResult, to: &Draw) -> Pictures {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let paint = |image: skinview::image::Rgba8, legend: &_| {
            let total_h = super::annotate::grown_height(legend, &image);
            super::annotate::annotate_with(image, legend, total_h, &[])
        };
        skinview::check::html::draw_model(ctx, path, result, (to.row, &to.dir), &paint)
    }))
    .unwrap_or_else(|_| Pictures::none(result, "not drawn: the renderer crashed"))
}

/// Fault injection for the tests: a worker aborts (as a driver crash would end it) on a model
/// whose path contains the text of `SKINVIEW_CHECK_ABORT_ON`, after a line on standard error.
const ABORT_ON: &str = "SKINVIEW_CHECK_ABORT_ON";

/// Fault injection for the tests: a worker hangs (as a driver that never returns would),
/// after a line on standard error, on a model whose path contains the text of
/// `SKINVIEW_CHECK_HANG_ON`: as it enters the stage named after an `@` (`b-hang@frames`), or
/// its first stage when none is named.
const HANG_ON: &str = "SKINVIEW_CHECK_HANG_ON";

/// Whether the fault of `variable` is planted on `path` (at `stage`, for a hang).
fn planted(variable: &str, path: &Path, stage: Option<Stage>) -> bool {
    let Ok(spec) = std::env::var(variable) else {
        return false;
    };
    let at = spec
        .rsplit_once('@')
        .and_then(|(text, name)| Some((text, Stage::from_name(name)?)));
    let (text, at) = match at {
        Some((text, s)) => (text, Some(s)),
        None => (spec.as_str(), None),
    };
    !text.is_empty() && path.to_string_lossy().contains(text) && at.is_none_or(|s| Some(s) == stage)
}
