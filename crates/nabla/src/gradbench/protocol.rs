//! The tool side of GradBench's protocol: one JSON object per line in, one
//! JSON response line per message out (logs go to stderr).
//!
//! * `start` → `{"id", "tool": "nabla"}`;
//! * `define` (`module`) → compiles `gradbench/<module>.fut` (with
//!   [`Backend::C`], into an executable, see [`super::executables`]):
//!   `{"id", "success": true}` or `{"id", "success": false, "error"}`;
//! * `evaluate` (`module`, `function`, `input`) → runs the entry point at
//!   least `input.min_runs` times and until `input.min_seconds` have passed
//!   (when present): `{"id", "success": true, "output", "timings": [{"name":
//!   "evaluate", "nanoseconds"}, …]}` (one timing per run, of the run only),
//!   or `{"id", "success": false, "error"}`. With [`Backend::C`] the
//!   executable runs the entry `min_runs` times after one warm-up run
//!   (`-r`), each timing is the executable's own measure of one run (`-t`,
//!   microsecond resolution), and more runs follow while `min_seconds` have
//!   not passed.
//!   An evaluation that exceeds the session's time limit (see
//!   [`Session::with_time_limit`]; by default one minute with executables,
//!   ten with the interpreter: [`Backend::default_eval_time_limit`]) or runs
//!   out of memory is stopped and answered with `success: false`; the
//!   session serves the next messages.
//! * `analysis` and any other kind → `{"id"}`.
//!
//! A line that cannot be read as a message (not JSON, or JSON that
//! serde_json refuses, such as a number out of range like `1e400`) is
//! answered `{"id", "success": false, "error"}` when the `id` of its
//! top-level object can still be read (see [`recover_id`]). A line without a
//! readable `id` gets no response (there is no id to answer to); a message
//! is logged on stderr instead.

use super::evals::{prepare, Call};
use super::executables::CachedExecutable;
use super::programs::Programs;
use crate::cbackend::binary_input;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What runs the eval programs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// The interpreter.
    #[default]
    Interp,
    /// Executables made by the C backend (the programs must be compiled
    /// with static AD), cached in `cache_dir` (`None`: the folder of
    /// [`super::executables::cache_dir`]).
    C {
        /// The cache folder.
        cache_dir: Option<PathBuf>,
    },
}

/// The result of an evaluation: the output in the reference layout and the
/// duration of every run.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// The output (from the last run).
    pub output: Json,
    /// One entry per run, in nanoseconds.
    pub timings: Vec<u128>,
}

/// A protocol session: the compiled programs, shared by its messages.
#[derive(Default)]
pub struct Session {
    programs: Programs,
    /// Wall-clock limit of one `evaluate` (all its runs) as set by
    /// [`Session::with_time_limit`] (`Some(None)`: none); `None`: the
    /// backend's default ([`Backend::default_eval_time_limit`]).
    time_limit: Option<Option<Duration>>,
    backend: Backend,
    /// With [`Backend::C`]: the executable of every defined eval.
    executables: HashMap<String, CachedExecutable>,
}

/// The default limit of one evaluation with executables ([`Backend::C`],
/// what a GradBench harness runs): one minute. The largest workloads of
/// GradBench's default eval lists take at most a few seconds each (gmm's
/// `jacobian` for d = 64, k = 100, n = 1000: 3.4 s wall-clock on 2 busy
/// cores, 1.3 s of it the run), and an eval asks for 1 s of repeated runs
/// by default (`min_seconds`), so the limit is far above any real
/// evaluation and still short enough that a harness waiting for an answer
/// is not stuck.
pub const COMPILED_EVAL_TIME_LIMIT: Duration = Duration::from_secs(60);

/// The default limit of one evaluation with the interpreter
/// ([`Backend::Interp`]): ten minutes, since the interpreter is one to two
/// orders of magnitude slower than executables (on 2 busy cores, ode's
/// `gradient` for n = 100 000, s = 100 takes 48 s in it, 1.2 s as an
/// executable; gmm's `jacobian` for d = 64, k = 100 takes 454 s in it).
pub const INTERPRETED_EVAL_TIME_LIMIT: Duration = Duration::from_secs(600);

impl Backend {
    /// The wall-clock limit of one evaluation unless
    /// [`Session::with_time_limit`] (`nabla gradbench --eval-timeout`) sets
    /// another: [`COMPILED_EVAL_TIME_LIMIT`] or
    /// [`INTERPRETED_EVAL_TIME_LIMIT`].
    pub fn default_eval_time_limit(&self) -> Duration {
        match self {
            Backend::Interp => INTERPRETED_EVAL_TIME_LIMIT,
            Backend::C { .. } => COMPILED_EVAL_TIME_LIMIT,
        }
    }
}

