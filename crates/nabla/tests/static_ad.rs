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
    count(prog, |e| matches!(e, Exp::Jvp { .. }))
}

/// Number of `vjp`s anywhere in the program.
fn count_vjps(prog: &Program) -> usize {
    count(prog, |e| matches!(e, Exp::Vjp { .. }))
}

fn count(prog: &Program, pred: impl Fn(&Exp) -> bool) -> usize {
    let mut n = 0;
    for f in &prog.functions {
        let mut stack = vec![&f.body];
        while let Some(b) = stack.pop() {
            for s in &b.stms {
                if pred(&s.exp) {
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
    // "N passed, M failed, K skipped": the skips are the interpreter's
    // (`compiled`/`auto output` datasets of tests/syntax/test_directives.fut).
    assert_eq!(nums.len(), 3, "no summary line: {out}");
    assert!(nums[0] >= 600, "too few tests ran: {last}");
    assert_eq!(nums[1], 0, "failures with --ad=static:\n{out}");
    assert_eq!(nums[2], 3, "unexpected skips:\n{out}");
    assert!(o.status.success());
}

/// The static path is taken: every `jvp` and `vjp` of the AD tests is
/// compiled away (the report counts none as dynamic), and the result
/// validates.
#[test]
fn static_ad_compiles_jvps_and_vjps_away() {
    let dynamic = CompileOptions::new(Pipeline::dynamic_ad().validating(true));
    let mut total = 0;
    let mut total_vjps = 0;
    for (file, at_least, left) in [
        ("constructs.fut", 15, Some(0)),
        ("scalars.fut", 15, Some(0)),
        ("sums.fut", 5, Some(0)),
        ("vector_forms.fut", 3, Some(0)),
        ("nested.fut", 10, Some(0)),
        ("scatter_rows.fut", 1, Some(0)),
        ("loops_in_maps.fut", 2, Some(0)),
        ("resizing_loops.fut", 1, Some(0)),
        ("histograms.fut", 1, Some(0)),
        ("segmented_scans.fut", 1, Some(0)),
        ("row_operators.fut", 1, Some(0)),
        ("accumulators.fut", 2, Some(0)),
    ] {
        let path = repo().join("tests/ad").join(file);
        let mut prog = compile_with(&path, &dynamic)
            .unwrap_or_else(|e| panic!("{file}: {}", e.summary))
            .program;
        let before = count_jvps(&prog);
        let vjps_before = count_vjps(&prog);
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
        let vjps_after = count_vjps(&prog);
        assert_eq!(vjps_after, report.dynamic_vjps, "{file}: {report:?}");
        assert_eq!(vjps_after, 0, "{file}: every vjp is static ({report:?})");
        assert!(
            vjps_after < vjps_before || vjps_before == 0,
            "{file}: {report:?}"
        );
        total += report.static_jvps;
        total_vjps += report.static_vjps;
    }
    assert!(total >= 50, "{total}");
    assert!(total_vjps >= 40, "{total_vjps}");
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

const REVERSE_PROGRAM: &str = r#"
def poly (x: f64) = x * x * x - 2 * x

def f0 (x: f64) = reduce (+) 0 (map (\i -> f64.sin (x * f64.i64 i) + poly x) (iota 7))
def f1 (x: f64) = loop acc = x for i < 6 do if acc > 1 then f64.sqrt acc + f64.i64 i else acc * acc + x
def f2 (x: f64) = let a = replicate 4 x
                  let a[2] = f64.tanh x * 3
                  let b = reverse (rotate 1 a)
                  let c = b ++ [x, 2 * x]
                  in c[0] * c[1] + c[3] / (1 + x * x) + c[5]
def f3 (x: f64) = f64.max (x * x) (2 * x) + f64.exp (f64.min x 0.5) * f64.log (1 + x * x)
def f4 (x: f64) = let xs = map (\i -> x * f64.i64 i + 1) (iota 5)
                  let ys = loop ys = copy xs for i < 4 do ys with [i + 1] = ys[i] * ys[i + 1] * 0.5
                  in reduce (+) 0 (map (\y -> y * y) ys)
def f5 (x: f64) = let (a, b) = loop (a, b) = (x, 1) for i < 3 do (a * b + 1, f64.sin a) in a + b
def f6 (x: f64) = let (_, y) = loop (k, y) = (0i32, x) while k < 4 do (k + 1, y * 1.5 + f64.exp (-y)) in y
def f7 (x: f64) = reduce f64.max (-100) (map (\i -> f64.sin (x + f64.i64 i)) (iota 5))
                  + reduce f64.min 100 (map (\i -> (x - f64.i64 i) ** 2) (iota 4))
def f8 (x: f64) = let xs = map (\i -> f64.sin (x * f64.i64 (i + 1))) (iota 4)
                  let m = map (\i -> map (\j -> xs[i] * xs[j] + x) (iota 3)) (iota 4)
                  in reduce (+) 0 (map (\i -> xs[(i + 1) % 4] * xs[i] + reduce (+) 0 m[i]) (iota 4))
def f9 (x: f64) = let xs = map (\i -> f64.cos (x + f64.i64 i)) (iota 4)
                  in reduce (+) 0 (map (\i -> if xs[i] > 0 then xs[i] * xs[3 - i] else x * xs[(i + 1) % 4]) (iota 4))
def f10 (x: f64) = let ys = scan (+) 0 (map (\i -> f64.sin (x * f64.i64 i)) (iota 6))
                   in reduce (+) 0 (map2 (*) ys (map f64.i64 (iota 6)))
def f11 (x: f64) = let vs = map (\i -> x * f64.i64 i + x * x) (iota 6)
                   let h = reduce_by_index (replicate 3 x) (+) 0 [0, 2, 2, 1, 7, -1] vs
                   in h[0] * h[1] + h[2] * x
def f12 (x: f64) = let d = map (\i -> f64.exp (x - f64.i64 i)) (iota 5)
                   let s = scatter (copy d) [1, 3, 9] [x * x, 2 * x, x]
                   in s[0] * s[1] + s[3] * s[4] + s[2]
def f13 (x: f64) = reduce (*) 1 (map (\i -> x + f64.i64 i - 1) (iota 4))
                   + reduce (\a b -> a + b + a * b) 0 (map (\i -> f64.sin (x * f64.i64 i)) (iota 5))
def f14 (x: f64) = let ps = scan (*) 1 (map (\i -> x + f64.i64 i - 1) (iota 4))
                   let qs = scan (\a b -> a + b + a * b) 0 (map (\i -> f64.sin (x * f64.i64 i)) (iota 5))
                   in reduce (+) 0 (map2 (*) ps (map f64.i64 (iota 4))) + qs[2] * qs[4]
def f15 (x: f64) = let vs = map (\i -> f64.sin (x * f64.i64 (i + 1))) (iota 7)
                   let hi = hist f64.max (-10) 3 [0, 1, 1, 2, 0, 5, 1] vs
                   let lo = reduce_by_index (map (\i -> x * f64.i64 i - 0.5) (iota 3)) f64.min 10 [2, 2, 0, 1, 0, -1, 1] vs
                   in hi[0] * 2 + hi[1] * hi[2] + lo[0] + lo[1] * 3 - lo[2]
def f16 (x: f64) = let (a, b) = reduce (\(a1, b1) (a2, b2) -> (a1 * a2 - b1 * b2, a1 * b2 + b1 * a2)) (1, 0)
                                       (map (\i -> (f64.cos (x * f64.i64 i), f64.sin (x + f64.i64 i))) (iota 5))
                   in a * 2 + b * b
def tri (x: f64) = unzip3 (scan (\(a1, b1, c1) (a2, b2, c2) -> (a1 * a2, a1 * b2 + b1 * c2, c1 * c2)) (1, 0, 1)
                                (map (\i -> (1 + 0.3 * f64.sin (x * f64.i64 i), x - f64.i64 i, f64.cos (x + f64.i64 i))) (iota 5)))
def f17 (x: f64) = let (ps, qs, rs) = tri x in reduce (+) 0 (map3 (\p q r -> p * q + r) ps qs rs)
def f18 (x: f64) = let (ps, qs, _) = tri x in qs[4] + ps[2] * qs[1]
def f19 (x: f64) = let vs = map (\i -> x + f64.i64 i * 0.5 - 1) (iota 6)
                   let h = reduce_by_index (map (\i -> x * f64.i64 (i + 1)) (iota 3)) (*) 1 [0, 2, 2, 1, 7, 2] vs
                   let k = hist (\a b -> a + b + a * b) 0 3 [1, -1, 0, 1, 1, 2] (map (\v -> f64.sin v) vs)
                   in h[0] + h[1] * h[2] + k[0] * k[1] - k[2]
def f20 (x: f64) = reduce (*) 1 [x, 2, x * x + 1] + reduce (*) 1 [x, 0, x * 3] * 5 + reduce (*) 1 [0, x, 0]
                   + reduce (*) 1 (map (\i -> x - f64.i64 i) (iota 3))
def f21 (x: f64) = let m = map (\i -> map (\j -> f64.sin (x * f64.i64 (i + 2 * j))) (iota 3)) (iota 2)
                   let s = scatter_2d (copy m) [(0, 1), (1, 2), (0, 1), (5, 0), (1, 0)] [x * x, 2 * x, f64.cos x, x, 3]
                   in s[0, 0] * s[0, 1] + s[1, 2] * s[1, 1] + s[1, 0] * x
def f22 (x: f64) = let xss = map (\i -> map (\j -> f64.sin (x * f64.i64 (i + 2 * j + 1))) (iota 2)) (iota 3)
                   let a = reduce (map2 (*)) (replicate 2 1) xss
                   let b = reduce (map2 f64.max) (replicate 2 (-10)) xss
                   let c = reduce (map2 (+)) (replicate 2 0) xss
                   let d = reduce (\u v -> map2 (\p q -> p + q + p * q) v u) (replicate 2 0) xss
                   let e = scan (map2 (*)) (replicate 2 1) xss
                   let h = scan (\u v -> map2 (\p q -> p + q + p * q) v u) (replicate 2 0) xss
                   let k = scan (map2 (+)) (replicate 2 0) xss
                   in a[0] + a[1] * b[0] + b[1] * c[0] + c[1] + d[0] * d[1]
                      + e[2, 0] * e[1, 1] + h[2, 1] * h[1, 0] + k[2, 0] * k[2, 1]

entry grad (k: i32) (x: f64) : f64 =
  if k == 0 then vjp f0 x 1 else if k == 1 then vjp f1 x 1 else if k == 2 then vjp f2 x 1
  else if k == 3 then vjp f3 x 1 else if k == 4 then vjp f4 x 1 else if k == 5 then vjp f5 x 1
  else if k == 6 then vjp f6 x 1 else if k == 7 then vjp f7 x 1 else if k == 8 then vjp f8 x 1 else if k == 9 then vjp f9 x 1
  else if k == 10 then vjp f10 x 1 else if k == 11 then vjp f11 x 1 else if k == 12 then vjp f12 x 1 else if k == 13 then vjp f13 x 1 else if k == 14 then vjp f14 x 1 else if k == 15 then vjp f15 x 1
  else if k == 16 then vjp f16 x 1 else if k == 17 then vjp f17 x 1 else if k == 18 then vjp f18 x 1 else if k == 19 then vjp f19 x 1 else if k == 20 then vjp f20 x 1 else if k == 21 then vjp f21 x 1 else vjp f22 x 1

-- Second derivatives: forward over reverse (the accumulators of f8's
-- reverse mode get tangent accumulators).
entry hess (k: i32) (x: f64) : f64 = jvp (\x -> grad k x) x 1

-- Reverse over reverse (f8 and f9: the outer vjp differentiates the inner
-- one's accumulators).
entry hess_rr (k: i32) (x: f64) : f64 = vjp (\x -> grad k x) x 1

entry primal (k: i32) (x: f64) : f64 =
  if k == 0 then f0 x else if k == 1 then f1 x else if k == 2 then f2 x
  else if k == 3 then f3 x else if k == 4 then f4 x else if k == 5 then f5 x
  else if k == 6 then f6 x else if k == 7 then f7 x else if k == 8 then f8 x else if k == 9 then f9 x
  else if k == 10 then f10 x else if k == 11 then f11 x else if k == 12 then f12 x else if k == 13 then f13 x else if k == 14 then f14 x else if k == 15 then f15 x
  else if k == 16 then f16 x else if k == 17 then f17 x else if k == 18 then f18 x else if k == 19 then f19 x else if k == 20 then f20 x else if k == 21 then f21 x else f22 x
"#;

/// Writes `source` to `NAME.fut` in a scratch directory and compiles it
/// with `pipeline`, validating after every pass.
fn compile_source(name: &str, source: &str, pipeline: Pipeline) -> nabla::Compiled {
    let dir = std::env::temp_dir().join(format!("nabla-static-ad-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.fut"));
    std::fs::write(&path, source).unwrap();
    let compiled = compile_with(&path, &CompileOptions::new(pipeline.validating(true)))
        .unwrap_or_else(|e| panic!("{}", e.rendered));
    let _ = std::fs::remove_dir_all(&dir);
    compiled
}

/// Reverse mode: static vjp = dynamic vjp and finite differences, on every
/// construct with a static reverse rule (scalars, branches, `for` and
/// `while` loops, maps with free scalars and arrays, reductions, scans and
/// histograms with `+`, `*`, min/max and generic operators on scalars and
/// tuples, scatter, index/update, replicate, reverse, rotate,
/// concatenation).
#[test]
fn static_vjp_agrees_with_dynamic_and_finite_differences() {
    let dynamic = compile_source("reverse", REVERSE_PROGRAM, Pipeline::dynamic_ad());
    let static_ = compile_source("reverse", REVERSE_PROGRAM, Pipeline::default_pipeline());
    // Only the `ad` pass: the calls to f0…f7 stay calls, and static AD
    // inlines them itself.
    let uninlined = compile_source("reverse", REVERSE_PROGRAM, Pipeline::parse("ad").unwrap());
    assert!(count_vjps(&dynamic.program) >= 8);
    assert_eq!(count_vjps(&static_.program), 0, "every vjp is static");
    assert_eq!(count_vjps(&uninlined.program), 0, "every vjp is static");
    assert_eq!(count_jvps(&static_.program), 0, "every jvp is static");
    let run = |c: &nabla::Compiled, name: &str, input: &str| -> f64 {
        let r = c
            .run_on_input(name, input.as_bytes())
            .unwrap_or_else(|e| panic!("{name} {input}: {e:?}"));
        scalar(&r[0])
    };
    let mut compared_with_fd = 0;
    for k in 0..23 {
        for x in [-1.3, 0.0, 1.0, 2.0, -0.4, 0.35, 0.8, 1.7, 2.9] {
            let input = format!("{k}i32 {x:?}f64");
            let d = run(&dynamic, "grad", &input);
            let s = run(&static_, "grad", &input);
            assert!(
                (d - s).abs() <= 1e-9 * (1.0 + d.abs()),
                "f{k} at {x}: static {s} vs dynamic {d}"
            );
            let u = run(&uninlined, "grad", &input);
            assert!(
                (d - u).abs() <= 1e-9 * (1.0 + d.abs()),
                "f{k} at {x}: static without the inliner {u} vs dynamic {d}"
            );
            let h = 1e-6;
            let f = |y: f64| run(&dynamic, "primal", &format!("{k}i32 {y:?}f64"));
            let (lo, mid, hi) = (f(x - h), f(x), f(x + h));
            let fd = (hi - lo) / (2.0 * h);
            let (left, right) = ((mid - lo) / h, (hi - mid) / h);
            if (left - right).abs() > 1e-3 * (1.0 + fd.abs()) {
                continue;
            }
            assert!(
                (fd - s).abs() <= 1e-4 * (1.0 + s.abs()),
                "f{k} at {x}: static {s} vs finite differences {fd}"
            );
            compared_with_fd += 1;
        }
    }
    assert!(compared_with_fd >= 60, "{compared_with_fd}");
    // Forward over reverse: static = dynamic, and = finite differences of
    // the static gradient.
    for k in [
        0, 2, 4, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22,
    ] {
        for x in [-0.4, 0.35, 1.7] {
            let input = format!("{k}i32 {x:?}f64");
            let d = run(&dynamic, "hess", &input);
            let s = run(&static_, "hess", &input);
            assert!(
                (d - s).abs() <= 1e-8 * (1.0 + d.abs()),
                "hessian of f{k} at {x}: static {s} vs dynamic {d}"
            );
            let h = 1e-5;
            let g = |y: f64| run(&static_, "grad", &format!("{k}i32 {y:?}f64"));
            let fd = (g(x + h) - g(x - h)) / (2.0 * h);
            assert!(
                (fd - s).abs() <= 1e-4 * (1.0 + s.abs()),
                "hessian of f{k} at {x}: static {s} vs finite differences {fd}"
            );
            // Reverse over reverse agrees with forward over reverse.
            let rr = run(&static_, "hess_rr", &input);
            assert!(
                (rr - s).abs() <= 1e-8 * (1.0 + s.abs()),
                "hessian of f{k} at {x}: reverse over reverse {rr} vs forward over reverse {s}"
            );
        }
    }
}

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
        &CompileOptions::new(Pipeline::dynamic_ad().validating(true)),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered));
    let static_ = compile_with(
        &path,
        &CompileOptions::new(Pipeline::default_pipeline().validating(true)),
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
/// (every jvp and vjp of the GradBench programs is compiled away).
#[test]
fn gradbench_programs_compile_with_static_ad() {
    let opts = CompileOptions::new(Pipeline::default_pipeline().validating(true));
    let mut n = 0;
    for entry in std::fs::read_dir(repo().join("gradbench")).expect("gradbench/ exists") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("fut") || !is_program(&path) {
            continue;
        }
        let c = compile_with(&path, &opts)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.rendered));
        assert_eq!(count_jvps(&c.program), 0, "{}", path.display());
        assert_eq!(count_vjps(&c.program), 0, "{}", path.display());
        n += 1;
    }
    assert!(n >= 12, "{n}");
}

fn is_program(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.contains("entry "))
}

const LOOP_ATTRIBUTES: &str = r#"
def f (x: f64) = loop acc = x for i < 1000 do acc + 0.001 * f64.sin (acc * x + f64.i64 i)
def f2 (x: f64) = #[stripmine(2)] loop acc = x for i < 1000 do acc + 0.001 * f64.sin (acc * x + f64.i64 i)
def f3 (x: f64) = #[stripmine(3)] loop acc = x for i < 1000i32 do acc + 0.001 * f64.sin (acc * x + f64.i32 i)
def f4 (x: f64) = #[stripmine(4)] loop acc = x for i < 7 do acc + 0.1 * f64.sin (acc * x + f64.i64 i)
def f4plain (x: f64) = loop acc = x for i < 7 do acc + 0.1 * f64.sin (acc * x + f64.i64 i)
def w (x: f64) = let (_, y) = loop (k, y) = (0, x) while k < 7 do (k + 1, y * 0.9 + f64.sin (x * y)) in y
def wb (x: f64) = let (_, y) = #[bound(7)] loop (k, y) = (0, x) while k < 7 do (k + 1, y * 0.9 + f64.sin (x * y)) in y
def wloose (x: f64) = let n = 20i64
                      let (_, y) = #[bound(n)] loop (k, y) = (0, x) while k < 7 do (k + 1, y * 0.9 + f64.sin (x * y)) in y
entry primal (x: f64) = (f x, f2 x, f3 x, f4 x, f4plain x, w x, wb x, wloose x)
entry grad (x: f64) = (vjp f x 1, vjp f2 x 1, vjp f3 x 1, vjp f4 x 1, vjp f4plain x 1, vjp w x 1, vjp wb x 1, vjp wloose x 1)
entry tangent (x: f64) = (jvp f x 1, jvp f2 x 1, jvp f3 x 1, jvp f4 x 1, jvp f4plain x 1, jvp w x 1, jvp wb x 1, jvp wloose x 1)
def overrun (x: f64) = let (_, y) = #[bound(6)] loop (k, y) = (0, x) while k < 7 do (k + 1, y * 0.9) in y
entry bad (x: f64) = vjp overrun x 1
"#;

/// The deepest nesting of loops in a body.
fn loop_depth(body: &nabla_ir::Body) -> usize {
    let mut best = 0;
    for s in &body.stms {
        let here = usize::from(matches!(s.exp, Exp::Loop { .. }));
        s.exp.for_each_nested(|x| {
            let inner = match x {
                Nested::Body(b) => loop_depth(b),
                Nested::Lambda(l) => loop_depth(&l.body),
            };
            best = best.max(here + inner);
        });
        best = best.max(here);
    }
    best
}

/// `#[stripmine(k)]` nests a `for` loop k deep and `#[bound(n)]` turns a
/// `while` loop into a guarded `for` loop (Schenck et al., SC22, §4.3, §6.2): the
/// primal, the static gradient and the static tangent are those of the
/// plain loop (the dynamic AD's too), and a loop that runs past its bound
/// is a run-time error.
#[test]
fn stripmined_and_bounded_loops_keep_their_derivatives() {
    let dir = std::env::temp_dir().join(format!("nabla-loop-attrs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("loops.fut");
    std::fs::write(&path, LOOP_ATTRIBUTES).unwrap();
    let elaborated = compile_with(
        &path,
        &CompileOptions::new(Pipeline::parse("").unwrap().validating(true)),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered));
    let depth = |name: &str| {
        let f = elaborated
            .program
            .functions
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no function {name}"));
        loop_depth(&f.body)
    };
    assert_eq!(depth("f"), 1);
    assert_eq!(depth("f2"), 2);
    assert_eq!(depth("f3"), 3);
    assert_eq!(depth("f4"), 4);
    let static_ = compile_with(
        &path,
        &CompileOptions::new(Pipeline::default_pipeline().validating(true)),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered));
    let dynamic = compile_with(
        &path,
        &CompileOptions::new(Pipeline::dynamic_ad().validating(true)),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered));
    assert_eq!(count_vjps(&static_.program), 0);
    for x in [-0.7, 0.3, 1.1] {
        let input = format!("{x:?}f64");
        for entry in ["primal", "grad", "tangent"] {
            let s: Vec<f64> = static_
                .run_on_input(entry, input.as_bytes())
                .unwrap_or_else(|e| panic!("{entry}: {e:?}"))
                .iter()
                .map(scalar)
                .collect();
            let d: Vec<f64> = dynamic
                .run_on_input(entry, input.as_bytes())
                .unwrap_or_else(|e| panic!("{entry}: {e:?}"))
                .iter()
                .map(scalar)
                .collect();
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * (1.0 + a.abs());
            // f, f2, f3 are one loop; f4 and f4plain another; w, wb, wloose a third.
            for group in [&[0, 1, 2][..], &[3, 4], &[5, 6, 7]] {
                for &k in group {
                    assert!(close(s[k], s[group[0]]), "{entry} {k} at {x}: {s:?}");
                    assert!(
                        close(s[k], d[k]),
                        "{entry} {k} at {x}: static {s:?} dynamic {d:?}"
                    );
                }
            }
            assert!(
                s[1].abs() > 1e-3,
                "{entry} at {x}: a derivative worth comparing: {s:?}"
            );
        }
    }
    let err = static_
        .run_on_input("bad", b"0.5f64")
        .expect_err("the loop runs past its bound");
    assert!(err.message.contains("#[bound(6)]"), "{}", err.message);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Custom derivatives whose rule is the true derivative (`with_vjp` for
/// exp with the rule r·ȳ, `with_vjp_tape` for sin with the tape cos x, a
/// sort with a rank-based adjoint), in plain code, a map, a loop and a
/// branch.
const CUSTOM_RULES: &str = r#"
def myexp (x: f64) = with_vjp f64.exp (\r g -> r * g) x
def mysin (x: f64) = with_vjp_tape (\x -> (f64.cos x, f64.sin x)) (\(c, g) -> c * g) x

def ranks [n] (xs: [n]f64) : [n]i64 =
  map2 (\x i -> i64.sum (map2 (\y j -> if y < x || (y == x && j < i) then 1 else 0) xs (iota n)))
       xs (iota n)

def sort [n] (xs: [n]f64) : [n]f64 =
  with_vjp_tape (\xs -> let r = ranks xs in (r, scatter (replicate n 0) r xs))
                (\(r, g) -> map (\k -> g[k]) r) xs

def f0 (x: f64) = myexp (x * x) * mysin x
def f1 (x: f64) =
  let xs = [x, 1 - x * x, 0.5 * x + 0.3, f64.sin x]
  in f64.sum (map2 (*) (sort xs) [1, 2, 3, 4]) + (sort xs)[0] * (sort xs)[3]
def f2 (x: f64) = f64.sum (map (\j -> mysin (x * f64.i64 j) * myexp (x / f64.i64 j)) (1..<5))
def f3 (x: f64) = loop y = x for _i < 3 do myexp (y * 0.5) - mysin y
def f4 (x: f64) = if x > 0.5 then myexp x * x else mysin (x * x)

def pick (k: i32) (x: f64) =
  if k == 0 then f0 x else if k == 1 then f1 x else if k == 2 then f2 x
  else if k == 3 then f3 x else f4 x

entry primal (k: i32) (x: f64) = pick k x
entry grad (k: i32) (x: f64) = vjp (pick k) x 1
entry tangent (k: i32) (x: f64) = jvp (pick k) x 1
entry hess (k: i32) (x: f64) = vjp (\x -> vjp (pick k) x 1) x 1
"#;

/// A custom rule equal to the true derivative: the static gradient (which
/// uses the rule) = the dynamic one = the jvp (which ignores the rule) =
/// central finite differences of the primal; second derivatives (vjp of
/// vjp through the rules) static = dynamic = finite differences of the
/// gradient. No `with_vjp` is left after the static pipeline.
#[test]
fn custom_rules_agree_with_jvp_and_finite_differences() {
    let dynamic = compile_source("custom", CUSTOM_RULES, Pipeline::dynamic_ad());
    let static_ = compile_source("custom", CUSTOM_RULES, Pipeline::default_pipeline());
    let with_vjps = |p: &Program| count(p, |e| matches!(e, Exp::WithVjp { .. }));
    assert!(with_vjps(&dynamic.program) >= 3);
    assert_eq!(with_vjps(&static_.program), 0, "lowered after static AD");
    assert_eq!(count_vjps(&static_.program), 0, "every vjp is static");
    let run = |c: &nabla::Compiled, name: &str, k: i32, x: f64| -> f64 {
        let input = format!("{k}i32 {x:?}f64");
        let r = c
            .run_on_input(name, input.as_bytes())
            .unwrap_or_else(|e| panic!("{name} {input}: {e:?}"));
        scalar(&r[0])
    };
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * (1.0 + a.abs());
    let mut compared_with_fd = 0;
    for k in 0..5 {
        for x in [-1.3, -0.4, 0.35, 0.8, 1.7] {
            let s = run(&static_, "grad", k, x);
            let d = run(&dynamic, "grad", k, x);
            assert!(close(d, s, 1e-9), "f{k} at {x}: static {s} vs dynamic {d}");
            let t = run(&static_, "tangent", k, x);
            assert!(close(t, s, 1e-9), "f{k} at {x}: vjp {s} vs jvp {t}");
            let h = 1e-6;
            let (lo, mid, hi) = (
                run(&dynamic, "primal", k, x - h),
                run(&dynamic, "primal", k, x),
                run(&dynamic, "primal", k, x + h),
            );
            let fd = (hi - lo) / (2.0 * h);
            let (left, right) = ((mid - lo) / h, (hi - mid) / h);
            if (left - right).abs() > 1e-3 * (1.0 + fd.abs()) {
                continue;
            }
            assert!(
                close(s, fd, 1e-4),
                "f{k} at {x}: vjp {s} vs finite differences {fd}"
            );
            compared_with_fd += 1;
            let hs = run(&static_, "hess", k, x);
            let hd = run(&dynamic, "hess", k, x);
            assert!(
                close(hd, hs, 1e-8),
                "f{k} at {x}: hessian static {hs} vs dynamic {hd}"
            );
            let h = 1e-5;
            let gfd =
                (run(&static_, "grad", k, x + h) - run(&static_, "grad", k, x - h)) / (2.0 * h);
            assert!(
                close(hs, gfd, 1e-4),
                "f{k} at {x}: hessian {hs} vs finite differences {gfd}"
            );
        }
    }
    assert!(compared_with_fd >= 20, "{compared_with_fd}");
}

/// The depths, counted in `map`s, of the statements that `pred` selects.
fn map_depths(prog: &Program, pred: impl Fn(&Exp) -> bool) -> Vec<usize> {
    fn walk(b: &nabla_ir::Body, depth: usize, pred: &dyn Fn(&Exp) -> bool, out: &mut Vec<usize>) {
        for s in &b.stms {
            if pred(&s.exp) {
                out.push(depth);
            }
            let inner = depth + usize::from(matches!(s.exp, Exp::Soac(nabla_ir::Soac::Map { .. })));
            s.exp.for_each_nested(|x| match x {
                Nested::Body(nb) => walk(nb, inner, pred, out),
                Nested::Lambda(l) => walk(&l.body, inner, pred, out),
            });
        }
    }
    let mut out = vec![];
    for f in &prog.functions {
        walk(&f.body, 0, &pred, &mut out);
    }
    out
}

/// Vector mode (the `ad` pass; `ad-per-seed` and
/// `nabla_ad::differentiate` without options do without it): a `map` of a
/// `jvp` at one primal point (`jmp`, or a Jacobian built one column per
/// seed) is differentiated for all its seeds at once. Every such map of
/// `tests/ad/vector_mode.fut` takes that path (the report counts it;
/// without the option none does), and in a `jmp` of `map sin` the primal
/// `sin` stays one map deep (in a map of one jvp per seed it would be two
/// deep, under the map over the seeds). `vector_mode_passes_the_ad_tests`
/// checks the results.
#[test]
fn maps_of_jvp_take_the_vector_mode() {
    let vector = nabla_ad::Options {
        vector_jvps: true,
        ..nabla_ad::Options::default()
    };
    let dynamic = CompileOptions::new(Pipeline::dynamic_ad().validating(true));
    let path = repo().join("tests/ad/vector_mode.fut");
    let undifferentiated = compile_with(&path, &dynamic)
        .unwrap_or_else(|e| panic!("{}", e.summary))
        .program;
    let mut prog = undifferentiated.clone();
    let report = nabla_ad::differentiate_with_report(&mut prog).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.batched_jvps, 0, "not by default: {report:?}");
    let mut prog = undifferentiated;
    let report =
        nabla_ad::differentiate_with_options(&mut prog, vector).unwrap_or_else(|e| panic!("{e}"));
    nabla_ir::validate_program(&prog).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(report.batched_jvps, 4, "{report:?}");
    assert_eq!(count_jvps(&prog), 0);

    let source = "entry sines (x: []f64) (dxs: [][]f64) = jmp (\\v -> map f64.sin v) x dxs\n";
    let compiled = compile_source("jmp_sin", source, Pipeline::dynamic_ad());
    let mut prog = compiled.program;
    let is_sin = |e: &Exp| matches!(e, Exp::UnOp(nabla_ir::UnOp::Sin, _));
    assert_eq!(
        map_depths(&prog, is_sin),
        vec![2],
        "before AD: in jvp, in map"
    );
    let report =
        nabla_ad::differentiate_with_options(&mut prog, vector).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.batched_jvps, 1, "{report:?}");
    nabla_ir::validate_program(&prog).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        map_depths(&prog, is_sin),
        vec![1],
        "the primal sin once per element"
    );
    let static_ = compile_source("jmp_sin_static", source, Pipeline::default_pipeline());
    let r = static_
        .run_on_input("sines", "[0.5, 1.0] [[1.0, 0.0], [2.0, 3.0]]".as_bytes())
        .unwrap_or_else(|e| panic!("{e:?}"));
    let (c0, c1) = (0.5f64.cos(), 1.0f64.cos());
    let expected = format!(
        "[[{:?}f64, 0.0f64], [{:?}f64, {:?}f64]]",
        c0,
        2.0 * c0,
        3.0 * c1
    );
    assert_eq!(r[0].to_string(), expected);
}

