//! The compiled path under hostile input (issue 34; inputs in
//! `tests/data/compiled-hostile/`): executables, the server, the C library
//! and `nabla gradbench` give clean, located errors or the right result —
//! never a crash, a silent truncation or a kill by the kernel. Runs that
//! may allocate much are under an address-space limit (`ulimit -v`), so
//! that a regression shows as a failure instead of eating the machine.
//! Needs a C compiler (`cc`, or `$CC`).

use serde_json::Value as Json;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Address-space limit (KiB) of the runs that may allocate much: 4 GB.
const MEMORY_LIMIT_KB: u64 = 4_000_000;

fn data(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/compiled-hostile")
        .join(name);
    assert!(p.exists(), "missing test data {}", p.display());
    p
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `program ARGS` on `stdin` under the address-space limit and two
/// minutes of CPU time (`ulimit -t`; on a loaded machine a run may wait far
/// longer than it computes), with twenty minutes of wall-clock time for a
/// run that hangs without computing (`timeout -s KILL`).
fn run_limited(program: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut script =
        format!("ulimit -v {MEMORY_LIMIT_KB}; ulimit -t 120; exec timeout -s KILL 1200 \"$0\"");
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${i}\""));
    }
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(program)
        .args(args)
        .env(
            "NABLA_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("nabla-cache"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program starts");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = child.wait_with_output().expect("the program ends");
    let _ = writer.join();
    out
}

fn nabla_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_nabla"))
}

/// `nabla c ARGS` (must succeed).
fn nabla_c(args: &[&str]) {
    let o = Command::new(nabla_bin())
        .arg("c")
        .args(args)
        .output()
        .expect("nabla runs");
    assert!(o.status.success(), "nabla c {args:?}: {}", text(&o.stderr));
}

/// Builds the executable of test program `name` in `dir`.
fn executable(dir: &Path, name: &str) -> PathBuf {
    let exe = dir.join(name.trim_end_matches(".fut"));
    nabla_c(&[
        data(name).to_str().expect("UTF-8"),
        "-o",
        exe.to_str().expect("UTF-8"),
    ]);
    exe
}

/// Asserts exit status 1 (not a signal) and a stderr with every needle.
fn assert_clean_error(o: &Output, needles: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "status {:?}; stderr:\n{err}",
        o.status
    );
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
}

// ---- the server ----------------------------------------------------------

