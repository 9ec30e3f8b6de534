module M = {
  type t = {x: f64, y: f64}
  def norm (p: t) : f64 = f64.sqrt (p.x * p.x + p.y * p.y)
}

type opt = #none | #some i32

def get (o: opt) : i32 = match o case #some v -> v case #none -> 0

entry main (xs: []f64) : (f64, i32) =
  let p = {x = xs[0], y = 2.0}
  in (M.norm (p with x = 3.0), get (#some (i32.f64 p.y)))