/// The most runs one `evaluate` makes, whatever `min_runs` says.
pub const MAX_RUNS: u64 = 1_000_000;

impl Session {
    /// A session over the programs found by [`Programs::new`].
    pub fn new() -> Session {
        Session::with_programs(Programs::new())
    }

    /// A session over the given programs (with the backend's default time
    /// limit).
    pub fn with_programs(programs: Programs) -> Session {
        Session {
            programs,
            time_limit: None,
            backend: Backend::Interp,
            executables: HashMap::new(),
        }
    }

    /// Sets what runs the programs (the interpreter unless set).
    pub fn with_backend(mut self, backend: Backend) -> Session {
        self.backend = backend;
        self.executables.clear();
        self
    }

    /// With [`Backend::C`], the executable of eval `module` once it is
    /// defined.
    pub fn executable(&self, module: &str) -> Option<&CachedExecutable> {
        self.executables.get(module)
    }

    /// Sets the wall-clock limit of one `evaluate` (`None`: no limit), in
    /// place of the backend's default
    /// ([`Backend::default_eval_time_limit`]). An evaluation that exceeds it
    /// is stopped and answered with `success: false`; the session goes on.
    pub fn with_time_limit(mut self, limit: Option<Duration>) -> Session {
        self.time_limit = Some(limit);
        self
    }

    /// The wall-clock limit of one `evaluate` (`None`: none).
    pub fn time_limit(&self) -> Option<Duration> {
        match self.time_limit {
            Some(set) => set,
            None => Some(self.backend.default_eval_time_limit()),
        }
    }

    /// Compiles (type-checks and elaborates) eval `module`'s program, and
    /// with [`Backend::C`] finds or builds its executable (logging which on
    /// stderr).
    pub fn define(&mut self, module: &str) -> Result<(), String> {
        let compiled = self.programs.get(module)?;
        let mut entries = Vec::new();
        for f in super::evals::functions(module) {
            if module == "ht" {
                entries.push(format!("{f}_simple"));
                entries.push(format!("{f}_complicated"));
            } else {
                entries.push(f.to_string());
            }
        }
        for e in &entries {
            compiled.entry_types(e)?;
        }
        if let Backend::C { cache_dir } = &self.backend {
            if !self.executables.contains_key(module) {
                let dir = match cache_dir {
                    Some(d) => d.clone(),
                    None => super::executables::cache_dir()?,
                };
                let exe = super::executables::executable(compiled, module, &entries, &dir)?;
                eprintln!(
                    "nabla gradbench: {module}: {} {}",
                    if exe.from_cache {
                        "using the cached executable"
                    } else {
                        "compiled the executable"
                    },
                    exe.executable.path.display()
                );
                self.executables.insert(module.to_string(), exe);
            }
        }
        Ok(())
    }

    /// The message that explains a stopped evaluation.
    fn time_limit_note(&self) -> String {
        match self.time_limit() {
            Some(t) => format!(
                " (the evaluation's time limit is {} s; `nabla gradbench --eval-timeout` sets it)",
                t.as_secs_f64()
            ),
            None => String::new(),
        }
    }

    /// Runs `function` of `module` on `input` (see the module docs for
    /// `min_runs`/`min_seconds`). Errors: a bad input, a program that does
    /// not compile, or a run-time error (rendered with its source location).
    pub fn evaluate(
        &mut self,
        module: &str,
        function: &str,
        input: &Json,
    ) -> Result<Evaluation, String> {
        let call = prepare(module, function, input)?;
        let min_runs = match input.get("min_runs") {
            Some(j) => super::json::i64_of(j, "min_runs")?.clamp(1, MAX_RUNS as i64) as u64,
            None => 1,
        };
        let min_seconds = match input.get("min_seconds") {
            Some(j) => super::json::f64_of(j, "min_seconds")?,
            None => 0.0,
        };
        let min_time = if min_seconds.is_finite() && min_seconds > 0.0 {
            Duration::from_secs_f64(min_seconds.min(86_400.0))
        } else {
            Duration::ZERO
        };
        if let Backend::C { .. } = self.backend {
            return self.evaluate_compiled(module, &call, min_runs, min_time);
        }
        let note = self.time_limit_note();
        let time_limit = self.time_limit();
        let compiled = self.programs.get(module)?;
        let cancel = nabla_interp::Cancel::new();
        let _watchdog = time_limit.map(|t| cancel.after(t));
        let mut timings = Vec::new();
        let start = Instant::now();
        let mut last = None;
        while (timings.len() as u64) < min_runs
            || (start.elapsed() < min_time && (timings.len() as u64) < MAX_RUNS)
        {
            let args = call.args.clone();
            let t0 = Instant::now();
            let r = compiled.run_cancellable(&call.entry, args, &cancel);
            let dt = t0.elapsed();
            match r {
                Ok(rs) => last = Some(rs),
                Err(e) => {
                    return Err(match cancel.reason() {
                        Some(nabla_interp::CancelReason::TimeLimit) => {
                            format!("{}{note}", e.summary)
                        }
                        _ => e.summary,
                    })
                }
            }
            timings.push(dt.as_nanos());
        }
        let results = last.unwrap_or_default();
        let output = (call.output)(&results)?;
        Ok(Evaluation { output, timings })
    }

