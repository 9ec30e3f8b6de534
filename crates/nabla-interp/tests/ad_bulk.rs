//! The bulk AD rules (`reduce` with `+`, `*`, `min`, `max`; `map` of float
//! scalar operations) against the element-by-element path: each entry
//! point comes in two formulations, one the bulk rules recognise and one
//! they do not (a two-operand `reduce`, a `map` whose lambda computes an
//! index with `length`, a statement the bulk rules do not compile), and
//! both must give bit-identical primals, tangents and adjoints — including
//! zeros in products, ties and NaNs in `min`/`max`, and a `vjp` whose seed
//! is itself a `jvp` tangent (the nested sweep, up to the sign of zeros).
//! The interpreter's path counters ([`Stats`]) confirm which path each
//! formulation took: the bulk rule for `_b`, element by element for `_g`.

#[path = "common/front.rs"]
mod front;

use nabla_interp::{run_entry, run_entry_with_stats, Stats};
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
-- The index conversions (i64.i32 (i32.i64 i)) in the _g functions keep
-- them off the bulk path: the bulk rules do not compile conversions.
def mapg (xs: []f64) (ys: []f64) =
  let (us, vs) = unzip (map2 (\a i -> let b = ys[i64.i32 (i32.i64 i) % length ys] let c = a * b in (f64.sin c + a, c / b - 2)) xs (indices xs))
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
entry dot_g (xs: []f64) (ys: []f64) = vjp (\(a, b) -> sumg (map2 (\x i -> x * b[i64.i32 (i32.i64 i) % length b]) a (indices a))) (xs, ys) 1
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

/// The counter of the bulk rule that entry `{name}_b` exercises; `None`
/// for the formulations where no bulk rule applies to either entry (nested
/// AD values: the rules fall back to the element-by-element path).
fn bulk_counter(name: &str) -> Option<fn(&Stats) -> u64> {
    Some(match name {
        "vprod" | "vsum" | "vmin" | "vmax" | "nprod" => |s| s.bulk_reduces_rev,
        "jprod" | "jsum" | "jmin" | "jmax" => |s| s.bulk_reduces_fwd,
        "vmap" | "nmap" | "dot" | "n1" | "vq" | "vm" | "nm" => |s| s.bulk_maps_rev,
        "j1" | "j1x" | "j2" | "j3" => |s| s.bulk_maps_fwd,
        // A Hessian-vector product (a `vjp` inside a `jvp`: the reduce's
        // primals are dual numbers) and a `jvp` whose tangents are
        // themselves dual numbers.
        "hprod" | "n2" => return None,
        _ => panic!("no bulk counter for {name}"),
    })
}

/// Runs entry `{name}_b` (bulk path) and `{name}_g` (element by element) of
/// `p` on `args` and asserts bit-identical results (sign of zero ignored for
/// names starting with `n`) and, on a nonempty input, that each took the
/// path it is named after ([`bulk_counter`]); returns the bulk results.
fn assert_bulk_matches_generic(
    p: &nabla_ir::Program,
    name: &str,
    args: Vec<Value>,
    xs: &[f64],
) -> Vec<Value> {
    let (b, sb) = run_entry_with_stats(p, &format!("{name}_b"), args.clone());
    let (g, sg) = run_entry_with_stats(p, &format!("{name}_g"), args);
    let b = b.unwrap_or_else(|e| panic!("{name}_b: {}", e.message));
    let g = g.unwrap_or_else(|e| panic!("{name}_g: {}", e.message));
    if !xs.is_empty() {
        let generic = |s: &Stats| s.generic_maps + s.generic_reduces;
        match bulk_counter(name) {
            Some(bulk) => {
                assert!(
                    bulk(&sb) > bulk(&sg),
                    "{name} on {xs:?}: the bulk rule was not used more by {name}_b \
                     ({sb:?}) than by {name}_g ({sg:?})"
                );
                assert!(
                    generic(&sg) > generic(&sb),
                    "{name} on {xs:?}: {name}_g took the element-by-element path no more \
                     often than {name}_b ({sg:?} vs {sb:?})"
                );
            }
            None => {
                assert_eq!(sb.bulk_total(), 0, "{name}_b on {xs:?}: {sb:?}");
                assert_eq!(sg.bulk_total(), 0, "{name}_g on {xs:?}: {sg:?}");
                assert!(generic(&sb) > 0, "{name}_b on {xs:?}: {sb:?}");
            }
        }
    }
    let signless = name.starts_with('n');
    assert_eq!(
        bits(&b, signless),
        bits(&g, signless),
        "{name} on {xs:?}: bulk {b:?} vs element by element {g:?}"
    );
    b
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
            assert_bulk_matches_generic(&p, name, args, xs);
            checked += 1;
        }
    }
    assert_eq!(checked, 13 * inputs.len());
}

