//! The reliability reproducers of issue 13 (`tests/data/robustness/`, the
//! large ones generated here): each must give a clean, located error, a
//! correct result or a bounded run — never a wrong number, an abort or a
//! hang. Every run is under an address-space limit (`ulimit -v`) so that a
//! regression fails the test instead of eating the machine, and under a
//! generous CPU-time limit (`ulimit -t`, with ten times that of wall-clock
//! time, `timeout`) so that a hang fails it too.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Address-space limit (KiB) of every run: 4 GiB.
const MEMORY_LIMIT_KB: u64 = 4_000_000;

/// CPU-time limit of every run (seconds); far above what a passing run takes.
const CPU_LIMIT_S: u64 = 120;

fn data(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/robustness")
        .join(name);
    assert!(p.exists(), "missing test data {}", p.display());
    p
}

/// A scratch directory for generated programs.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-robust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `nabla ARGS` with `stdin` under the memory and CPU-time limits.
fn nabla(args: &[&str], stdin: &[u8]) -> Output {
    nabla_limited(args, stdin, MEMORY_LIMIT_KB)
}

fn nabla_limited(args: &[&str], stdin: &[u8], memory_kb: u64) -> Output {
    nabla_within(args, stdin, memory_kb, CPU_LIMIT_S)
}

/// Runs `nabla ARGS` under `memory_kb` of address space, killed after
/// `limit_s` seconds of CPU time (a killed run fails the test's status
/// check).
fn nabla_within(args: &[&str], stdin: &[u8], memory_kb: u64, limit_s: u64) -> Output {
    program_within(
        Path::new(env!("CARGO_BIN_EXE_nabla")),
        args,
        stdin,
        memory_kb,
        limit_s,
    )
}