/// `nabla test --ad=vector` (another name for the default `static`)
/// passes every AD test (`tests/ad/`) in the interpreter, and
/// `vector_mode.fut` with the C backend too; so does `--ad=per-seed`.
#[test]
fn vector_mode_passes_the_ad_tests() {
    let run = |args: &[&str], path: PathBuf| {
        let o = Command::new(env!("CARGO_BIN_EXE_nabla"))
            .arg("test")
            .args(args)
            .arg(&path)
            .output()
            .expect("start nabla");
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{args:?}:\n{out}");
        let last = out.lines().last().unwrap_or("").to_string();
        let nums: Vec<usize> = last
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|s| s.parse().ok())
            .collect();
        assert_eq!(nums.get(1), Some(&0), "{args:?}: failures:\n{out}");
        nums[0]
    };
    let passed = run(&["--ad=vector", "--validate"], repo().join("tests/ad"));
    assert!(passed >= 100, "too few tests ran: {passed}");
    let passed = run(
        &["--ad=vector", "--backend=c"],
        repo().join("tests/ad/vector_mode.fut"),
    );
    assert_eq!(passed, 4);
    let passed = run(&["--ad=per-seed", "--validate"], repo().join("tests/ad"));
    assert!(passed >= 100, "too few tests ran: {passed}");
}

