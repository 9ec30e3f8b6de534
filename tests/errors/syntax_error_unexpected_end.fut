-- A syntax error names what it did not expect, in Futhark's words: here the
-- file ends where the `let` still needs its `in`.
-- ==
-- error: Unexpected end of file.*`in`

def main (x: i32) : i32 =
  let y = x + 1
