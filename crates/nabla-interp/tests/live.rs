//! In-place updates next to dead aliases (`src/live.rs`): a loop that reads
//! a row of an array (a view sharing its buffer) and then updates the array
//! must give the same results as copy-on-write semantics, and write in place
//! (the view is dead by then). Programs where an alias is still read after
//! the update are rejected by the type checker's consumption check, as in
//! Futhark. Also frame reuse across calls.

#[path = "common/front.rs"]
mod front;

use nabla_interp::{run_entry, run_entry_with_stats};
use nabla_prim::PrimValue;
use nabla_values::Value;

const SRC: &str = r#"
-- Each iteration reads row t % n (a view of `a`), then writes one element.
entry rows (n: i64) (k: i64) : [n][n]i64 =
  let a = tabulate_2d n n (\i j -> i * 1000 + j)
  in loop a for t < k do
       let r = a[t % n]
       let x = r[(t * 7) % n]
       in a with [(t * 3) % n, t % n] = x + 1

-- scatter and reduce_by_index after reading a row.
entry sc (n: i64) (k: i64) : ([n][n]i64, [n]i64) =
  let a = tabulate_2d n n (\i j -> i + j)
  let h = replicate n 0
  in loop (a, h) for t < k do
       let r = a[t % n]
       let (r0, r1) = (r[0], r[1])
       let a' = scatter_2d a [((t * 5) % n, t % n)] [r0 + t]
       let h' = reduce_by_index h (+) 0 [(t * 11) % n] [r1]
       in (a', h')

def f (xs: []i64) (i: i64) : i64 = xs[i % length xs] + i
entry calls (k: i64) : i64 =
  loop s = 0 for i < k do s + f (iota 5) i + f [7, 8] s
"#;

fn i(x: i64) -> Value {
    Value::Prim(PrimValue::I64(x))
}

fn ints(v: &Value) -> Vec<i64> {
    match v {
        Value::Prim(p) => vec![p.as_i64()],
        Value::Array(a) => a.iter_prims().map(|p| p.as_i64()).collect(),
    }
}

#[test]
fn row_reads_then_updates() {
    let p = front::compile(SRC);
    let (n, k) = (37usize, 5000usize);
    let (r, stats) = run_entry_with_stats(&p, "rows", vec![i(n as i64), i(k as i64)]);
    let r = r.unwrap();
    // In place: the row view is dead at each update. Only the first write
    // copies, because the loop's initial value still shares its buffer.
    assert_eq!(stats.array_writes, k as u64, "{stats:?}");
    assert_eq!(stats.cow_copies, 1, "{stats:?}");
    let mut a: Vec<i64> = (0..n * n).map(|q| (q / n * 1000 + q % n) as i64).collect();
    for t in 0..k {
        let x = a[(t % n) * n + (t * 7) % n];
        a[((t * 3) % n) * n + t % n] = x + 1;
    }
    assert_eq!(ints(&r[0]), a);
}

#[test]
fn scatter_and_hist_after_row_reads() {
    let p = front::compile(SRC);
    let (n, k) = (13usize, 400usize);
    let (r, stats) = run_entry_with_stats(&p, "sc", vec![i(n as i64), i(k as i64)]);
    let r = r.unwrap();
    // One scatter and one reduce_by_index write per iteration, in place
    // except the first of each (the loop's initial values share them).
    assert_eq!(stats.array_writes, 2 * k as u64, "{stats:?}");
    assert_eq!(stats.cow_copies, 2, "{stats:?}");
    let mut a: Vec<i64> = (0..n * n).map(|q| (q / n + q % n) as i64).collect();
    let mut h = vec![0i64; n];
    for t in 0..k {
        let row = t % n;
        let (r0, r1) = (a[row * n], a[row * n + 1]);
        a[((t * 5) % n) * n + t % n] = r0 + t as i64;
        h[(t * 11) % n] += r1;
    }
    assert_eq!(ints(&r[0]), a);
    assert_eq!(ints(&r[1]), h);
}

#[test]
fn reused_frames_start_dead() {
    let p = front::compile(SRC);
    let k = 50i64;
    let r = run_entry(&p, "calls", vec![i(k)]).unwrap();
    let mut s = 0i64;
    for q in 0..k {
        let a = q % 5 + q;
        let b = [7, 8][(s % 2) as usize] + s;
        s = s + a + b;
    }
    assert_eq!(ints(&r[0]), vec![s]);
}
