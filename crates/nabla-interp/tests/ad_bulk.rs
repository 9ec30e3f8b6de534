//! The bulk AD rules (`reduce` with `+`, `*`, `min`, `max`; `map` of float
//! scalar operations) against the element-by-element path: each entry
//! point comes in two formulations, one the bulk rules recognise and one
//! they do not (a two-operand `reduce`, a `map` over an index array), and
//! both must give bit-identical primals, tangents and adjoints — including
//! zeros in products, ties and NaNs in `min`/`max`, and a `vjp` whose seed
//! is itself a `jvp` tangent (the nested sweep, up to the sign of zeros).

#[path = "common/front.rs"]
mod front;

use nabla_interp::run_entry;
use nabla_values::{ArrayValue, Value};

const SRC: &str = r#"
def prodb (xs: []f64) = reduce (*) 1 xs
def prodg (xs: []f64) = (reduce (\(a, b) (c, d) -> (a * c, b + d)) (1, 0) (zip xs xs)).0
def sumb (xs: []f64) = reduce (+) 0 xs
def sumg (xs: []f64) = (reduce (\(a, b) (c, d) -> (a + c, b * d)) (0, 1) (zip xs xs)).0
def minb (xs: []f64) = reduce f64.min f64.inf xs
def ming (xs: []f64) = (reduce (\(a, b) (c, d) -> (f64.min a c, b + d)) (f64.inf, 0) (zip xs xs)).0
def maxb (xs: []f64) = reduce f64.max (-f64.inf) xs
def maxg (xs: []f64) = (reduce (\(a, b) (c, d) -> (f64.max a c, b + d)) (-f64.inf, 0) (zip xs xs)).0

def mapb (xs: []f64) (ys: []f64) =
  let (us, vs) = unzip (map2 (\a b -> let c = a * b in (f64.sin c + a, c / b - 2)) xs ys)
  in sumb us * 2 + sumb vs
def mapg (xs: []f64) (ys: []f64) =
  let (us, vs) = unzip (map2 (\a i -> let b = ys[i] let c = a * b in (f64.sin c + a, c / b - 2)) xs (indices xs))
  in sumg us * 2 + sumg vs

entry vprod_b (xs: []f64) = vjp prodb xs 1
entry vprod_g (xs: []f64) = vjp prodg xs 1
entry jprod_b (xs: []f64) (ts: []f64) = jvp prodb xs ts
entry jprod_g (xs: []f64) (ts: []f64) = jvp prodg xs ts
entry vsum_b (xs: []f64) = vjp sumb xs 1
entry vsum_g (xs: []f64) = vjp sumg xs 1
entry jsum_b (xs: []f64) (ts: []f64) = jvp sumb xs ts
entry jsum_g (xs: []f64) (ts: []f64) = jvp sumg xs ts
entry vmin_b (xs: []f64) = vjp minb xs 1
entry vmin_g (xs: []f64) = vjp ming xs 1
entry jmin_b (xs: []f64) (ts: []f64) = jvp minb xs ts
entry jmin_g (xs: []f64) (ts: []f64) = jvp ming xs ts
entry vmax_b (xs: []f64) = vjp maxb xs 1
entry vmax_g (xs: []f64) = vjp maxg xs 1
entry jmax_b (xs: []f64) (ts: []f64) = jvp maxb xs ts
entry jmax_g (xs: []f64) (ts: []f64) = jvp maxg xs ts
entry vmap_b (xs: []f64) (ys: []f64) = vjp (\(a, b) -> mapb a b) (xs, ys) 1
entry vmap_g (xs: []f64) (ys: []f64) = vjp (\(a, b) -> mapg a b) (xs, ys) 1
entry nmap_b (xs: []f64) (ys: []f64) = jvp (\s -> vjp (\(a, b) -> mapb a b) (xs, ys) s) 1.5 0.5
entry nmap_g (xs: []f64) (ys: []f64) = jvp (\s -> vjp (\(a, b) -> mapg a b) (xs, ys) s) 1.5 0.5
entry nprod_b (xs: []f64) = jvp (\s -> vjp prodb xs s) 2 1
entry nprod_g (xs: []f64) = jvp (\s -> vjp prodg xs s) 2 1
entry hprod_b (xs: []f64) (ts: []f64) = jvp (\p -> vjp prodb p 1) xs ts
entry hprod_g (xs: []f64) (ts: []f64) = jvp (\p -> vjp prodg p 1) xs ts
entry dot_b (xs: []f64) (ys: []f64) = vjp (\(a, b) -> sumb (map2 (*) a b)) (xs, ys) 1
entry dot_g (xs: []f64) (ys: []f64) = vjp (\(a, b) -> sumg (map2 (\x i -> x * b[i]) a (indices a))) (xs, ys) 1
"#;

