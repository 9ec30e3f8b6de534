-- A parameter is consumable only when its type is declared unique; an
-- inferred parameter type never is.
-- ==
-- error: Consuming variable "ys", which is not consumable: it is a parameter whose type is not declared unique

def main (n: i64) : []i64 =
  let reset = \ys -> ys with [0] = 0
  in reset (iota n)