#[test]
fn product_adjoint_with_zeros() {
    let p = front::compile(SRC);
    let (r, st) = run_entry_with_stats(&p, "vprod_b", vec![arr(&[2.0, 0.0, 3.0, 0.5])]);
    // Only the zero's adjoint is nonzero: the product of the others.
    assert_eq!(r.unwrap(), vec![arr(&[0.0, 3.0, 0.0, 0.0])]);
    assert_eq!((st.bulk_reduces_rev, st.generic_reduces), (1, 0), "{st:?}");
    let r = run_entry(&p, "vprod_b", vec![arr(&[0.0, 2.0, 0.0, 3.0])]).unwrap();
    assert_eq!(r, vec![arr(&[0.0, 0.0, 0.0, 0.0])]);
    let r = run_entry(&p, "vprod_b", vec![arr(&[2.0, -0.5, 4.0])]).unwrap();
    assert_eq!(r, vec![arr(&[-2.0, 8.0, -1.0])]);
}

/// Forward-mode bulk `map` (rank-1 inputs, and rows read at constant
/// indices) against the element-by-element path: formulations whose
/// lambda reads through a parameter-dependent index are not recognised.
const FWD: &str = r#"
def sumg (xs: []f64) = (reduce (\(a, b) (c, d) -> (a + c, b * d)) (0, 1) (zip xs xs)).0

def m1b (xs: []f64) (ys: []f64) =
  unzip3 (map2 (\a b -> let c = a * b in (f64.sin c + a, c / b - 2, f64.sqrt (a * a) * 0)) xs ys)
def m1g (xs: []f64) (ys: []f64) =
  unzip3 (map2 (\a i -> let b = ys[i64.i32 (i32.i64 i) % length ys] let c = a * b in (f64.sin c + a, c / b - 2, f64.sqrt (a * a) * 0)) xs (indices xs))

-- An output that depends on no tangent, a parameter passed through, a constant.
def m2b (xs: []f64) (cs: []f64) = unzip3 (map2 (\a c -> (c * 2 - 1, a, 3.5)) xs cs)
def m2g (xs: []f64) (cs: []f64) = unzip3 (map2 (\a i -> (cs[i] * 2 - 1, a, 3.5)) xs (indices xs))

-- Rows read at constant indices (the hand-tracking pattern).
def m3b [n] (m: [n][3][2]f64) (ws: [n]f64) (r: i64) (c: i64) =
  map2 (\w t -> let q = t[r] in w * q[c] + f64.exp t[0][1] - t[2][c]) ws m
def m3g [n] (m: [n][3][2]f64) (ws: [n]f64) (r: i64) (c: i64) =
  map2 (\w i -> let q = m[i][r] in w * q[c] + f64.exp m[i][0][1] - m[i][2][c]) ws (indices ws)

entry j1_b (xs: []f64) (ys: []f64) (tx: []f64) (ty: []f64) = jvp2 (\(a, b) -> m1b a b) (xs, ys) (tx, ty)
entry j1_g (xs: []f64) (ys: []f64) (tx: []f64) (ty: []f64) = jvp2 (\(a, b) -> m1g a b) (xs, ys) (tx, ty)
entry j1x_b (xs: []f64) (ys: []f64) (tx: []f64) = jvp2 (\a -> m1b a ys) xs tx
entry j1x_g (xs: []f64) (ys: []f64) (tx: []f64) = jvp2 (\a -> m1g a ys) xs tx
entry j2_b (xs: []f64) (ys: []f64) (tx: []f64) = jvp2 (\a -> m2b a ys) xs tx
entry j2_g (xs: []f64) (ys: []f64) (tx: []f64) = jvp2 (\a -> m2g a ys) xs tx
entry j3_b [n] (xs: [n]f64) (ys: [n]f64) (tx: [n]f64) (ty: [n]f64) =
  let m = tabulate_3d n 3 2 (\i a b -> xs[i] * f64.i64 (a + 1) - ys[i] * f64.i64 b)
  let tm = tabulate_3d n 3 2 (\i a b -> tx[i] + f64.i64 (a * b) * ty[i])
  in (jvp2 (\q -> m3b q ys 1 0) m tm, jvp2 (\(q, w) -> m3b q w 2 1) (m, ys) (tm, ty))
entry j3_g [n] (xs: [n]f64) (ys: [n]f64) (tx: [n]f64) (ty: [n]f64) =
  let m = tabulate_3d n 3 2 (\i a b -> xs[i] * f64.i64 (a + 1) - ys[i] * f64.i64 b)
  let tm = tabulate_3d n 3 2 (\i a b -> tx[i] + f64.i64 (a * b) * ty[i])
  in (jvp2 (\q -> m3g q ys 1 0) m tm, jvp2 (\(q, w) -> m3g q w 2 1) (m, ys) (tm, ty))
