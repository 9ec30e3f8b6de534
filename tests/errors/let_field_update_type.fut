-- `let r.f = v` with a value of another type than the field's: Futhark's
-- words, naming the field.
-- ==
-- error: Type mismatch when updating record field "b.c".*expected `i32`, found `bool`

def main (x: bool) : i32 =
  let r = {a = 1, b = {c = 2}}
  let r.b.c = x
  in r.b.c
