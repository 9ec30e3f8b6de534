-- A size parameter must be the size of some parameter: one that appears
-- only in the result type can never be given a value.
-- ==
-- error: size parameter `\[n\]` is not the size of any parameter

def zeros [n] (x: i32) : [n]i32 = replicate n x

def main (x: i32) : []i32 = zeros x
