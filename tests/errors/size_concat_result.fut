-- The size of `a ++ b` is the sum of the operands' sizes, each inferred
-- from the body where the parameter leaves it anonymous: it cannot be the
-- declared constant.
-- ==
-- error: Sizes "7" and .*do not match

def joined (a: []f32) (b: []f32) : [7]f32 = a ++ b

def main (x: []f32) = joined x x
