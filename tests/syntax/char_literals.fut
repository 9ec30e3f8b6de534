-- Character literals are integer literals whose value is the character's
-- Unicode code point; like other integer literals they take the type the
-- context gives them (i32 by default).
-- ==
-- input { 0 } output { 97 10 39 34 92 955 [104u8, 105u8] 122u8 true }
-- input { 1 } output { 98 11 40 35 93 956 [104u8, 105u8] 123u8 true }

def main (k: i32) : (i32, i32, i32, i32, i32, i32, []u8, u8, bool) =
  let z : u8 = 'z'
  in ('a' + k, '\n' + k, '\'' + k, '"' + k, '\\' + k, 'λ' + k,
      "hi", z + u8.i32 k, 'b' - 'a' == 1)
