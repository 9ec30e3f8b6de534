-- A lambda that does not say its array parameter's size cannot have the
-- type `(count: i64) -> [count]u8 -> i64`: the size it infers for its
-- parameter would have to be the named parameter `count`.
-- ==
-- error: "count"

type^ counter = (count: i64) -> [count]u8 -> i64

def ones : counter = \_ bytes -> i64.sum (map (\b -> i64.u8 (b & 1)) bytes)

def main (bytes: []u8) = ones (length bytes) bytes
