-- Unique tuples used correctly: separate arrays for a consuming tuple
-- parameter (the components of a parameter alias the parameter as a whole,
-- so `b` is read before `a` is updated), unique result components that are
-- copies of each other, a consuming function given a consuming type, and a
-- size-polymorphic entry point whose size is used directly.
-- ==
-- input { [1i64, 2i64, 3i64] } output { [2i64, 4i64, 6i64] [9i64, 2i64, 3i64] [1i64, 2i64, 3i64] }

def fill (t: *([]i64, []i64)) : []i64 =
  let (a, b) = t
  in map2 (+) (a with [0] = 1) b

def pair (xs: *[]i64) : (*[]i64, *[]i64) = (xs, copy xs)

def set9 (xs: *[]i64) : *[]i64 = xs with [0] = 9

def consuming : *[]i64 -> *[]i64 = set9

entry main [n] (xs: [n]i64) : ([]i64, []i64, []i64) =
  let s = fill (copy xs, copy xs)
  let (p, q) = pair (copy xs)
  in (s, consuming p, q)
