-- The `[]` of a lambda's declared result type is inferred from its body,
-- so the lambda below has type `(m: i64) -> [m * 2]i32`, which is not the
-- `(m: i64) -> [m]i32` that `apply_sized` asks for.
-- ==
-- error: Sizes "m" and "m \* 2" do not match

def apply_sized (g: (m: i64) -> [m]i32) : i32 =
  i32.sum (g 4)

def main = apply_sized (\m : []i32 -> replicate (m * 2) 3)