/// Number of statements anywhere in the program that square a variable
/// (`v * v`).
fn count_squares(prog: &Program) -> usize {
    count(
        prog,
        |e| matches!(e, Exp::BinOp(nabla_ir::BinOp::Mul, a, b) if a == b && a.as_var().is_some()),
    )
}

/// The return sweep of a `map` reads values that the primal map returned
/// instead of recomputing them (Schenck et al., SC22, §4's redundant execution, minus
/// what is stored anyway): the gradient of `sum (map exp x)` and of
/// log-sum-exp evaluates `exp` once per element. Where the values a
/// returned statement is computed from are recomputed anyway (the
/// arg-min of `minimum (map square row)` needs the squares again), the
/// statement is recomputed too: the squares are computed once, in the
/// return sweep, not also in a forward map kept alive for the minimum.
#[test]
fn reverse_maps_read_stored_results() {
    let source = "\
entry sum_exp (x: []f64) = vjp (\\x -> f64.sum (map f64.exp x)) x 1.0
entry lse (x: []f64) =
  vjp (\\x -> let a = f64.maximum x in a + f64.log (f64.sum (map (\\v -> f64.exp (v - a)) x))) x 1.0
entry min_squares (x: [][]f64) =
  vjp (\\x -> f64.sum (map (\\row -> f64.minimum (map (\\v -> v * v) row)) x)) x 1.0
";
    let compiled = compile_source("stored_results", source, Pipeline::default_pipeline());
    let prog = &compiled.program;
    let is_exp = |e: &Exp| matches!(e, Exp::UnOp(nabla_ir::UnOp::Exp, _));
    assert_eq!(
        count(prog, is_exp),
        2,
        "one exp per element in each gradient"
    );
    assert_eq!(count_squares(prog), 1, "the squares once per element");
    let run = |entry: &str, input: &str| {
        compiled
            .run_on_input(entry, input.as_bytes())
            .unwrap_or_else(|e| panic!("{entry}: {e:?}"))[0]
            .to_string()
    };
    let (e1, e2) = (0.5f64.exp(), (-1.0f64).exp());
    assert_eq!(
        run("sum_exp", "[0.5, -1.0]"),
        format!("[{e1:?}f64, {e2:?}f64]")
    );
    let s = 1.0 + (-3.0f64).exp();
    let lse = run("lse", "[2.0, -1.0]");
    let lse: Vec<f64> = lse
        .trim_matches(['[', ']'])
        .split(", ")
        .map(|x| x.trim_end_matches("f64").parse().unwrap())
        .collect();
    let expected = [1.0 / s, (-3.0f64).exp() / s];
    assert!(
        lse.iter()
            .zip(expected)
            .all(|(g, e)| (g - e).abs() <= 1e-12),
        "{lse:?} vs {expected:?}"
    );
    assert_eq!(
        run("min_squares", "[[3.0, -2.0], [1.0, 4.0]]"),
        "[[0.0f64, -4.0f64], [2.0f64, 0.0f64]]"
    );
}

