-- String literals are arrays of their UTF-8 bytes (`[]u8`), escapes
-- included; the empty string is an empty `[]u8`.
-- ==
-- input { 1i64 } output { [104u8, 105u8] 105u8 3i64 [10u8, 34u8] 0i64 5i64 }

def greeting : []u8 = "hi"

def main (i: i64) : ([]u8, u8, i64, []u8, i64, i64) =
  (copy greeting, greeting[i], length "abc", "\n\"", length "", length ("ab" ++ "cde"))
