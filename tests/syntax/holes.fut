-- Typed holes (`???`) type-check with whatever type the context wants; a
-- program with holes runs until a hole is evaluated, which is a run-time
-- error at the hole.
-- ==
-- input { 3 } output { 3 [1.0, 2.0] }
-- input { -1 } error: hole of type i32 evaluated
-- input { 7 } error: hole.*evaluated

def f (x: i32) : i32 = if x >= 0 then x else ???

def g (x: i32) : []f64 = if x > 5 then ??? else [1.0, 2.0]

def main (x: i32) : (i32, []f64) = (f x, g x)
