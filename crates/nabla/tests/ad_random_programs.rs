//! Random well-typed programs, differentiated both ways.
//!
//! A generator writes Futhark functions `f (x: f64) (xs: [6]f64) : f64` out
//! of the constructs that AD has rules for — maps (with free scalars and
//! free arrays), reductions (`+`, `*`, `max`, generic scalar and tuple
//! operators), scans (the same, and an operator on whole rows),
//! `reduce_by_index`/`hist` (also with an operator on rows), `scatter`,
//! in-place updates, `for` and `while` loops, branches — chained so that
//! every statement depends on the inputs. For each program, at a random
//! point, with the static AD (the `ad` pass, the default pipeline):
//!
//! - the static gradient equals the dynamic AD's (the oracle), to rounding;
//! - duality: `⟨vjp(x, 1), ẋ⟩ = jvp(x, ẋ)` for a random direction `ẋ`;
//! - where the primal is smooth along `ẋ` (central differences with steps
//!   `h` and `h/2` agree), `jvp(x, ẋ)` equals the central difference.
//!
//! The programs come from proptest's seeded random source, so a failure
//! names its seed and prints the program; proptest's regression file keeps
//! the failing seeds.

use nabla::{compile_with, CompileOptions, Compiled, Pipeline};
use proptest::prelude::*;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The length of the array input.
const N: usize = 6;

/// A small deterministic random source (splitmix64), seeded by proptest.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The program being written: its statements and the scalar and array
/// variables (all `f64` / `[N]f64`) bound so far.
struct Gen {
    rng: Rng,
    lines: Vec<String>,
    scalars: Vec<String>,
    arrays: Vec<String>,
    counter: usize,
    /// The constructs used, by name (to check that the generator covers them).
    used: Vec<&'static str>,
}

impl Gen {
    fn fresh(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{base}{}", self.counter)
    }
    fn scalar(&mut self) -> String {
        let s = self.scalars.clone();
        self.rng.pick(&s).clone()
    }
    fn array(&mut self) -> String {
        let a = self.arrays.clone();
        self.rng.pick(&a).clone()
    }
    /// A smooth, bounded scalar expression of `v` and a bound scalar.
    fn elementwise(&mut self, v: &str) -> String {
        let s = self.scalar();
        match self.rng.below(7) {
            0 => format!("f64.sin ({v} * {s})"),
            1 => format!("{v} * {s} + 0.5"),
            2 => format!("f64.tanh ({v}) * {s}"),
            3 => format!("{v} / (1 + {s} * {s})"),
            4 => format!("f64.exp (f64.sin {v}) - {s}"),
            5 => format!("if {v} > {s} then {v} * {v} else {v} * {s}"),
            _ => format!("f64.sqrt (1 + {v} * {v}) * {s}"),
        }
    }
    fn bind_scalar(&mut self, exp: String, what: &'static str) {
        let name = self.fresh("s");
        self.lines.push(format!("  let {name} = {exp}"));
        self.scalars.push(name);
        self.used.push(what);
    }
    fn bind_array(&mut self, exp: String, what: &'static str) {
        let name = self.fresh("a");
        self.lines.push(format!("  let {name}: [{N}]f64 = {exp}"));
        self.arrays.push(name);
        self.used.push(what);
    }
    /// Constant bucket/position indices, some out of bounds.
    fn indices(&mut self, len: usize, bound: usize) -> String {
        let is: Vec<String> = (0..len)
            .map(|_| {
                let i = self.rng.below(bound + 2) as i64;
                if i == bound as i64 + 1 {
                    "-1".to_string()
                } else {
                    i.to_string()
                }
            })
            .collect();
        format!("[{}]", is.join(", "))
    }

