-- A function value passed beside an argument that the call consumes may
-- not capture that argument: the callee could apply it after the update.
-- ==
-- error: Argument is consumed, but aliases variable "xs"

def set_first (xs: *[]i32) (f: i64 -> i32) : []i32 = xs with [0] = f 1

def main (xs: *[]i32) : []i32 = set_first xs (\i -> xs[i])
