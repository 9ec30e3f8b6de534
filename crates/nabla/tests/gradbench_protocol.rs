//! Whole `nabla gradbench` sessions through the built binary over pipes:
//! start, define, evaluate (with min_runs), analysis, and bad input
//! (malformed lines, missing fields, unknown modules and functions, a
//! failing program), plus `nabla adbench` on ADBench files.

use serde_json::{json, Value as Json};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary with `args` on `stdin`, from directory `cwd`, with the
/// extra environment `env`; returns (status success, stdout, stderr).
/// Fails the test after `limit` instead of hanging.
fn run(
    args: &[&str],
    stdin: &str,
    cwd: &std::path::Path,
    env: &[(&str, &str)],
    limit: u64,
) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nabla"));
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The executables of `nabla gradbench` go to Cargo's test folder
    // unless a test chooses a folder.
    cmd.env(
        "NABLA_CACHE_DIR",
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nabla-cache"),
    );
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("cannot start nabla");
    let mut sin = child.stdin.take().unwrap();
    let input = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = sin.write_all(input.as_bytes());
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).unwrap();
        s
    });
    let ereader = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).unwrap();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(limit) {
            let _ = child.kill();
            panic!("nabla {args:?} did not finish within {limit} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    writer.join().unwrap();
    (
        status.success(),
        reader.join().unwrap(),
        ereader.join().unwrap(),
    )
}

fn lines(s: &str) -> Vec<Json> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

/// A whole `nabla gradbench ARGS` session on `msgs`: the response lines
/// and stderr.
fn session(args: &[&str], msgs: &[String]) -> (Vec<Json>, String) {
    let input = msgs.join("\n") + "\n";
    // From a directory unrelated to the repository.
    let cwd = std::env::temp_dir();
    let mut all = vec!["gradbench"];
    all.extend_from_slice(args);
    let (ok, out, err) = run(&all, &input, &cwd, &[], 300);
    assert!(ok, "nabla gradbench failed: {err}");
    (lines(&out), err)
}

#[test]
fn a_whole_session() {
    whole_session(&[]);
}

#[test]
fn a_whole_session_in_the_interpreter() {
    whole_session(&["--backend=interp"]);
}

/// start, define, evaluate with min_runs and min_seconds, analysis.
fn whole_session(args: &[&str]) {
    let msgs = vec![
        json!({"id": 0, "kind": "start", "eval": "hello"}).to_string(),
        json!({"id": 1, "kind": "define", "module": "hello"}).to_string(),
        json!({"id": 2, "kind": "evaluate", "module": "hello", "function": "square", "input": 3.0}).to_string(),
        json!({"id": 3, "kind": "analysis", "of": 2, "valid": true}).to_string(),
        json!({"id": 4, "kind": "evaluate", "module": "hello", "function": "double", "input": 9.0, "description": "x"}).to_string(),
        json!({"id": 5, "kind": "define", "module": "lse"}).to_string(),
        json!({"id": 6, "kind": "evaluate", "module": "lse", "function": "gradient",
               "input": {"x": [0.0, 0.0], "min_runs": 3, "min_seconds": 0.0}}).to_string(),
        json!({"id": 7, "kind": "evaluate", "module": "lse", "function": "primal",
               "input": {"x": [1.0, 2.0], "min_runs": 1, "min_seconds": 0.05}}).to_string(),
    ];
    let (rs, _) = session(args, &msgs);
    assert_eq!(rs.len(), msgs.len());
    assert_eq!(rs[0], json!({"id": 0, "tool": "nabla"}));
    assert_eq!(rs[1], json!({"id": 1, "success": true}));
    assert_eq!(rs[2]["id"], json!(2));
    assert_eq!(rs[2]["success"], json!(true));
    assert_eq!(rs[2]["output"], json!(9.0));
    assert_eq!(rs[2]["timings"].as_array().unwrap().len(), 1);
    assert_eq!(rs[2]["timings"][0]["name"], json!("evaluate"));
    assert_eq!(rs[3], json!({"id": 3}));
    assert_eq!(rs[4]["output"], json!(18.0));
    assert_eq!(rs[5], json!({"id": 5, "success": true}));
    assert_eq!(rs[6]["output"], json!([0.5, 0.5]));
    assert_eq!(rs[6]["timings"].as_array().unwrap().len(), 3);
    // Runs until 0.05 s have passed: several runs, adding up to ≥ 0.05 s.
    let ts = rs[7]["timings"].as_array().unwrap();
    assert!(ts.len() > 1);
    let lse = 2.0f64 + (1.0 + (-1.0f64).exp()).ln();
    assert!((rs[7]["output"].as_f64().unwrap() - lse).abs() < 1e-12);
}

#[test]
fn bad_input_is_answered_not_fatal() {
    bad_input(&[]);
}

#[test]
fn bad_input_is_answered_not_fatal_in_the_interpreter() {
    bad_input(&["--backend=interp"]);
}

/// Every bad message gets `success: false` (or no answer without an id),
/// and the session goes on.
fn bad_input(args: &[&str]) {
    let msgs = vec![
        "this is not json".to_string(),
        json!({"kind": "start"}).to_string(),
        json!({"id": 1, "kind": "define", "module": "nosuch"}).to_string(),
        json!({"id": 2, "kind": "define"}).to_string(),
        json!({"id": 3, "kind": "evaluate", "module": "lse", "function": "primal"}).to_string(),
        json!({"id": 4, "kind": "evaluate", "module": "lse", "function": "nosuch", "input": {"x": [1.0]}}).to_string(),
        json!({"id": 5, "kind": "evaluate", "module": "lse", "function": "primal", "input": {"y": [1.0]}}).to_string(),
        json!({"id": 6, "kind": "evaluate", "module": "gmm", "function": "objective", "input": {"x": [[1.0], [2.0, 3.0]]}}).to_string(),
        // Points and centroids of different dimensions: a run-time size error.
        json!({"id": 7, "kind": "evaluate", "module": "kmeans", "function": "cost",
               "input": {"points": [[1.0, 2.0]], "centroids": [[1.0]]}}).to_string(),
        json!({"id": 8}).to_string(),
        "".to_string(),
        json!({"id": 9, "kind": "start"}).to_string(),
    ];
    let (rs, err) = session(args, &msgs);
    // No answer to the two lines without an id; every other message gets one.
    let ids: Vec<Json> = rs.iter().map(|r| r["id"].clone()).collect();
    assert_eq!(ids, (1..=9).map(|i| json!(i)).collect::<Vec<_>>());
    assert!(err.contains("not JSON"), "{err}");
    assert!(err.contains("without an \"id\""), "{err}");
    for r in &rs[0..7] {
        assert_eq!(r["success"], json!(false), "{r}");
        assert!(r["error"].as_str().is_some_and(|e| !e.is_empty()), "{r}");
    }
    assert!(rs[0]["error"].as_str().unwrap().contains("nosuch"));
    assert!(rs[4]["error"].as_str().unwrap().contains("x"));
    assert!(rs[5]["error"].as_str().unwrap().contains("rectangular"));
    assert_eq!(rs[7]["success"], json!(false));
    assert_eq!(rs[8], json!({"id": 9, "tool": "nabla"}));
}

/// A run-time error of the executable (a size error in kmeans) is answered
/// with its message and location; the next evaluation succeeds.
#[test]
fn a_failing_executable_does_not_end_the_session() {
    let msgs = vec![
        json!({"id": 1, "kind": "define", "module": "kmeans"}).to_string(),
        json!({"id": 2, "kind": "evaluate", "module": "kmeans", "function": "cost",
               "input": {"points": [[1.0, 2.0]], "centroids": [[1.0]]}})
        .to_string(),
        json!({"id": 3, "kind": "evaluate", "module": "kmeans", "function": "cost",
               "input": {"points": [[1.0, 2.0]], "centroids": [[1.0, 1.0]], "min_runs": 4}})
        .to_string(),
    ];
    let (rs, _) = session(&[], &msgs);
    assert_eq!(rs[0], json!({"id": 1, "success": true}));
    assert_eq!(rs[1]["success"], json!(false), "{}", rs[1]);
    let e = rs[1]["error"].as_str().unwrap();
    assert!(e.contains("kmeans.fut:"), "no location in {e:?}");
    assert_eq!(rs[2]["success"], json!(true), "{}", rs[2]);
    assert_eq!(rs[2]["output"], json!(1.0));
    assert_eq!(rs[2]["timings"].as_array().unwrap().len(), 4);
}

/// A second session finds the executable the first one compiled: the log
/// says so, and the file is the same (same path, unchanged mtime).
#[test]
fn a_second_session_reuses_the_cached_executable() {
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nabla-cache-reuse-test");
    let _ = std::fs::remove_dir_all(&cache);
    let cache_var = cache.to_string_lossy().to_string();
    let msgs = [
        json!({"id": 1, "kind": "define", "module": "lse"}).to_string(),
        json!({"id": 2, "kind": "evaluate", "module": "lse", "function": "primal",
               "input": {"x": [0.0, 0.0]}})
        .to_string(),
    ]
    .join("\n")
        + "\n";
    let one_session = || {
        let (ok, out, err) = run(
            &["gradbench"],
            &msgs,
            &std::env::temp_dir(),
            &[("NABLA_CACHE_DIR", &cache_var)],
            300,
        );
        assert!(ok, "{err}");
        let rs = lines(&out);
        assert_eq!(rs[0], json!({"id": 1, "success": true}));
        assert!((rs[1]["output"].as_f64().unwrap() - 2f64.ln()).abs() < 1e-12);
        err
    };
    let executables = || -> Vec<(PathBuf, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(cache.join("gradbench"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_none())
            .map(|p| {
                let t = std::fs::metadata(&p).unwrap().modified().unwrap();
                (p, t)
            })
            .collect();
        v.sort();
        v
    };
    let first = one_session();
    assert!(first.contains("lse: compiled the executable"), "{first}");
    let built = executables();
    assert_eq!(built.len(), 1, "{built:?}");
    assert!(built[0]
        .0
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("lse-"));
    let second = one_session();
    assert!(
        second.contains("lse: using the cached executable"),
        "{second}"
    );
    assert!(!second.contains("compiled the executable"), "{second}");
    assert_eq!(executables(), built);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn programs_are_found_from_anywhere() {
    // A bogus NABLA_GRADBENCH_DIR falls back to the other locations.
    let msgs = json!({"id": 1, "kind": "define", "module": "saddle"}).to_string() + "\n";
    let cwd = std::env::temp_dir();
    let (ok, out, err) = run(
        &["gradbench"],
        &msgs,
        &cwd,
        &[("NABLA_GRADBENCH_DIR", "/nonexistent")],
        120,
    );
    assert!(ok, "{err}");
    assert_eq!(lines(&out), vec![json!({"id": 1, "success": true})]);
}

/// Every eval's embedded program compiles and has its entry points.
#[test]
fn embedded_programs_define() {
    std::thread::Builder::new()
        .stack_size(nabla::testrunner::runner::STACK_SIZE)
        .spawn(|| {
            let mut s =
                nabla::gradbench::Session::with_programs(nabla::gradbench::Programs::embedded());
            for m in nabla::gradbench::EVALS {
                s.define(m).unwrap_or_else(|e| panic!("{m}: {e}"));
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

/// The repository's test data folder (`testdata/`).
fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn reference(rel: &str) -> Json {
    let p = testdata().join("gradbench").join(rel);
    let t = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str::<Json>(&t).unwrap()["output"].clone()
}

fn adbench(problem: &str, rel: &str) -> Json {
    let file = testdata().join("adbench").join(rel);
    assert!(file.is_file(), "missing test data file {}", file.display());
    let (ok, out, err) = run(
        &["adbench", problem, file.to_str().unwrap()],
        "",
        &std::env::temp_dir(),
        &[],
        300,
    );
    assert!(ok, "nabla adbench {problem} {rel}: {err}");
    serde_json::from_str(out.trim()).expect("one JSON object")
}

/// The ADBench LSTM file is the input of the GradBench lstm pair: the
/// loader must reproduce the reference objective and gradient.
#[test]
fn adbench_lstm_matches_gradbench() {
    let r = adbench("lstm", "lstm/lstm_l2_c1024.txt");
    let tol = nabla::gradbench::json::TOLERANCE;
    nabla::gradbench::json::compare(
        &reference("lstm/objective-lstm_l2_c1024.json"),
        &r["objective"],
        tol,
    )
    .unwrap();
    nabla::gradbench::json::compare(
        &reference("lstm/jacobian-lstm_l2_c1024.json"),
        &r["jacobian"],
        tol,
    )
    .unwrap();
}

/// Likewise for bundle adjustment.
#[test]
fn adbench_ba_matches_gradbench() {
    let r = adbench("ba", "ba/ba1_n49_m7776_p31843.txt");
    let tol = nabla::gradbench::json::TOLERANCE;
    nabla::gradbench::json::compare(
        &reference("ba/objective-ba1_n49_m7776_p31843.json"),
        &r["objective"],
        tol,
    )
    .unwrap();
    nabla::gradbench::json::compare(
        &reference("ba/jacobian-ba1_n49_m7776_p31843.json"),
        &r["jacobian"],
        tol,
    )
    .unwrap();
}

/// Likewise for the hand model (simple variant, smallest file).
#[test]
fn adbench_hand_matches_gradbench() {
    let r = adbench("hand", "hand/simple_small/hand1_t26_c100.txt");
    let tol = nabla::gradbench::json::TOLERANCE;
    nabla::gradbench::json::compare(
        &reference("ht/objective-simple_small-hand1_t26_c100.json"),
        &r["objective"],
        tol,
    )
    .unwrap();
    nabla::gradbench::json::compare(
        &reference("ht/jacobian-simple_small-hand1_t26_c100.json"),
        &r["jacobian"],
        tol,
    )
    .unwrap();
}

/// The element `j[block][idx…]`.
fn slot<'a>(j: &'a mut Json, block: &str, idx: &[usize]) -> &'a mut Json {
    let mut p = &mut j[block];
    for &i in idx {
        p = &mut p[i];
    }
    p
}

/// GMM: no reference output exists for the ADBench files, so the gradient
/// is checked against central finite differences of the objective (run
/// through the same program) in a few coordinates of each block, on the
/// tiny test file and on a 1k file.
#[test]
fn adbench_gmm_gradient_matches_finite_differences() {
    for rel in ["gmm/test.txt", "gmm/1k/gmm_d2_K5.txt"] {
        let r = adbench("gmm", rel);
        let obj = r["objective"].as_f64().expect("a number");
        assert!(obj.is_finite());
        let path = testdata().join("adbench").join(rel);
        let input = nabla::gradbench::adbench::gmm_input(&path).unwrap();
        let jac = r["jacobian"].clone();
        std::thread::Builder::new()
            .stack_size(nabla::testrunner::runner::STACK_SIZE)
            .spawn(move || {
                let mut s = nabla::gradbench::Session::new();
                let f = |s: &mut nabla::gradbench::Session, inp: &Json| {
                    s.evaluate("gmm", "objective", inp)
                        .unwrap()
                        .output
                        .as_f64()
                        .unwrap()
                };
                assert!((f(&mut s, &input) - obj).abs() <= 1e-9 * obj.abs().max(1.0));
                for (block, idx) in [
                    ("alpha", vec![0]),
                    ("alpha", vec![2]),
                    ("mu", vec![1, 0]),
                    ("q", vec![0, 1]),
                    ("l", vec![2, 0]),
                ] {
                    let h = 1e-5;
                    let mut plus = input.clone();
                    let mut minus = input.clone();
                    let x = slot(&mut plus, block, &idx).as_f64().unwrap();
                    *slot(&mut plus, block, &idx) = json!(x + h);
                    *slot(&mut minus, block, &idx) = json!(x - h);
                    let fd = (f(&mut s, &plus) - f(&mut s, &minus)) / (2.0 * h);
                    let mut g = &jac[block];
                    for &i in &idx {
                        g = &g[i];
                    }
                    let g = g.as_f64().unwrap();
                    assert!(
                        (fd - g).abs() <= 1e-4 * fd.abs().max(1.0),
                        "{rel} {block}{idx:?}: AD {g}, finite differences {fd}"
                    );
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