    fn statement(&mut self) {
        let k = self.rng.below(27);
        match k {
            0 => {
                let a = self.array();
                let e = self.elementwise("v");
                self.bind_array(format!("map (\\v -> {e}) {a}"), "map");
            }
            1 => {
                let (a, b) = (self.array(), self.array());
                let e = self.elementwise("u");
                self.bind_array(format!("map2 (\\u w -> ({e}) * w) {a} {b}"), "map2");
            }
            2 => {
                // A free array read at a computed index inside a map.
                let (a, b) = (self.array(), self.array());
                let s = self.scalar();
                self.bind_array(
                    format!("map (\\i -> {a}[(i + 1) % {N}] * {b}[i] + {s}) (iota {N})"),
                    "map with free arrays",
                );
            }
            3 => {
                let a = self.array();
                self.bind_scalar(format!("reduce (+) 0 {a}"), "reduce +");
            }
            4 => {
                let a = self.array();
                self.bind_scalar(
                    format!("reduce (*) 1 (map (\\v -> 0.5 + 0.5 * f64.sin v) {a})"),
                    "reduce *",
                );
            }
            5 => {
                let a = self.array();
                let op = *self.rng.pick(&["f64.max", "f64.min"]);
                self.bind_scalar(format!("reduce {op} 0 {a}"), "reduce min/max");
            }
            6 => {
                let a = self.array();
                self.bind_scalar(
                    format!("reduce (\\p q -> p + q + p * q) 0 (map (\\v -> 0.3 * f64.sin v) {a})"),
                    "reduce generic",
                );
            }
            7 => {
                let (a, b) = (self.array(), self.array());
                self.bind_scalar(
                    format!(
                        "let (re, im) = reduce (\\(a1, b1) (a2, b2) -> (a1 * a2 - b1 * b2, a1 * b2 + b1 * a2)) (1, 0) (zip (map f64.cos {a}) (map f64.sin {b})) in re + 2 * im"
                    ),
                    "reduce tuple",
                );
            }
            8 => {
                let a = self.array();
                self.bind_array(format!("scan (+) 0 {a}"), "scan +");
            }
            9 => {
                let a = self.array();
                self.bind_array(
                    format!("scan (*) 1 (map (\\v -> 0.5 + 0.5 * f64.cos v) {a})"),
                    "scan *",
                );
            }
            10 => {
                let (a, b) = (self.array(), self.array());
                self.bind_array(
                    format!(
                        "let (ms, cs) = unzip (scan (\\(m1, c1) (m2, c2) -> (m1 * m2, c1 * m2 + c2)) (1, 0) (zip (map (\\v -> 0.5 * f64.sin v) {a}) {b})) in map2 (+) ms cs"
                    ),
                    "scan tuple",
                );
            }
            11 => {
                let a = self.array();
                let is = self.indices(N, 3);
                let d = self.array();
                // `3 + 3` is not `6` to the type checker (sizes compare
                // syntactically, as in Futhark): a coercion.
                self.bind_array(
                    format!("(hist (+) 0 3 {is} {a}) ++ (take 3 {d}) :> [{N}]f64"),
                    "hist +",
                );
            }
            12 => {
                let (a, d) = (self.array(), self.array());
                let is = self.indices(N, N);
                let op = *self.rng.pick(&["f64.max", "f64.min"]);
                self.bind_array(
                    format!("reduce_by_index (copy {d}) {op} 0 {is} {a}"),
                    "hist min/max",
                );
            }
            13 => {
                let (a, d) = (self.array(), self.array());
                let is = self.indices(N, N);
                self.bind_array(
                    format!(
                        "reduce_by_index (map (\\v -> 0.2 * f64.sin v) {d}) (\\p q -> p + q + p * q) 0 {is} (map (\\v -> 0.3 * f64.cos v) {a})"
                    ),
                    "hist generic",
                );
            }
            14 => {
                let (a, d) = (self.array(), self.array());
                let is = self.indices(3, N);
                self.bind_array(format!("scatter (copy {d}) {is} (take 3 {a})"), "scatter");
            }
            15 => {
                let a = self.array();
                let s = self.scalar();
                let i = self.rng.below(N);
                self.bind_array(format!("copy {a} with [{i}] = {s} * {a}[{i}]"), "update");
            }
            16 => {
                let a = self.array();
                let i = self.rng.below(N);
                let s = self.scalar();
                self.bind_scalar(format!("{a}[{i}] * {s}"), "index");
            }
            17 => {
                let s = self.scalar();
                let t = self.scalar();
                self.bind_scalar(
                    format!(
                        "loop acc = {s} for i < 3 do acc * 0.8 + f64.sin (acc + {t} * f64.i64 i)"
                    ),
                    "for loop",
                );
            }
            18 => {
                let a = self.array();
                let s = self.scalar();
                self.bind_array(
                    format!("loop b = copy {a} for i < 2 do map (\\v -> f64.sin (v * {s}) + v) b"),
                    "for loop over an array",
                );
            }
            19 => {
                let s = self.scalar();
                self.bind_scalar(
                    format!(
                        "let (_, y) = loop (k, y) = (0i32, {s}) while k < 3 do (k + 1, y * 0.7 + f64.cos y) in y"
                    ),
                    "while loop",
                );
            }
            20 => {
                let (s, t) = (self.scalar(), self.scalar());
                let e1 = self.elementwise(&s);
                self.bind_scalar(
                    format!("if {s} < {t} then {e1} else {t} * {s} - 1"),
                    "branch",
                );
            }
            21 => {
                // A reduction inside a map, over a free array.
                let (a, b) = (self.array(), self.array());
                self.bind_array(
                    format!("map (\\v -> reduce (+) 0 (map (\\u -> f64.sin (u * v)) {b})) {a}"),
                    "map of reductions",
                );
            }
            22 => {
                // A loop inside a map.
                let (a, s) = (self.array(), self.scalar());
                self.bind_array(
                    format!("map (\\v -> loop y = v for i < 3 do y * 0.5 + f64.sin (y * {s})) {a}"),
                    "map of loops",
                );
            }
            23 => {
                // A scan inside a loop.
                let a = self.array();
                self.bind_array(
                    format!("loop b = copy {a} for i < 2 do map (\\v -> 0.3 * v) (scan (+) 0 (map f64.sin b))"),
                    "loop of scans",
                );
            }
            24 => {
                // A scan of rows whose operator works on whole rows
                // (affine maps [a, b], composed).
                let (a, b) = (self.array(), self.array());
                self.bind_array(
                    format!(
                        "map (\\p -> p[0] + p[1]) (scan (\\f g -> [f[0] * g[0], f[1] * g[0] + g[1]]) [1, 0] (map2 (\\u v -> [0.5 * f64.sin u, v]) {a} {b}))"
                    ),
                    "scan rows",
                );
            }
            25 => {
                // reduce_by_index with the same operator on rows.
                let (a, b, d) = (self.array(), self.array(), self.array());
                let is = self.indices(N, N);
                self.bind_array(
                    format!(
                        "map (\\p -> p[0] * p[1]) (reduce_by_index (map (\\v -> [0.5 * f64.cos v, v]) {d}) (\\f g -> [f[0] * g[0], f[1] * g[0] + g[1]]) [1, 0] {is} (map2 (\\u v -> [0.5 * f64.sin u, v]) {a} {b}))"
                    ),
                    "hist rows",
                );
            }
            _ => {
                let a = self.array();
                let op = *self.rng.pick(&["reverse", "rotate 2"]);
                self.bind_array(format!("{op} {a}"), "reverse/rotate");
            }
        }
    }
}