/// Runs `program ARGS` under `memory_kb` of address space, killed after
/// `limit_s` seconds of CPU time (or ten times that of wall-clock time).
fn program_within(
    program: &Path,
    args: &[&str],
    stdin: &[u8],
    memory_kb: u64,
    limit_s: u64,
) -> Output {
    // CPU time, not wall-clock time, bounds a run: on a loaded machine (the
    // fresh-machine check runs the tests at the lowest priority) a run can
    // wait far longer than it computes. The wall-clock limit, ten times
    // longer, only catches a run that hangs without computing.
    let mut script = format!(
        "ulimit -v {memory_kb}; ulimit -t {limit_s}; exec timeout -s KILL {} \"$0\"",
        limit_s * 10
    );
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${i}\""));
    }
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(program)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        // `nabla gradbench` keeps its executables in Cargo's test folder.
        .env(
            "NABLA_CACHE_DIR",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("nabla-cache"),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nabla");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs reproducer `stem` (`stem.fut`, input `stem.in` or `1`).
fn run_repro(stem: &str, extra: &[&str]) -> Output {
    let fut = data(&format!("{stem}.fut"));
    let input_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/robustness")
        .join(format!("{stem}.in"));
    let input = std::fs::read(&input_path).unwrap_or_else(|_| b"1".to_vec());
    let mut args = vec!["run", fut.to_str().unwrap()];
    args.extend_from_slice(extra);
    nabla(&args, &input)
}

/// Asserts a clean failure: exit status 1 (not a signal), no panic, and
/// stderr containing every one of `needles`.
fn assert_clean_error(o: &Output, needles: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "expected exit status 1, got {:?}; stderr:\n{err}",
        o.status
    );
    assert!(!err.contains("panicked"), "panic: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
}

fn assert_output(o: &Output, expected: &str) {
    let err = text(&o.stderr);
    assert!(o.status.success(), "failed ({:?}): {err}", o.status);
    assert_eq!(text(&o.stdout).trim(), expected, "stderr: {err}");
}

// ---- no silent wrong answers ---------------------------------------------

#[test]
fn coercion_to_compound_size_is_checked() {
    let o = run_repro("wrong_unchecked_coercion", &[]);
    assert_clean_error(
        &o,
        &[
            "value of shape [2] cannot match shape of type \"[6]i32\"",
            "wrong_unchecked_coercion.fut:1:47",
        ],
    );
}

#[test]
fn split_of_coerced_array_is_checked() {
    let o = run_repro("wrong_unchecked_split_coercion", &[]);
    assert_clean_error(
        &o,
        &[
            "value of shape [2] cannot match shape of type \"[3]i32\"",
            ".fut:1:48",
        ],
    );
}

#[test]
fn entry_argument_must_agree_with_repeated_size() {
    let o = run_repro("wrong_nonsquare_entry_arg", &[]);
    assert_clean_error(&o, &["parameter x", "size n", ".fut:1:14"]);
    let f = data("wrong_nonsquare_entry_arg.fut");
    let ok = nabla(&["run", f.to_str().unwrap()], b"[[1,2],[3,4]]");
    assert_output(&ok, "2i64");
}

#[test]
fn slices_with_extreme_strides_follow_futhark() {
    let f = data("wrong_slice_extreme_stride.fut");
    let f = f.to_str().unwrap();
    let cases = [
        ("-9223372036854775808i64", "[3i32]"),
        ("9223372036854775807i64", "[1i32]"),
        ("-9223372036854775807i64", "[3i32]"),
        ("-1i64", "[3i32, 2i32, 1i32]"),
        ("2i64", "[1i32, 3i32]"),
        ("-2i64", "[3i32, 1i32]"),
    ];
    for (stride, expected) in cases {
        let o = nabla(&["run", f], format!("[1,2,3] {stride}").as_bytes());
        assert_output(&o, expected);
    }
    let empty = nabla(&["run", f], b"empty([0]i32) -9223372036854775808i64");
    assert_output(&empty, "empty([0]i32)");
}

#[test]
fn duplicate_entry_points_are_an_error() {
    let o = run_repro("odd_duplicate_entry", &[]);
    assert_clean_error(
        &o,
        &[
            "Duplicate definition of value `main`",
            "previously defined here",
        ],
    );
}

/// Dynamic AD: a zero adjoint is symbolic, never multiplied by an infinite
/// or NaN partial, so `vjp` agrees with `jvp`.
#[test]
fn vjp_agrees_with_jvp_through_infinite_partials() {
    let f = data("ad_vjp_nan_vs_jvp_inf.fut");
    let f = f.to_str().unwrap();
    for ad in ["--ad=dynamic", "--ad=static"] {
        for entry in ["v", "j"] {
            let o = nabla(&["run", f, "-e", entry, ad], b"1.0");
            assert_output(&o, "f64.inf");
        }
    }
    let g = data("ad_vjp_nan_vs_jvp_inf_generated.fut");
    let g = g.to_str().unwrap();
    for ad in ["--ad=dynamic", "--ad=static"] {
        for entry in ["df_vjp", "df_jvp"] {
            let o = nabla(&["run", g, "-e", entry, ad], b"-1.5422045845770604");
            assert_output(&o, "f64.inf");
        }
    }
}

/// The reproducers that are programs, through the compiled surface: each
/// executable (`nabla c`) gives what the interpreter gives — the same
/// output, or a clean error (status 1) where the interpreter gives one —
/// under the same limits. (`hang_while_true` never ends in either; the
/// Ctrl-C test covers it. The large generated programs are front-end
/// reproducers, the same in both. `oom_abort_iota` is not one for
/// executables: they fuse `iota n` into the sum and allocate nothing, so
/// n = 10^12 is a loop of 10^12 steps with the right (wrapped) result,
/// where the interpreter refuses to build the array; see
/// `huge_iota_sum_through_an_executable_allocates_nothing`.)
#[test]
fn program_reproducers_give_the_same_through_executables() {
    let dir = scratch("compiled");
    // (stem, entry, inputs): `None` is the reproducer's own input.
    let cases: &[(&str, &str, &[Option<&str>])] = &[
        ("wrong_unchecked_coercion", "main", &[None]),
        ("wrong_unchecked_split_coercion", "main", &[None]),
        (
            "wrong_nonsquare_entry_arg",
            "main",
            &[None, Some("[[1,2],[3,4]]")],
        ),
        (
            "wrong_slice_extreme_stride",
            "main",
            &[
                None,
                Some("[1,2,3] 9223372036854775807i64"),
                Some("[1,2,3] -9223372036854775807i64"),
                Some("[1,2,3] -2i64"),
                Some("empty([0]i32) -9223372036854775808i64"),
            ],
        ),
        ("ad_vjp_nan_vs_jvp_inf", "v", &[Some("1.0")]),
        ("ad_vjp_nan_vs_jvp_inf", "j", &[Some("1.0")]),
        (
            "ad_vjp_nan_vs_jvp_inf_generated",
            "df_vjp",
            &[Some("-1.5422045845770604")],
        ),
        (
            "ad_vjp_nan_vs_jvp_inf_generated",
            "df_jvp",
            &[Some("-1.5422045845770604")],
        ),
        ("oom_abort_replicate", "main", &[None]),
        ("oom_abort_doubling_loop", "main", &[None]),
        ("oom_abort_vjp_long_while", "main", &[None]),
        ("hang_map_over_empty_rows", "main", &[None]),
        ("hang_replicate_empty_rows", "main", &[None]),
        ("hang_mem_tabulate_2d", "main", &[None]),
    ];
    for (stem, entry, inputs) in cases {
        // The limit of the tabulate_2d test: the interpreter reaches it
        // sooner. The vjp's checkpoints (400 MB) fit in it for executables,
        // which then give the result (the interpreter's tape does not):
        // a lower one makes both refuse them.
        let memory_kb = if *stem == "oom_abort_vjp_long_while" {
            600_000
        } else {
            1_200_000
        };
        let fut = data(&format!("{stem}.fut"));
        let exe = dir.join(stem);
        if !exe.exists() {
            let o = nabla(
                &["c", fut.to_str().unwrap(), "-o", exe.to_str().unwrap()],
                b"",
            );
            assert!(o.status.success(), "nabla c {stem}: {}", text(&o.stderr));
        }
        for input in inputs.iter() {
            let input = match input {
                Some(i) => i.as_bytes().to_vec(),
                None => std::fs::read(data(&format!("{stem}.in"))).unwrap(),
            };
            let what = format!("{stem} -e {entry} < {}", text(&input));
            let want = nabla_within(
                &["run", fut.to_str().unwrap(), "-e", entry],
                &input,
                memory_kb,
                CPU_LIMIT_S,
            );
            let got = program_within(&exe, &["-e", entry], &input, memory_kb, CPU_LIMIT_S);
            if want.status.success() {
                assert!(got.status.success(), "{what}: {}", text(&got.stderr));
                assert_eq!(text(&got.stdout), text(&want.stdout), "{what}");
            } else {
                assert_clean_error(&want, &[]);
                assert_clean_error(&got, &["Error: "]);
                for kind in ["out of memory", "cannot match"] {
                    assert!(
                        !text(&want.stderr).contains(kind) || text(&got.stderr).contains(kind),
                        "{what}: the interpreter says {kind:?}, the executable:\n{}",
                        text(&got.stderr)
                    );
                }
            }
        }
    }
}

// ---- no aborts: allocation failures are located errors --------------------

/// A clean out-of-memory error: exit status 1, the message, the span.
fn assert_out_of_memory(o: &Output, span: &str) {
    assert_clean_error(o, &["out of memory: ", " bytes for ", span]);
}

#[test]
fn huge_replicate_is_an_out_of_memory_error() {
    let o = run_repro("oom_abort_replicate", &[]);
    assert_out_of_memory(&o, "oom_abort_replicate.fut:1:35");
}

#[test]
fn huge_iota_is_an_out_of_memory_error() {
    let o = run_repro("oom_abort_iota", &[]);
    assert_out_of_memory(&o, "oom_abort_iota.fut:1:36");
}

/// `oom_abort_iota` (`i64.sum (iota n)`) through an executable: the C
/// backend fuses the `iota` into the sum, a vectorised loop that allocates
/// nothing, so the answer is the right sum — wrapped around as `i64`
/// arithmetic is — in time proportional to n: about 66 s of processor time
/// for the reproducer's n = 10^12 (10^10 take 0.66 s), which is the work
/// itself, not overhead. Under an address-space limit of 100 MB, where the
/// array would need 8 bytes per element: n = 5·10^9 gives the wrapped sum,
/// and n = 10^12 is still running after half a second of processor time
/// (an allocation would have failed at once) with little memory in use;
/// then it is killed.
#[test]
fn huge_iota_sum_through_an_executable_allocates_nothing() {
    const LIMIT_KB: u64 = 100_000;
    let dir = scratch("iota");
    let exe = dir.join("oom_abort_iota");
    let fut = data("oom_abort_iota.fut");
    let o = nabla(
        &["c", fut.to_str().unwrap(), "-o", exe.to_str().unwrap()],
        b"",
    );
    assert!(o.status.success(), "nabla c: {}", text(&o.stderr));

    let n: i64 = 5_000_000_000;
    let wrapped_sum = (n as i128 * (n as i128 - 1) / 2) as i64;
    assert!(
        wrapped_sum < 0,
        "the sum must wrap around for the test to show it"
    );
    let o = program_within(
        &exe,
        &[],
        format!("{n}i64").as_bytes(),
        LIMIT_KB,
        CPU_LIMIT_S,
    );
    assert!(o.status.success(), "{:?}: {}", o.status, text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), format!("{wrapped_sum}i64"));

    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KB}; exec \"$0\""))
        .arg(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the executable");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(data("oom_abort_iota.in")).unwrap())
        .unwrap();
    // Wait until the executable has computed for a while (processor time,
    // not wall-clock time: a busy machine only makes the wait longer): an
    // allocation of the array would have failed at its start.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    let early_exit = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if processor_ticks(child.id()).is_some_and(|t| t >= BUSY_TICKS) {
            break None;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the executable used less than {BUSY_TICKS} ticks of processor time in 300 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    assert!(
        early_exit.is_none(),
        "n = 10^12 ended before computing for {BUSY_TICKS} ticks ({early_exit:?}): {}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let peak_kb: u64 = status
        .expect("the executable's /proc status")
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    assert!(peak_kb < 20_000, "resident memory {peak_kb} kB");
}

/// Processor time after which a running executable has certainly passed its
/// first allocation: half a second at the usual 100 clock ticks per second.
const BUSY_TICKS: u64 = 50;

/// The processor time (user and system, in clock ticks) process `pid` has
/// used so far: fields 14 and 15 of `/proc/PID/stat` (proc(5)), counted
/// after the parenthesised command name. `None` once the process is gone.
fn processor_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.get(stat.rfind(')')? + 1..)?;
    // Field 3 (the state) is the first after the name.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let user: u64 = fields.get(14 - 3)?.parse().ok()?;
    let system: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(user + system)
}

