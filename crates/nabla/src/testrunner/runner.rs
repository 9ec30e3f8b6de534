//! Running the test blocks of `.fut` files (`nabla test`), in the manner of
//! `futhark test -i`: every dataset of every test block is run with the
//! interpreter on each of its entry points and compared with the expected
//! output (`nabla_values::compare_value_lists`: exact integers and booleans,
//! Futhark's relative float tolerance, NaN equal to NaN).

use super::random::{generate, parse_random_spec, Rng};
use super::spec::{parse_test_spec, Dataset, Expected, InputSpec, TestBlock};
use crate::cbackend::Executable;
use crate::driver::{self, one_line, CompileError, CompileOptions, Compiled, RunError};
use nabla_values::{Value, ValueType};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The outcome of testing one file (or one bad path).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileReport {
    /// Datasets (and compile-only/compile-error blocks) that passed.
    pub passed: usize,
    /// Those that failed (one line each in `failures`).
    pub failed: usize,
    /// One `FAIL path:entry #k (input): reason` line per failed dataset.
    pub failures: Vec<String>,
    /// Dataset runs not made (never counted as passed): the backend does
    /// not support the program, or the dataset is one the backend does not
    /// run (see `Dataset::skip_reason`).
    pub skipped: usize,
    /// One `SKIP path…: reason` line per skipped program or dataset.
    pub skips: Vec<String>,
}

impl FileReport {
    fn pass(&mut self) {
        self.passed += 1;
    }
    fn fail(&mut self, line: String) {
        self.failed += 1;
        self.failures.push(line);
    }
    fn absorb(&mut self, other: FileReport) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.failures.extend(other.failures);
        self.skipped += other.skipped;
        self.skips.extend(other.skips);
    }
}

/// Every `.fut` file named by `paths` or under a directory among them,
/// recursively, each group sorted. A path that does not exist is an error.
pub fn find_fut_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found, 0).map_err(|e| format!("{}: {e}", p.display()))?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> std::io::Result<()> {
    if depth > 64 {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let ft = entry.file_type()?;
        if ft.is_dir() {
            walk(&path, out, depth + 1)?;
        } else if path.extension().is_some_and(|e| e == "fut") {
            out.push(path);
        }
    }
    Ok(())
}

/// Options of [`run_tests`].
#[derive(Clone, Debug)]
pub struct TestOptions {
    /// How many files are tested at once.
    pub jobs: usize,
    /// Wall-clock limit per dataset run and per file. A dataset that runs
    /// longer is stopped (the interpreter's cancellation flag) and fails
    /// with "stopped: the time limit was exceeded"; a file that takes
    /// longer in all is stopped likewise and counts one more failure (its
    /// thread is abandoned only if it does not stop). `None`: no limit.
    pub timeout: Option<std::time::Duration>,
    /// How every program is compiled (passes, validation).
    pub compile: CompileOptions,
    /// What runs the datasets.
    pub backend: Backend,
    /// With an executable: each dataset runs once per entry, with these
    /// options (multicore C with 1, 2 and 3 threads); empty: once, with
    /// none.
    pub run_args: Vec<Vec<String>>,
}

/// What runs the datasets of `nabla test`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The reference interpreter.
    #[default]
    Interpreter,
    /// Executables made by the C backend (`nabla c`); programs it does not
    /// support are skipped.
    C,
}

impl Default for TestOptions {
    fn default() -> Self {
        TestOptions {
            jobs: 1,
            timeout: None,
            compile: CompileOptions::default(),
            backend: Backend::Interpreter,
            run_args: Vec::new(),
        }
    }
}