/// A `vjp` that static AD cannot transform is kept for the dynamic AD,
/// and what the failed attempt had emitted is dropped with it: earlier,
/// part of it leaked into the enclosing body, binding the names of the
/// kept `vjp`'s lambda a second time, and the passes after AD then
/// rewrote the kept lambda into one whose gradient was zero.
#[test]
fn a_vjp_left_to_the_dynamic_ad_keeps_its_derivative() {
    // A free array of a map sliced in two dimensions (a block) has no
    // static rule. It fails inside the return sweep of the map's lambda,
    // after code was emitted.
    let source = r#"
def f (xss: [4][3]f64) : f64 =
  f64.sum (map (\j -> f64.sum (flatten (map (map (\x -> x * x)) xss[1:3, j:j+2]))) (iota 2))
entry grad (xss: [4][3]f64) = vjp f xss 1
"#;
    let dynamic = compile_source("fallback", source, Pipeline::dynamic_ad());
    let static_ = compile_source("fallback", source, Pipeline::default_pipeline());
    let mut prog = compile_source("fallback", source, Pipeline::parse("").unwrap()).program;
    let report = nabla_ad::differentiate_with_report(&mut prog).expect("ad");
    assert_eq!(report.dynamic_vjps, 1, "{report:?}");
    nabla_ir::validate_program(&prog).unwrap_or_else(|e| panic!("{e:?}"));
    let input = "[[0.5, 1.5, -0.3], [2.0, 1.0, 0.2], [3.0, -1.0, 0.25], [4.0, 5.0, 6.0]]";
    let d = dynamic.run_on_input("grad", input.as_bytes()).unwrap();
    let s = static_.run_on_input("grad", input.as_bytes()).unwrap();
    assert_eq!(d[0].to_string(), s[0].to_string());
    // f sums the squares of rows 1 and 2, column 1 twice.
    assert_eq!(
        s[0].to_string(),
        "[[0.0f64, 0.0f64, 0.0f64], [4.0f64, 4.0f64, 0.4f64], [6.0f64, -4.0f64, 0.5f64], [0.0f64, 0.0f64, 0.0f64]]"
    );
}

