-- GradBench `det` (from cmpad's `det_by_minor`): the determinant by
-- expansion in minors, and its gradient (the cofactor matrix) by
-- reverse-mode AD.
--
-- Futhark has no recursion, so the recursive expansion along the first row
-- is unrolled level by level, sharing the partial products of common
-- prefixes as the recursion does: a path through the recursion picks, at
-- row l, the c-th of the ell - l columns not used yet, with sign (-1)^c.
-- After level l there are ell!/(ell-l-1)! paths; path q's parent is
-- q / (ell - l) and its choice c = q % (ell - l). Each path keeps its
-- signed product and the bitmask of the columns it used, so det(A) is the
-- sum of the ell! full paths: exactly the terms of the expansion by
-- minors, with the recursion's O(e * ell!) multiplications. The arrays
-- keep the size ell! at every level (the paths beyond the level's count
-- are zeros) so that the loop's checkpoints in reverse mode are regular.

def factorial (n: i64) : i64 = loop r = 1 for i < n do r * (i + 1)

def det [ell2] (ell: i64) (a: [ell2]f64) : f64 =
  let n = factorial ell
  -- nth_free[m * ell + c]: the c-th column (from 0) not in the bitmask m.
  let nth_free =
    tabulate ((1 << ell) * ell) (\q ->
      let m = q / ell
      let c = q % ell
      let (col, _) =
        loop (col, k) = (ell, c) for j < ell do
          if col < ell || (m >> j) & 1 == 1 then (col, k)
          else if k == 0 then (j, k)
          else (col, k - 1)
      in col)
  let (coefs, _, _) =
    loop (coefs: [n]f64, masks: [n]i64, m) = (replicate n 1.0, replicate n 0, 1) for l < ell do
      let w = ell - l
      let (cs, ms) =
        unzip (tabulate n (\q ->
                 if q >= m * w then (0.0, 0)
                 else
                   let parent = q / w
                   let c = q % w
                   let col = nth_free[masks[parent] * ell + c]
                   let s = if c % 2 == 0 then 1.0 else -1.0
                   in (coefs[parent] * s * a[l * ell + col], masks[parent] | (1 << col))))
      in (cs, ms, m * w)
  in f64.sum coefs

entry primal [ell2] (a: [ell2]f64) (ell: i64) : f64 = det ell a

entry gradient [ell2] (a: [ell2]f64) (ell: i64) : [ell2]f64 = vjp (det ell) a 1.0
