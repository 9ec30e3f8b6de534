-- The loop body updates `acc` in place, so the initial value `xs` is
-- consumed by the loop; the body may then not read `xs` (it would see the
-- updates). Passing `copy xs` as the initial value fixes this.
-- ==
-- error: Loop body uses variable "xs" \(or an alias\), but this is consumed by the initial loop argument

def main (n: i64) : []i64 =
  let xs = iota n
  in loop acc = xs for i < n do
       acc with [i] = xs[i] * 2
