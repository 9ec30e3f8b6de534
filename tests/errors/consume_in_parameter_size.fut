-- A size in a parameter's type may not consume an earlier parameter.
-- ==
-- error: Consuming variable "buf", which is not consumable: a size in a parameter's type

def count (xs: *[]i64) : i64 = length (xs with [0] = 0)

def f [n] (buf: *[n]i64) (ys: [count buf]i64) : i64 = ys[0]