/// A random program with `stms` statements; also the constructs it uses.
fn program(seed: u64, stms: usize) -> (String, Vec<&'static str>) {
    let mut g = Gen {
        rng: Rng(seed),
        lines: vec![],
        scalars: vec!["x".into()],
        arrays: vec!["xs".into()],
        counter: 0,
        used: vec![],
    };
    for _ in 0..stms {
        g.statement();
    }
    // The result depends on every binding (so every statement is active).
    let mut result = String::from("0");
    for s in &g.scalars {
        write!(result, " + {s}").unwrap();
    }
    for a in &g.arrays {
        write!(result, " + reduce (+) 0 (map f64.sin {a})").unwrap();
    }
    let mut src = format!("def f (x: f64) (xs: [{N}]f64) : f64 =\n");
    for l in &g.lines {
        src.push_str(l);
        src.push('\n');
    }
    writeln!(src, "  in {result}").unwrap();
    let scales: Vec<String> = SEED_SCALES.iter().map(|c| format!("{c:?}")).collect();
    let scales = scales.join(", ");
    src.push_str(&format!(
        "
entry primal (x: f64) (xs: [{N}]f64) : f64 = f x xs
entry grad (x: f64) (xs: [{N}]f64) : (f64, [{N}]f64) = vjp (\\(x, xs) -> f x xs) (x, xs) 1
entry tangent (x: f64) (xs: [{N}]f64) (dx: f64) (dxs: [{N}]f64) : f64 =
  jvp (\\(x, xs) -> f x xs) (x, xs) (dx, dxs)
entry tangents (x: f64) (xs: [{N}]f64) (dx: f64) (dxs: [{N}]f64) : [3]f64 =
  map (\\c -> jvp (\\(x, xs) -> f x xs) (x, xs) (c * dx, map (\\d -> c * d) dxs)) [{scales}]
"
    ));
    (src, g.used)
}

