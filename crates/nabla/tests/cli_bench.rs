//! `nabla bench` on a program written to a temporary folder: one line per
//! entry point and benchmarked dataset in `futhark bench`'s shape, the JSON
//! file in its layout with RUNS runtimes each, and the datasets that are
//! not benchmarked (an expected error, `notest`, `nobench`) left out.

use serde_json::Value as Json;
use std::path::PathBuf;
use std::process::Command;

const PROGRAM: &str = r#"-- ==
-- entry: total
-- "three" input { [1.0, 2.0, 3.0] } output { 6.0 }
-- input { [4.0f64] }
-- input { [1.0] } error: never
-- notest input { [2.0] }
-- nobench input { [3.0] }

entry total (xs: []f64) : f64 = f64.sum xs

-- ==
-- entry: twice
-- random input { [1000]f64 }

entry twice (xs: []f64) : []f64 = map (* 2.0) xs
"#;

/// A fresh folder under Cargo's test folder holding `prog.fut`.
fn program_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("prog.fut"), PROGRAM).unwrap();
    dir
}

/// Runs `nabla bench ARGS prog.fut` in `dir`; returns stdout.
fn bench(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("bench")
        .args(args)
        .arg("prog.fut")
        .current_dir(dir)
        .output()
        .expect("cannot run nabla");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "nabla bench failed: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Checks the printed lines and the JSON file of one backend.
fn check(backend: &str) {
    let dir = program_dir(&format!("bench-{backend}"));
    let stdout = bench(
        &dir,
        &[
            &format!("--backend={backend}"),
            "-r",
            "4",
            "--json",
            "out.json",
        ],
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let line = regex::Regex::new(
        r"^prog\.fut:(total|twice) \(dataset (.+)\): +\d+µs \(RSD \d+\.\d\d; min: \d+, max: \d+\)$",
    )
    .unwrap();
    let mut seen = Vec::new();
    for l in &lines {
        let caps = line.captures(l).unwrap_or_else(|| panic!("bad line {l:?}"));
        seen.push(format!("{}/{}", &caps[1], &caps[2]));
    }
    assert_eq!(
        seen,
        [
            "total/three",
            "total/#1 (\"[4.0f64]\")",
            "twice/#0 (\"[1000]f64\")"
        ]
    );
    let json: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    let obj = json.as_object().unwrap();
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    assert_eq!(keys, ["prog.fut:total", "prog.fut:twice"]);
    let total = obj["prog.fut:total"]["datasets"].as_object().unwrap();
    assert_eq!(total.len(), 2, "{json}");
    for (_, d) in total
        .iter()
        .chain(obj["prog.fut:twice"]["datasets"].as_object().unwrap())
    {
        let runtimes = d["runtimes"].as_array().unwrap();
        assert_eq!(runtimes.len(), 4, "{d}");
        assert!(runtimes.iter().all(Json::is_u64), "{d}");
        assert_eq!(d["bytes"], 0);
        assert_eq!(d["stderr"], "");
    }
}

#[test]
fn bench_compiled() {
    check("c");
}

#[test]
fn bench_interpreted() {
    check("interp");
}

/// `-e` keeps one entry point; a failing dataset is an error.
#[test]
fn bench_one_entry_and_a_failing_run() {
    let dir = program_dir("bench-entry");
    let stdout = bench(&dir, &["-e", "twice", "-r", "2"]);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("prog.fut:twice (dataset #0"), "{stdout}");
    std::fs::write(
        dir.join("bad.fut"),
        "-- ==\n-- input { 0i64 }\nentry main (i: i64) : i64 = [1i64, 2][i + 5]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .args(["bench", "bad.fut"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.fut"), "{stderr}");
    assert!(stderr.to_lowercase().contains("index"), "{stderr}");
}
