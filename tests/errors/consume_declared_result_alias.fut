-- A call's result aliases what the callee's declared type says: a
-- non-unique array result aliases the arguments, even when the body
-- happens to build a fresh array. Updating it consumes the argument.
-- ==
-- error: Using variable "a", but this was consumed

def inc (xs: []i32) : []i32 = map (+1) xs

def main (a: *[]i32) : i32 =
  let b = inc a
  let b[0] = 0
  in a[0] + b[0]
