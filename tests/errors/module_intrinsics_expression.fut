-- Futhark's module of intrinsics cannot be opened or bound as a module.
-- ==
-- error: The 'intrinsics' module may not be used in module expressions.

open intrinsics

def main (x: i32) = x
