-- Types beyond records of scalars, for the library test: a sum type, an
-- array of records, nested records, f16, bool and a unit result.
type shape = #circle f64 | #rect f64 f64
type pt = {x: f32, y: f32}
type seg = {a: pt, b: pt, tag: i8}

entry area (s: shape) : f64 =
  match s
  case #circle r -> 3.0 * r * r
  case #rect w h -> w * h

entry rect (w: f64) (h: f64) : shape = #rect w h

entry pts (n: i64) : []pt = tabulate n (\i -> {x = f32.i64 i, y = 1})

entry sum_x (ps: []pt) : f32 = f32.sum (map (.x) ps)

entry nothing (x: i32) : () = ()

entry half (x: f16) : f16 = x / 2

entry mkseg (x: f32) : seg = {a = {x, y = 0}, b = {x = 0, y = x}, tag = 7}

entry flip (x: u8) (b: bool) : (u8, bool, [3]u16) = (x + 1, !b, [1, 2, 3])
