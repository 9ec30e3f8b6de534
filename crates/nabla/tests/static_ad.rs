//! Static forward-mode AD (crate nabla-ad, the `ad` pass) checked against
//! the interpreter's dynamic AD, against finite differences of the primal,
//! and over the whole corpus.

use nabla::{compile_with, CompileOptions, Pipeline};
use nabla_ir::{Exp, Nested, Program};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Number of `jvp`s anywhere in the program.
fn count_jvps(prog: &Program) -> usize {
    let mut n = 0;
    for f in &prog.functions {
        let mut stack = vec![&f.body];
        while let Some(b) = stack.pop() {
            for s in &b.stms {
                if matches!(s.exp, Exp::Jvp { .. }) {
                    n += 1;
                }
                s.exp.for_each_nested(|x| match x {
                    Nested::Body(nb) => stack.push(nb),
                    Nested::Lambda(l) => stack.push(&l.body),
                });
            }
        }
    }
    n
}

/// `nabla test --ad=static --validate tests/` passes everything, as the
/// dynamic AD does (the corpus test checks the dynamic side).
#[test]
fn corpus_passes_with_static_ad() {
    let o = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("test")
        .arg("--ad=static")
        .arg("--validate")
        .arg(repo().join("tests"))
        .output()
        .expect("start nabla");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let last = out.lines().last().unwrap_or("");
    let nums: Vec<usize> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse().ok())
        .collect();
    assert_eq!(nums.len(), 2, "no summary line: {out}");
    assert!(nums[0] >= 600, "too few tests ran: {last}");
    assert_eq!(nums[1], 0, "failures with --ad=static:\n{out}");
    assert!(o.status.success());
}

/// The static path is taken: every `jvp` of the AD tests that contains no
/// `vjp`, accumulator or `lgamma`/`gamma` is compiled away, and the result
/// validates.
#[test]
fn static_ad_compiles_jvps_away() {
    let dynamic = CompileOptions::new(Pipeline::default_pipeline().validating(true));
    let mut total = 0;
    for (file, at_least, left) in [
        ("constructs.fut", 15, Some(1)),
        ("scalars.fut", 15, Some(2)),
        ("sums.fut", 5, Some(0)),
        ("vector_forms.fut", 3, Some(0)),
        ("nested.fut", 10, None),
    ] {
        let path = repo().join("tests/ad").join(file);
        let mut prog = compile_with(&path, &dynamic)
            .unwrap_or_else(|e| panic!("{file}: {}", e.summary))
            .program;
        let before = count_jvps(&prog);
        let report = nabla_ad::differentiate_with_report(&mut prog)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        nabla_ir::validate_program(&prog).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        assert!(
            report.static_jvps >= at_least,
            "{file}: only {} jvps static ({report:?})",
            report.static_jvps
        );
        let after = count_jvps(&prog);
        assert_eq!(after, report.dynamic_jvps, "{file}: {report:?}");
        assert!(after < before, "{file}");
        if let Some(left) = left {
            assert_eq!(after, left, "{file}: {report:?}");
        }
        total += report.static_jvps;
    }
    assert!(total >= 50, "{total}");
}

const PROGRAM: &str = r#"
def poly (x: f64) = x * x * x - 2 * x

entry map_reduce (x: f64) =
  jvp (\x -> reduce (+) 0 (map (\i -> f64.sin (x * f64.i64 i) + poly x) (iota 7))) x 1

entry scan_last (x: f64) =
  jvp (\x -> let ys = scan (*) 1 (map (\i -> x + f64.i64 i) (iota 5)) in ys[4]) x 1

entry loop_if (x: f64) =
  jvp (\x -> loop acc = x for i < 6 do
               if acc > 1 then f64.sqrt acc + f64.i64 i else acc * acc + x) x 1

entry while_loop (x: f64) =
  jvp (\x -> let (_, y) = loop (k, y) = (0i32, x) while k < 4 do (k + 1, y * 1.5 + f64.exp (-y))
             in y) x 1

entry hist_scatter (x: f64) =
  jvp (\x -> let h = reduce_by_index (replicate 3 x) (+) 0 [0, 2, 2, 1, 5] (map (\i -> x * f64.i64 i) (iota 5))
             let s = scatter (copy h) [1, -1] [x * x, 3]
             in reduce (+) 0 (map2 (*) h s)) x 1

entry update_index (x: f64) =
  jvp (\x -> let a = replicate 4 x
             let a[2] = f64.tanh x * 3
             let b = reverse (rotate 1 a)
             in b[0] * b[1] + b[3] / (1 + x * x)) x 1

entry max_min (x: f64) =
  jvp (\x -> f64.max (x * x) (2 * x) + reduce f64.min 10 (map (\i -> (x - f64.i64 i) ** 2) (iota 4))) x 1

