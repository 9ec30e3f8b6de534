-- A `let` pattern must match every value of its type.
-- ==
-- error: refutable

type shape = #circle f64 | #square f64

def main (r: f64) : f64 =
  let (#circle x) : shape = #circle r
  in x