-- A bulk map inside a vjp inside a jvp (nested: the forward rule must not apply
-- to the tape level) and a jvp of a function whose map runs at a lower level.
entry n1_b (xs: []f64) (ys: []f64) = jvp (\s -> vjp (\a -> sumg (m1b a ys).0) xs s) 1.5 0.5
entry n1_g (xs: []f64) (ys: []f64) = jvp (\s -> vjp (\a -> sumg (m1g a ys).0) xs s) 1.5 0.5
entry n2_b (xs: []f64) (ys: []f64) (tx: []f64) = jvp2 (\s -> jvp2 (\a -> (m1b a ys).0) xs (map (* s) tx)) 2 1
entry n2_g (xs: []f64) (ys: []f64) (tx: []f64) = jvp2 (\s -> jvp2 (\a -> (m1g a ys).0) xs (map (* s) tx)) 2 1
"#;

#[test]
fn forward_bulk_map_matches_the_elementwise_path() {
    let p = front::compile(FWD);
    let nan = f64::NAN;
    let inputs: &[&[f64]] = &[
        &[2.0, -0.5, 3.0, 1.25],
        &[2.0, 0.0, 3.0, 0.5],
        &[-0.0, 0.0, 0.0, -0.0],
        &[1.0, nan, -2.0, f64::INFINITY],
        &[0.7],
        &[],
    ];
    let mut checked = 0;
    for xs in inputs {
        let ys: Vec<f64> = (0..xs.len()).map(|i| 1.5 - 0.25 * i as f64).collect();
        let tx: Vec<f64> = (0..xs.len())
            .map(|i| if i % 2 == 0 { -0.0 } else { 0.5 + i as f64 })
            .collect();
        let ty: Vec<f64> = (0..xs.len()).map(|i| 2.0 - i as f64).collect();
        for name in ["j1", "j1x", "j2", "j3", "n1", "n2"] {
            let args = match name {
                "j1" | "j3" => vec![arr(xs), arr(&ys), arr(&tx), arr(&ty)],
                "n1" => vec![arr(xs), arr(&ys)],
                _ => vec![arr(xs), arr(&ys), arr(&tx)],
            };
            let b = assert_bulk_matches_generic(&p, name, args, xs);
            assert!(!b.is_empty());
            checked += 1;
        }
    }
    assert_eq!(checked, 6 * inputs.len());
}

#[test]
fn forward_bulk_map_values() {
    // d/dx of (sin(x·y) + x) at x = 0.5, y = 2 with tangent 1: y·cos(x·y) + 1.
    let p = front::compile(FWD);
    let (r, st) = run_entry_with_stats(&p, "j1x_b", vec![arr(&[0.5]), arr(&[2.0]), arr(&[1.0])]);
    let r = r.unwrap();
    assert_eq!((st.bulk_maps_fwd, st.generic_maps), (1, 0), "{st:?}");
    assert_eq!(r.len(), 6, "primals and tangents: {r:?}");
    let t = match &r[3] {
        Value::Array(a) => a.get_flat(0).as_f64(),
        v => panic!("{v:?}"),
    };
    assert_eq!(t, 2.0 * 1.0f64.cos() + 1.0);
}

/// Reverse-mode bulk `map` with reads of free arrays at computed indices
/// and `if`s (the GMM `qtimes` pattern) against the element-by-element
/// path: the `_g` formulations contain a statement the bulk rules do not
/// compile (`qg` an index computed with `length` of a tracked array, `mg` an
/// integer conversion).
const REV: &str = r#"
-- The index of (row j, column i) of a strictly lower triangle is written out
-- (the test front end does not inline functions).
def qb [d] (lk: []f64) (y: [d]f64) : [d]f64 =
  map (\j -> f64.sum (map (\i -> if i < j then lk[i * (d - 1) - i * (i - 1) / 2 + (j - i - 1)] * y[i] else 0.0) (iota d))) (iota d)
def qg [d] (lk: []f64) (y: [d]f64) : [d]f64 =
  map (\j -> f64.sum (map (\i -> if i < j then lk[i64.i32 (i32.i64 (i * (d - 1) - i * (i - 1) / 2 + (j - i - 1))) % length lk] * y[i] else 0.0) (iota d))) (iota d)

-- Several results, a nested if, an if result used again, a plain free array,
-- a tracked parameter, the same free array read twice per element.
def mb [n] (xs: [n]f64) (ys: [n]f64) (cs: [n]f64) : ([n]f64, [n]f64) =
  unzip (map2 (\x i ->
    let (u, v) = if x > 0 then (if i % 2 == 0 then (x * ys[i], ys[n - 1 - i]) else (cs[i] * x, 1.0))
                 else (ys[0] * ys[i], f64.exp x)
    in (u * v + u, v)) xs (iota n))