#[test]
fn doubling_concatenation_is_an_out_of_memory_error() {
    // 2^40 elements: the limit is reached well before that under 4 GB.
    let o = run_repro("oom_abort_doubling_loop", &[]);
    assert_out_of_memory(&o, "oom_abort_doubling_loop.fut:1:65");
}

#[test]
fn huge_tabulate_2d_is_an_out_of_memory_error() {
    // 10^8 × 10^8 elements: refused when the first row shows the total
    // (8·10^16 bytes), or earlier under a tight limit; either way a clean
    // out-of-memory error, quickly.
    let f = data("hang_mem_tabulate_2d.fut");
    let o = nabla_limited(
        &["run", f.to_str().unwrap()],
        &std::fs::read(data("hang_mem_tabulate_2d.in")).unwrap(),
        1_200_000,
    );
    assert_clean_error(&o, &["out of memory: ", " bytes for "]);
}

#[test]
fn long_vjp_tape_is_an_out_of_memory_error() {
    let f = data("oom_abort_vjp_long_while.fut");
    // A tighter limit for the slower debug build: the tape fills it sooner.
    let limit_kb = if cfg!(debug_assertions) {
        600_000
    } else {
        1_000_000
    };
    let input = std::fs::read(data("oom_abort_vjp_long_while.in")).unwrap();
    // The dynamic AD's tape, at the vjp.
    let o = nabla_limited(
        &["run", "--ad=dynamic", f.to_str().unwrap()],
        &input,
        limit_kb,
    );
    assert_out_of_memory(&o, "oom_abort_vjp_long_while.fut:1:88");
    // The static AD's checkpoints, at the loop (after counting its
    // iterations).
    let o = nabla_limited(&["run", f.to_str().unwrap()], &input, limit_kb);
    assert_out_of_memory(&o, "oom_abort_vjp_long_while.fut:1:48");
}