/// Tests every file under `paths` (`opts.jobs` files at a time, each on its
/// own thread with a large stack) and returns the combined report,
/// failures in file order.
pub fn run_tests(paths: &[PathBuf], opts: &TestOptions) -> FileReport {
    let files = match find_fut_files(paths) {
        Ok(f) => f,
        Err(e) => {
            let mut r = FileReport::default();
            r.fail(format!("FAIL {e}"));
            return r;
        }
    };
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<FileReport>>> = Mutex::new(vec![None; files.len()]);
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.clamp(1, files.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(f) = files.get(i) else { break };
                let r = test_file_isolated(f, opts);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let mut total = FileReport::default();
    for r in results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
    {
        total.absorb(r);
    }
    total
}

/// Stack size for the threads that compile and interpret test programs.
pub const STACK_SIZE: usize = 512 << 20;

/// Tests one file on a fresh thread with a large stack, within the time limit.
fn test_file_isolated(path: &Path, opts: &TestOptions) -> FileReport {
    let timeout = opts.timeout;
    let p = path.to_path_buf();
    let compile = opts.compile.clone();
    let backend = opts.backend;
    let run_args = opts.run_args.clone();
    let cancel = nabla_interp::Cancel::new();
    let file_cancel = cancel.clone();
    let progress = std::sync::Arc::new(AtomicUsize::new(0));
    let file_progress = progress.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(move || {
            let limits = Limits {
                run: timeout,
                cancel: &file_cancel,
                progress: &file_progress,
                run_args: &run_args,
            };
            let _ = tx.send(test_file_limited(&p, &compile, backend, &limits));
        });
    let mut died = FileReport::default();
    if spawned.is_err() {
        died.fail(format!(
            "FAIL {}: internal error: cannot start a test thread",
            path.display()
        ));
        return died;
    }
    // Each dataset run is stopped by its own watchdog; the file as a whole
    // times out only when no dataset has started for the limit (plus a
    // grace period): compilation or reading values that never ends.
    let got = match timeout {
        Some(t) => loop {
            let seen = progress.load(Ordering::SeqCst);
            match rx.recv_timeout(t + std::time::Duration::from_secs(5)) {
                Ok(r) => break Ok(r),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if progress.load(Ordering::SeqCst) == seen {
                        break Err(true);
                    }
                }
                Err(_) => break Err(false),
            }
        },
        None => rx.recv().map_err(|_| false),
    };
    match got {
        Ok(r) => r,
        Err(true) => {
            // Stop the run in progress; its report (the stopped dataset
            // included) comes back when it does.
            cancel.cancel(nabla_interp::CancelReason::TimeLimit);
            let secs = timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0);
            let mut r = rx
                .recv_timeout(std::time::Duration::from_secs(10))
                .unwrap_or_default();
            r.fail(format!("FAIL {}: timed out after {secs} s", path.display()));
            r
        }
        Err(false) => {
            died.fail(format!(
                "FAIL {}: internal error (the test thread died)",
                path.display()
            ));
            died
        }
    }
}

/// The message of a caught panic.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f`, turning a panic into an error message.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|p| format!("internal error (panic): {}", one_line(&panic_message(&*p))))
}

/// Tests one file: parses its test blocks, compiles the program as `opts`
/// say and runs them.
pub fn test_file(path: &Path, opts: &CompileOptions) -> FileReport {
    test_file_with(path, opts, Backend::Interpreter)
}

/// [`test_file`] with the datasets run by `backend`.
pub fn test_file_with(path: &Path, opts: &CompileOptions, backend: Backend) -> FileReport {
    let limits = Limits {
        run: None,
        cancel: &nabla_interp::Cancel::new(),
        progress: &AtomicUsize::new(0),
        run_args: &[],
    };
    test_file_limited(path, opts, backend, &limits)
}

/// How the runs of one file are limited.
struct Limits<'a> {
    /// Time limit of each dataset run.
    run: Option<std::time::Duration>,
    /// Stops every run of the file when set.
    cancel: &'a nabla_interp::Cancel,
    /// Counts the dataset runs started (for the file's watchdog).
    progress: &'a AtomicUsize,
    /// The options of each run of an executable ([`TestOptions::run_args`]).
    run_args: &'a [Vec<String>],
}

/// [`test_file_with`] under `limits`.
fn test_file_limited(
    path: &Path,
    opts: &CompileOptions,
    backend: Backend,
    limits: &Limits,
) -> FileReport {
    let mut report = FileReport::default();
    let shown = path.display().to_string();
    let source = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) => {
            report.fail(format!("FAIL {shown}: cannot read file: {e}"));
            return report;
        }
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let spec = match parse_test_spec(&source, &dir) {
        Ok(s) => s,
        Err(e) => {
            report.fail(format!("FAIL {shown}: bad test block: {e}"));
            return report;
        }
    };
    if spec.blocks.is_empty() || spec.disabled() {
        return report;
    }
    let mut cx = FileCx {
        path,
        opts,
        shown: &shown,
        compiled: None,
        checked: None,
        backend,
        executable: None,
        work_dir: None,
        limits,
    };
    let mut k = 0usize;
    for block in &spec.blocks {
        cx.block(block, &mut k, &mut report);
    }
    if let Some(d) = &cx.work_dir {
        let _ = std::fs::remove_dir_all(d);
    }
    report
}