/// The seeds of the vector-mode entry `tangents`: `c · (dx, dxs)` for each
/// `c`, so its results are `c` times `tangent`'s.
const SEED_SCALES: [f64; 3] = [1.0, -0.5, 2.0];

fn compile(src: &str, seed: u64, pipeline: Pipeline) -> Compiled {
    let dir = std::env::temp_dir().join(format!("nabla-random-ad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(format!("p{seed}.fut"));
    std::fs::write(&path, src).unwrap();
    let c = compile_with(&path, &CompileOptions::new(pipeline.validating(true)))
        .unwrap_or_else(|e| panic!("seed {seed}: {}\n{src}", e.rendered));
    let _ = std::fs::remove_file(&path);
    c
}

/// The number of `jvp`s and `vjp`s anywhere in the program.
fn ad_left(prog: &nabla_ir::Program) -> usize {
    let mut n = 0;
    for f in &prog.functions {
        let mut stack = vec![&f.body];
        while let Some(b) = stack.pop() {
            for s in &b.stms {
                if matches!(s.exp, nabla_ir::Exp::Jvp { .. } | nabla_ir::Exp::Vjp { .. }) {
                    n += 1;
                }
                s.exp.for_each_nested(|x| match x {
                    nabla_ir::Nested::Body(nb) => stack.push(nb),
                    nabla_ir::Nested::Lambda(l) => stack.push(&l.body),
                });
            }
        }
    }
    n
}

fn numbers(c: &Compiled, entry: &str, input: &str) -> Result<Vec<f64>, String> {
    let r = c
        .run_on_input(entry, input.as_bytes())
        .map_err(|e| format!("{entry}: {e:?}"))?;
    let mut out = vec![];
    for v in &r {
        for tok in v
            .to_string()
            .split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        {
            if let Some(t) = tok.strip_suffix("f64") {
                out.push(t.parse::<f64>().map_err(|e| format!("{tok}: {e}"))?);
            }
        }
    }
    Ok(out)
}

fn fmt_array(xs: &[f64]) -> String {
    let items: Vec<String> = xs.iter().map(|x| format!("{x:?}f64")).collect();
    format!("[{}]", items.join(", "))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// Checks one random program; returns whether it was compared with finite
/// differences.
fn check(seed: u64, stms: usize) -> Result<bool, TestCaseError> {
    let (src, _) = program(seed, stms);
    let static_ = compile(&src, seed, Pipeline::default_pipeline());
    prop_assert_eq!(
        ad_left(&static_.program),
        0,
        "seed {}: a jvp/vjp left for the dynamic AD\n{}",
        seed,
        src
    );
    let dynamic = compile(&src, seed, Pipeline::dynamic_ad());
    let mut rng = Rng(seed ^ 0x5eed);
    let x = rng.unit() * 2.0 - 1.0;
    let xs: Vec<f64> = (0..N).map(|_| rng.unit() * 2.0 - 1.0).collect();
    let dx = rng.unit() * 2.0 - 1.0;
    let dxs: Vec<f64> = (0..N).map(|_| rng.unit() * 2.0 - 1.0).collect();
    let input = format!("{x:?}f64 {}", fmt_array(&xs));
    let ctx = |what: &str| format!("seed {seed}: {what}\n{src}\ninput: {input}");
    let gs = numbers(&static_, "grad", &input).map_err(|e| TestCaseError::fail(ctx(&e)))?;
    let gd = numbers(&dynamic, "grad", &input).map_err(|e| TestCaseError::fail(ctx(&e)))?;
    prop_assert_eq!(gs.len(), N + 1);
    for (s, d) in gs.iter().zip(&gd) {
        prop_assert!(
            close(*s, *d, 1e-9) || (s.is_nan() && d.is_nan()),
            "{}",
            ctx(&format!("static gradient {gs:?} vs dynamic {gd:?}"))
        );
    }
    let tangent_input = format!("{input} {dx:?}f64 {}", fmt_array(&dxs));
    let t =
        numbers(&static_, "tangent", &tangent_input).map_err(|e| TestCaseError::fail(ctx(&e)))?;
    // A map of jvp over seeds: linear in the seed, in vector mode (the
    // primal once; the default), which every program takes, and with one
    // jvp per seed.
    let per_seed = compile(&src, seed, Pipeline::per_seed_ad());
    for (mode, c) in [("vector mode", &static_), ("one jvp per seed", &per_seed)] {
        let ts =
            numbers(c, "tangents", &tangent_input).map_err(|e| TestCaseError::fail(ctx(&e)))?;
        prop_assert_eq!(ts.len(), SEED_SCALES.len());
        for (c, tc) in SEED_SCALES.iter().zip(&ts) {
            prop_assert!(
                close(*tc, c * t[0], 1e-9),
                "{}",
                ctx(&format!("{mode}: tangents {ts:?} vs {c} · {}", t[0]))
            );
        }
    }
    let mut undifferentiated = dynamic.program.clone();
    let options = nabla_ad::Options {
        vector_jvps: true,
        ..nabla_ad::Options::default()
    };
    let report = nabla_ad::differentiate_with_options(&mut undifferentiated, options)
        .map_err(|e| TestCaseError::fail(ctx(&e.to_string())))?;
    prop_assert_eq!(report.batched_jvps, 1, "{}", ctx(&format!("{report:?}")));
    let dual = gs[0] * dx + gs[1..].iter().zip(&dxs).map(|(g, d)| g * d).sum::<f64>();
    prop_assert!(
        close(t[0], dual, 1e-9),
        "{}",
        ctx(&format!("jvp {} vs ⟨vjp, ẋ⟩ {dual}", t[0]))
    );
    // Central differences along (dx, dxs), where the primal is smooth.
    let at = |h: f64| -> Result<f64, TestCaseError> {
        let ys: Vec<f64> = xs.iter().zip(&dxs).map(|(a, d)| a + h * d).collect();
        let inp = format!("{:?}f64 {}", x + h * dx, fmt_array(&ys));
        numbers(&dynamic, "primal", &inp)
            .map(|v| v[0])
            .map_err(|e| TestCaseError::fail(ctx(&e)))
    };
    let h = 1e-5;
    let fd = (at(h)? - at(-h)?) / (2.0 * h);
    let fd2 = (at(h / 2.0)? - at(-h / 2.0)?) / h;
    if !fd.is_finite() || !close(fd, fd2, 1e-4) {
        return Ok(false);
    }
    prop_assert!(
        close(t[0], fd, 1e-4),
        "{}",
        ctx(&format!("jvp {} vs central difference {fd}", t[0]))
    );
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 160,
        failure_persistence: None,
        .. ProptestConfig::default()
    })]
    #[test]
    fn static_ad_agrees_with_dynamic_ad_duality_and_finite_differences(
        seed in any::<u64>(),
        stms in 3usize..12,
    ) {
        check(seed, stms)?;
    }
}

/// The generator covers every construct it knows, over the seeds a run of
/// the property test sees (a generator that stopped producing one would
/// leave its rule untested).
#[test]
fn generator_covers_every_construct() {
    if let Ok(seed) = std::env::var("NABLA_SHOW_SEED") {
        println!("{}", program(seed.parse().unwrap(), 8).0);
    }
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        seen.extend(program(seed, 8).1);
    }
    assert_eq!(seen.len(), 27, "{seen:?}");
}

/// A fixed set of seeds, checked every run (the property test draws new
/// ones): most of them must be smooth enough to meet finite differences.
#[test]
fn fixed_seeds() {
    let mut with_fd = 0;
    for seed in 0..24u64 {
        if check(seed, 6).unwrap_or_else(|e| panic!("{e}")) {
            with_fd += 1;
        }
    }
    assert!(
        with_fd >= 12,
        "only {with_fd} of 24 programs met finite differences"
    );
}