#[test]
fn map_over_many_empty_rows_is_refused_quickly() {
    // 10^12 results of 8 bytes: over the per-array limit, refused before
    // any row is visited.
    let o = run_repro("hang_map_over_empty_rows", &[]);
    assert_out_of_memory(&o, "hang_map_over_empty_rows.fut:1:34");
}

#[test]
fn replicating_empty_rows_does_no_work_per_row() {
    let o = run_repro("hang_replicate_empty_rows", &[]);
    assert_output(&o, "9223372036854775807i64");
}

// ---- large generated programs (as make_big.py makes them) -----------------

/// `n` functions, each calling the previous one.
fn call_chain(n: usize) -> String {
    let mut s = String::from("def f0 (x: i32) : i32 = x + 1\n");
    for k in 1..n {
        s.push_str(&format!("def f{k} (x: i32) : i32 = f{} x + 1\n", k - 1));
    }
    s.push_str(&format!("def main (x: i32) : i32 = f{} x\n", n - 1));
    s
}

/// `n` functions, each `k` loops deep around a call of the previous one.
fn deep_call_chain(n: usize, k: usize) -> String {
    let mut s = String::from("def f0 (x: i32) : i32 = x + 1\n");
    for j in 1..n {
        s.push_str(&format!("def f{j} (x: i32) : i32 = "));
        for m in 0..k {
            s.push_str(&format!("loop a{m} = x for i{m} < 1 do "));
        }
        s.push_str(&format!("f{} a{}\n", j - 1, k - 1));
    }
    s.push_str(&format!("def main (x: i32) : i32 = f{} x\n", n - 1));
    s
}

