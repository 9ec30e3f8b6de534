-- `let r.f[i] = v` consumes `r`: an alias of its field made before may
-- not be used after it.
-- ==
-- error: Using "d", which aliases variable "r", but this was consumed

def main (x: i32) : i32 =
  let r = {a = 1, d = [0, 0, 0]}
  let d = r.d
  let r.d[1] = x
  in d[0] + r.d[1]