/// A loop whose parameter's type has an existential size but whose array
/// keeps its shape (as the state of gradbench/lstm.fut's loop over the
/// sequence) is still reversed from checkpoints: the forward sweep writes
/// the states, guarded by the shape check, and the rerun from the initial
/// values is only the fallback for shapes that change. (Reversing such a
/// loop by rerunning it always made lstm's Jacobian quadratic in the
/// sequence length.)
#[test]
fn loops_with_existential_sizes_keep_their_checkpoints() {
    let source = r#"
def f (xs: []f64) : f64 =
  let ys = loop ys = filter (> 0) xs for i < 3 do map (\y -> y * y + f64.i64 i) ys
  in f64.sum ys
entry grad (xs: []f64) = vjp f xs 1
"#;
    let mut prog = compile_source("existential", source, Pipeline::parse("").unwrap()).program;
    let report = nabla_ad::differentiate_with_report(&mut prog).expect("ad");
    assert_eq!(report.dynamic_vjps, 0, "{report:?}");
    nabla_ir::validate_program(&prog).unwrap_or_else(|e| panic!("{e:?}"));
    let text = nabla_ir::print_program(&prog);
    let forward = text
        .lines()
        .find(|l| l.contains("= loop (") && l.contains("checkpoints_"))
        .unwrap_or_else(|| panic!("no checkpointing loop:\n{text}"));
    assert!(forward.contains("fits_"), "{forward}");
    assert!(text.contains("= if fits_"), "{text}");
    let compiled = compile_source("existential", source, Pipeline::default_pipeline());
    let r = compiled.run_on_input("grad", b"[1.0, -2.0, 0.5]").unwrap();
    // Per positive x the loop computes (x⁴ + 1)² + 2: the derivative is
    // 8x³(x⁴ + 1); the filtered-out element gets 0.
    assert_eq!(r[0].to_string(), "[16.0f64, 0.0f64, 1.0625f64]");
}

