-- An existential size of a declared result type is one size: both
-- dimensions of a square must be the same.
-- ==
-- error: Sizes .* do not match

type grid [n] 'a = [n][n]a

def make (k: i64) : grid [] f32 = replicate (k + 1) (replicate (k + 3) 0f32)