    /// [`Session::evaluate`] with the eval's executable: `-r` runs per
    /// child process, more children while `min_time` has not passed; the
    /// session's time limit bounds them all (a child that exceeds it is
    /// killed).
    fn evaluate_compiled(
        &mut self,
        module: &str,
        call: &Call,
        min_runs: u64,
        min_time: Duration,
    ) -> Result<Evaluation, String> {
        if !self.executables.contains_key(module) {
            self.define(module)?;
        }
        let note = self.time_limit_note();
        let time_limit = self.time_limit();
        let mut exe = self.executables[module].executable.clone();
        let compiled = self.programs.get(module)?;
        let results = compiled.entry_types(&call.entry)?.results;
        let input = Arc::new(binary_input(&call.args));
        let start = Instant::now();
        let mut timings: Vec<u128> = Vec::new();
        let mut runs = min_runs;
        let values = loop {
            exe.timeout = match time_limit {
                Some(t) => match t.checked_sub(start.elapsed()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(format!("the evaluation was stopped{note}")),
                },
                None => None,
            };
            let (values, micros) = exe
                .run_input(compiled, &call.entry, &input, &results, Some(runs))
                .map_err(|e| match time_limit {
                    Some(t) if start.elapsed() >= t => format!("{}{note}", e.summary),
                    _ => e.summary,
                })?;
            timings.extend(micros.iter().map(|&us| us as u128 * 1000));
            let done = timings.len() as u64;
            let elapsed = start.elapsed();
            if done >= MAX_RUNS || elapsed >= min_time {
                break values;
            }
            // Enough runs for the rest of min_time, at the mean so far.
            let mean = (timings.iter().sum::<u128>() / done.max(1) as u128).max(1_000);
            let more = (min_time - elapsed).as_nanos().div_ceil(mean);
            runs = (more.min(u64::MAX as u128) as u64).clamp(1, MAX_RUNS - done);
        };
        let output = (call.output)(&values)?;
        Ok(Evaluation { output, timings })
    }

    /// Answers one parsed message (which has an `id`).
    pub fn handle(&mut self, msg: &Json) -> Json {
        let id = msg.get("id").cloned().unwrap_or(Json::Null);
        let fail = |e: String| json!({"id": id, "success": false, "error": e});
        let kind = match msg.get("kind").and_then(Json::as_str) {
            Some(k) => k,
            None => return fail("the message has no string field \"kind\"".to_string()),
        };
        let str_field = |name: &str| -> Result<&str, String> {
            msg.get(name)
                .and_then(Json::as_str)
                .ok_or_else(|| format!("the {kind} message has no string field {name:?}"))
        };
        match kind {
            "start" => json!({"id": id, "tool": "nabla"}),
            "define" => match str_field("module").and_then(|m| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.define(m)))
                    .unwrap_or_else(|_| Err(format!("internal error while compiling {m}")))
            }) {
                Ok(()) => json!({"id": id, "success": true}),
                Err(e) => fail(e),
            },
            "evaluate" => {
                let r = (|| {
                    let module = str_field("module")?;
                    let function = str_field("function")?;
                    let input = msg
                        .get("input")
                        .ok_or_else(|| "the evaluate message has no field \"input\"".to_string())?;
                    // A bug in the interpreter must not end the session.
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.evaluate(module, function, input)
                    }))
                    .unwrap_or_else(|_| Err("internal error while evaluating".to_string()))
                })();
                match r {
                    Ok(ev) => {
                        let timings: Vec<Json> = ev
                            .timings
                            .iter()
                            .map(|&ns| json!({"name": "evaluate", "nanoseconds": ns as u64}))
                            .collect();
                        json!({"id": id, "success": true, "output": ev.output, "timings": timings})
                    }
                    Err(e) => fail(e),
                }
            }
            _ => json!({"id": id}),
        }
    }

    /// Answers one line of input: `Some(response line)`, or `None` (with
    /// the reason) when the line is not a JSON object with an `id`. Blank
    /// lines give `Ok(None)`.
    pub fn handle_line(&mut self, line: &str) -> Result<Option<String>, String> {
        if line.trim().is_empty() {
            return Ok(None);
        }
        let msg: Json = match serde_json::from_str(line) {
            Ok(m) => m,
            Err(e) => {
                return match recover_id(line) {
                    Some(id) => Ok(Some(
                        json!({"id": id, "success": false, "error": format!("the message cannot be read: {e}")})
                            .to_string(),
                    )),
                    None => Err(format!("ignoring a line that is not JSON ({e})")),
                }
            }
        };
        if msg.get("id").is_none() {
            return Err("ignoring a message without an \"id\"".to_string());
        }
        Ok(Some(self.handle(&msg).to_string()))
    }
}