/// `mjp` (a map of a `vjp` at one primal point, one seed per row): the
/// forward sweep, the loop that writes the checkpoints of `f`'s loop, runs
/// once for all seeds — the optimiser moves it out of the map over the
/// seeds (with the fresh checkpoint array it consumes), also where the
/// number of seeds is not a constant. Only the return sweep (which reads
/// the checkpoints) stays per seed. Without the optimiser the checkpointing
/// loop sits in the map, one map deep.
#[test]
fn mjp_runs_the_forward_sweep_once() {
    let source = r#"
def f [n] (x: [n]f64) : [n]f64 =
  let y = loop y = x for _i < 3 do map (\v -> f64.sin v * 2.0) y
  in map (\v -> v * v) y
entry rows [n] (x: [n]f64) : [n][n]f64 =
  mjp f x (map (\i -> map (\j -> if i == j then 1.0 else 0.0) (iota n)) (iota n))
"#;
    // A loop with a unique (consumed) parameter of rank 2, one state of
    // `y` per iteration: the checkpointing loop (the return sweep's loop
    // updates the adjoint of `y`, of rank 1, in place).
    let writes_checkpoints = |e: &Exp| matches!(e, Exp::Loop { params, .. } if params.iter().any(|p| p.unique && p.ty.rank() == 2));
    let mut unoptimised = compile_source("mjp", source, Pipeline::parse("inline").unwrap()).program;
    nabla_ad::differentiate(&mut unoptimised).expect("ad");
    assert_eq!(map_depths(&unoptimised, writes_checkpoints), vec![1]);
    let compiled = compile_source("mjp", source, Pipeline::default_pipeline());
    assert_eq!(
        map_depths(&compiled.program, writes_checkpoints),
        vec![0],
        "{}",
        nabla_ir::print_program(&compiled.program)
    );
    let dynamic = compile_source("mjp", source, Pipeline::dynamic_ad());
    let input = "[0.5, 2.0, 0.25]";
    let s = compiled.run_on_input("rows", input.as_bytes()).unwrap();
    let d = dynamic.run_on_input("rows", input.as_bytes()).unwrap();
    assert_eq!(s[0].to_string(), d[0].to_string());
}