/// The executable of a file for the C backend, or why there is none.
#[derive(Clone)]
enum ExeState {
    /// The executable, and the entry points it left out (with why).
    Ready(Executable, Vec<(String, String)>),
    /// The backend does not support the program: its datasets are skipped.
    Unsupported(String),
    /// C generation or compilation failed: its datasets fail.
    Failed(String),
}

/// A fresh directory for one test file's executable.
fn fresh_work_dir() -> Result<PathBuf, String> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let d = std::env::temp_dir().join(format!("nabla-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    Ok(d)
}

struct FileCx<'a> {
    path: &'a Path,
    /// How the program is compiled.
    opts: &'a CompileOptions,
    shown: &'a str,
    /// Memoised full compilation (`compile`).
    compiled: Option<Result<Compiled, String>>,
    /// Memoised type check result (`check`), as an error summary.
    checked: Option<Result<(), String>>,
    /// What runs the datasets.
    backend: Backend,
    /// Memoised executable (C backend).
    executable: Option<ExeState>,
    /// Where the executable lives (removed at the end).
    work_dir: Option<PathBuf>,
    /// How the runs are limited.
    limits: &'a Limits<'a>,
}

impl FileCx<'_> {
    /// The executable for the C backend (built once per file).
    fn executable(&mut self) -> ExeState {
        if let Some(e) = &self.executable {
            return e.clone();
        }
        let state = match self.compiled() {
            Err(e) => ExeState::Failed(e),
            Ok(c) => {
                let c = c.clone();
                match fresh_work_dir() {
                    Err(e) => ExeState::Failed(e),
                    Ok(dir) => {
                        let exe = dir.join("prog");
                        self.work_dir = Some(dir);
                        match guarded(|| crate::cbackend::build_executable(&c, &exe)) {
                            Ok(Ok(left_out)) => ExeState::Ready(
                                Executable::new(exe),
                                left_out
                                    .into_iter()
                                    .map(|(n, e)| (n, e.to_string()))
                                    .collect(),
                            ),
                            Ok(Err(e)) if e.is_unsupported() => {
                                ExeState::Unsupported(e.to_string())
                            }
                            Ok(Err(e)) => ExeState::Failed(one_line(&e.to_string())),
                            Err(p) => ExeState::Failed(p),
                        }
                    }
                }
            }
        };
        self.executable = Some(state.clone());
        state
    }

    fn compiled(&mut self) -> Result<&Compiled, String> {
        if self.compiled.is_none() {
            let (path, opts) = (self.path, self.opts);
            let r = match guarded(|| driver::compile_with(path, opts)) {
                Ok(Ok(c)) => Ok(c),
                Ok(Err(e)) => Err(format!("compilation failed: {}", e.summary)),
                Err(p) => Err(format!("compilation failed: {p}")),
            };
            self.compiled = Some(r);
        }
        match self.compiled.as_ref().expect("set above") {
            Ok(c) => Ok(c),
            Err(e) => Err(e.clone()),
        }
    }

    fn block(&mut self, block: &TestBlock, k: &mut usize, report: &mut FileReport) {
        let shown = self.shown.to_string();
        if let Some(re) = &block.compile_error {
            let regex = match expectation_regex(re) {
                Ok(r) => r,
                Err(e) => {
                    report.fail(format!(
                        "FAIL {shown} (compile error expected): bad regex /{re}/: {}",
                        one_line(&e.to_string())
                    ));
                    return;
                }
            };
            let (path, opts) = (self.path, self.opts);
            match guarded(|| driver::compile_with(path, opts)) {
                Ok(Ok(_)) => report.fail(format!(
                    "FAIL {shown} (compile error expected): expected compilation to fail with an error matching /{re}/, but it succeeded"
                )),
                Ok(Err(e)) => {
                    if compile_error_matches(&regex, &e) {
                        report.pass();
                    } else {
                        report.fail(format!(
                            "FAIL {shown} (compile error expected): the error does not match /{re}/: {}",
                            e.summary
                        ));
                    }
                }
                Err(p) => report.fail(format!("FAIL {shown} (compile error expected): {p}")),
            }
        }
        for re in &block.warnings {
            // The program must compile, and its warnings (rendered, or
            // any one's message) match: no warnings are the empty text,
            // which `warning: ^$` expects, as Futhark's runner reads it.
            let head = format!("FAIL {shown} (warning expected)");
            let regex = match expectation_regex(re) {
                Ok(r) => r,
                Err(e) => {
                    report.fail(format!(
                        "{head}: bad regex /{re}/: {}",
                        one_line(&e.to_string())
                    ));
                    continue;
                }
            };
            match self.compiled() {
                Err(e) => report.fail(format!("{head}: {e}")),
                Ok(c) => {
                    let text = nabla_syntax::diag::render_all(&c.warnings, &c.sources);
                    if regex.is_match(&text)
                        || c.warnings.iter().any(|w| regex.is_match(&w.message))
                    {
                        report.pass();
                    } else if c.warnings.is_empty() {
                        report.fail(format!(
                            "{head}: expected a compiler warning matching /{re}/, but nabla gave no warnings"
                        ));
                    } else {
                        report.fail(format!(
                            "{head}: expected a compiler warning matching /{re}/, but nabla warned: {}",
                            one_line(&text)
                        ));
                    }
                }
            }
        }
        if block.compile_only() {
            if self.checked.is_none() {
                let path = self.path;
                self.checked = Some(match guarded(|| driver::check(path)) {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(e.summary),
                    Err(p) => Err(p),
                });
            }
            match self.checked.as_ref().expect("set above") {
                Ok(()) => report.pass(),
                Err(e) => report.fail(format!(
                    "FAIL {shown} #{k} (no datasets: type check only): {e}"
                )),
            }
            *k += 1;
            return;
        }
        for ds in &block.datasets {
            let idx = *k;
            *k += 1;
            if let Some(why) = ds.skip_reason(self.backend == Backend::C) {
                let line = format!("SKIP {shown} #{idx} ({}): {why}", ds.describe());
                report.skipped += ds.entries.len();
                report.skips.push(line);
                continue;
            }
            for entry in &ds.entries {
                let head = format!("FAIL {shown}:{entry} #{idx} ({})", ds.describe());
                let path = self.path;
                let exe = match self.backend {
                    Backend::Interpreter => None,
                    Backend::C => match self.executable() {
                        ExeState::Ready(e, left_out) => {
                            if let Some((_, why)) = left_out.iter().find(|(n, _)| n == entry) {
                                let line = format!("SKIP {shown}:{entry}: {why}");
                                if !report.skips.contains(&line) {
                                    report.skips.push(line);
                                }
                                report.skipped += 1;
                                continue;
                            }
                            Some(e)
                        }
                        ExeState::Unsupported(why) => {
                            let line = format!("SKIP {shown}: {why}");
                            if !report.skips.contains(&line) {
                                report.skips.push(line);
                            }
                            report.skipped += 1;
                            continue;
                        }
                        ExeState::Failed(e) => {
                            report.fail(format!("{head}: {e}"));
                            continue;
                        }
                    },
                };
                let limits = self.limits;
                let runs: Vec<(Option<Executable>, String)> = match &exe {
                    Some(e) if !limits.run_args.is_empty() => limits
                        .run_args
                        .iter()
                        .map(|a| {
                            (
                                Some(e.with_args(a.clone())),
                                format!("{head} [{}]", a.join(" ")),
                            )
                        })
                        .collect(),
                    _ => vec![(exe.clone(), head.clone())],
                };
                for (exe, head) in runs {
                    match self.compiled() {
                        Err(e) => report.fail(format!("{head}: {e}")),
                        Ok(c) => {
                            let r = guarded(|| {
                                limits.progress.fetch_add(1, Ordering::SeqCst);
                                let watchdog = limits.run.map(|t| limits.cancel.after(t));
                                let mut r = run_dataset(
                                    c,
                                    path,
                                    entry,
                                    ds,
                                    idx,
                                    exe.as_ref(),
                                    limits.cancel,
                                );
                                drop(watchdog);
                                // A stopped run stops only itself.
                                if limits.cancel.reason()
                                    == Some(nabla_interp::CancelReason::TimeLimit)
                                {
                                    limits.cancel.reset();
                                    let secs = limits.run.map(|t| t.as_secs_f64()).unwrap_or(0.0);
                                    r = r.map_err(|e| format!("timed out after {secs} s: {e}"));
                                }
                                r
                            })
                            .and_then(|r| r);
                            match r {
                                Ok(()) => report.pass(),
                                Err(reason) => report.fail(format!("{head}: {reason}")),
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Whether a compile error matches the expected-error regex: searched in
/// the rendered diagnostics and in each plain message.
/// The regex of an `error:` expectation. As in Futhark's test runner, `.`
/// also matches a newline, so one pattern can span a message's lines
/// (`file.fut:7.*file.fut:9` over a backtrace).
fn expectation_regex(re: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(re)
        .dot_matches_new_line(true)
        .build()
}

/// A run-time error as a Futhark program reports it on stderr: `Error: `,
/// the message, then a backtrace naming where it happened. Test
/// expectations written against Futhark's output (`error: Error`,
/// `hole.*file.fut:7`) are matched against this text too.
fn futhark_style_error(e: &RunError) -> String {
    let location = e
        .summary
        .strip_suffix(&one_line(&e.message))
        .and_then(|s| s.strip_suffix(": "));
    match location {
        Some(loc) => format!("Error: {}\n\nBacktrace:\n-> #0  {loc}\n", e.message),
        None => format!("Error: {}\n", e.message),
    }
}

fn compile_error_matches(re: &regex::Regex, e: &CompileError) -> bool {
    // The summary is the line `nabla test` reports the error with; it
    // gives the location as Futhark does (`file.fut:4:26-36`).
    re.is_match(&e.rendered)
        || re.is_match(&e.summary)
        || e.diagnostics.iter().any(|d| re.is_match(&d.message))
}

/// Reads a value list (text braces or a file), type-directed by `types`.
fn read_values_spec(
    text: Option<&str>,
    file: Option<&Path>,
    types: &[ValueType],
) -> Result<Vec<Value>, String> {
    let typed = match (text, file) {
        (Some(t), _) => nabla_values::read_values(t.as_bytes(), Some(types)),
        (None, Some(f)) => nabla_values::read_values_file(f, Some(types)),
        (None, None) => return Ok(Vec::new()),
    };
    typed.map_err(|e| one_line(&e.to_string()))
}

/// The arguments of dataset `ds` (the `idx`-th of file `path`) for entry
/// point `entry`, whose parameters have the types `params`: read from the
/// text or file, or generated (random inputs are seeded by the file name,
/// the index and the spec, so every run gets the same values).
pub(crate) fn dataset_args(
    path: &Path,
    entry: &str,
    ds: &Dataset,
    idx: usize,
    params: &[ValueType],
) -> Result<Vec<Value>, String> {
    let args = match &ds.input {
        InputSpec::Values(t) => {
            read_values_spec(Some(t), None, params).map_err(|e| format!("bad input: {e}"))?
        }
        InputSpec::File(f) => {
            read_values_spec(None, Some(f), params).map_err(|e| format!("bad input: {e}"))?
        }
        InputSpec::Random(t) => {
            let items = parse_random_spec(t).map_err(|e| format!("bad random input: {e}"))?;
            let seed = format!(
                "{}#{idx}:{t}",
                path.file_name()
                    .map(|s| s.to_string_lossy())
                    .unwrap_or_default()
            );
            let vals = generate(&items, &mut Rng::from_seed_bytes(seed.as_bytes()))
                .map_err(|e| format!("bad random input: {e}"))?;
            let got: Vec<ValueType> = vals.iter().map(Value::value_type).collect();
            if got != params {
                return Err(format!(
                    "random input has types {}, but entry point {entry} takes {}",
                    show_types(&got),
                    show_types(params)
                ));
            }
            vals
        }
    };
    Ok(args)
}

/// The arguments of a `script input` dataset for entry point `entry`: the
/// value of its FutharkScript expression (the text in braces, or the
/// file's contents), whose entry point calls run on the same backend as
/// the dataset (`exe`, else the interpreter), spread over the entry's
/// flat parameters `params`. Builtins read files relative to the test
/// file `path`'s directory.
fn script_args(
    c: &Compiled,
    path: &Path,
    entry: &str,
    ds: &Dataset,
    exe: Option<&Executable>,
    cancel: &nabla_interp::Cancel,
    params: &[ValueType],
) -> Result<Vec<Value>, String> {
    let (text, origin) = match &ds.input {
        InputSpec::Values(t) => (t.clone(), "script input".to_string()),
        InputSpec::File(f) => (
            std::fs::read_to_string(f)
                .map_err(|e| format!("bad script input: {}: {e}", f.display()))?,
            f.display().to_string(),
        ),
        InputSpec::Random(_) => return Err("a random input cannot be a script".into()),
    };
    let bad = |e: crate::script::ScriptError| {
        format!("bad script input: {}", one_line(&e.render(&text, &origin)))
    };
    let e = crate::script::parse(&text).map_err(bad)?;
    let mut call = |f: &str, args: Vec<Value>| -> Result<Vec<Value>, String> {
        let r = match exe {
            None => c.run_cancellable(f, args, cancel),
            Some(exe) => {
                let types = c.entry_types(f)?;
                exe.run(c, f, &args, &types.results)
            }
        };
        r.map_err(|e| e.summary)
    };
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let v = crate::script::Evaluator::new(c, &base, &mut call)
        .eval(&e)
        .map_err(bad)?;
    crate::script::flatten_args(&[v], params)
        .map_err(|m| format!("script input for entry point {entry}: {m}"))
}

/// Runs one dataset on one entry point; `Err` carries the failure reason.
fn run_dataset(
    c: &Compiled,
    path: &Path,
    entry: &str,
    ds: &Dataset,
    idx: usize,
    exe: Option<&Executable>,
    cancel: &nabla_interp::Cancel,
) -> Result<(), String> {
    let types = c.entry_types(entry)?;
    let args = if ds.is_script() {
        script_args(c, path, entry, ds, exe, cancel, &types.params)?
    } else {
        dataset_args(path, entry, ds, idx, &types.params)?
    };
    // `auto output`: the interpreter (the oracle) gives the expected values.
    let reference = match (&ds.expected, exe) {
        (Expected::Auto, Some(_)) => Some(c.run_cancellable(entry, args.clone(), cancel)),
        _ => None,
    };
    let result: Result<Vec<Value>, RunError> = match exe {
        None => c.run_cancellable(entry, args, cancel),
        Some(exe) => exe.run(c, entry, &args, &types.results),
    };
    if let Some(reference) = reference {
        return match (reference, result) {
            (Ok(expected), Ok(actual)) => compare(Ok(expected), &actual),
            (Err(e), Ok(_)) => Err(format!(
                "auto output: the interpreter fails ({}) but the compiled code succeeds",
                e.summary
            )),
            (Ok(_), Err(e)) => Err(format!("run-time error: {}", e.summary)),
            (Err(expected), Err(actual)) if expected.message == actual.message => Ok(()),
            (Err(expected), Err(actual)) => Err(format!(
                "auto output: the interpreter fails with \"{}\" but the compiled code with \"{}\"",
                expected.summary, actual.summary
            )),
        };
    }
    match (&ds.expected, result) {
        (Expected::Error(re), Ok(_)) => Err(format!(
            "expected an error matching /{re}/, but the run succeeded"
        )),
        (Expected::Error(re), Err(e)) => {
            let regex = expectation_regex(re)
                .map_err(|err| format!("bad regex /{re}/: {}", one_line(&err.to_string())))?;
            if regex.is_match(&e.message)
                || regex.is_match(&e.rendered)
                || regex.is_match(&futhark_style_error(&e))
            {
                Ok(())
            } else {
                Err(format!("the error does not match /{re}/: {}", e.summary))
            }
        }
        (_, Err(e)) => Err(format!("run-time error: {}", e.summary)),
        (Expected::Success, Ok(_)) => Ok(()),
        (Expected::Auto, Ok(_)) => {
            Err("internal error: `auto output` without a reference run".into())
        }
        (Expected::Values(t), Ok(actual)) => {
            compare(read_expected(Some(t), None, &types.results), &actual)
        }
        (Expected::File(f), Ok(actual)) => {
            compare(read_expected(None, Some(f), &types.results), &actual)
        }
    }
}

/// Reads expected values, typed by the entry's result types when they fit,
/// untyped otherwise (so a wrong count or type shows up as a mismatch).
fn read_expected(
    text: Option<&str>,
    file: Option<&Path>,
    types: &[ValueType],
) -> Result<Vec<Value>, String> {
    match read_values_spec(text, file, types) {
        Ok(v) => Ok(v),
        Err(typed_err) => {
            let untyped = match (text, file) {
                (Some(t), _) => nabla_values::read_values(t.as_bytes(), None),
                (None, Some(f)) => nabla_values::read_values_file(f, None),
                (None, None) => Ok(Vec::new()),
            };
            untyped.map_err(|_| format!("bad expected output: {typed_err}"))
        }
    }
}

fn compare(expected: Result<Vec<Value>, String>, actual: &[Value]) -> Result<(), String> {
    let expected = expected?;
    nabla_values::compare_value_lists(&expected, actual)
        .map_err(|m| format!("wrong result: {}", one_line(&m.to_string())))
}

fn show_types(ts: &[ValueType]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}
