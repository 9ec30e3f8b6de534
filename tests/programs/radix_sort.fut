-- LSD radix sort on u32 keys, one bit per pass, each pass a stable
-- partition done with scan and scatter.
-- ==
-- input { [5u32, 3u32, 9u32, 1u32, 0u32, 7u32, 3u32] } output { [0u32, 1u32, 3u32, 3u32, 5u32, 7u32, 9u32] }
-- input { [4294967295u32, 0u32, 2147483648u32, 1u32] } output { [0u32, 1u32, 2147483648u32, 4294967295u32] }
-- input { empty([0]u32) } output { empty([0]u32) }

def radix_step [n] (xs: [n]u32) (b: i32) : [n]u32 =
  let bits = map (\x -> i64.u32 ((x >> u32.i32 b) & 1)) xs
  let zeros = map (1 -) bits
  let nzeros = reduce (+) 0 zeros
  let idx0 = map2 (-) (scan (+) 0 zeros) zeros
  let idx1 = map2 (-) (scan (+) 0 bits) bits
  let is = map3 (\bit i0 i1 -> if bit == 0 then i0 else nzeros + i1) bits idx0 idx1
  in scatter (copy xs) is xs

def sort [n] (xs: [n]u32) : [n]u32 = loop xs for b < 32 do radix_step xs b

def main [n] (xs: [n]u32) : [n]u32 = sort xs

-- ==
-- entry: sorted_ok
-- random input { [100]u32 } output { true }
-- random input { [1]u32 } output { true }

entry sorted_ok [n] (xs: [n]u32) : bool =
  let ys = sort xs
  in and (map2 (<=) (init ys) (tail ys)) && u32.sum ys == u32.sum xs