def mg [n] (xs: [n]f64) (ys: [n]f64) (cs: [n]f64) : ([n]f64, [n]f64) =
  unzip (map2 (\x i ->
    let (u, v) = if x > 0 then (if i % 2 == 0 then (x * ys[i64.i32 (i32.i64 i)], ys[n - 1 - i]) else (cs[i] * x, 1.0))
                 else (ys[0] * ys[i], f64.exp x)
    in (u * v + u, v)) xs (iota n))

def sq (v: []f64) = f64.sum (map (\x -> x * x) v)

entry vq_b (lk: []f64) (y: []f64) = vjp (\(a, b) -> sq (qb a b)) (lk, y) 1
entry vq_g (lk: []f64) (y: []f64) = vjp (\(a, b) -> sq (qg a b)) (lk, y) 1
entry vm_b (xs: []f64) (ys: []f64) (cs: []f64) = vjp2 (\(a, b) -> mb a b cs) (xs, ys) (map (+ 0.5) xs, map (* 2) ys)
entry vm_g (xs: []f64) (ys: []f64) (cs: []f64) = vjp2 (\(a, b) -> mg a b cs) (xs, ys) (map (+ 0.5) xs, map (* 2) ys)
entry nm_b (xs: []f64) (ys: []f64) (cs: []f64) = jvp (\s -> vjp (\(a, b) -> sq (mb a b cs).0) (xs, ys) s) 1.5 0.5
entry nm_g (xs: []f64) (ys: []f64) (cs: []f64) = jvp (\s -> vjp (\(a, b) -> sq (mg a b cs).0) (xs, ys) s) 1.5 0.5

-- Out of bounds: the generic path's located error.
entry oob (xs: []f64) = vjp (\a -> sq (map (\i -> a[i + 1] * 2) (iota (length a)))) xs 1
"#;

#[test]
fn reverse_bulk_map_with_reads_and_ifs_matches_the_elementwise_path() {
    let p = front::compile(REV);
    let nan = f64::NAN;
    let inputs: &[&[f64]] = &[
        &[2.0, -0.5, 3.0, 1.25],
        &[2.0, 0.0, 3.0, 0.5, -1.0, 0.25],
        &[-0.0, 0.0, 0.0, -0.0],
        &[1.0, nan, -2.0, f64::INFINITY],
        &[0.7],
        &[],
    ];
    let mut checked = 0;
    for xs in inputs {
        let n = xs.len();
        let ys: Vec<f64> = (0..n).map(|i| 1.5 - 0.25 * i as f64).collect();
        let cs: Vec<f64> = (0..n)
            .map(|i| if i == 1 { -0.0 } else { i as f64 })
            .collect();
        let lt = n * n.saturating_sub(1) / 2;
        let lk: Vec<f64> = (0..lt).map(|i| xs[i % n] - 0.5 * i as f64).collect();
        let b = assert_bulk_matches_generic(&p, "vq", vec![arr(&lk), arr(xs)], xs);
        assert_eq!(b.len(), 2);
        checked += 1;
        if n > 0 {
            for name in ["vm", "nm"] {
                let args = vec![arr(xs), arr(&ys), arr(&cs)];
                assert_bulk_matches_generic(&p, name, args, xs);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 6 + 2 * 5);
}

#[test]
fn reverse_bulk_map_values_and_errors() {
    let p = front::compile(REV);
    // d = 2: qtimes gives (0, lk[0]·y[0]); sq = (lk0·y0)²: gradient
    // (2·lk0·y0², 2·lk0²·y0, 0).
    let (r, st) = run_entry_with_stats(&p, "vq_b", vec![arr(&[3.0]), arr(&[2.0, 5.0])]);
    assert_eq!(r.unwrap(), vec![arr(&[24.0]), arr(&[36.0, 0.0])]);
    // The outer map (a nested map inside) runs element by element; its two
    // inner maps and `sq`'s map by the bulk rule.
    assert_eq!((st.bulk_maps_rev, st.generic_maps), (3, 1), "{st:?}");
    let (r, st) = run_entry_with_stats(&p, "oob", vec![arr(&[1.0, 2.0])]);
    let e = r.unwrap_err();
    // The bulk rule declines on the bad read; the generic path reports it.
    assert_eq!((st.bulk_maps_rev, st.generic_maps), (0, 1), "{st:?}");
    assert!(
        e.message.contains("out of bounds") || e.message.contains("index"),
        "{}",
        e.message
    );
    assert!(e.span.is_some(), "the error has a location: {e:?}");
}
