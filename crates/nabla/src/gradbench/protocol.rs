//! The tool side of GradBench's protocol: one JSON object per line in, one
//! JSON response line per message out (logs go to stderr).
//!
//! * `start` → `{"id", "tool": "nabla"}`;
//! * `define` (`module`) → compiles `gradbench/<module>.fut`:
//!   `{"id", "success": true}` or `{"id", "success": false, "error"}`;
//! * `evaluate` (`module`, `function`, `input`) → runs the entry point at
//!   least `input.min_runs` times and until `input.min_seconds` have passed
//!   (when present): `{"id", "success": true, "output", "timings": [{"name":
//!   "evaluate", "nanoseconds"}, …]}` (one timing per run, of the run only),
//!   or `{"id", "success": false, "error"}`;
//!   An evaluation that exceeds the session's time limit (see
//!   [`Session::with_time_limit`]) or runs out of memory is stopped and
//!   answered with `success: false`; the session serves the next messages.
//! * `analysis` and any other kind → `{"id"}`.
//!
//! A line that is not JSON or has no `id` gets no response (there is no id
//! to answer to); a message is logged on stderr instead.

use super::evals::prepare;
use super::programs::Programs;
use serde_json::{json, Value as Json};
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

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
    /// Wall-clock limit of one `evaluate` (all its runs); `None`: none.
    time_limit: Option<Duration>,
}

/// The default of [`Session::with_time_limit`]: ten minutes.
pub const DEFAULT_EVAL_TIME_LIMIT: Duration = Duration::from_secs(600);

/// The most runs one `evaluate` makes, whatever `min_runs` says.
pub const MAX_RUNS: u64 = 1_000_000;

impl Session {
    /// A session over the programs found by [`Programs::new`].
    pub fn new() -> Session {
        Session::with_programs(Programs::new())
    }

    /// A session over the given programs (with the default time limit).
    pub fn with_programs(programs: Programs) -> Session {
        Session {
            programs,
            time_limit: Some(DEFAULT_EVAL_TIME_LIMIT),
        }
    }

    /// Sets the wall-clock limit of one `evaluate` (`None`: no limit). An
    /// evaluation that exceeds it is stopped and answered with
    /// `success: false`; the session goes on.
    pub fn with_time_limit(mut self, limit: Option<Duration>) -> Session {
        self.time_limit = limit;
        self
    }

    /// Compiles (type-checks and elaborates) eval `module`'s program.
    pub fn define(&mut self, module: &str) -> Result<(), String> {
        let compiled = self.programs.get(module)?;
        for f in super::evals::functions(module) {
            let entries: Vec<String> = if module == "ht" {
                vec![format!("{f}_simple"), format!("{f}_complicated")]
            } else {
                vec![f.to_string()]
            };
            for e in entries {
                compiled.entry_types(&e)?;
            }
        }
        Ok(())
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
        let compiled = self.programs.get(module)?;
        let cancel = nabla_interp::Cancel::new();
        let _watchdog = self.time_limit.map(|t| cancel.after(t));
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
                    return Err(match (cancel.reason(), self.time_limit) {
                        (Some(nabla_interp::CancelReason::TimeLimit), Some(t)) => format!(
                            "{} (the evaluation's time limit is {} s; `nabla gradbench --eval-timeout` sets it)",
                            e.summary,
                            t.as_secs_f64()
                        ),
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
        let msg: Json = serde_json::from_str(line)
            .map_err(|e| format!("ignoring a line that is not JSON ({e})"))?;
        if msg.get("id").is_none() {
            return Err("ignoring a message without an \"id\"".to_string());
        }
        Ok(Some(self.handle(&msg).to_string()))
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
