-- Inside the loop body, `keep` has the length of a filter computed in
-- this iteration; pairing it with the loop parameter `xs` would make the
-- parameter's size that one iteration's size.
-- ==
-- error: inside the loop body

def main (ys: []f32) =
  loop xs = ys for _i < 3 do
    let keep = filter (> 0) xs
    let pairs = zip keep xs
    in map (\(a, b) -> a + b) pairs
