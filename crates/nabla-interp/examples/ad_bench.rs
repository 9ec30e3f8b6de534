//! Benchmarks of AD in the interpreter (run with `--release`):
//!
//! * `ad_bench seed [RUNS]` — Jensen 2024, §4.2's program (a 100000-iteration
//!   loop of primitive operations, branches and a `reduce`) in its four
//!   modes: 0 primal, 1 `jvp`, 2 `vjp`, 3 constant; prints the best time
//!   of each mode and the AD/primal factors (the thesis reports ×2.634 for
//!   jvp and ×2.101 for vjp in the Futhark interpreter).
//! * `ad_bench loop N` — `vjp` of a loop of `N` steps that sums every
//!   intermediate value (the thesis' caveat #2, exponential for a recursive
//!   `deriveTape`); run it under `/usr/bin/time -v` for the peak RSS.
//! * `ad_bench big [N]` — `vjp` of a dot product and of `reduce (*)` over
//!   `N` (default 10^6) elements, and the primal runs for comparison.

use nabla_interp::run_entry;
use nabla_prim::PrimValue;
use nabla_values::{ArrayValue, Value};
use std::time::{Duration, Instant};

#[path = "../tests/common/front.rs"]
mod front;

const SEED: &str = r#"
def f (x: f32) =
  loop x = x for i < 100000 do
    let s = (i32.f32 (x * 10)) %% 4 in
    if x > 100 then
      if s == 0 then 1 + f32.sin x   else
      if s == 1 then 1 + f32.cos x   else
      if s == 2 then f32.log1p x     else
      if s == 3 then f32.sqrt x      else
      x / 13
    else
      if s == 0 then x + 10          else
      if s == 1 then x ** 3          else
      if s == 2 then f32.exp (x / 10) else
      if s == 3 then reduce (*) x [2, x, 5] else
      x * 1.3

def main (d: i32) (x: f32) =
  if d == 0      then f x
  else if d == 1 then jvp f x 1
  else if d == 2 then vjp f x 1
  else 0
"#;

const LOOP: &str = r#"
def g (n: i64) (x: f64) =
  let (_, s) = loop (y, s) = (x, 0) for i < n do
    let y' = f64.sin y * 0.5 + y * 0.75 + 0.1
    in (y', s + y')
  in s

entry primal (n: i64) (x: f64) = g n x
entry grad (n: i64) (x: f64) = vjp (g n) x 1
"#;

const BIG: &str = r#"
entry dot (xs: []f64) (ys: []f64) = reduce (+) 0 (map2 (*) xs ys)
entry dot_grad (xs: []f64) (ys: []f64) = vjp (\(a, b) -> reduce (+) 0 (map2 (*) a b)) (xs, ys) 1
entry prod (xs: []f64) = reduce (*) 1 xs
entry prod_grad (xs: []f64) = vjp (\a -> reduce (*) 1 a) xs 1
"#;

/// The minimum of the runs (the machine is shared; the minimum is the most
/// stable estimate of the undisturbed time).
fn best(ts: Vec<Duration>) -> Duration {
    ts.into_iter().min().unwrap_or_default()
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    best(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("seed") | None => {
            let runs = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(15);
            let p = front::compile(SEED);
            let mut t = [Duration::ZERO; 4];
            for (d, slot) in t.iter_mut().enumerate() {
                let a = vec![
                    Value::Prim(PrimValue::I32(d as i32)),
                    Value::Prim(PrimValue::F32(3.0)),
                ];
                *slot = time(runs, || {
                    run_entry(&p, "main", a.clone()).unwrap();
                });
            }
            let base = ms(t[0]) - ms(t[3]);
            for (d, name) in ["primal", "jvp", "vjp", "constant"].iter().enumerate() {
                println!(
                    "mode {d} ({name:8}): {:8.2} ms   factor vs primal: {:.3}",
                    ms(t[d]),
                    (ms(t[d]) - ms(t[3])) / base
                );
            }
        }
        Some("mode") => {
            // One mode only (for profiling): `ad_bench mode D RUNS`.
            let d: i32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
            let runs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(15);
            let p = front::compile(SEED);
            let a = vec![
                Value::Prim(PrimValue::I32(d)),
                Value::Prim(PrimValue::F32(3.0)),
            ];
            let t = time(runs, || {
                run_entry(&p, "main", a.clone()).unwrap();
            });
            println!("mode {d}: {:.2} ms", ms(t));
        }
        Some("loop") => {
            let n: i64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
            let which = args.get(2).map(String::as_str).unwrap_or("grad");
            let p = front::compile(LOOP);
            let a = vec![
                Value::Prim(PrimValue::I64(n)),
                Value::Prim(PrimValue::F64(0.3)),
            ];
            let t = Instant::now();
            let r = run_entry(&p, which, a).unwrap();
            println!(
                "loop n={n} {which}: {:.1} ms, result {}",
                ms(t.elapsed()),
                r[0]
            );
        }
        Some("big") => {
            let n: usize = args
                .get(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000);
            let p = front::compile(BIG);
            let xs: Vec<f64> = (0..n).map(|i| 1.0 + ((i % 7) as f64) * 1e-7).collect();
            let ys: Vec<f64> = (0..n).map(|i| (i % 13) as f64 * 0.1).collect();
            let xa = Value::Array(ArrayValue::from_vec(&[n as i64], xs));
            let ya = Value::Array(ArrayValue::from_vec(&[n as i64], ys));
            for (e, a) in [
                ("dot", vec![xa.clone(), ya.clone()]),
                ("dot_grad", vec![xa.clone(), ya.clone()]),
                ("prod", vec![xa.clone()]),
                ("prod_grad", vec![xa.clone()]),
            ] {
                let d = time(5, || {
                    run_entry(&p, e, a.clone()).unwrap();
                });
                println!("{e:10} n={n}: {:8.2} ms", ms(d));
            }
        }
        Some(other) => eprintln!("unknown benchmark {other}; use seed, loop N or big [N]"),
    }
}