/// The f64 numbers of an entry point's results, in order.
fn f64s(c: &nabla::Compiled, entry: &str, input: &str) -> Vec<f64> {
    let r = c
        .run_on_input(entry, input.as_bytes())
        .unwrap_or_else(|e| panic!("{entry} {input}: {e:?}"));
    let mut out = vec![];
    for v in &r {
        for tok in v
            .to_string()
            .split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        {
            if let Some(t) = tok.strip_suffix("f64") {
                out.push(t.parse::<f64>().unwrap_or(f64::NAN));
            }
        }
    }
    out
}

/// Accumulators of the source language (`scatter_stream`, `hist_stream`
/// with `+`; tests/ad/accumulators.fut) under static AD, which the dynamic
/// AD does not run: at several points, each fK's gradient (vjp) agrees
/// with central finite differences of the primal, and its tangents (jvp)
/// along several directions with the gradient's dot products.
#[test]
fn accumulator_derivatives_agree_with_finite_differences_and_each_other() {
    let path = repo().join("tests/ad/accumulators.fut");
    let c = compile_with(
        &path,
        &CompileOptions::new(Pipeline::default_pipeline().validating(true)),
    )
    .unwrap_or_else(|e| panic!("{}", e.rendered));
    assert_eq!(count_vjps(&c.program), 0, "every vjp is static");
    assert_eq!(count_jvps(&c.program), 0, "every jvp is static");
    let arr = |xs: &[f64]| {
        let items: Vec<String> = xs.iter().map(|x| format!("{x:?}f64")).collect();
        format!("[{}]", items.join(", "))
    };
    let points = [
        [0.5, -1.25, 2.0, 0.75, -0.5, 1.5],
        [-0.3, 0.8, 1.1, -1.7, 0.25, 0.6],
        [1.9, 0.1, -0.4, 0.35, 2.2, -1.05],
    ];
    let mut checked = 0;
    for k in 1..=6 {
        for x in &points {
            let g = f64s(&c, "grad", &format!("{k}i32 {}", arr(x)));
            assert_eq!(g.len(), 6, "f{k}");
            for i in 0..6 {
                let h = 1e-6;
                let (mut lo, mut hi) = (*x, *x);
                lo[i] -= h;
                hi[i] += h;
                let f = |y: &[f64]| f64s(&c, "primal", &format!("{k}i32 {}", arr(y)))[0];
                let fd = (f(&hi) - f(&lo)) / (2.0 * h);
                assert!(
                    (fd - g[i]).abs() <= 1e-5 * (1.0 + fd.abs()),
                    "f{k} at {x:?}: gradient {} vs finite differences {fd} in x{i}",
                    g[i]
                );
                checked += 1;
            }
            for dx in &points {
                let t = f64s(&c, "tangent", &format!("{k}i32 {} {}", arr(x), arr(dx)))[0];
                let dot: f64 = g.iter().zip(dx).map(|(a, b)| a * b).sum();
                assert!(
                    (t - dot).abs() <= 1e-9 * (1.0 + dot.abs()),
                    "f{k} at {x:?} along {dx:?}: jvp {t} vs vjp {dot}"
                );
            }
        }
    }
    assert_eq!(checked, 6 * 3 * 6);
}

