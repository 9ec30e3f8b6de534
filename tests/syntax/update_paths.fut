-- Update paths mixing record fields and indices, in `with` and `let`
-- forms: each updates one part of the value and leaves the rest.
-- ==
-- entry: element_field
-- input { [1, 2, 3] 9 } output { [1, 9, 3] [10, 20, 30] }

-- ==
-- entry: field_index
-- input { [1.0, 2.0] 5.0 } output { [1.0, 5.0] 7i64 }

-- ==
-- entry: tuple_component
-- input { [1, 2] [3, 4] } output { [0, 2] [3, 0] }

-- ==
-- entry: let_paths
-- input { 6 } output { 6 [[0, 6], [0, 0]] [1, 2, 6] 6 }

-- ==
-- entry: computed_source
-- input { 3i64 4 } output { [4, 1, 2] [0, 1, 2] }

type point = {x: i32, y: i32}

entry element_field (xs: []i32) (v: i32) : ([]i32, []i32) =
  let ps : []point = map (\x -> {x, y = x * 10}) xs
  let ps' = ps with [1].x = v
  in (map (.x) ps', map (.y) ps')

entry field_index (vs: []f64) (v: f64) : ([]f64, i64) =
  let r = {vals = copy vs, n = 7i64}
  let r' = r with vals[1] = v
  in (r'.vals, r'.n)

entry tuple_component [n] (a: *[n]i32) (b: *[n]i32) : ([n]i32, [n]i32) =
  let t = (a, b)
  in (t with 0[0] = 0) with 1[1] = 0

entry let_paths (v: i32) : (i32, [][]i32, []i32, i32) =
  let r = {a = {b = 1}, c = 2}
  let r.a.b = v
  let m = {rows = [[0, 0], [0, 0]]}
  let m.rows[0][1] = v
  let s = {xs = [1, 2, 3]}
  let s.xs[2] = v
  let ps : [2]point = [{x = 0, y = 0}, {x = 0, y = 0}]
  let ps[1].y = v
  in (r.a.b, m.rows, s.xs, ps[1].y)

-- The source is evaluated once, and the updated element only changes in
-- the result.
entry computed_source (n: i64) (v: i32) : ([]i32, []i32) =
  let rows = map (\i -> {vals = map i32.i64 (iota n), k = i32.i64 i}) (iota 2)
  let rows' = (map (\r -> r with k = r.k + 1) rows) with [0].vals[0] = v
  in (rows'[0].vals, rows'[1].vals)
