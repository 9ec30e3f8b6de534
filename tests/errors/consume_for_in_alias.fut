-- The elements of `for x in xs` alias `xs`: a loop result built from them
-- is consumed with `xs`.
-- ==
-- error: "r", which aliases variable "xss", but this was consumed

def main (xss: *[][]i32) : i32 =
  let r = loop acc = copy xss[0] for row in xss do row
  let xss[0, 0] = 1
  in r[0]
