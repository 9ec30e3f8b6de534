-- The new value of a loop parameter that the body updates in place may not
-- alias an array bound outside the loop: the next iteration would update
-- that array.
-- ==
-- error: loop body returns, for a loop parameter that is unique .* may alias `xs`

def main (xs: []i32) : []i32 =
  loop acc = copy xs for i < 3 do
    let acc[i] = 1
    in xs