/// The generic `reduce_by_index` rule's chunked form (issue 31) is what the
/// multicore target gets, and only it: the IR after the pipeline has the
/// chunks' totals for `Target::Multicore` and not for `Target::Sequential`.
/// Both run in the interpreter (the IR validated after every pass) and
/// agree with the closed forms and with forward mode, on inputs large
/// enough for several chunks, some out-of-bounds indices and a short last
/// chunk (`tests/ad/generic_histograms.fut`).
#[test]
fn generic_histograms_take_the_chunked_form_for_a_parallel_target() {
    let path = repo().join("tests/ad/generic_histograms.fut");
    let compile = |target| {
        let opts = CompileOptions::new(Pipeline::default_pipeline().validating(true));
        compile_with(&path, &opts.for_target(target)).unwrap_or_else(|e| panic!("{}", e.rendered))
    };
    let parallel = compile(nabla_cgen::Target::Multicore);
    let sequential = compile(nabla_cgen::Target::Sequential);
    assert!(parallel.dump_ir().contains("chunk_totals"));
    assert!(!sequential.dump_ir().contains("chunk_totals"));
    for (entry, input) in [
        ("log_sum_exp_gradient", "20000i64 37i64"),
        ("log_sum_exp_gradient", "9000i64 127i64"),
        ("compositions_duality", "12000i64 5i64"),
        ("complex_products_duality", "10000i64 11i64"),
    ] {
        for (form, compiled) in [("chunked", &parallel), ("sequential", &sequential)] {
            let result = compiled
                .run_on_input(entry, input.as_bytes())
                .unwrap_or_else(|e| panic!("{entry} {input} ({form}): {e:?}"));
            assert_eq!(
                result,
                vec![nabla_values::Value::Prim(nabla_prim::PrimValue::Bool(true))],
                "{entry} {input} ({form})"
            );
        }
    }
}
