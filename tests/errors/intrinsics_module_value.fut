-- The built-in module `intrinsics` has members, but it is not a module
-- value: it may not appear in a module expression.
-- ==
-- error: The 'intrinsics' module may not be used in module expressions

module M = intrinsics

def main (x: i32) = x
