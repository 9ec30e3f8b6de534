-- Scans and histograms of scalars, which multicore C runs in parallel
-- (issue 31): a scan by a non-commutative operator (composing affine
-- maps x -> a*x + b, so a thread's carry must come before its values), a
-- scan of a pair, and histograms by + and by a pair of (min, +), with
-- indices out of range that are ignored. Expected values by hand; the
-- corpus runs them with every level parallel from 2 rows on, on 1, 2 and
-- 3 threads.
-- ==
-- entry: affine_prefixes
-- input { [2i64, 1i64, 3i64, -1i64, 2i64, 1i64, 1i64]
--         [1i64, 5i64, 0i64, 2i64, -3i64, 4i64, 0i64] }
-- output { [2i64, 2i64, 6i64, -6i64, -12i64, -12i64, -12i64]
--          [1i64, 6i64, 18i64, -16i64, -35i64, -31i64, -31i64] }
-- input { empty([0]i64) empty([0]i64) }
-- output { empty([0]i64) empty([0]i64) }

-- ==
-- entry: running_count_and_sum
-- input { [3.0, -1.0, 0.5, 4.0, 2.5] }
-- output { [1i64, 2i64, 3i64, 4i64, 5i64] [3.0, 2.0, 2.5, 6.5, 9.0] }

-- ==
-- entry: bins
-- input { 4i64 [0i64, 3i64, 3i64, -1i64, 1i64, 4i64, 0i64, 3i64]
--               [5i64, 1i64, 2i64, 100i64, 7i64, 100i64, -2i64, 3i64] }
-- output { [3i64, 7i64, 0i64, 6i64] }

-- ==
-- entry: smallest_and_total
-- input { 3i64 [2i64, 0i64, 2i64, 7i64, 0i64, 2i64]
--               [4.0, 1.5, -2.0, 9.0, 0.5, 3.0] }
-- output { [0i64, 9223372036854775807i64, -2i64] [2.0, 0.0, 5.0] }

-- The prefix compositions of the affine maps (a, b): x -> a*x + b,
-- applied left to right.
entry affine_prefixes [n] (as: [n]i64) (bs: [n]i64) : ([n]i64, [n]i64) =
  unzip (scan (\(a1, b1) (a2, b2) -> (a1 * a2, b1 * a2 + b2)) (1, 0) (zip as bs))

entry running_count_and_sum [n] (xs: [n]f64) : ([n]i64, [n]f64) =
  unzip (scan (\(c1, s1) (c2, s2) -> (c1 + c2, s1 + s2)) (0, 0.0) (zip (replicate n 1) xs))

entry bins [n] (k: i64) (is: [n]i64) (vs: [n]i64) : [k]i64 =
  reduce_by_index (replicate k 0) (+) 0 is vs

entry smallest_and_total [n] (k: i64) (is: [n]i64) (vs: [n]f64) : ([k]i64, [k]f64) =
  let ws = map (\v -> i64.f64 v) vs
  in unzip (reduce_by_index (replicate k (i64.highest, 0.0))
                            (\(m1, t1) (m2, t2) -> (i64.min m1 m2, t1 + t2))
                            (i64.highest, 0.0) is (zip ws vs))