/// Scales a reproducer's size down for debug builds of the binary (whose
/// frames are larger and whose passes are slower).
fn scaled(n: usize) -> usize {
    if cfg!(debug_assertions) {
        n / 5
    } else {
        n
    }
}

fn write_program(test: &str, text: &str) -> PathBuf {
    let dir = scratch(test);
    let p = dir.join("big.fut");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn long_call_chain_does_not_overflow_the_stack() {
    // 70 000 functions: the elaborator used to overflow its stack. The
    // optimiser's budget leaves most calls in place, so the interpreter
    // runs a chain of calls as deep: its native stack grows on the heap,
    // and the call depth limit (deep enough for recursive functions) lies
    // beyond it.
    let n = scaled(70_000);
    let p = write_program("chain70000", &call_chain(n));
    let o = nabla(&["run", p.to_str().unwrap()], b"1");
    assert_output(&o, &format!("{}i32", n + 1));
}

#[test]
fn deeply_nested_call_chain_compiles_and_runs() {
    let p = write_program("deep1000x200", &deep_call_chain(scaled(1000), 200));
    let o = nabla(&["run", p.to_str().unwrap()], b"1");
    assert_output(&o, "2i32");
}

#[test]
fn inliner_stays_within_its_budget_on_call_chains() {
    // Used to take 6-10 GB; the memory limit of the run (4 GB) checks it.
    for n in [5_000, 10_000] {
        let p = write_program(&format!("chain{n}"), &call_chain(scaled(n)));
        let o = nabla(&["run", p.to_str().unwrap()], b"1");
        assert_output(&o, &format!("{}i32", scaled(n) + 1));
    }
}

// ---- runs that can be stopped ---------------------------------------------

/// The JSON lines of a GradBench session's answers.
fn answers(o: &Output) -> Vec<serde_json::Value> {
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON {l:?}: {e}")))
        .collect()
}

/// Runs a GradBench reproducer with each backend (`id` 1 must fail with an
/// error containing one of `needles`, `id` 2 — `hello.square 3` — must
/// still be answered). Executables run under the tool's default time limit
/// (one minute), so the test shows that it bounds an evaluation; the
/// interpreter, whose default is ten minutes, under `--eval-timeout 5`. The
/// runs are under the memory cap and killed after `CPU_LIMIT_S`.
fn gradbench_repro(stem: &str, needles: &[&str]) {
    gradbench_repro_with(&["--backend=c"], stem, needles);
    gradbench_repro_with(&["--backend=interp", "--eval-timeout", "5"], stem, needles);
}

/// [`gradbench_repro`] of several reproducers side by side (the time
/// limits are wall-clock time).
fn gradbench_repros(cases: &[(&'static str, &'static [&'static str])]) {
    let sessions: Vec<_> = cases
        .iter()
        .map(|&(stem, needles)| std::thread::spawn(move || gradbench_repro(stem, needles)))
        .collect();
    for session in sessions {
        if let Err(panic) = session.join() {
            std::panic::resume_unwind(panic);
        }
    }
}

fn gradbench_repro_with(options: &[&str], stem: &str, needles: &[&str]) {
    let input = std::fs::read(data(&format!("{stem}.jsonl"))).unwrap();
    let mut args = vec!["gradbench"];
    args.extend_from_slice(options);
    let o = nabla(&args, &input);
    assert!(o.status.success(), "{:?}: {}", o.status, text(&o.stderr));
    let a = answers(&o);
    assert_eq!(a.len(), 2, "answers: {a:?}; stderr: {}", text(&o.stderr));
    assert_eq!(a[0]["id"], 1);
    assert_eq!(a[0]["success"], false, "{a:?}");
    let err = a[0]["error"].as_str().unwrap_or_default();
    assert!(
        needles.iter().any(|n| err.contains(n)),
        "{options:?}: error {err:?} lacks all of {needles:?}"
    );
    assert_eq!(a[1]["id"], 2);
    assert_eq!(a[1]["success"], true, "{a:?}");
    assert_eq!(a[1]["output"], 9.0);
}

#[test]
fn gradbench_answers_out_of_memory_and_serves_on() {
    // The interpreter says `out of memory: N bytes for …`, the executables
    // `out of memory (allocating N bytes)`. The compiled llsq never stores
    // its `iota n` (the map over it is fused with the sum), so with
    // n = 10^12 it allocates nothing and runs until the time limit stops it.
    gradbench_repros(&[
        (
            "gradbench_abort_llsq_huge_n",
            &["out of memory", "the evaluation's time limit is"],
        ),
        ("gradbench_abort_ba_max_sizes", &["out of memory"]),
    ]);
}

#[test]
fn gradbench_stops_long_evaluations_and_serves_on() {
    // ode's huge step count: static AD's checkpoints for all its steps are
    // refused at once (out of memory); without them the run is stopped.
    gradbench_repros(&[
        ("gradbench_hang_particle_w1e308", &["time limit"]),
        ("gradbench_hang_particle_wneg", &["time limit"]),
        ("gradbench_hang_saddle_huge", &["time limit"]),
        (
            "gradbench_hang_ode_huge_s",
            &["time limit", "out of memory"],
        ),
    ]);
}

/// Waits until `child` has installed its Ctrl-C handler. The `ctrlc`
/// crate installs the signal handler and then starts a thread named
/// `ctrl-c` that runs it, so that thread's presence (in
/// `/proc/PID/task/*/comm`) is the readiness signal. Panics if the child
/// ends first, or if the thread has not appeared after a generous minute.
fn wait_for_ctrl_c_handler(child: &mut std::process::Child) {
    let tasks = PathBuf::from(format!("/proc/{}/task", child.id()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let installed = std::fs::read_dir(&tasks)
            .into_iter()
            .flatten()
            .flatten()
            .any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|name| name.trim_end() == "ctrl-c")
            });
        if installed {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("nabla run ended before installing its Ctrl-C handler: {status:?}");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("nabla run did not install its Ctrl-C handler");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn ctrl_c_stops_a_run_with_a_message() {
    let f = data("hang_while_true.fut");
    let mut child = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .args(["run", f.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nabla");
    child.stdin.take().unwrap().write_all(b"0").unwrap();
    // Wait until the Ctrl-C handler is installed: signalled earlier, the
    // process would die of SIGINT instead of reporting it. From then on
    // the signal sets the interpreter's cancel flag, which stays set, so
    // the run stops at the loop's first (or next) iteration, however late
    // the loop starts.
    wait_for_ctrl_c_handler(&mut child);
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("nabla run did not stop on SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{:?}", o.status);
    let err = text(&o.stderr);
    assert!(
        err.contains("interrupted") && err.contains("hang_while_true.fut:1:27"),
        "{err}"
    );
}

#[test]
fn test_timeout_stops_one_dataset_and_reports_it() {
    // The loop of hang_while_true, on dataset #0 only.
    let dir = scratch("test-timeout");
    let f = dir.join("spin.fut");
    std::fs::write(
        &f,
        "-- ==\n-- input { 0 }\n-- output { 0 }\n-- input { 5 }\n-- output { 5 }\n\
         def main (x: i32) : i32 = if x == 0 then (loop x while true do x + 1) else x\n",
    )
    .unwrap();
    let o = nabla(&["test", "--timeout", "2", f.to_str().unwrap()], b"");
    let out = text(&o.stdout);
    assert!(
        out.contains("#0 (input { 0 })") && out.contains("time limit"),
        "{out}"
    );
    assert!(out.contains("1 passed, 1 failed"), "{out}");
}

// ---- compile time that grows gently ---------------------------------------

/// Generous bound (seconds) on compile-and-run of the generated programs
/// below, which take well under a second; the quadratic and quartic type
/// checker took minutes to hours on them.
const COMPILE_LIMIT_S: u64 = 60;

#[test]
fn many_parameters_type_check_quickly() {
    // 600 parameters took 14 s (about O(n^4)); 2000 would take hours.
    let n = 2000;
    let params: Vec<String> = (0..n).map(|k| format!("(a{k}: i32)")).collect();
    let p = write_program(
        "params2000",
        &format!("def main {} : i32 = a0\n", params.join(" ")),
    );
    let input = vec!["1"; n].join(" ");
    let o = nabla_within(
        &["run", p.to_str().unwrap()],
        input.as_bytes(),
        MEMORY_LIMIT_KB,
        COMPILE_LIMIT_S,
    );
    assert_output(&o, "1i32");
}

#[test]
fn long_array_literals_type_check_quickly() {
    // 30 000 elements took 14 s (O(n^2)); 10^5 more than 20 s.
    let n = 100_000;
    let p = write_program(
        "literal100000",
        &format!(
            "def main (x: f64) : f64 = x + f64.sum [{}]\n",
            vec!["1.5"; n].join(",")
        ),
    );
    let o = nabla_within(
        &["run", p.to_str().unwrap()],
        b"0.0",
        MEMORY_LIMIT_KB,
        COMPILE_LIMIT_S,
    );
    assert_output(&o, "150000.0f64");
}

#[test]
fn long_array_literals_compile_to_a_table() {
    // typeck_slow_array_literal_30000 through `nabla c`: a C statement per
    // element kept gcc -O3 busy for minutes; a literal of constants is one
    // static table now. One with a NaN (not a C constant expression) is
    // still written element by element, and gives what the interpreter
    // gives too.
    let n = 30_000;
    for (name, elements, input, expected) in [
        ("table", vec!["1.5"; n], "0.0", "45000.0f64"),
        (
            "nan",
            [vec!["1.5"; 99], vec!["f64.nan"]].concat(),
            "0.0",
            "f64.nan",
        ),
    ] {
        let p = write_program(
            &format!("literal-{name}"),
            &format!(
                "def main (x: f64) : f64 = x + f64.sum [{}]\n",
                elements.join(",")
            ),
        );
        let exe = p.with_extension("");
        let o = nabla_within(
            &["c", p.to_str().unwrap(), "-o", exe.to_str().unwrap()],
            b"",
            MEMORY_LIMIT_KB,
            COMPILE_LIMIT_S,
        );
        assert!(o.status.success(), "nabla c: {}", text(&o.stderr));
        let c = std::fs::read_to_string(p.with_extension("c")).unwrap();
        assert_eq!(
            c.contains("static const double nb_literal[]"),
            name == "table",
            "{name}: the table is used for literals of finite constants only"
        );
        let got = program_within(&exe, &[], input.as_bytes(), MEMORY_LIMIT_KB, CPU_LIMIT_S);
        assert_output(&got, expected);
        let want = nabla(&["run", p.to_str().unwrap()], input.as_bytes());
        assert_output(&want, expected);
    }
}

#[test]
fn exponential_types_are_an_error() {
    let o = run_repro("exp_type_blowup_dup30", &[]);
    assert_clean_error(&o, &["type of this expression is too large", ".fut:2:"]);
}

#[test]
fn exponential_inlining_of_function_values_is_an_error() {
    let o = run_repro("exp_inline_blowup_twice40", &[]);
    assert_clean_error(&o, &["too large to elaborate", ".fut:1:"]);
}

#[test]
fn long_chains_of_type_abbreviations_are_bounded() {
    // t_k = [1]t_{k-1}: stored expanded, 20 000 of them took 3 GB.
    let mut text = String::from("type t0 = i32\n");
    for k in 1..20_000 {
        text.push_str(&format!("type t{k} = [1]t{}\n", k - 1));
    }
    text.push_str("def main (x: i32) : i32 = x\n");
    let p = write_program("abbrev20000", &text);
    let o = nabla_within(
        &["check", p.to_str().unwrap()],
        b"",
        1_000_000,
        COMPILE_LIMIT_S,
    );
    assert_clean_error(&o, &["at most 1000 dimensions", "big.fut:1002:"]);
}

#[test]
fn the_600_parameter_reproducer_runs() {
    let o = run_repro("typeck_slow_600_params", &[]);
    assert_output(&o, "1i32");
}
