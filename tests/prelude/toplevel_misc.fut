-- The rest of Futhark's prelude.fut: r32 t32 r64 t64 (conversions
-- between i32 and floats, truncating), not, and the identities opaque,
-- trace and break.
-- ==
-- entry: conversions
-- input { 3 3.7f32 -3.7 } output { 3f32 3 3.0 -3 }

entry conversions (i: i32) (x: f32) (y: f64) : (f32, i32, f64, i32) =
  (r32 i, t32 x, r64 i, t64 y)

-- ==
-- entry: negations
-- input { [true, false] } output { [false, true] }

entry negations (bs: []bool) : []bool = map not bs

-- ==
-- entry: identities
-- input { [1, 2] 2.5 } output { [1, 2] 2.5 [1, 2] }

entry identities (xs: []i32) (y: f64) : ([]i32, f64, []i32) =
  let r = opaque {a = xs, b = y}
  in (r.a, trace r.b, break xs)