/// The `id` of a line that serde_json cannot read as a whole: the line is
/// scanned as a JSON object (strings with their escapes, nested arrays and
/// objects, other values up to the next `,` or closing bracket), and the
/// text of its top-level `id` member is parsed alone. `None` when the line
/// is not an object or its `id` cannot be read.
pub fn recover_id(line: &str) -> Option<Json> {
    let b = line.as_bytes();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    // The end of the string starting at b[i] == b'"' (past its closing quote).
    let string_end = |mut i: usize| -> Option<usize> {
        i += 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    };
    skip_ws(&mut i);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        skip_ws(&mut i);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(i)?;
        let key: String = serde_json::from_str(&line[i..key_end]).ok()?;
        i = key_end;
        skip_ws(&mut i);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        skip_ws(&mut i);
        let start = i;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i = string_end(i)?;
                    continue;
                }
                b'[' | b'{' => depth += 1,
                b']' | b'}' if depth > 0 => depth -= 1,
                b',' | b']' | b'}' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        if key == "id" {
            return serde_json::from_str(line[start..i].trim()).ok();
        }
        match b.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

/// Serves a whole session: reads lines from `input` until it ends, writes
/// one response line per message to `output` (flushed after each), and logs
/// problems on stderr.
pub fn serve(input: impl BufRead, output: impl Write) -> std::io::Result<()> {
    serve_with(Session::new(), input, output)
}

/// [`serve`] with a given session (e.g. programs compiled with static AD).
pub fn serve_with(
    mut session: Session,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                eprintln!("nabla gradbench: ignoring a line that is not UTF-8");
                continue;
            }
            Err(e) => return Err(e),
        };
        match session.handle_line(&line) {
            Ok(Some(resp)) => {
                output.write_all(resp.as_bytes())?;
                output.write_all(b"\n")?;
                output.flush()?;
            }
            Ok(None) => {}
            Err(e) => eprintln!("nabla gradbench: {e}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_time_limit_follows_the_backend_unless_set() {
        let compiled = Backend::C { cache_dir: None };
        assert_eq!(
            Session::default().time_limit(),
            Some(Duration::from_secs(600))
        );
        let s = Session::default().with_backend(compiled.clone());
        assert_eq!(s.time_limit(), Some(Duration::from_secs(60)));
        // A limit that was set stays, whichever backend comes after.
        let s = Session::default()
            .with_time_limit(Some(Duration::from_secs(5)))
            .with_backend(compiled.clone());
        assert_eq!(s.time_limit(), Some(Duration::from_secs(5)));
        let s = Session::default()
            .with_time_limit(None)
            .with_backend(compiled);
        assert_eq!(s.time_limit(), None);
    }

    #[test]
    fn the_id_of_an_unreadable_message_is_recovered() {
        let id = |l: &str| recover_id(l);
        assert_eq!(id(r#"{"id":27,"input":{"w":1e400}}"#), Some(json!(27)));
        assert_eq!(
            id(r#" { "kind" : "x", "input": [1e400, {"a": "}"}], "id" : "a\"b" } "#),
            Some(json!("a\"b"))
        );
        assert_eq!(id(r#"{"input":{"id":3,"w":1e400}}"#), None);
        assert_eq!(id(r#"{"id":1e400}"#), None);
        assert_eq!(id(r#"[{"id":1}]"#), None);
        assert_eq!(id(r#"{"id":5"#), Some(json!(5)));
        assert_eq!(id("not json"), None);
        assert_eq!(
            id(r#"{"k\u00e9y":[1,2],"id":[1,{"x":2}]}"#),
            Some(json!([1, {"x": 2}]))
        );
    }

    #[test]
    fn an_unreadable_message_with_an_id_is_answered() {
        let mut s = Session::default();
        let r = s.handle_line(r#"{"id":4,"kind":"evaluate","input":1e400}"#);
        let r: Json = serde_json::from_str(&r.unwrap().unwrap()).unwrap();
        assert_eq!(r["id"], json!(4));
        assert_eq!(r["success"], json!(false));
        assert!(s.handle_line(r#"{"input":1e400}"#).is_err());
    }
}
