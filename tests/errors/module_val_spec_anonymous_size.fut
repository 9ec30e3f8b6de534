-- The parameters of a `val` specification may not have anonymous sizes.
-- ==
-- error: All function parameters must have non-anonymous sizes.

module type summer = { val sum : []f64 -> f64 }

def main (x: i32) = x
