-- A type abbreviation declared with `type` may not be a function type.
-- ==
-- error: Non-lifted type abbreviations may not contain functions.

type op = i32 -> i32 -> i32

def main (x: i32) = x
