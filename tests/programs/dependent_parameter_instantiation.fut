-- Functions whose result size is a named parameter, passed where a type
-- parameter takes their result: the size becomes unknown, which is
-- fine outside function parameters.
-- ==
-- input { 3i64 }
-- output { [0i64, 1i64, 2i64] 3i64 }

def apply_to '^a '^b (f: a -> b) (x: a) : b = f x

def main (n: i64) =
  let xs = apply_to iota n
  let m = length (n |> iota)
  in (xs, m)
