-- GradBench `det` (from cmpad's `det_by_minor`): the determinant by
-- expansion in minors, and its gradient (the cofactor matrix) by
-- reverse-mode AD.
--
-- Futhark has no recursion, so the recursive expansion along the first row
-- is unrolled: a path through the recursion picks, at row i, the c_i-th of
-- the ell - i columns not used yet, with sign (-1)^c_i.  The choices
-- (c_0, ..., c_{ell-1}) are the digits of a number p < ell! in the
-- factorial number system, so det(A) is the sum over p of
-- (-1)^(sum c_i) * prod_i A[i, column chosen at row i]: exactly the terms
-- of the expansion by minors, O(ell * ell!) work.

def factorial (n: i64) : i64 = loop r = 1 for i < n do r * (i + 1)

-- The columns chosen along path `p` and the path's sign.
def path (ell: i64) (p: i64) : ([ell]i64, f64) =
  let (cols, _, _, sign) =
    loop (cols, used, rest, sign) = (replicate ell 0i64, replicate ell false, p, 1.0f64)
    for i < ell do
      let f = factorial (ell - 1 - i)
      let c = rest / f
      -- The c-th column not used yet.
      let (col, _) =
        loop (col, k) = (-1i64, c) for j < ell do
          if col >= 0 || used[j] then (col, k)
          else if k == 0 then (j, k)
          else (col, k - 1)
      in (cols with [i] = col, used with [col] = true, rest % f,
          if c % 2 == 0 then sign else -sign)
  in (cols, sign)

def det [ell2] (ell: i64) (a: [ell2]f64) : f64 =
  let term (p: i64) : f64 =
    let (cols, sign) = path ell p
    in sign * f64.product (map2 (\i c -> a[i * ell + c]) (iota ell) cols)
  in f64.sum (map term (iota (factorial ell)))

entry primal [ell2] (a: [ell2]f64) (ell: i64) : f64 = det ell a

entry gradient [ell2] (a: [ell2]f64) (ell: i64) : [ell2]f64 = vjp (det ell) a 1.0