entry calls (x: f64) =
  jvp (\x -> poly (poly x) + poly 3) x 1

entry primal (k: i32) (x: f64) : f64 =
  if k == 0 then reduce (+) 0 (map (\i -> f64.sin (x * f64.i64 i) + poly x) (iota 7))
  else if k == 1 then (let ys = scan (*) 1 (map (\i -> x + f64.i64 i) (iota 5)) in ys[4])
  else if k == 2 then (loop acc = x for i < 6 do if acc > 1 then f64.sqrt acc + f64.i64 i else acc * acc + x)
  else if k == 3 then (let (_, y) = loop (k, y) = (0i32, x) while k < 4 do (k + 1, y * 1.5 + f64.exp (-y)) in y)
  else if k == 4 then (let h = reduce_by_index (replicate 3 x) (+) 0 [0, 2, 2, 1, 5] (map (\i -> x * f64.i64 i) (iota 5))
                       let s = scatter (copy h) [1, -1] [x * x, 3]
                       in reduce (+) 0 (map2 (*) h s))
  else if k == 5 then (let a = replicate 4 x
                       let a[2] = f64.tanh x * 3
                       let b = reverse (rotate 1 a)
                       in b[0] * b[1] + b[3] / (1 + x * x))
  else if k == 6 then f64.max (x * x) (2 * x) + reduce f64.min 10 (map (\i -> (x - f64.i64 i) ** 2) (iota 4))
  else poly (poly x) + poly 3
"#;

fn scalar(v: &nabla_values::Value) -> f64 {
    let s = v.to_string();
    s.trim_end_matches("f64").parse().unwrap_or(f64::NAN)
}

/// On every construct above, at several points: static jvp = dynamic jvp
/// (to rounding), and both agree with central finite differences of the
/// primal where the primal is smooth there.
#[test]
fn static_jvp_agrees_with_dynamic_and_finite_differences() {
    let dir = std::env::temp_dir().join(format!("nabla-static-ad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("constructs.fut");
    std::fs::write(&path, PROGRAM).unwrap();
    let dynamic = compile_with(
        &path,
        &CompileOptions::new(Pipeline::default_pipeline().validating(true)),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered));
    let static_ = compile_with(
        &path,
        &CompileOptions::new(Pipeline::with_static_ad().validating(true)),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered));
    assert_eq!(count_jvps(&dynamic.program), 8);
    assert_eq!(count_jvps(&static_.program), 0, "every jvp is static");
    let entries = [
        "map_reduce",
        "scan_last",
        "loop_if",
        "while_loop",
        "hist_scatter",
        "update_index",
        "max_min",
        "calls",
    ];
    let run = |c: &nabla::Compiled, name: &str, input: &str| -> f64 {
        let r = c
            .run_on_input(name, input.as_bytes())
            .unwrap_or_else(|e| panic!("{name} {input}: {e:?}"));
        scalar(&r[0])
    };
    let mut compared_with_fd = 0;
    for (k, name) in entries.iter().enumerate() {
        for x in [-1.3, -0.4, 0.35, 0.8, 1.7, 2.9] {
            let input = format!("{x:?}f64");
            let d = run(&dynamic, name, &input);
            let s = run(&static_, name, &input);
            assert!(
                (d - s).abs() <= 1e-9 * (1.0 + d.abs()),
                "{name} at {x}: static {s} vs dynamic {d}"
            );
            let h = 1e-6;
            let f = |y: f64| run(&dynamic, "primal", &format!("{k}i32 {y:?}f64"));
            let (lo, mid, hi) = (f(x - h), f(x), f(x + h));
            let fd = (hi - lo) / (2.0 * h);
            // Skip kinks and jumps: the one-sided slopes must agree.
            let (left, right) = ((mid - lo) / h, (hi - mid) / h);
            if (left - right).abs() > 1e-3 * (1.0 + fd.abs()) {
                continue;
            }
            assert!(
                (fd - s).abs() <= 1e-4 * (1.0 + s.abs()),
                "{name} at {x}: static {s} vs finite differences {fd}"
            );
            compared_with_fd += 1;
        }
    }
    assert!(compared_with_fd >= 40, "{compared_with_fd}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every GradBench program goes through the static pipeline and validates
/// (the jvps of `ht`, `particle` and `saddle` become forward-mode code).
#[test]
fn gradbench_programs_compile_with_static_ad() {
    let opts = CompileOptions::new(Pipeline::with_static_ad().validating(true));
    let mut n = 0;
    for entry in std::fs::read_dir(repo().join("gradbench")).expect("gradbench/ exists") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("fut") || !is_program(&path) {
            continue;
        }
        compile_with(&path, &opts).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.rendered));
        n += 1;
    }
    assert!(n >= 12, "{n}");
}

fn is_program(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.contains("entry "))
}
