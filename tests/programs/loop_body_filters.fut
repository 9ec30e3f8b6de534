-- Loop bodies that compute arrays of unknown size and return them (the
-- parameter's size then varies) or use them without tying them to the
-- parameters.
-- ==
-- input { [3f32, -1f32, 2f32] }
-- output { [12f32, 8f32] 7.5f32 }

def main (ys: []f32) =
  let xs = loop xs = ys for _i < 2 do map (* 2) (filter (> 0) xs)
  let total =
    loop acc = 0f32 for i < 2 do
      let keep = filter (> f32.i64 i) ys
      in acc + f32.sum keep / f32.i64 (i + 1)
  in (xs, total)
