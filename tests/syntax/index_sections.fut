-- Index sections: `(.[i])` is the function `\x -> x[i]`, also with
-- slices, several indices and fields after the index.
-- ==
-- input { [[1, 2, 3], [4, 5, 6]] 1i64 } output { [2, 5] [[2, 3], [5, 6]] 6 [7, 13] }

def main (xss: [][]i32) (i: i64) : ([]i32, [][]i32, i32, []i32) =
  let rs = map (\r -> {v = r[0] + r[2]}) xss
  in (map (.[i]) xss, map (.[i:]) xss, (.[1, 2]) xss, map (.v) rs |> map (+ 3) |> map (\x -> x + 0) |> (.[0:2]))