#[test]
fn server_commands_of_any_length_act_on_every_word() {
    let d = scratch("server-words");
    let exe = d.join("sums");
    nabla_c(&[
        "--server",
        data("sums.fut").to_str().expect("UTF-8"),
        "-o",
        exe.to_str().expect("UTF-8"),
    ]);
    const N: usize = 1100;
    // One file of N i64 values (binary format), restored by one command.
    let mut values = Vec::new();
    for i in 0..N as i64 {
        values.extend_from_slice(b"b\x02\x00 i64");
        values.extend_from_slice(&i.to_le_bytes());
    }
    std::fs::write(d.join("many.bin"), &values).expect("write");
    let names: Vec<String> = (0..N).map(|i| format!("v{i}")).collect();
    let restore: Vec<String> = names.iter().map(|n| format!("{n} i64")).collect();
    let session = format!(
        "restore many.bin {}\nstore all.out {}\nfree {}\ntype v{}\n",
        restore.join(" "),
        names.join(" "),
        names.join(" "),
        N - 1
    );
    let mut child = Command::new(&exe)
        .current_dir(&d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(session.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("the server ends");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let replies = text(&out.stdout);
    // Greeting, restore, store, free: OK without failure; `type` of the
    // last variable: it is gone.
    let failures: Vec<&str> = replies.split("%%% FAILURE").skip(1).collect();
    assert_eq!(failures.len(), 1, "{replies}");
    assert!(
        failures[0].contains(&format!("Unknown variable: v{}", N - 1)),
        "{replies}"
    );
    // Every value was stored (15 bytes each), in order.
    assert_eq!(std::fs::read(d.join("all.out")).expect("read"), values);
}

#[test]
fn server_takes_a_memory_limit() {
    let d = scratch("server-limit");
    let exe = d.join("sums");
    nabla_c(&[
        "--server",
        data("sums.fut").to_str().expect("UTF-8"),
        "-o",
        exe.to_str().expect("UTF-8"),
    ]);
    std::fs::write(
        d.join("n.bin"),
        b"b\x02\x00 i64\x00\xe1\xf5\x05\x00\x00\x00\x00",
    )
    .expect("write");
    let o = {
        let mut child = Command::new(&exe)
            .args(["--memory-limit", "1M"])
            .current_dir(&d)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"restore n.bin n i64\ncall ones xs n\ntype xs\n")
            .expect("write");
        child.wait_with_output().expect("the server ends")
    };
    assert!(o.status.success(), "{}", text(&o.stderr));
    let replies = text(&o.stdout);
    // 10^8 f64 (800 MB) are past 1 MiB: a failure, and no variable.
    assert!(
        replies.contains("out of memory: 800000000 bytes for an array of shape [100000000]"),
        "{replies}"
    );
    assert!(replies.contains("Unknown variable: xs"), "{replies}");
    let bad = Command::new(&exe)
        .args(["--memory-limit", "lots"])
        .output()
        .expect("the server runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("--memory-limit needs a size"));
}

// ---- executables ---------------------------------------------------------

#[test]
fn empty_arrays_with_a_huge_dimension_agree_with_the_interpreter() {
    let d = scratch("empty");
    for (prog, input) in [
        ("flat_sum.fut", "two_hugex0.in"),
        ("flat_sum.fut", "two_0xhuge.in"),
        ("replicate2d.fut", "rep2d_maxx0.in"),
    ] {
        let exe = executable(&d, prog);
        let stdin = std::fs::read(data(input)).expect("read");
        let got = run_limited(&exe, &[], &stdin);
        let want = run_limited(
            nabla_bin(),
            &["run", data(prog).to_str().expect("UTF-8")],
            &stdin,
        );
        assert!(want.status.success(), "{}", text(&want.stderr));
        assert!(
            got.status.success(),
            "{prog} < {input}: {}",
            text(&got.stderr)
        );
        assert_eq!(text(&got.stdout), text(&want.stdout), "{prog} < {input}");
    }
}

#[test]
fn empty_array_dimensions_are_read_as_the_interpreter_reads_them() {
    // The executables read `empty(…)`'s dimensions with strtoll: past the
    // end of the input when it ends in digits (the buffer has no NUL), and
    // a dimension past 2^63 - 1 became 2^63 - 1 without a word. Now they
    // are integer literals, as nabla-values reads them.
    let d = scratch("empty-dims");
    let exe = executable(&d, "flat_sum.fut");
    for (input, accepted) in [
        ("1f32 empty([99999999999999999999][0]f32)", false),
        ("1f32 empty([0][-1]f32)", false),
        ("1f32 empty([0x4000000000000000][0]f32)", true),
        ("1f32 empty([1_000][0]f32)", true),
        ("1f32 empty([0][7i64]f32)", true),
        ("1f32 empty([0][7", false),
    ] {
        let got = run_limited(&exe, &[], input.as_bytes());
        let want = run_limited(
            nabla_bin(),
            &["run", data("flat_sum.fut").to_str().expect("UTF-8")],
            input.as_bytes(),
        );
        assert_eq!(
            want.status.success(),
            accepted,
            "interpreter on {input:?}: {}",
            text(&want.stderr)
        );
        if accepted {
            assert!(got.status.success(), "{input:?}: {}", text(&got.stderr));
            assert_eq!(text(&got.stdout), text(&want.stdout), "{input:?}");
        } else {
            assert_clean_error(&got, &["cannot read input"]);
        }
    }
}

#[test]
fn the_number_of_runs_is_validated() {
    let d = scratch("runs");
    let exe = executable(&d, "sums.fut");
    for bad in ["abc", "0", "-1", "2x", "99999999999"] {
        let o = run_limited(&exe, &["-e", "sum", "-r", bad], b"[1, 2, 3]");
        assert_eq!(o.status.code(), Some(2), "-r {bad}: {o:?}");
        assert!(
            text(&o.stderr).contains(&format!(
                "-r needs a positive number of runs (at most 10^9), not '{bad}'"
            )),
            "{}",
            text(&o.stderr)
        );
        assert!(o.stdout.is_empty());
    }
    let t = d.join("times.txt");
    let o = run_limited(
        &exe,
        &["-e", "sum", "--runs=3", "-t", t.to_str().expect("UTF-8")],
        b"[1, 2, 3]",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "6i64");
    let times = std::fs::read_to_string(&t).expect("the timing file");
    assert_eq!(times.lines().count(), 3, "{times}");
}

#[test]
fn hostile_sizes_are_out_of_memory_errors() {
    let d = scratch("sizes");
    let exe = executable(&d, "replicate2d.fut");
    // 10^10 bytes: past the 4 GB address space of the run, whatever the
    // default limit (3/4 of the physical memory) is: malloc fails cleanly.
    let o = run_limited(&exe, &["-n"], b"100000 100000");
    assert_clean_error(
        &o,
        &[
            "out of memory: 10000000000 bytes for an array of shape [100000][100000]",
            "at ",
        ],
    );
    // Under an explicit limit.
    let o = run_limited(&exe, &["-n", "--memory-limit", "1G"], b"100000 100000");
    assert_clean_error(
        &o,
        &["the memory limit is 1073741824 bytes", "replicate2d.fut:2:"],
    );
    let o = run_limited(&exe, &["-n", "--memory-limit=2M"], b"1000 1000");
    assert!(o.status.success(), "{}", text(&o.stderr));
    // n * m overflows: refused before anything is allocated.
    let o = run_limited(&exe, &["-n"], b"3037000500 3037000500");
    assert_clean_error(&o, &["out of memory: more than 9223372036854775807 bytes"]);
    let o = run_limited(&exe, &["-n"], b"9223372036854775807 2");
    assert_clean_error(&o, &["out of memory:"]);
    // A bad limit.
    let o = run_limited(&exe, &["--memory-limit", "-5"], b"1 1");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--memory-limit needs a size"));
}

// ---- the C library -------------------------------------------------------

#[test]
fn the_c_api_refuses_null_pointers_and_sizes_past_its_limit() {
    let d = scratch("null");
    let lib = d.join("sums");
    nabla_c(&[
        "--library",
        data("sums.fut").to_str().expect("UTF-8"),
        "-o",
        lib.to_str().expect("UTF-8"),
    ]);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let exe = d.join("null_args");
    let o = Command::new(&cc)
        .arg("-I")
        .arg(&d)
        .arg(data("null_args.c"))
        .arg(d.join("sums.c"))
        .args(["-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("the C compiler runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run_limited(&exe, &[], b"");
    assert!(o.status.success(), "{:?} {}", o.status, text(&o.stderr));
    let got = text(&o.stdout);
    for want in [
        "input: 1: Error: entry point argument 0 is NULL",
        "output: 1: Error: entry point output 0 is NULL",
        "new: 1: Error: the data pointer of a new array is NULL",
        "new empty: 0: (no error)",
        "values: 1: Error: the destination passed to values is NULL",
        "values of NULL: 1: Error: the array passed to values is NULL",
        "shape: 1: Error: the array passed to shape is NULL",
        "index: 1: Error: the destination passed to index is NULL",
        "limit: 3: Error: out of memory: 800000000 bytes for an array of shape [100000000]",
        "within: 0: (no error)",
        "shape after: 1000: (no error)",
        "dot = 14",
    ] {
        assert!(got.contains(want), "lacks {want:?}:\n{got}");
    }
}

#[test]
fn the_c_api_restores_opaque_values_with_hostile_dimensions_cleanly() {
    // futhark_restore_* of an opaque value reads the stored dimensions of
    // its components: a product past 2^64 was a signed overflow (found by
    // reading the code while writing the runtime's fuzz target); UBSan
    // (not ASan, which cannot run under the address-space limit) makes it
    // a crash, so the fix shows as a clean error here.
    let d = scratch("opaque-restore");
    let lib = d.join("opaque_restore");
    nabla_c(&[
        "--library",
        data("opaque_restore.fut").to_str().expect("UTF-8"),
        "-o",
        lib.to_str().expect("UTF-8"),
    ]);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let exe = d.join("opaque_restore_driver");
    let o = Command::new(&cc)
        .args([
            "-O1",
            "-g",
            "-fsanitize=undefined",
            "-fno-sanitize-recover=undefined",
        ])
        .arg("-I")
        .arg(&d)
        .arg(data("opaque_restore.c"))
        .arg(d.join("opaque_restore.c"))
        .args(["-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("the C compiler runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run_limited(&exe, &[], b"");
    assert!(o.status.success(), "{:?} {}", o.status, text(&o.stderr));
    let got = text(&o.stdout);
    let refused =
        "NULL: Error: cannot restore an opaque value: the data does not have its type: rows -1";
    for want in [
        "2x3: value: (no error): rows 9".to_string(),
        format!("overflow: {refused}"),
        format!("overflow bytes: {refused}"),
        "empty huge x 0: value: (no error): rows 4611686018427387911".to_string(),
        "empty 0 x huge: value: (no error): rows 7".to_string(),
    ] {
        assert!(got.contains(&want), "lacks {want:?}:\n{got}");
    }
}

// ---- nabla gradbench -----------------------------------------------------

/// The response lines of `nabla gradbench` on `input`, under the limits.
fn gradbench(input: &[u8]) -> Vec<Json> {
    gradbench_with(&[], input)
}

/// The response lines of `nabla gradbench OPTIONS` on `input`, under the
/// limits.
fn gradbench_with(options: &[&str], input: &[u8]) -> Vec<Json> {
    let mut args = vec!["gradbench"];
    args.extend_from_slice(options);
    let o = run_limited(nabla_bin(), &args, input);
    assert!(o.status.success(), "{:?}: {}", o.status, text(&o.stderr));
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON response"))
        .collect()
}

#[test]
fn gradbench_answers_messages_with_numbers_out_of_range() {
    let rs = gradbench(&std::fs::read(data("out_of_range.jsonl")).expect("read"));
    let ids: Vec<i64> = rs
        .iter()
        .map(|r| r["id"].as_i64().expect("an id"))
        .collect();
    assert_eq!(ids, [1, 27, 28, 29, 9999], "{rs:?}");
    for r in &rs[1..3] {
        assert_eq!(r["success"], Json::Bool(false), "{r}");
        assert!(
            r["error"]
                .as_str()
                .expect("an error")
                .contains("number out of range"),
            "{r}"
        );
    }
}

#[test]
fn gradbench_refuses_a_ba_input_too_large_for_memory_at_once() {
    let start = Instant::now();
    let rs = gradbench(&std::fs::read(data("ba_max_sizes.jsonl")).expect("read"));
    assert_eq!(rs.len(), 2, "{rs:?}");
    assert_eq!(rs[0]["success"], Json::Bool(false), "{}", rs[0]);
    let e = rs[0]["error"].as_str().expect("an error");
    assert!(
        e.starts_with("out of memory: 7600000000 bytes for the ba input"),
        "{e}"
    );
    assert_eq!(rs[1]["output"].as_f64(), Some(9.0), "{}", rs[1]);
    assert!(start.elapsed() < Duration::from_secs(100));
}

#[test]
fn gradbench_answers_evaluations_that_cannot_finish_and_serves_on() {
    // Issue 34's 05_gradbench_nonterminating: particle's Euler loop never
    // ends for these w, llsq with n = 10^12 and ode with s = 10^15 run for
    // hours. With the default time limit of executables (one minute, no
    // `--eval-timeout`), each is answered `success: false` within it, and
    // the next message at once. The four sessions run side by side (the
    // limit is wall-clock time); `run_limited` kills a session after two
    // minutes, which fails the status check.
    let sessions: Vec<_> = [
        "nonterminating_particle_w1e308.jsonl",
        "nonterminating_particle_w-1.jsonl",
        "nonterminating_llsq_n1e12.jsonl",
        "nonterminating_ode_s1e15.jsonl",
    ]
    .into_iter()
    .map(|file| {
        std::thread::spawn(move || {
            let rs = gradbench(&std::fs::read(data(file)).expect("read"));
            (file, rs)
        })
    })
    .collect();
    for session in sessions {
        let (file, rs) = session.join().expect("a session");
        let ids: Vec<i64> = rs
            .iter()
            .map(|r| r["id"].as_i64().expect("an id"))
            .collect();
        assert_eq!(ids, [1, 2, 9999], "{file}: {rs:?}");
        assert_eq!(rs[1]["success"], Json::Bool(false), "{file}: {}", rs[1]);
        let e = rs[1]["error"].as_str().expect("an error");
        assert!(
            e.contains("the evaluation's time limit is 60 s") || e.contains("out of memory"),
            "{file}: {e}"
        );
    }
}

#[test]
fn gradbench_clamps_a_huge_min_runs() {
    // Issue 34's 07_gradbench_min_runs_huge: min_runs = 10^12 makes 10^6
    // runs (protocol::MAX_RUNS), not 10^12.
    let rs = gradbench(&std::fs::read(data("min_runs_1e12.jsonl")).expect("read"));
    assert_eq!(rs.len(), 3, "{} answers", rs.len());
    assert_eq!(rs[1]["success"], Json::Bool(true), "{}", rs[1]["error"]);
    let timings = rs[1]["timings"].as_array().expect("timings");
    assert_eq!(timings.len(), 1_000_000);
    assert_eq!(rs[2]["id"], 9999);
}

/// The children of process `pid` (Linux: from /proc).
fn children(pid: u32) -> Vec<u32> {
    let mut out = vec![];
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
    }
    out
}

/// Whether process `pid` is running (not gone, not a zombie).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().next() != Some("Z"))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Starts `nabla gradbench` on an evaluation that never ends (particle
/// with w = 1e308), waits for its executable to run, stops the tool with
/// `stop`, and checks that the executable and its files are gone.
fn stopping_the_tool_stops_its_child(name: &str, stop: &dyn Fn(&mut std::process::Child)) {
    let tmp = scratch(name);
    let mut command = Command::new(nabla_bin());
    // SIGINT as its default action, even where this test inherited it
    // ignored (a background job of a non-interactive shell does), which
    // the tool would inherit in turn.
    // SAFETY: signal() is async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut tool = command
        .arg("gradbench")
        .env(
            "NABLA_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("nabla-cache"),
        )
        .env("TMPDIR", &tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nabla gradbench starts");
    let mut sin = tool.stdin.take().expect("stdin");
    sin.write_all(
        b"{\"id\":1,\"kind\":\"evaluate\",\"module\":\"particle\",\"function\":\"ff\",\"input\":{\"w\":1e308}}\n",
    )
    .expect("write");
    sin.flush().expect("flush");
    // The executable may have to be compiled first.
    let start = Instant::now();
    let kids = loop {
        let k: Vec<u32> = children(tool.id())
            .into_iter()
            .filter(|&c| {
                std::fs::read_to_string(format!("/proc/{c}/cmdline"))
                    .is_ok_and(|s| s.contains("particle-") && s.contains("\0-e\0ff\0"))
            })
            .collect();
        if !k.is_empty() {
            break k;
        }
        if start.elapsed() > Duration::from_secs(300) || tool.try_wait().ok().flatten().is_some() {
            let _ = tool.kill();
            let mut err = String::new();
            if let Some(mut e) = tool.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            panic!("the executable did not start; the tool's stderr:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(300));
    stop(&mut tool);
    let _ = tool.wait();
    let start = Instant::now();
    while kids.iter().any(|&k| running(k)) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the executable outlived the tool"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(sin);
    let mut left = String::new();
    for e in std::fs::read_dir(&tmp).expect("the temp folder").flatten() {
        left.push_str(&format!("{} ", e.file_name().to_string_lossy()));
    }
    assert!(left.is_empty(), "files left behind: {left}");
}

#[test]
fn the_gradbench_child_dies_with_the_tool_on_sigkill() {
    stopping_the_tool_stops_its_child("orphan-kill", &|tool| {
        let _ = tool.kill();
    });
}

#[test]
fn the_gradbench_child_dies_with_the_tool_on_sigint() {
    stopping_the_tool_stops_its_child("orphan-int", &|tool| {
        let st = Command::new("kill")
            .args(["-INT", &tool.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(st.success());
    });
}

#[test]
fn the_gradbench_child_dies_with_the_tool_on_sigterm() {
    stopping_the_tool_stops_its_child("orphan-term", &|tool| {
        let st = Command::new("kill")
            .args(["-TERM", &tool.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(st.success());
    });
}

// ---- the generated value reader and the server's command parser, fuzzed ----

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A mutation of `input`: bytes flipped, inserted, deleted or duplicated,
/// or an 8-byte field (a binary value's dimension) set to an extreme.
fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if at < v.len() => v[at] ^= 1 << rng.below(8),
            1 => v.insert(at, rng.next() as u8),
            2 if at < v.len() => {
                v.remove(at);
            }
            3 => {
                let end = (at + rng.below(16)).min(v.len());
                let chunk = v[at..end].to_vec();
                v.splice(at..at, chunk);
            }
            4 if at + 8 <= v.len() => {
                let x: i64 = [0, -1, 1, i64::MAX, i64::MIN, 1 << 62, 3_037_000_500][rng.below(7)];
                v[at..at + 8].copy_from_slice(&x.to_le_bytes());
            }
            _ => {
                let words = [
                    " ", "\"", "[", "]", "empty(", "[0]", "i64", "f32", "b", "\u{2}", "-",
                ];
                let w = words[rng.below(words.len())].as_bytes();
                v.splice(at..at, w.iter().copied());
            }
        }
    }
    v
}

/// A binary value's bytes: header, dimensions, elements.
fn binary(tag: &str, dims: &[i64], elems: &[u8]) -> Vec<u8> {
    let mut v = vec![b'b', 2, dims.len() as u8];
    v.extend_from_slice(tag.as_bytes());
    for d in dims {
        v.extend_from_slice(&d.to_le_bytes());
    }
    v.extend_from_slice(elems);
    v
}

#[test]
fn the_servers_value_reader_and_command_parser_survive_mutated_input() {
    let d = scratch("fuzz-server");
    let exe = d.join("fuzz_types");
    // Under the sanitizers: a memory error is a report, not luck.
    let o = Command::new(nabla_bin())
        .args(["c", "--server"])
        .arg(data("fuzz_types.fut"))
        .arg("-o")
        .arg(&exe)
        .env(
            "CFLAGS",
            "-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined",
        )
        .output()
        .expect("nabla runs");
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Seed values, their types, and calls on them (X: the restored names).
    type Seed = (Vec<u8>, &'static [&'static str], &'static [&'static str]);
    let seeds: Vec<Seed> = vec![
        (
            b"[[1f32, 2f32], [3f32, 4f32]]".to_vec(),
            &["[][]f32"],
            &["call sum2 rK X0"],
        ),
        (
            b"empty([0][3]f32)".to_vec(),
            &["[][]f32"],
            &["call sum2 rK X0"],
        ),
        (
            b"[[[1u8]], [[2u8]]] [true, false] 42i64".to_vec(),
            &["[][][]u8", "[]bool", "i64"],
            &["call depth rK X0", "call count sK X1 X2"],
        ),
        (
            b"1.5f64 -3i32".to_vec(),
            &["f64", "i32"],
            &[
                "call mk pK X0 X1",
                "call norm qK pK",
                "project zK pK x",
                "new nK pt X0 X1",
            ],
        ),
        (b"-- a comment\n[true]".to_vec(), &["[]bool"], &["type X0"]),
        (
            binary(" f32", &[2, 2], &[0; 16]),
            &["[][]f32"],
            &["call sum2 rK X0", "shape X0"],
        ),
        (
            binary("  u8", &[1, 1, 3], &[1, 2, 3]),
            &["[][][]u8"],
            &["call depth rK X0"],
        ),
        (binary("bool", &[3], &[0, 1, 2]), &["[]bool"], &["shape X0"]),
        (
            binary(" i64", &[], &7i64.to_le_bytes()),
            &["i64"],
            &["type X0"],
        ),
    ];
    let types = [
        "[][]f32", "[][][]u8", "[]bool", "i64", "f64", "i32", "pt", "bool", "u8",
    ];
    let commands = [
        "call sum2 r v0",
        "free v0 v1",
        "rename v2 w2",
        "kind pt",
        "fields pt",
        "inputs mk",
        "outputs count",
        "entry_points",
        "types",
        "rank [][]f32",
        "elemtype [][][]u8",
        "report",
        "clear",
        "restore f0 \"v 0\" [][]f32",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut session = Vec::new();
    let mut lines = 0;
    for k in 0..400 {
        let file = format!("f{k}");
        let (seed, seed_types, calls) = &seeds[rng.below(seeds.len())];
        let value = if rng.below(3) == 0 {
            seed.clone()
        } else {
            mutate(&mut rng, seed)
        };
        std::fs::write(d.join(&file), &value).expect("write");
        // Mostly the seed's types (so that unmutated values are read and
        // called on), sometimes any.
        let mut line = format!("restore {file}");
        let mut names = vec![];
        for (j, t) in seed_types.iter().enumerate() {
            let t = if rng.below(8) == 0 {
                types[rng.below(types.len())]
            } else {
                t
            };
            line.push_str(&format!(" x{k}_{j} {t}"));
            names.push(format!("x{k}_{j}"));
        }
        let mut cmds = vec![line.into_bytes()];
        for c in calls.iter() {
            let mut c = c.replace('K', &k.to_string());
            for (j, n) in names.iter().enumerate() {
                c = c.replace(&format!("X{j}"), n);
            }
            cmds.push(c.into_bytes());
        }
        for _ in 0..2 {
            let c = commands[rng.below(commands.len())].as_bytes();
            cmds.push(if rng.below(2) == 0 {
                c.to_vec()
            } else {
                mutate(&mut rng, c)
            });
        }
        if rng.below(2) == 0 {
            cmds.push(format!("free {}", names.join(" ")).into_bytes());
        }
        if k % 50 == 0 {
            // A line of many words, quoted and not.
            let many: Vec<String> = (0..3000).map(|i| format!("\"w {i}\" v{i}")).collect();
            cmds.push(format!("free {}", many.join(" ")).into_bytes());
        }
        for mut c in cmds {
            c.retain(|&b| b != b'\n');
            // Never a command that may write files (`store`, perhaps quoted).
            if !c.starts_with(b"restore ") && c.windows(5).any(|w| w == b"store") {
                continue;
            }
            session.extend_from_slice(&c);
            session.push(b'\n');
            lines += 1;
        }
    }
    let mut child = Command::new(&exe)
        .args(["--memory-limit", "256M"])
        .current_dir(&d)
        .env("ASAN_OPTIONS", "allocator_may_return_null=1:detect_leaks=1")
        .env("UBSAN_OPTIONS", "print_stacktrace=1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut sin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = sin.write_all(&session);
    });
    let out = child.wait_with_output().expect("the server ends");
    let _ = writer.join();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(
        !err.contains("Sanitizer") && !err.contains("runtime error"),
        "{err}"
    );
    let replies = text(&out.stdout);
    let oks = replies.lines().filter(|l| *l == "%%% OK").count();
    assert_eq!(oks, lines + 1, "every command answered once");
    // The inputs reach both outcomes: values read and called on, and
    // values refused.
    let calls = replies
        .lines()
        .filter(|l| l.starts_with("runtime:"))
        .count();
    let refused = replies.matches("cannot read input").count();
    eprintln!("{lines} commands, {calls} calls, {refused} values refused");
    assert!(
        calls > 10 && refused > 10,
        "{calls} calls, {refused} refused"
    );
}
