-- A string literal in a test's input is the array of its UTF-8 bytes, as
-- in Futhark's value format.
-- ==
-- input { "Hi!" } output { 3i64 [72u8, 105u8, 33u8] }
-- input { "" } output { 0i64 empty([0]u8) }
-- input { "é\n" } output { 3i64 [195u8, 169u8, 10u8] }

entry main [n] (s: [n]u8) : (i64, [n]u8) = (n, s)
