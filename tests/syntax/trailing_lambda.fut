-- A lambda may be an application's last argument without parentheses; its
-- body extends as far to the right as possible.
-- ==
-- input { 4i64 [1, 2, 3] } output { [0i64, 3i64, 6i64, 9i64] [11, 12, 13] [2, 4, 6] }
-- input { 0i64 empty([0]i32) } output { empty([0]i64) empty([0]i32) empty([0]i32) }

def main (n: i64) (xs: []i32) : ([]i64, []i32, []i32) =
  let squares = tabulate n \i -> i * 3
  let shifted = xs |> map \x -> x + 10
  let doubled = xs |> map \x ->
                  let y = x * 2
                  in y
  in (squares, shifted, doubled)
