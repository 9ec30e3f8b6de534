-- Operators are functions too: `|>` takes a non-consuming function, so a
-- consuming one may not be piped into.
-- ==
-- error: consuming function .* expected function type does not consume

def reset (xs: *[]i32) : *[]i32 = xs with [0] = 0

def main (xs: *[]i32) : []i32 = xs |> reset
