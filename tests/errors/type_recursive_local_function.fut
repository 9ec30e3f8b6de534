-- Only top-level functions may be recursive: a local function is not in
-- scope in its own body (as in Futhark, whose local functions are checked
-- before their name is bound).
-- ==
-- error: not in scope in its own definition: only top-level functions

def main (n: i32) : i32 =
  let count (k: i32) : i32 = if k == 0 then 0 else 1 + count (k - 1)
  in count n
