-- Properties checked on randomly generated inputs.
-- ==
-- random input { [100]i32 } output { true }
-- random input { [1]i32 } output { true }

def main (xs: []i32) : bool =
  let rr = reverse (reverse xs)
  let s1 = reduce (+) 0 xs
  let s2 = foldl (+) 0 xs
  let ps = scan (+) 0 xs
  in and (map2 (==) rr xs) && s1 == s2 && last ps == s1

-- ==
-- entry: partition_prop
-- random input { [64]i32 } output { true }

entry partition_prop (xs: []i32) : bool =
  let (neg, nonneg) = partition (< 0) xs
  in length neg + length nonneg == length xs
     && all (< 0) neg
     && all (>= 0) nonneg
