-- A type abbreviation declared with `type` may not have an anonymous size.
-- ==
-- error: Non-lifted type abbreviations may not use existential sizes in their definition.

type row = []f64

def main (x: i32) = x
