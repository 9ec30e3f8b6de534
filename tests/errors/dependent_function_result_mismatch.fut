-- A function argument whose result size is its parameter plus one
-- cannot stand for a function type promising a result of exactly its
-- parameter's size (dependent function types are compared with their
-- parameter names made one).
-- ==
-- error: Sizes "k" and "k \+ 2" do not match

def build (make: (k: i64) -> [k]f32) (n: i64) : [n]f32 =
  make n

def main (n: i64) = build (\k -> replicate (k + 2) 1f32) n