fn arr(xs: &[f64]) -> Value {
    Value::Array(ArrayValue::from_vec(&[xs.len() as i64], xs.to_vec()))
}

/// The values' bits; with `signless`, `-0.0` counts as `0.0` (the nested
/// sweep sums bulk contributions without a zero-initialised adjoint, so
/// its zeros may differ in sign — the one known difference).
fn bits(vs: &[Value], signless: bool) -> Vec<u64> {
    let b = |x: f64| if signless && x == 0.0 { 0 } else { x.to_bits() };
    vs.iter()
        .flat_map(|v| match v {
            Value::Prim(p) => vec![b(p.as_f64())],
            Value::Array(a) => a.iter_prims().map(|p| b(p.as_f64())).collect(),
        })
        .collect()
}

#[test]
fn bulk_rules_match_the_elementwise_path() {
    let p = front::compile(SRC);
    let nan = f64::NAN;
    let inputs: &[&[f64]] = &[
        &[2.0, -0.5, 3.0, 1.25],
        &[2.0, 0.0, 3.0, 0.5],
        &[0.0, 2.0, 0.0, 3.0],
        &[3.0, 1.0, 1.0, 2.0, 3.0],
        &[1.0, nan, -2.0, nan],
        &[-0.0, 0.0, 0.0, -0.0],
        &[0.7],
        &[],
    ];
    let mut checked = 0;
    for xs in inputs {
        let ts: Vec<f64> = (0..xs.len()).map(|i| 0.5 + i as f64).collect();
        let ys: Vec<f64> = (0..xs.len()).map(|i| 1.5 - 0.25 * i as f64).collect();
        for name in [
            "vprod", "jprod", "vsum", "jsum", "vmin", "jmin", "vmax", "jmax", "vmap", "nmap",
            "nprod", "hprod", "dot",
        ] {
            let args = match name {
                "vmap" | "nmap" | "dot" => vec![arr(xs), arr(&ys)],
                "vprod" | "vsum" | "vmin" | "vmax" | "nprod" => vec![arr(xs)],
                _ => vec![arr(xs), arr(&ts)],
            };
            let b = run_entry(&p, &format!("{name}_b"), args.clone())
                .unwrap_or_else(|e| panic!("{name}_b: {}", e.message));
            let g = run_entry(&p, &format!("{name}_g"), args)
                .unwrap_or_else(|e| panic!("{name}_g: {}", e.message));
            let signless = name.starts_with('n');
            assert_eq!(
                bits(&b, signless),
                bits(&g, signless),
                "{name} on {xs:?}: bulk {b:?} vs element by element {g:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 13 * inputs.len());
}

#[test]
fn product_adjoint_with_zeros() {
    let p = front::compile(SRC);
    let r = run_entry(&p, "vprod_b", vec![arr(&[2.0, 0.0, 3.0, 0.5])]).unwrap();
    // Only the zero's adjoint is nonzero: the product of the others.
    assert_eq!(r, vec![arr(&[0.0, 3.0, 0.0, 0.0])]);
    let r = run_entry(&p, "vprod_b", vec![arr(&[0.0, 2.0, 0.0, 3.0])]).unwrap();
    assert_eq!(r, vec![arr(&[0.0, 0.0, 0.0, 0.0])]);
    let r = run_entry(&p, "vprod_b", vec![arr(&[2.0, -0.5, 4.0])]).unwrap();
    assert_eq!(r, vec![arr(&[-2.0, 8.0, -1.0])]);
}
