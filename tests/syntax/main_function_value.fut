-- `def main` (the entry point when no entry point is named `main`) may be a
-- partial application: it takes the rest of the parameters of its type.
-- ==
-- input { 5 [1, 2, 3] } output { [6, 7, 8] }
-- input { -1 empty([0]i32) } output { empty([0]i32) }

def main (k: i32) = map (+ k)
