-- The new value of a loop parameter that the body updates in place may not
-- alias an array bound outside the loop: the next iteration would update
-- that array.
-- ==
-- error: Return value for consuming loop parameter "acc" aliases "xs"

def main (xs: []i32) : []i32 =
  loop acc = copy xs for i < 3 do
    let acc[i] = 1
    in xs
